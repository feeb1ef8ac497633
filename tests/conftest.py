"""Suite-wide settings."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from mcp_core.testing import general_path_only

from .bytecode import precompile

_ADAPTERS = Path(__file__).parent / "adapters"
#: Modules whose servers are module-scoped fixtures (a cluster: redis-server, replicas
#: and nginx; the seed servers): one worker runs each module, so they start once.
_MODULE_SERVERS = (Path(__file__).parent / "cluster", Path(__file__).parent / "seeds")

# Hypothesis's own clocks off for every property test (loaded before any test module
# builds its `settings`, which inherit it): by default an example that runs over
# 200 ms fails (a deadline) and slow data generation fails a health check, and on a
# loaded machine both happen to correct code.
settings.register_profile("mcp-sansio", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("mcp-sansio")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--general-path",
        action="store_true",
        help="run every test with the engines' lanes off (mcp_core.testing.general_path_only)",
    )


@pytest.fixture(autouse=True)
def _general_path(request: pytest.FixtureRequest) -> Iterator[None]:
    """With `--general-path`, each test runs on the engines' general path only, so the
    suite that pins the lanes' behaviour pins the general path's too."""
    if request.config.getoption("--general-path"):
        with general_path_only():
            yield
    else:
        yield


def pytest_configure(config: pytest.Config) -> None:
    # A run started in the background of a non-interactive shell (`make test &`, a
    # CI step or agent that backgrounds its command) inherits SIGINT ignored, and an
    # ignored signal stays ignored across exec: every server the tests stop with
    # Ctrl-C (the docs pages, the CLI tests) ignored it and each waited out its
    # 300 s bound before failing, and Python raised no KeyboardInterrupt in the
    # tests that interrupt themselves. A terminal's Ctrl-C reaches a foreground
    # program with the default action, which is what those tests stand for; with a
    # handler installed here (in the controller and in each xdist worker), the
    # programs they start get the default again at exec.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_sessionstart(session: pytest.Session) -> None:
    # In pytest-xdist's controller, before its own hook (trylast) starts the workers:
    # write the caches they would each write for themselves (tests/bytecode.py).
    config = session.config
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        precompile(config)


# tryfirst: pytest-xdist reads the xdist_group marks in its own hook of this name
# (it appends the group to each node id); ours must have added them by then, and an
# initial conftest's hook would otherwise run after xdist's (the groups were ignored).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The adapter tests check the whole machine for leaked server processes, so
    # under pytest-xdist they share one worker instead of watching each other's.
    for item in items:
        path = Path(str(item.fspath))
        if _ADAPTERS in path.parents:
            item.add_marker(pytest.mark.xdist_group("adapters"))
        elif path.parent in _MODULE_SERVERS:
            item.add_marker(pytest.mark.xdist_group(f"{path.parent.name}-{path.stem}"))
