"""Fixtures for the store tests: both implementations, both async backends, a real Redis.

`stores` makes pairs of stores that share one backend, the way two server
processes share one Redis: for "memory" two `InMemoryStore`s on one
`MemoryHub`, for "redis" two `RedisStore`s (two client connections) on the
same redis-server and prefix. Every test gets a fresh prefix, so tests sharing
the per-worker redis-server never see each other's keys.

When redis-server is missing, every Redis test fails (never skips) and says
how to install it.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_adapters.store import InMemoryStore, MemoryHub, StoreLimits
from tests.store.redis_server import INSTALL_HINT, RedisServer, redis_server_binary


class FakeClock:
    """Wall-clock seconds that move only when told (starts at a realistic epoch time)."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _redis_server(directory: Path) -> Iterator[RedisServer]:
    if redis_server_binary() is None:
        pytest.fail(INSTALL_HINT, pytrace=False)
    for attempt in range(3):  # a free port can be taken before redis binds it
        server = RedisServer(directory)
        try:
            server.start()
            break
        except RuntimeError:
            server.stop()
            if attempt == 2:
                raise
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One redis-server per test worker, for the tests that leave it running."""
    yield from _redis_server(tmp_path_factory.mktemp("redis"))


@pytest.fixture
def own_redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test's own, which the test may stop, restart or freeze."""
    yield from _redis_server(tmp_path)


def redis_store(url: str, prefix: str, **options: Any) -> Any:
    try:
        from mcp_adapters.store import RedisStore
    except ImportError as exc:
        pytest.fail(f"{exc}; install the test dependencies: pip install -e '.[dev]'", pytrace=False)
    return RedisStore(url, prefix=prefix, **options)


class Stores:
    """Makes two stores on one backend: two processes of one deployment."""

    def __init__(self, kind: str, request: pytest.FixtureRequest) -> None:
        self.kind = kind
        self._request = request

    @contextlib.asynccontextmanager
    async def pair(
        self, *, limits: StoreLimits | None = None, clock: Any = None
    ) -> AsyncIterator[tuple[Any, Any]]:
        options: dict[str, Any] = {"limits": limits or StoreLimits()}
        if clock is not None:
            options["clock"] = clock
        if self.kind == "memory":
            hub = MemoryHub()
            a = InMemoryStore(hub=hub, process_id="a", **options)
            b = InMemoryStore(hub=hub, process_id="b", **options)
        else:
            server: RedisServer = self._request.getfixturevalue("redis_server")
            prefix = f"test-{uuid.uuid4().hex[:12]}"
            a = redis_store(server.url, prefix, process_id="a", **options)
            b = redis_store(server.url, prefix, process_id="b", **options)
        async with a, b:
            yield a, b


@pytest.fixture(params=["memory", "redis"])
def stores(request: pytest.FixtureRequest) -> Stores:
    return Stores(str(request.param), request)
