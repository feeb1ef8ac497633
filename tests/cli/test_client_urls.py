"""`Client(url)` for every transport the command line serves, over real loopback sockets.

tcp://, ws:// with and without /mcp, and wss:// and https:// through a
TLS-terminating proxy (a certificate made for the test, trusted through
`SSL_CERT_FILE` as a user would). The servers run in this process; the
command line's own serving is tested in test_run_command.py.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio.streams.tls import TLSListener

from mcp_adapters import Client, ConnectionClosedError, TransportError, current_backend
from mcp_adapters.http import serve_http
from mcp_adapters.server import MCPServer
from mcp_adapters.server._serve import request_handler
from mcp_adapters.websocket import serve_websocket
from mcp_core.http import HostPolicy

from .conftest import TIMEOUT

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def echo_server() -> MCPServer:
    mcp = MCPServer("Echo")

    @mcp.tool()
    def echo(text: str) -> str:
        """Say it back."""
        return text

    return mcp


async def echo_through(target: str, mode: str = "auto") -> str:
    with anyio.fail_after(TIMEOUT):
        async with Client(target, mode=mode) as client:
            result = await client.call_tool("echo", {"text": "hi"})
    return str(result.content[0].text)


async def serving(
    group: anyio.abc.TaskGroup, serve: Callable[..., Awaitable[None]], *args: Any, **kw: Any
) -> int:
    port: int = await group.start(functools.partial(serve, *args, **kw))
    return port


async def serve_tcp(
    mcp: MCPServer, *, task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED
) -> None:
    async with current_backend().tcp_server(request_handler(mcp), mcp.config) as server:
        task_status.started(server.port)
        await server.serve_forever()


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_tcp_url(mode: str) -> None:
    async with anyio.create_task_group() as group:
        port = await serving(group, serve_tcp, echo_server())
        assert await echo_through(f"tcp://127.0.0.1:{port}", mode) == "hi"
        group.cancel_scope.cancel()


@pytest.mark.parametrize("bad", ["tcp://127.0.0.1", "tcp://127.0.0.1:x", "tcp://127.0.0.1:1/mcp"])
async def test_a_tcp_url_needs_host_and_port_only(bad: str) -> None:
    with pytest.raises(ValueError, match="tcp://host:port"):
        await echo_through(bad)


async def test_an_unknown_scheme_names_the_ones_there_are() -> None:
    with pytest.raises(ValueError, match="http://, https://, ws://, wss://, tcp://"):
        await echo_through("udp://127.0.0.1:1")


@pytest.mark.parametrize("suffix", ["/mcp", "", "/"])
async def test_websocket_url_with_and_without_the_path(suffix: str) -> None:
    async with anyio.create_task_group() as group:
        port = await serving(group, serve_websocket, echo_server(), port=0)
        assert await echo_through(f"ws://127.0.0.1:{port}{suffix}") == "hi"
        group.cancel_scope.cancel()


async def test_a_wrong_websocket_path_gets_an_error_naming_the_right_one() -> None:
    async with anyio.create_task_group() as group:
        port = await serving(group, serve_websocket, echo_server(), port=0, path="/tools")
        with pytest.raises(ConnectionClosedError) as caught:
            await echo_through(f"ws://127.0.0.1:{port}/mcp")
        assert str(caught.value) == (
            f"ws://127.0.0.1:{port}/mcp: the server refused the WebSocket upgrade with "
            f"HTTP 404: there is no MCP endpoint at /mcp; connect to ws://127.0.0.1:{port}/tools"
        )
        # The path it names is the right one.
        assert await echo_through(f"ws://127.0.0.1:{port}/tools") == "hi"
        group.cancel_scope.cancel()


# ------------------------------------------------------------------- TLS


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost: (certificate, key)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mcp-sansio test")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


async def tls_proxy(
    upstream: int,
    context: ssl.SSLContext,
    *,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Terminate TLS on a port of its own and pass the bytes on to `upstream`."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)

    async def handle(client: anyio.abc.ByteStream) -> None:
        async with (
            client,
            await anyio.connect_tcp("127.0.0.1", upstream) as server,
            anyio.create_task_group() as pipes,
        ):

            async def pipe(source: anyio.abc.ByteStream, sink: anyio.abc.ByteStream) -> None:
                try:
                    async for chunk in source:
                        await sink.send(chunk)
                except (
                    anyio.BrokenResourceError,
                    anyio.ClosedResourceError,
                    anyio.EndOfStream,
                    OSError,
                ):
                    pass
                pipes.cancel_scope.cancel()  # one side ended: so does the other

            pipes.start_soon(pipe, client, server)
            pipes.start_soon(pipe, server, client)

    tls = TLSListener(listener, context, standard_compatible=False)
    task_status.started(port)
    await tls.serve(handle)


@pytest.fixture
def trusted_certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ssl.SSLContext:
    """The proxy's context; the client trusts its certificate through SSL_CERT_FILE."""
    cert, key = make_certificate(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


@pytest.mark.parametrize("suffix", ["/mcp", ""])
async def test_wss_url(suffix: str, trusted_certificate: ssl.SSLContext) -> None:
    async with anyio.create_task_group() as group:
        # Behind a proxy the Host header names the proxy's port: any loopback port is fine.
        port = await serving(
            group, serve_websocket, echo_server(), port=0, host_policy=HostPolicy.loopback()
        )
        proxy = await serving(group, tls_proxy, port, trusted_certificate)
        assert await echo_through(f"wss://127.0.0.1:{proxy}{suffix}") == "hi"
        group.cancel_scope.cancel()


async def test_wss_refuses_a_certificate_it_does_not_trust(
    trusted_certificate: ssl.SSLContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE")
    async with anyio.create_task_group() as group:
        port = await serving(group, serve_websocket, echo_server(), port=0)
        proxy = await serving(group, tls_proxy, port, trusted_certificate)
        with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED"):
            await echo_through(f"wss://127.0.0.1:{proxy}/mcp")
        group.cancel_scope.cancel()


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_https_url(mode: str, trusted_certificate: ssl.SSLContext) -> None:
    async with anyio.create_task_group() as group:
        port = await serving(
            group, serve_http, echo_server(), port=0, host_policy=HostPolicy.loopback()
        )
        proxy = await serving(group, tls_proxy, port, trusted_certificate)
        assert await echo_through(f"https://127.0.0.1:{proxy}/mcp", mode) == "hi"
        group.cancel_scope.cancel()
