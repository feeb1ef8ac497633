"""The official SDKs' clients calling our server with real payloads, and over its limit.

Peers: the Python SDK's `Client` (mcp 2.3.0; it has no WebSocket client to rely
on: no `mcp.client.websocket` in 2.3.0), and the TypeScript SDK's clients, v1
(@modelcontextprotocol/sdk 1.32.2) and v2 (@modelcontextprotocol/client 2.4.0),
run by node/peers/payload_client.mjs. Server: tests/payload_server.py through our
CLI, with default limits, and with `--max-message-bytes 1000000` for refusals.

With our defaults, one call carries a 20 MiB file as its argument and a 40 MiB
image as its result (base64 both ways), over stdio and Streamable HTTP. Over a
limit, the peer's call fails at once with our error (its text names the limit;
over HTTP the 413 body carries the request's id) and its next call is answered.

Two limits of the peers themselves, not ours: both TypeScript stdio clients
refuse a message over 10 MiB (`maxBufferSize`; the test raises it to 64 MiB, as
a user must), and the Python SDK's HTTP client an SSE event over 1 MiB (our
server answers a plain tool result as JSON, so that one is not met here). Both
SDKs' stdio readers copy the whole pending line for every 64 KiB read, so a
result's cost to them grows with its square: 40 MiB took them 21 s to 66 s of
CPU each, most of the default test run's budget. Over stdio the peers therefore
receive a 16 MiB result (still over the TypeScript clients' own 10 MiB default);
our side of a 40 MiB result over stdio is pinned with our own Client
(tests/adapters/test_large_payloads.py), and over HTTP with these peers here.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from .conftest import ROOT, ServerProcess, http_servers, sdk_stdio, tagged_env

sys.path.insert(0, str(ROOT / "tests"))
from payload_server import pattern

pytestmark = pytest.mark.anyio

SERVER = ROOT / "tests" / "payload_server.py"
PEER = ROOT / "node" / "peers" / "payload_client.mjs"
MiB = 1024 * 1024
ARGUMENT = 20 * MiB
RESULT = 40 * MiB
STDIO_RESULT = 16 * MiB  # what the peers' stdio readers get (see the module docstring)
SMALL = 1_000_000
HANG_GUARD = 300.0  # generous; the slow cases are the SDKs' stdio readers
REFUSED = "exceeds the limit of 1000000 bytes (Limits.max_message_bytes)"


def our_cli(transport: str, *extra: str) -> list[str]:
    argv = [sys.executable, "-m", "mcp_adapters", "run", str(SERVER), "--transport", transport]
    if transport != "stdio":
        argv += ["--port", "{port}"]
    return argv + list(extra)


SMALL_LIMIT = ("--max-message-bytes", str(SMALL))


@functools.cache
def b64(size: int) -> str:
    return base64.b64encode(pattern(size)).decode("ascii")


@functools.cache
def sha256(size: int) -> str:
    return hashlib.sha256(pattern(size)).hexdigest()


def digest_text(size: int) -> dict[str, Any]:
    return {"received_bytes": size, "received_sha256": sha256(size)}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ServerProcess]]:
    specs = {"http": our_cli("http"), "http-small": our_cli("http", *SMALL_LIMIT)}
    with http_servers(specs, tmp_path_factory.mktemp("payload-servers")) as started:
        yield started


@pytest.fixture(scope="module")
def data_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The base64 arguments, as files for the node peers (too big for argv)."""
    folder = tmp_path_factory.mktemp("payload-data")
    files = {"big": folder / "argument.b64", "small": folder / "over-limit.b64"}
    files["big"].write_text(b64(ARGUMENT), "ascii")
    files["small"].write_text(b64(SMALL), "ascii")
    return files


@pytest.fixture(scope="module")
def node() -> str:
    """Node 22 with node/package-lock.json installed (scripts/node-env.sh); fails,
    never skips, when that cannot be done."""
    made = subprocess.run(
        [str(ROOT / "scripts" / "node-env.sh")], capture_output=True, text=True, timeout=600
    )
    if made.returncode != 0 or not made.stdout.strip():
        pytest.fail(
            "the TypeScript SDK peers need npm (and the npm registry) to install node/: "
            f"scripts/node-env.sh exited {made.returncode}: {made.stderr.strip()}"
        )
    return made.stdout.strip()


# ------------------------------------------------------------- Python SDK


def python_target(servers: dict[str, ServerProcess], transport: str, *, small: bool) -> Any:
    if transport == "http":
        return servers["http-small" if small else "http"].url
    return sdk_stdio(our_cli("stdio", *(SMALL_LIMIT if small else ())))


def sdk_client(target: Any, mode: str) -> Client:
    return Client(target, mode=mode) if mode != "default" else Client(target)


@pytest.mark.parametrize(
    ("transport", "mode"), [("http", "legacy"), ("http", "default"), ("stdio", "default")]
)
async def test_python_sdk_sends_20_mib_and_receives_a_large_image(
    servers: dict[str, ServerProcess], transport: str, mode: str
) -> None:
    size = STDIO_RESULT if transport == "stdio" else RESULT
    with anyio.fail_after(HANG_GUARD):
        async with sdk_client(python_target(servers, transport, small=False), mode) as client:
            result = await client.call_tool("transform", {"data": b64(ARGUMENT), "size": size})
    digest, image = result.content
    assert result.is_error is False
    assert json.loads(digest.text) == digest_text(ARGUMENT)
    assert image.type == "image" and image.mime_type == "image/png"
    assert image.data == b64(size)


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("mode", ["legacy", "default"])
async def test_python_sdk_over_our_limit_gets_our_error_and_goes_on(
    servers: dict[str, ServerProcess], transport: str, mode: str
) -> None:
    with anyio.fail_after(60):
        async with sdk_client(python_target(servers, transport, small=True), mode) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("transform", {"data": b64(SMALL), "size": 1})
            echoed = await client.call_tool("echo", {"text": "still here"})
    assert refused.value.error.code == -32700
    assert refused.value.error.message.startswith("message of ")
    assert refused.value.error.message.endswith(REFUSED)
    assert echoed.content[0].text == "still here"


# --------------------------------------------------------- TypeScript SDKs


def run_peer(node: str, spec: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    """Run the node peer on `spec`; its outcome lines, one per call."""
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    ran = subprocess.run(
        [node, str(PEER), str(spec_path)],
        cwd=ROOT,
        env=tagged_env("test"),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
    )
    assert ran.returncode == 0, f"the node peer failed:\n{ran.stderr[-3000:]}"
    return [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]


def ts_spec(
    servers: dict[str, ServerProcess], sdk: str, transport: str, *, small: bool
) -> dict[str, Any]:
    spec: dict[str, Any] = {"sdk": sdk, "transport": transport}
    if sdk == "v2":
        spec["mode"] = "auto"  # v2's default is legacy; auto settles on 2026-07-28 with us
    if transport == "http":
        spec["url"] = servers["http-small" if small else "http"].url
    else:
        argv = our_cli("stdio", *(SMALL_LIMIT if small else ()))
        spec.update(command=argv[0], args=argv[1:], cwd=str(ROOT), maxBufferSize=64 * MiB)
    return spec


TS_CASES = [(sdk, transport) for sdk in ("v1", "v2") for transport in ("http", "stdio")]


@pytest.mark.parametrize(("sdk", "transport"), TS_CASES)
def test_typescript_sdk_sends_20_mib_and_receives_a_large_image(
    servers: dict[str, ServerProcess],
    data_files: dict[str, Path],
    node: str,
    tmp_path: Path,
    sdk: str,
    transport: str,
) -> None:
    spec = ts_spec(servers, sdk, transport, small=False)
    size = STDIO_RESULT if transport == "stdio" else RESULT
    spec["calls"] = [
        {"tool": "transform", "arguments": {"size": size}, "data_file": str(data_files["big"])}
    ]
    (outcome,) = run_peer(node, spec, tmp_path)
    assert outcome["ok"], outcome
    digest, image = outcome["content"]
    assert json.loads(digest["text"]) == digest_text(ARGUMENT)
    assert image == {
        "type": "image",
        "mimeType": "image/png",
        "bytes": size,
        "sha256": sha256(size),
    }


@pytest.mark.parametrize(("sdk", "transport"), TS_CASES)
def test_typescript_sdk_over_our_limit_gets_our_error_and_goes_on(
    servers: dict[str, ServerProcess],
    data_files: dict[str, Path],
    node: str,
    tmp_path: Path,
    sdk: str,
    transport: str,
) -> None:
    spec = ts_spec(servers, sdk, transport, small=True)
    spec["calls"] = [
        {"tool": "transform", "arguments": {"size": 1}, "data_file": str(data_files["small"])},
        {"tool": "echo", "arguments": {"text": "still here"}},
    ]
    refused, echoed = run_peer(node, spec, tmp_path)
    assert not refused["ok"]
    assert REFUSED in refused["message"]
    if transport == "http":
        # The SDKs surface the 413 with its body: our JSON-RPC error, with the call's id.
        body = json.loads(refused["message"][refused["message"].index("{") :])
        assert isinstance(body["id"], int) and body["error"]["code"] == -32700
    else:
        assert refused["code"] == -32700
    assert echoed["ok"] and echoed["content"] == [{"type": "text", "text": "still here"}]
