"""`OAuthProvider`: what `Client(url, auth=...)` needs to get and keep a token.

The rules are the core's (`mcp_core.oauth.OAuthClientFlow`); this module performs
the flow's HTTP requests (our h11 fetch, `mcp_adapters.auth._fetch`), calls the
browser step, persists the record, and wires it all to one HTTP session:

* before each request is started, a token about to expire is refreshed (one
  refresh at a time; requests wait for it rather than race it);
* a 401, or a 403 `insufficient_scope`, holds the request in the core's HTTP client
  (`AuthorizationChallenged`); one flow runs for all the requests held meanwhile,
  and they are sent again with the new token. The core retries a request at most
  once per kind of challenge; the flow's own limits bound step-ups per session;
* a flow that fails (the user refused, the resource names another server, an
  `iss` mismatch ...) fails the held requests, and every later challenge of the
  session at once: the caller gets `AuthorizationFailedError` with the
  `OAuthError` as its cause, and never a second consent screen behind the first.
  A new `Client` tries again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import ssl
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Protocol

import anyio

from mcp_adapters.auth._fetch import fetch
from mcp_adapters.oauth._storage import InMemoryTokenStorage, TokenStorage
from mcp_core import LATEST, LATEST_LEGACY
from mcp_core.http import AuthorizationChallenged, HTTPClientEndpoint
from mcp_core.oauth import (
    AUTHORIZATION_RULES,
    AuthorizationRequest,
    Authorized,
    OAuthClientConfig,
    OAuthClientFlow,
    OAuthHTTPRequest,
    OAuthRecord,
    Step,
)

__all__ = ["AuthorizationFailedError", "AuthorizeCallback", "OAuthProvider"]

logger = logging.getLogger(__name__)

#: Open the authorization URL for the user; return the URL the browser was
#: redirected to (the redirect URI with `code`, `state`, `iss`).
AuthorizeCallback = Callable[[str], Awaitable[str]]

#: The local error code (never on the wire) of the requests failed because the
#: flow failed; `raise_failure` turns them into `AuthorizationFailedError`.
AUTHORIZATION_FAILED = -32010

# The flow's own request headers that `fetch` sets itself.
_FETCH_SETS = frozenset({"host", "content-length"})


class AuthorizationFailedError(Exception):
    """A request could not be authorized: the OAuth flow failed (its `OAuthError`,
    or the network error, is `__cause__` and `error`)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(f"authorization failed: {type(error).__name__}: {error}")
        self.error = error


class OAuthProvider:
    """How a `Client` authorizes to one MCP server over HTTP (see the module docstring).

    `config` is the core's `OAuthClientConfig` (or give its fields as keywords:
    `redirect_uri=`, `client_name=`, `client=PreRegisteredClient(...)`,
    `client_metadata_url=`, `grant_type="client_credentials"` ...). `storage`
    keeps the record (`InMemoryTokenStorage()` by default; `FileTokenStorage(path)`
    survives restarts). `authorize` is the browser step, needed for the
    authorization code grant: `LoopbackRedirect` for a command-line program, or
    your own coroutine. `timeout` bounds each HTTP request to the authorization
    server and the metadata endpoints; `ssl_context` is for their https.

    One provider serves one MCP server; several `Client`s may share it (and its
    storage), each running its own flow when challenged.
    """

    def __init__(
        self,
        config: OAuthClientConfig | None = None,
        *,
        storage: TokenStorage | None = None,
        authorize: AuthorizeCallback | None = None,
        timeout: float = 30.0,
        ssl_context: ssl.SSLContext | None = None,
        **config_options: Any,
    ) -> None:
        if config is None:
            config = OAuthClientConfig(**config_options)
        elif config_options:
            config = dataclasses.replace(config, **config_options)
        if config.grant_type == "authorization_code" and authorize is None:
            raise ValueError(
                "the authorization code grant needs authorize= (the browser step), "
                "e.g. a LoopbackRedirect"
            )
        self.config = config
        self.storage: TokenStorage = storage if storage is not None else InMemoryTokenStorage()
        self.authorize = authorize
        self.timeout = timeout
        self.ssl_context = ssl_context

    async def upfront_header(self, url: str, *, mode: str = "auto") -> tuple[str, str]:
        """The `Authorization` header for `url` before any request is sent: the stored
        token, refreshed if stale, else a new authorization (discovery from the
        resource's metadata, no challenge needed). For transports that carry
        credentials once, at connect: `Client("ws://...", auth=...)` puts it on the
        WebSocket upgrade. `url` is the resource's http(s) URL; `mode` the client's
        (it picks the revision's discovery rules). Raises `AuthorizationFailedError`.
        """
        revision = _revision(mode)
        try:
            record = await self.storage.load()
        except Exception as exc:  # a broken store: authorize afresh
            logger.warning("loading the stored OAuth record failed: %s", exc)
            record = None
        try:
            flow = OAuthClientFlow(url, self.config, revision=revision, record=record)
        except ValueError as exc:  # a stored record for another resource
            logger.warning("ignoring the stored OAuth record: %s", exc)
            flow = OAuthClientFlow(url, self.config, revision=revision)
        now = time.time()
        header = flow.authorization_header(now)
        if header is not None:
            return header
        try:
            first = flow.refresh(wall_time=now) if flow.needs_refresh(now) else None
            done = await self.run_flow(flow, first or flow.authorize(wall_time=now))
        except Exception as exc:
            raise AuthorizationFailedError(exc) from exc
        return done.header

    def attach(self, session: _Session, endpoint: HTTPClientEndpoint) -> SessionAuth:
        """Bind to one HTTP session (called by `HTTPSession`)."""
        endpoint.hold_challenges = True
        return SessionAuth(self, session, endpoint)

    async def run_flow(self, flow: OAuthClientFlow, step: Step) -> Authorized:
        """Drive `flow` from `step` to `Authorized`, performing each step; save the record."""
        while not isinstance(step, Authorized):
            if isinstance(step, OAuthHTTPRequest):
                answer = await fetch(
                    step.method,
                    step.url,
                    headers=[h for h in step.headers if h[0].lower() not in _FETCH_SETS],
                    body=step.body,
                    max_bytes=step.max_response_bytes,
                    timeout=self.timeout,
                    ssl_context=self.ssl_context,
                )
                step = flow.receive_response(answer.status, answer.body, wall_time=time.time())
            else:
                assert isinstance(step, AuthorizationRequest)
                if self.authorize is None:  # only a misconfigured client_credentials flow
                    raise RuntimeError("the flow needs the browser step, but authorize= is None")
                redirect = await self.authorize(step.url)
                step = flow.receive_redirect(redirect, wall_time=time.time())
        await self.storage.save(step.record)
        return step


def _revision(mode: str) -> str:
    """The revision whose discovery rules apply for a client `mode` (or a negotiated
    version): the one it proposes first, the latest when it has no rules."""
    version = LATEST if mode == "auto" else LATEST_LEGACY if mode == "legacy" else mode
    return version if version in AUTHORIZATION_RULES else LATEST


class _Session(Protocol):
    """What `SessionAuth` uses of an `HTTPSession`."""

    url: str

    @property
    def connection(self) -> Any: ...

    def wake(self) -> None: ...

    def spawn(self, awaitable: Awaitable[Any]) -> None: ...


class SessionAuth:
    """The provider bound to one `HTTPSession`: its flow, its token, its failure."""

    def __init__(
        self, provider: OAuthProvider, session: _Session, endpoint: HTTPClientEndpoint
    ) -> None:
        self.provider = provider
        self._session = session
        self._endpoint = endpoint
        self._flow: OAuthClientFlow | None = None
        self._lock = anyio.Lock()
        self._running = False
        self.failure: BaseException | None = None
        #: The handshake's deadline, set by `HTTPSession`: a flow does not count
        #: against it (a user takes longer to log in than a server to answer).
        self.handshake_scope: anyio.CancelScope | None = None

    # ---------------------------------------------------------- the flow

    def _revision(self) -> str:
        """The revision whose discovery rules apply: the negotiated one, else the one
        the client proposes first."""
        mcp = self._session.connection
        version: str | None = mcp.protocol_version
        return _revision(mcp.config.mode if version is None else version)

    async def _get_flow(self) -> OAuthClientFlow:
        if self._flow is None:
            record = await self.provider.storage.load()
            self._flow = self._new_flow(record)
        return self._flow

    def _new_flow(self, record: OAuthRecord | None) -> OAuthClientFlow:
        url = self._session.url
        try:
            return OAuthClientFlow(
                url, self.provider.config, revision=self._revision(), record=record
            )
        except ValueError as exc:  # a stored record for another resource
            logger.warning("ignoring the stored OAuth record: %s", exc)
            return OAuthClientFlow(url, self.provider.config, revision=self._revision())

    def _use_token(self, flow: OAuthClientFlow) -> None:
        header = flow.authorization_header(time.time())
        self._endpoint.authorization = None if header is None else header[1]

    # ------------------------------------------------------ session hooks

    def must_prepare(self) -> bool:
        """Whether `before_request` has work to do (else the request starts in place)."""
        flow = self._flow
        return flow is None or self._lock.locked() or flow.needs_refresh(time.time())

    async def before_request(self) -> None:
        """Before a request is started: the stored token on first use, a refresh if
        it is about to expire. Waits while a flow runs (it will bring a new token)."""
        if not self.must_prepare():
            return
        async with self._lock:
            try:
                flow = await self._get_flow()
            except Exception as exc:  # the storage failed: go on without a token
                logger.warning("loading the stored OAuth record failed: %s", exc)
                self._flow = self._new_flow(None)
                return
            if self.failure is None and flow.needs_refresh(time.time()):
                try:
                    with self._handshake_paused():  # a refused refresh may need a login
                        await self.provider.run_flow(flow, flow.refresh(wall_time=time.time()))
                except Exception as exc:
                    # Send what we have: the server's 401 will start a full flow.
                    logger.warning("refreshing the access token failed: %s", exc)
                    self._flow = flow = self._new_flow(flow.record)
            self._use_token(flow)

    def challenged(self, event: AuthorizationChallenged) -> None:
        """A request was held on a challenge: run one flow for all held ones."""
        if self._running:
            return  # the flow running now retries it when it ends
        self._running = True
        self._session.spawn(self._authorize(event))

    @contextlib.contextmanager
    def _handshake_paused(self) -> Iterator[None]:
        """Stop the handshake's clock while a flow runs (it may need the user)."""
        scope = self.handshake_scope
        if scope is None or scope.cancel_called or scope.deadline == math.inf:
            yield
            return
        remaining = scope.deadline - anyio.current_time()
        scope.deadline = math.inf
        try:
            yield
        finally:
            scope.deadline = anyio.current_time() + remaining

    async def _authorize(self, event: AuthorizationChallenged) -> None:
        with self._handshake_paused():
            await self._authorize_now(event)
        self._session.wake()

    async def _authorize_now(self, event: AuthorizationChallenged) -> None:
        try:
            async with self._lock:
                if self.failure is not None:
                    raise self.failure
                flow = await self._get_flow()
                step = flow.handle_challenge(
                    event.status,
                    event.headers,
                    wall_time=time.time(),
                    operation=(event.method, event.request_id),
                )
                try:
                    await self.provider.run_flow(flow, step)
                except BaseException:
                    self._flow = self._new_flow(flow.record)
                    raise
                self._use_token(flow)
        except Exception as exc:
            if self.failure is None:
                logger.warning("authorization failed: %s", exc)
                self.failure = exc
            self._running = False
            self._endpoint.fail_challenged(f"authorization failed: {exc}", AUTHORIZATION_FAILED)
        else:
            self._running = False
            self._endpoint.retry_challenged()
        finally:
            self._running = False

    def raise_failure(self, error: BaseException, *, handshake: bool = False) -> None:
        """Re-raise `error` as `AuthorizationFailedError` if the flow's failure caused
        it: a request failed by `fail_challenged`, or (`handshake`) the handshake
        after a failed flow, which ends the connection whatever request it was on."""
        failure = self.failure
        if failure is None or error is failure or isinstance(error, AuthorizationFailedError):
            return
        if handshake or getattr(error, "code", None) == AUTHORIZATION_FAILED:
            raise AuthorizationFailedError(failure) from failure
