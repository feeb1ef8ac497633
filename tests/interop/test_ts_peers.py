"""The TypeScript SDK peers of the benchmark start and answer a call (no timing).

node/bench/server.mjs and client.mjs are the echo server and client loop that
benchmarks/run.py runs for @modelcontextprotocol/sdk 1.32.2 ("v1") and
@modelcontextprotocol/server + client 2.4.0 ("v2"). Here each is checked once:
the in-process pairs in each era the SDK speaks (v1: the 2025 era only), and, in
each SDK's newest era, its client against our stdio server and our `Client`
against its stdio server.

Node comes from scripts/node-env.sh, which installs node/package-lock.json (and a
Node 22 where the machine's is older). Without npm these tests fail, saying so:
they are not skipped.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_adapters import Client, StdioServerParameters

from .conftest import ROOT, START_TIMEOUT, tagged_env

BENCH = ROOT / "node" / "bench"
OUR_SERVER = ROOT / "benchmarks" / "servers" / "ours.py"
PROTOCOL = {"legacy": "2025-11-25", "2026": "2026-07-28"}
CASES = [("v1", "legacy"), ("v2", "legacy"), ("v2", "2026")]
# Across languages, each SDK in its newest era (run.py's cross-check does all of them).
NEWEST = [("v1", "legacy"), ("v2", "2026")]


@pytest.fixture(scope="module")
def node() -> str:
    done = subprocess.run(
        [str(ROOT / "scripts" / "node-env.sh")],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, (
        "the TypeScript peers need npm (scripts/node-env.sh installs node/package-lock.json "
        f"and Node 22):\n{done.stderr}"
    )
    return done.stdout.strip()


def drive(node: str, *args: str) -> list[dict[str, object]]:
    """client.mjs with `args`, made to run one call and close: its JSON lines."""
    done = subprocess.run(
        [node, str(BENCH / "client.mjs"), *args],
        cwd=ROOT,
        env=tagged_env("test"),
        input='{"op": "run", "n": 1}\n{"op": "close"}\n',
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT * 2,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def assert_answered(lines: list[dict[str, object]], era: str) -> None:
    ready, sample, closed = lines
    assert ready["ready"] is True
    assert ready["protocol"] == PROTOCOL[era]
    assert sample["calls"] == 1
    assert isinstance(sample["latencies"], list) and len(sample["latencies"]) == 1
    assert closed == {"closed": True}


@pytest.mark.parametrize(("sdk", "era"), CASES)
def test_ts_in_process_pair_answers(node: str, sdk: str, era: str) -> None:
    assert_answered(drive(node, "--sdk", sdk, "--era", era, "--target", "inproc"), era)


@pytest.mark.parametrize(("sdk", "era"), NEWEST)
def test_ts_client_calls_our_stdio_server(node: str, sdk: str, era: str) -> None:
    ours = [sys.executable, "-m", "mcp_adapters", "run", str(OUR_SERVER), "--transport", "stdio"]
    lines = drive(
        node, "--sdk", sdk, "--era", era, "--target", "stdio", "--server-command", json.dumps(ours)
    )
    assert_answered(lines, era)


def test_v1_cannot_speak_2026(node: str) -> None:
    done = subprocess.run(
        [node, str(BENCH / "client.mjs"), "--sdk", "v1", "--era", "2026"],
        cwd=ROOT,
        env=tagged_env("test"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT,
    )
    assert done.returncode == 3
    assert "2026-07-28" in done.stderr


@pytest.mark.anyio
@pytest.mark.parametrize(("sdk", "era"), NEWEST)
async def test_our_client_calls_ts_stdio_server(
    node: str, sdk: str, era: str, tmp_path: Path
) -> None:
    with open(tmp_path / "server.log", "wb") as log:
        params = StdioServerParameters(
            node,
            [str(BENCH / "server.mjs"), "--sdk", sdk, "--transport", "stdio"],
            env=tagged_env("test"),
            cwd=str(ROOT),
            stderr=log,
        )
        mode = "legacy" if era == "legacy" else "2026-07-28"
        async with Client(params, mode=mode) as client:
            assert client.protocol_version == PROTOCOL[era]
            for tool in ("echo", "echo_async"):
                result = await client.call_tool(tool, {"text": "hello world"})
                assert not result.is_error
                assert [block.text for block in result.content] == ["hello world"]
