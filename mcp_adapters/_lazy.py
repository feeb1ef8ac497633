"""A module global that imports its module on first use.

Importing `MCPServer` should not pay for what only requests need:
`mcp_core.types` (the wire models) is the slowest import of all, and the
elicitation outcomes are pydantic models, built when their module loads.
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands in for a module global until first use, then replaces itself with the module."""

    __slots__ = ("_alias", "_name", "_namespace")

    def __init__(self, name: str, namespace: dict[str, Any], alias: str) -> None:
        self._name = name
        self._namespace = namespace
        self._alias = alias

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._name)
        self._namespace[self._alias] = module
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


__all__ = ["LazyModule"]
