"""The core is sans-IO: no event loops, sockets, threads, processes, clocks, files or env.

Two checks: a fresh interpreter imports every `mcp_core` module and looks at
`sys.modules`; and a static pass over the source (ast) finds no forbidden
import or call.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_core

PACKAGE_DIR = Path(mcp_core.__file__).resolve().parent
SOURCES = sorted(PACKAGE_DIR.rglob("*.py"))
RELATIVE = [str(p.relative_to(PACKAGE_DIR.parent)) for p in SOURCES]

CONCURRENCY_AND_IO = ("asyncio", "trio", "anyio", "socket", "selectors", "threading", "subprocess")
FORBIDDEN_IMPORTS = frozenset({*CONCURRENCY_AND_IO, "time", "os", "datetime", "random"})
# The one exception the design allows: Hypothesis strategies for users' tests.
ALLOWED = {"mcp_core/testing/strategies.py": frozenset({"hypothesis"})}
TEST_ONLY = frozenset({"hypothesis", "pytest"})

PROBE = """
import importlib, json, pkgutil, sys
watched = {watched!r}
import h11, pydantic, pydantic_core  # the declared dependencies, for a baseline
from pydantic import BaseModel, TypeAdapter
baseline = sorted(m for m in watched if m in sys.modules)
import mcp_core, mcp_core.types, mcp_core.testing
names = sorted(
    m.name for m in pkgutil.walk_packages(mcp_core.__path__, "mcp_core.")
    if m.name != "mcp_core.testing.strategies"
)
for name in names:
    importlib.import_module(name)
print(json.dumps({{
    "baseline": baseline,
    "after": sorted(m for m in watched if m in sys.modules),
    "modules": names,
    "hypothesis": "hypothesis" in sys.modules,
}}))
"""


def probe() -> dict[str, list[str]]:
    code = PROBE.format(watched=[*CONCURRENCY_AND_IO, "time", *TEST_ONLY])
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=PACKAGE_DIR.parent,
        timeout=60,
    )
    report: dict[str, list[str]] = json.loads(done.stdout)
    return report


def test_importing_every_module_pulls_in_no_loop_socket_thread_or_process() -> None:
    report = probe()
    # Every module was imported (the walk found the package's modules).
    assert "mcp_core._connection" in report["modules"]
    assert "mcp_core._framing" in report["modules"]
    assert len(report["modules"]) >= 15
    # Nothing beyond what pydantic itself imports. (pydantic.main imports threading
    # for a lock, so `threading` is in the baseline; mcp_core must add nothing.)
    added = sorted(set(report["after"]) - set(report["baseline"]))
    assert added == [], f"importing mcp_core loaded {added}"
    for name in ("asyncio", "trio", "anyio", "socket", "selectors", "subprocess"):
        assert name not in report["after"]
    assert not report["hypothesis"]


def imported_modules(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


FORBIDDEN_CALLS = {
    ("time", "time"),
    ("time", "monotonic"),
    ("time", "perf_counter"),
    ("time", "time_ns"),
    ("time", "monotonic_ns"),
    ("time", "sleep"),
    ("os", "getenv"),
    ("os", "urandom"),
    ("datetime", "now"),
    ("datetime", "utcnow"),
}
FORBIDDEN_BUILTINS = {"open", "print", "input", "breakpoint"}


def forbidden_uses(tree: ast.AST) -> list[str]:
    problems: list[str] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in FORBIDDEN_BUILTINS
        ):
            problems.append(f"line {node.lineno}: calls {node.func.id}()")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            pair = (node.value.id, node.attr)
            if pair in FORBIDDEN_CALLS or pair == ("os", "environ"):
                problems.append(f"line {node.lineno}: uses {pair[0]}.{pair[1]}")
    return problems


@pytest.mark.parametrize("path", SOURCES, ids=RELATIVE)
def test_source_has_no_forbidden_imports_or_calls(path: Path) -> None:
    relative = str(path.relative_to(PACKAGE_DIR.parent))
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
    imports = imported_modules(tree)
    allowed = ALLOWED.get(relative, frozenset())
    assert not (imports & FORBIDDEN_IMPORTS), f"{relative} imports {imports & FORBIDDEN_IMPORTS}"
    assert not ((imports & TEST_ONLY) - allowed), f"{relative} imports {imports & TEST_ONLY}"
    assert forbidden_uses(tree) == []


def test_the_static_checker_catches_what_it_claims_to() -> None:
    bad = ast.parse(
        "import time, os\n"
        "from asyncio import sleep\n"
        "t = time.monotonic()\n"
        "e = os.environ['X']\n"
        "print(open('f').read())\n"
    )
    assert imported_modules(bad) >= {"time", "os", "asyncio"}
    assert len(forbidden_uses(bad)) == 4


def test_strategies_module_is_the_only_hypothesis_user() -> None:
    users = [
        str(p.relative_to(PACKAGE_DIR.parent))
        for p in SOURCES
        if "hypothesis" in imported_modules(ast.parse(p.read_text(encoding="utf-8")))
    ]
    assert users in ([], ["mcp_core/testing/strategies.py"])
