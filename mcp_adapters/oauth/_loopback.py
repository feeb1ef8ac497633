"""The browser step of a command-line program: open the authorization URL, and
receive the redirect on a tiny HTTP listener on 127.0.0.1 (RFC 8252 section 7.3,
"loopback interface redirection"), over h11.

    with LoopbackRedirect() as redirect:           # binds 127.0.0.1:<free port> now
        provider = OAuthProvider(redirect_uri=redirect.uri, authorize=redirect, ...)

The port is bound when the object is made, so `uri` is known before any
registration (the authorization server must accept any loopback port, RFC 8252
section 7.3; dynamic registration registers this exact one). Only a GET to `path`
whose `state` is the one in the authorization URL ends the wait: anything else on
the port (a favicon request, a browser's speculative connection, another program)
gets an error page and is ignored, so it can neither end nor spoil the login.
Connections are served concurrently, since a browser may open one and send nothing.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import webbrowser
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
import anyio.to_thread
import h11

__all__ = ["LoopbackRedirect"]

logger = logging.getLogger(__name__)

_DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>Authorized</title>"
    b"<p>Authorization complete. You can close this window.</p>"
)
_READ = 16384
#: How long one connection may take to send its request line and headers.
_REQUEST_TIMEOUT = 10.0


class LoopbackRedirect:
    """A one-login-at-a-time redirect receiver on a loopback port; call it with the
    authorization URL (it is an `OAuthProvider` `authorize` callback).

    `open_browser` opens the URL (default `webbrowser.open`, run in a thread; None
    only logs the URL, for a program that shows it itself). `timeout` bounds the
    wait for the user (seconds). Close it (or leave the `with` block) to free the
    port.
    """

    def __init__(
        self,
        port: int = 0,
        *,
        path: str = "/callback",
        host: str = "127.0.0.1",
        open_browser: Callable[[str], object] | None = webbrowser.open,
        timeout: float = 300.0,
    ) -> None:
        if not path.startswith("/"):
            raise ValueError("path must start with '/'")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.bind((host, port))
            sock.listen(16)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self.port: int = sock.getsockname()[1]
        self.path = path
        self.open_browser = open_browser
        self.timeout = timeout
        netloc = f"[{host}]" if family == socket.AF_INET6 else host
        self._origin = f"http://{netloc}:{self.port}"
        self.uri = self._origin + path

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> LoopbackRedirect:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __call__(self, url: str) -> str:
        """Open `url` in the browser and return the URL it was redirected to."""
        state = parse_qs(urlsplit(url).query).get("state", [None])[0]
        logger.info("authorize in the browser: %s", url)
        return await self.receive(state, open_url=url)

    async def receive(self, state: str | None = None, *, open_url: str | None = None) -> str:
        """Wait for the redirect (with `state`, if given) and return its full URL;
        `open_url` is opened in the browser once the listener is ready."""
        found: list[str] = []
        listener = await anyio.abc.SocketListener.from_socket(self._sock.dup())
        try:
            with anyio.fail_after(self.timeout):
                async with anyio.create_task_group() as group:
                    if open_url is not None:
                        # Listening already: a browser (or a test) may follow the
                        # redirect before the opener returns.
                        group.start_soon(self._open, open_url)
                    while not found:
                        stream = await listener.accept()
                        group.start_soon(self._serve, stream, state, found, group.cancel_scope)
        except TimeoutError:
            raise TimeoutError(
                f"no authorization redirect reached {self.uri} within {self.timeout} s"
            ) from None
        finally:
            await listener.aclose()
        return found[0]

    async def _open(self, url: str) -> None:
        opener = self.open_browser
        opened = False
        if opener is not None:
            try:
                opened = bool(await anyio.to_thread.run_sync(opener, url))
            except Exception as exc:
                logger.warning("opening the browser failed: %s", exc)
        if not opened:
            logger.warning("open this URL in a browser to authorize: %s", url)

    async def _serve(
        self,
        stream: anyio.abc.SocketStream,
        state: str | None,
        found: list[str],
        done: anyio.CancelScope,
    ) -> None:
        async with stream:
            conn = h11.Connection(h11.SERVER, max_incomplete_event_size=_READ)
            request: h11.Request | None = None
            try:
                with anyio.fail_after(_REQUEST_TIMEOUT):
                    while request is None:
                        event = conn.next_event()
                        if event is h11.NEED_DATA:
                            conn.receive_data(await stream.receive(_READ))
                        elif isinstance(event, h11.Request):
                            request = event
                        else:
                            return
            except (TimeoutError, anyio.EndOfStream, OSError, anyio.BrokenResourceError):
                return
            except h11.RemoteProtocolError:
                return
            target = request.target.decode("latin-1")
            parts = urlsplit(target)
            got_state = parse_qs(parts.query).get("state", [None])[0]
            if request.method != b"GET" or parts.path != self.path:
                status, body = 404, b"Not found"
            elif state is not None and got_state != state:
                status, body = 400, b"This is not the authorization this program is waiting for."
            else:
                status, body = 200, _DONE_PAGE
            headers = [
                ("content-type", "text/html; charset=utf-8" if status == 200 else "text/plain"),
                ("content-length", str(len(body))),
                ("connection", "close"),
                ("cache-control", "no-store"),
            ]
            out = b"".join(
                conn.send(event) or b""
                for event in (
                    h11.Response(status_code=status, headers=headers),
                    h11.Data(data=body),
                    h11.EndOfMessage(),
                )
            )
            with contextlib.suppress(OSError, anyio.BrokenResourceError):
                await stream.send(out)
            if status == 200 and not found:
                found.append(self._origin + target)
                done.cancel()
