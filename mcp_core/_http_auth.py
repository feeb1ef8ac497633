"""The HTTP endpoint's side of resource-server authentication (`HTTPServerEndpoint(auth=)`).

Every request to the endpoint, whatever its method, is judged here once its body is
in (the body is needed for per-tool scopes, and `wall_time` for expiry arrives with
the end of the request):

* the Protected Resource Metadata document is answered at its well-known paths,
  without a token;
* no token, a malformed one, one the guard's cache refuses: answered at once;
* a token the guard has not seen: the exchange waits, and the application gets a
  `TokenVerificationNeeded` event. It verifies the token however it must (I/O) and
  answers with `exchange.receive_token_verification(result, wall_time=...)`; the
  request then goes on, or is refused, exactly as if the answer had been at hand;
* a granted request carries the token's claims on its head (`RequestHead.token`):
  the principal that legacy sessions and sealed `requestState` are bound to.

The per-request scope check (403 `insufficient_scope`) runs in `_post` once the
body is parsed, through `scope_refusal`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ._errors import LocalProtocolError
from ._events import Event
from ._resource_auth import AuthResponse, Granted, NeedsVerification, VerificationResult

if TYPE_CHECKING:
    from ._http_server import HTTPExchange, HTTPServerEndpoint, RequestHead

__all__ = ["AccessRefused", "TokenVerificationNeeded"]


@dataclass(frozen=True, slots=True)
class TokenVerificationNeeded(Event):
    """A request carries a token the endpoint's guard has not verified yet.

    Verify `token` (a JWT against the issuer's keys, an RFC 7662 introspection ...),
    then call `exchange.receive_token_verification(result, wall_time=...)` (the wall clock)
    with an `AccessToken`, `InvalidToken` or `VerifierUnavailable`, and act on the
    events it returns as on any others. Until then the request waits. Keep `token`
    out of logs, and never send it anywhere but to the verifier.
    """

    exchange: HTTPExchange
    token: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class AccessRefused(Event):
    """The endpoint refused a request for its credentials (401, 403, 400, or 503 when
    the verifier could not decide); for your logs and your intrusion detection. The
    reason never quotes the token."""

    method: str
    target: str
    status: int
    reason: str


def _path(target: str) -> str:
    """The target's path: a query (a cache-buster, say) must not turn the
    public metadata document into a 401."""
    return target.split("?", 1)[0]


def authorize(
    endpoint: HTTPServerEndpoint, http: HTTPExchange, head: RequestHead, body: bytes
) -> list[Event]:
    """Judge a complete request (called instead of dispatching it)."""
    guard = endpoint.auth
    assert guard is not None
    # The metadata document first, and without a token: it is how a client
    # without one learns where to get one (RFC 9728 3 and 5).
    if guard.is_metadata_path(_path(head.target)):
        return respond(http, head, guard.metadata_response(head.method))
    wall = endpoint.moment.wall
    # Raised rather than skipped: judging tokens without the time would
    # accept expired ones, and that must fail in development, not in an audit.
    if wall is None:
        raise LocalProtocolError(
            "this endpoint checks access tokens (auth=): pass wall_time=<the wall clock> with "
            "the end of every request, or no token's expiry can be judged"
        )
    outcome = guard.authenticate(head.headers, target=head.target, wall_time=wall)
    if isinstance(outcome, NeedsVerification):
        # The body has been read already; it is kept so the request can go on
        # unchanged when the answer comes, on this exchange and no other.
        http.auth_pending = (head, body, outcome.token)
        return [TokenVerificationNeeded(http, outcome.token)]
    return _go_on(endpoint, http, head, body, outcome)


def resume(http: HTTPExchange, result: VerificationResult) -> list[Event]:
    """The application's answer to `TokenVerificationNeeded`."""
    pending = http.auth_pending
    if pending is None:
        raise LocalProtocolError("no token verification is pending on this exchange")
    http.auth_pending = None  # cleared first: a second answer cannot dispatch twice
    head, body, token = pending
    endpoint = http.endpoint
    guard = endpoint.auth
    assert guard is not None
    # The time of the answer, not of the request: verification may have taken
    # long enough for a token that was current to expire.
    wall = endpoint.moment.wall
    if wall is None:
        raise LocalProtocolError(
            "receive_token_verification() needs wall_time=<the wall clock, seconds since the epoch>"
        )
    return _go_on(endpoint, http, head, body, guard.judge(token, result, wall_time=wall))


def _go_on(
    endpoint: HTTPServerEndpoint,
    http: HTTPExchange,
    head: RequestHead,
    body: bytes,
    outcome: Granted | AuthResponse,
) -> list[Event]:
    """Refuse, or route the request with the granted token on its head: routing
    and every later event of the exchange see the principal it speaks for."""
    if isinstance(outcome, AuthResponse):
        return respond(http, head, outcome)
    head = replace(head, token=outcome.token)
    http.grant(head)
    return endpoint.route(http, head, body)


def scope_refusal(
    endpoint: HTTPServerEndpoint, http: HTTPExchange, head: RequestHead, message: Any
) -> list[Event] | None:
    """403 `insufficient_scope` for a parsed POST body whose requests need scopes the
    head's token lacks; None when it may go on."""
    guard = endpoint.auth
    token = head.token
    if guard is None or token is None:  # an endpoint without auth=: nothing to check
        return None
    refusal = guard.check_scopes(token, message)
    return None if refusal is None else respond(http, head, refusal)


def respond(http: HTTPExchange, head: RequestHead, answer: AuthResponse) -> list[Event]:
    """Send the guard's answer; a refusal is also reported as `AccessRefused`,
    after the response is queued, so the answer goes out whatever the
    application does with the event."""
    http.respond(answer.status, list(answer.headers), answer.body)
    if answer.status < 400:  # the metadata document: served, not refused
        return []

    return [AccessRefused(head.method, head.target, answer.status, answer.reason)]
