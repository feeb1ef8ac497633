"""Where an `OAuthProvider` keeps its `OAuthRecord` (tokens, refresh token, client).

A record is as secret as a password: it holds the refresh token and, for a
confidential client, the client secret. `InMemoryTokenStorage` forgets it with the
process; `FileTokenStorage` keeps it in a JSON file only its owner can read, written
atomically so a crash mid-write never leaves half a record (a refresh token rotated
by the server and then lost would log the user out).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Protocol, runtime_checkable

import anyio.to_thread

from mcp_core.oauth import OAuthRecord

__all__ = ["FileTokenStorage", "InMemoryTokenStorage", "TokenStorage"]

logger = logging.getLogger(__name__)


@runtime_checkable
class TokenStorage(Protocol):
    """Loads and saves the one `OAuthRecord` of one MCP server.

    `load` returns None when nothing usable is stored; `save` is called after every
    new token (first authorization, refresh, step-up).
    """

    async def load(self) -> OAuthRecord | None: ...

    async def save(self, record: OAuthRecord) -> None: ...


class InMemoryTokenStorage:
    """The default: the record lives as long as the storage object (share one between
    `Client`s of one process so they do not each log in)."""

    def __init__(self, record: OAuthRecord | None = None) -> None:
        self.record = record

    async def load(self) -> OAuthRecord | None:
        return self.record

    async def save(self, record: OAuthRecord) -> None:
        self.record = record


class FileTokenStorage:
    """The record as JSON in `path`, mode 0600, replaced atomically on every save.

    The directory is created (mode 0700) if missing. A file that is not a record
    (edited, from another version, truncated by hand) reads as nothing stored, with
    a warning: the user logs in again rather than the program failing. File I/O runs
    in a worker thread, so the event loop never blocks on a slow disk.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()

    async def load(self) -> OAuthRecord | None:
        return await anyio.to_thread.run_sync(self._load)

    async def save(self, record: OAuthRecord) -> None:
        await anyio.to_thread.run_sync(self._save, record)

    def _load(self) -> OAuthRecord | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            return OAuthRecord.from_dict(json.loads(text))
        except ValueError as exc:  # JSONDecodeError is a ValueError too
            logger.warning("ignoring %s: not an OAuth record (%s)", self.path, exc)
            return None

    def _save(self, record: OAuthRecord) -> None:
        directory = self.path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = json.dumps(record.to_dict(), indent=2).encode("utf-8")
        # mkstemp creates the file 0600 (never readable by others, not even for an
        # instant), in the same directory so os.replace is a rename, which is atomic.
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=directory)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
