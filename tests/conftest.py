"""Suite-wide settings."""

from __future__ import annotations

from pathlib import Path

import pytest

_ADAPTERS = Path(__file__).parent / "adapters"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The adapter tests check the whole machine for leaked server processes, so
    # under pytest-xdist they share one worker instead of watching each other's.
    for item in items:
        if _ADAPTERS in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.xdist_group("adapters"))
