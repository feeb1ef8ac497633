"""Coverage-guided fuzzing of ServerConnection with atheris (not part of the test run).

Each input is fed to fresh servers in three states (fresh, legacy session,
2026-07-28 stream), once whole and once byte by byte, and must give

  (i)   no exception but RemoteProtocolError (and that only after a failure),
  (ii)  the same events, output bytes and final state both ways,
  (iii) check_invariants() after every step.

Run from the repository root:

    pip install atheris
    mkdir -p /tmp/mcp-corpus
    python fuzz/atheris_server.py /tmp/mcp-corpus fuzz/corpus -max_total_time=600
    python fuzz/atheris_server.py crash-<hash>        # replay one input
    python fuzz/atheris_server.py --replay fuzz/corpus  # corpus only, no atheris needed

atheris writes a failing input to `crash-<sha1>` in the current directory.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_core import (
    RemoteProtocolError,
    ServerConnection,
    State,
)
from mcp_core.testing import default_server_config

_META = (
    b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}}'
)
SETUPS: dict[str, bytes] = {
    "fresh": b"",
    "legacy": (
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
        b'"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}\n'
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t",'
        b'"_meta":{"progressToken":1}}}\n'
    ),
    "modern": (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":'
        + _META
        + b"}}\n"
    ),
}
CONFIG = default_server_config()


def _server(setup: str) -> ServerConnection:
    server = ServerConnection(CONFIG)
    if SETUPS[setup]:
        server.receive_data(SETUPS[setup])
    server.data_to_send()
    return server


def _run(server: ServerConnection, chunks: list[bytes]) -> tuple[list[str], bytes, str]:
    events: list[str] = []
    output = b""
    for chunk in chunks:
        before = server.state
        try:
            got = server.receive_data(chunk)
        except RemoteProtocolError:
            # (i) only once the connection has failed
            assert before == State.ERROR, f"RemoteProtocolError escaped in state {before}"
            continue
        server.check_invariants()  # (iii)
        events.extend(repr(e) for e in got)
        output += server.data_to_send()
    return events, output, server.state


def check_input(data: bytes) -> None:
    """The property: raises AssertionError (or anything unexpected) on a bug."""
    for setup in SETUPS:
        whole = _run(_server(setup), [data] if data else [])
        bytewise = _run(_server(setup), [data[i : i + 1] for i in range(len(data))])
        assert whole == bytewise, f"{setup}: whole and byte-by-byte feeding differ"  # (ii)


def _replay(paths: list[str]) -> int:
    files = [
        p
        for arg in paths
        for p in (sorted(Path(arg).iterdir()) if Path(arg).is_dir() else [Path(arg)])
    ]
    for path in files:
        check_input(path.read_bytes())
        print(f"ok  {path}")
    return 0


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--replay":
        sys.exit(_replay(sys.argv[2:]))
    import atheris  # only when fuzzing: not a dependency of the package or its tests

    atheris.instrument_all()
    atheris.Setup(sys.argv, check_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
