"""The structure the layers rely on, read from the source (nothing is imported).

- no import cycle among the modules of `mcp_core` or of `mcp_adapters` at import
  time (module-level imports, `if TYPE_CHECKING:` blocks left out); in
  `mcp_adapters` not even through an import inside a function, which runs later
  but still ties the two modules' initialisation together;
- an adapter uses only the core's public modules (`mcp_core`, `mcp_core.http`,
  `mcp_core.types` ...), never `mcp_core._x`;
- no class in `mcp_adapters` reads another object's private members
  (`other._x`): a neighbour needs a method or a property, not a peek.
- every module and package of `mcp_adapters` says its role in a docstring.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _modules(package: str) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def _import_nodes(tree: ast.Module, *, in_functions: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports run when the module loads (and, if asked, those inside functions)."""
    skip = _type_checking_nodes(tree)
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if id(node) in skip:
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if in_functions:
                stack.extend(ast.iter_child_nodes(node))
        else:
            stack.extend(ast.iter_child_nodes(node))


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """What an import names: `import a.b` and `from a import b` both name `a.b`
    (which need not be a module: the caller falls back to `a`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, *([base] if base else [])])
    return [f"{base}.{alias.name}" for alias in node.names]


def _graph(package: str, *, in_functions: bool) -> dict[str, set[str]]:
    modules = _modules(package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        edges: set[str] = set()
        for node in _import_nodes(tree, in_functions=in_functions):
            for target in _targets(node, name, path.name == "__init__.py"):
                # A package's own `__init__` importing its modules is how packages are
                # made, so the package an imported module lives in is not an edge.
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph.get(node, ()):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", ["mcp_core", "mcp_adapters"])
def test_no_import_cycle_when_modules_load(package: str) -> None:
    assert _cycles(_graph(package, in_functions=False)) == []


def test_no_import_cycle_in_the_adapters_even_through_functions() -> None:
    assert _cycles(_graph("mcp_adapters", in_functions=True)) == []


def test_adapters_import_only_public_core_modules() -> None:
    offending: list[str] = []
    for name, path in _modules("mcp_adapters").items():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = _targets(node, name, path.name == "__init__.py")
            if isinstance(node, ast.ImportFrom):
                targets.append(targets[0].rpartition(".")[0])  # the module imported from
            for target in targets:
                parts = target.split(".")
                if parts[0] == "mcp_core" and any(p.startswith("_") for p in parts[1:2]):
                    offending.append(f"{path.relative_to(ROOT)}:{node.lineno}: {target}")
    assert offending == []


def _private_reads(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(), str(path))
    # Names that are not objects of another class: modules, and the module's own
    # classes (a class's table of its own methods is not a peek at a neighbour).
    own: set[str] = {"self", "cls"}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            own.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ClassDef):
            own.add(node.name)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        attr = node.attr
        if not attr.startswith("_") or attr.startswith("__"):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in own:
            continue
        if isinstance(value, ast.Call) and ast.unparse(value.func) == "super":
            continue
        yield f"{path.name}:{node.lineno}: {ast.unparse(node)}"


def test_the_private_read_finder_finds_one(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\nclass A:\n    def f(self, other):\n"
        "        return self._x, os._exit, A._table, super()._g, other._y\n"
    )
    found = [line.rsplit(": ", 1)[1] for line in _private_reads(sample)]
    assert found == ["other._y"]


# Reads of the standard library's own internals that an adapter cannot do without, by
# file, each with its reason. backends/_eager.py: on CPython 3.11 a task's first step is
# handed over by a `call_soon` set on a plain asyncio loop and run at once; the loop's
# ready queue and task factory are read only to recognise such a loop (the factory as
# `BaseEventLoop.create_task` reads it; 3.12+ has `Task(eager_start=True)` and reads
# nothing).
_STDLIB_INTERNALS = {"_eager.py": {"loop._ready", "loop._task_factory"}}


def test_no_adapter_reads_another_objects_private_members() -> None:
    offending = [
        line
        for path in _modules("mcp_adapters").values()
        for line in _private_reads(path)
        if line.rsplit(": ", 1)[1] not in _STDLIB_INTERNALS.get(path.name, set())
    ]
    assert offending == []


def test_every_adapter_module_says_its_role() -> None:
    silent = [
        name
        for name, path in _modules("mcp_adapters").items()
        if not ast.get_docstring(ast.parse(path.read_text()))
    ]
    assert silent == []
