"""Resolvers: parameters filled by running a function before the tool body.

`Annotated[T, Resolve(fn)]` marks a parameter. `fn` takes tool arguments by
name, the `Context`, and other resolved parameters (dependencies form a DAG),
and returns either a value (no round trip) or a *question*: `Elicit`,
`ElicitUrl`, `Sample` or `ListRoots`. How a question travels is not the
resolver's business: an `Asker` decides. On a legacy connection it sends the
server-to-client request and waits; on a 2026-07-28 connection it collects
every question that can be asked now, the call ends with an
`InputRequiredResult`, and the retry brings the answers back.

Every question has a short, stable key (the resolver's function name), so the
answer of one round can be matched on the next, by any process that shares the
sealing keys.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Generic, Protocol, TypeVar, get_args, get_origin

import pydantic

from mcp_adapters._lazy import LazyModule

if TYPE_CHECKING:
    from mcp_adapters import elicitation
else:
    elicitation = LazyModule("mcp_adapters.elicitation", globals(), "elicitation")

T = TypeVar("T", bound="pydantic.BaseModel")

# Every outcome a question can have, form or URL: injected as is, never re-wrapped.
_OUTCOMES: tuple[type[Any], ...] = ()


def _outcome_types() -> tuple[type[Any], ...]:
    global _OUTCOMES
    if not _OUTCOMES:
        _OUTCOMES = (
            elicitation.AcceptedElicitation,
            elicitation.AcceptedUrlElicitation,
            elicitation.DeclinedElicitation,
            elicitation.CancelledElicitation,
        )
    return _OUTCOMES


class Resolve:
    """Marks a parameter as filled by `fn` instead of by the client's arguments."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise TypeError("Resolve() takes the resolver function")
        self.fn = fn

    def __repr__(self) -> str:
        return f"Resolve({getattr(self.fn, '__name__', self.fn)!r})"


class Question:
    """Something a resolver (or the tool body) asks the client."""

    method: str = ""

    def params(self, revision: str) -> dict[str, Any]:
        raise NotImplementedError

    def outcome(self, answer: Any) -> Any:
        return answer


class Elicit(Question, Generic[T]):
    """Ask the user to fill a form shaped like `schema` (flat primitives only)."""

    method = "elicitation/create"

    def __init__(self, message: str, schema: type[T]) -> None:
        self.message = message
        self.schema = schema
        from mcp_core import form_schema

        form_schema(schema)  # refuse an impossible form now, not mid-call

    def params(self, revision: str) -> dict[str, Any]:
        from mcp_core import form_schema

        rendering = "2025-06-18" if revision == "2025-06-18" else "2025-11-25"
        return {
            "mode": "form",
            "message": self.message,
            "requestedSchema": form_schema(self.schema, revision=rendering),
        }

    def outcome(self, answer: Any) -> Any:
        from mcp_core.types import ElicitResult

        return elicitation.form_outcome(self.schema, _as(ElicitResult, answer))


class ElicitUrl(Question):
    """Send the user to a URL (URL-mode elicitation); only the action comes back."""

    method = "elicitation/create"

    def __init__(self, message: str, url: str, elicitation_id: str | None = None) -> None:
        self.message = message
        self.url = url
        self.elicitation_id = elicitation_id

    def params(self, revision: str) -> dict[str, Any]:
        # The engine sends the id where the revision has one (2025-11-25) and drops it
        # elsewhere; without one given, the URL names the elicitation.
        return {
            "mode": "url",
            "message": self.message,
            "url": self.url,
            "elicitationId": self.elicitation_id or self.url,
        }

    def outcome(self, answer: Any) -> Any:
        from mcp_core.types import ElicitResult

        return elicitation.url_outcome(_as(ElicitResult, answer))


class Sample(Question):
    """Ask the client's model for a completion (sampling; deprecated in 2026-07-28)."""

    method = "sampling/createMessage"

    def __init__(self, messages: list[Any], max_tokens: int, **options: Any) -> None:
        self.messages = messages
        self.max_tokens = max_tokens
        self.options = options

    def params(self, revision: str) -> dict[str, Any]:
        from mcp_core import to_wire

        params: dict[str, Any] = {
            "messages": [to_wire(m) for m in self.messages],
            "maxTokens": self.max_tokens,
        }
        for name, value in self.options.items():
            if value is not None:
                params[_camel(name)] = (
                    to_wire(value) if not isinstance(value, list) else [to_wire(v) for v in value]
                )
        return params

    def outcome(self, answer: Any) -> Any:
        from mcp_core.types import CreateMessageResult

        return _as(CreateMessageResult, answer)


class ListRoots(Question):
    """Ask the client for its roots (deprecated in 2026-07-28)."""

    method = "roots/list"

    def params(self, revision: str) -> dict[str, Any]:
        return {}

    def outcome(self, answer: Any) -> Any:
        from mcp_core.types import ListRootsResult

        return _as(ListRootsResult, answer)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _as(model: type[Any], answer: Any) -> Any:
    return answer if isinstance(answer, model) else model.model_validate(answer)


class NeedInput(BaseException):
    """Raised by a modern `Asker` when a question has no recorded answer yet.

    A BaseException, like cancellation, so a tool body's `except Exception`
    cannot swallow it.
    """

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class Asker(Protocol):
    """How a question reaches the client (see the module docstring).

    `ask` returns the question's *outcome* (`question.outcome(answer)`): an
    answer that does not validate is asked again (2026-07-28) or fails the
    call (legacy), never passed on.
    """

    async def ask(self, key: str, question: Question) -> Any: ...


class ToolFailure(Exception):
    """Ends a tool call with an error result (isError) carrying this message."""


# --------------------------------------------------------------------- plans


@dataclass(slots=True)
class Consumer:
    """One resolved parameter: which resolver fills it and in what shape."""

    param: str
    node: Node
    wants_outcome: bool  # ElicitationResult[...] annotation: inject the whole outcome


@dataclass(slots=True)
class Node:
    """One resolver function, analysed once at registration."""

    key: str
    fn: Callable[..., Any]
    is_async: bool
    arguments: list[str] = field(default_factory=list)
    context_param: str | None = None
    deps: list[Consumer] = field(default_factory=list)


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # unresolvable forward reference: say where
        raise TypeError(f"cannot read the type hints of {fn!r}: {exc}") from exc


def resolve_marker(annotation: Any) -> tuple[Resolve | None, Any]:
    """(the Resolve marker, the annotated type) of an `Annotated[...]` annotation."""
    if get_origin(annotation) is Annotated:
        base, *extras = get_args(annotation)
        for extra in extras:
            if isinstance(extra, Resolve):
                return extra, base
    return None, annotation


def wants_outcome(annotation: Any) -> bool:
    """True for `ElicitationResult[M]` (or any of its members): inject the outcome itself."""
    alias = elicitation.ElicitationResult
    if annotation is alias or get_origin(annotation) is alias:
        return True
    members = (
        get_args(annotation)
        if get_origin(annotation) in (typing.Union, _UnionType)
        else (annotation,)
    )
    outcome_types = (
        elicitation.AcceptedElicitation,
        elicitation.DeclinedElicitation,
        elicitation.CancelledElicitation,
    )
    for member in members:
        origin = getattr(member, "__pydantic_generic_metadata__", {}).get("origin") or member
        if isinstance(origin, type) and issubclass(origin, outcome_types):
            return True
    return False


_UnionType = type(int | str)


class InjectedContext:
    """The base of `mcp_adapters.server.Context`: a parameter annotated with a subclass
    gets the request's context. Defined here so that analysing a function's signature
    needs nothing of the server module (which itself builds on this one)."""

    __slots__ = ()


def is_context_annotation(annotation: Any) -> bool:
    target = get_origin(annotation) or annotation
    return isinstance(target, type) and issubclass(target, InjectedContext)


class PlanBuilder:
    """Analyses the resolvers of one tool; keys are unique within the tool."""

    def __init__(self, tool_arguments: set[str]) -> None:
        self.tool_arguments = tool_arguments
        self.nodes: dict[Callable[..., Any], Node] = {}
        self.keys: set[str] = set()

    def node_for(self, fn: Callable[..., Any], stack: tuple[Callable[..., Any], ...] = ()) -> Node:
        found = self.nodes.get(fn)
        if found is not None:
            return found
        if fn in stack:
            chain = " -> ".join(getattr(f, "__name__", repr(f)) for f in (*stack, fn))
            raise TypeError(f"resolver dependency cycle: {chain}")
        key = getattr(fn, "__name__", "resolver")
        base, n = key, 1
        while key in self.keys:
            n += 1
            key = f"{base}_{n}"
        self.keys.add(key)
        node = Node(key, fn, inspect.iscoroutinefunction(fn))
        hints = _hints(fn)
        for name, parameter in inspect.signature(fn).parameters.items():
            annotation = hints.get(name, parameter.annotation)
            marker, base_type = resolve_marker(annotation)
            if marker is not None:
                dep = self.node_for(marker.fn, (*stack, fn))
                node.deps.append(Consumer(name, dep, wants_outcome(base_type)))
            elif is_context_annotation(annotation):
                node.context_param = name
            elif name in self.tool_arguments:
                node.arguments.append(name)
            elif parameter.default is inspect.Parameter.empty:
                raise TypeError(
                    f"resolver {node.key}() parameter {name!r} is neither a tool argument, "
                    "the Context, nor another resolver"
                )
        self.nodes[fn] = node
        return node


# ----------------------------------------------------------------- execution


class Resolution:
    """Runs the resolvers of one call; each resolver runs at most once."""

    def __init__(
        self, arguments: Mapping[str, Any], context: Any, asker: Asker, revision: str
    ) -> None:
        self.arguments = arguments
        self.context = context
        self.asker = asker
        self.revision = revision
        self._outcomes: dict[str, Any] = {}
        self.pending: list[str] = []

    async def fill(self, consumers: list[Consumer]) -> dict[str, Any]:
        """Values for every consumer; questions without answers raise `NeedInput` at the end.

        Independent resolvers all run before giving up, so a 2026-07-28 client
        gets every question that can be asked now in one round.
        """
        values: dict[str, Any] = {}
        for consumer in consumers:
            try:
                values[consumer.param] = self.shape(consumer, await self.run(consumer.node))
            except NeedInput as need:
                self.pending.append(need.key)
        if self.pending:
            raise NeedInput(self.pending[0])
        return values

    def shape(self, consumer: Consumer, outcome: Any) -> Any:
        if consumer.wants_outcome:
            if isinstance(outcome, _OUTCOMES or _outcome_types()):
                return outcome
            return elicitation.AcceptedElicitation[type(outcome)](data=outcome)  # type: ignore[misc,operator]
        if isinstance(outcome, elicitation.AcceptedElicitation):
            return outcome.data
        if isinstance(outcome, (elicitation.DeclinedElicitation, elicitation.CancelledElicitation)):
            raise ToolFailure(
                f"{consumer.param}: the user {'declined' if outcome.action == 'decline' else 'cancelled'}"
            )
        return outcome

    async def run(self, node: Node) -> Any:
        if node.key in self._outcomes:
            outcome = self._outcomes[node.key]
            if isinstance(outcome, NeedInput):
                raise outcome
            return outcome
        try:
            kwargs: dict[str, Any] = {name: self.arguments.get(name) for name in node.arguments}
            if node.context_param is not None:
                kwargs[node.context_param] = self.context
            blocked: NeedInput | None = None
            for dep in node.deps:
                try:
                    kwargs[dep.param] = self.shape(dep, await self.run(dep.node))
                except NeedInput as need:
                    blocked = blocked or need
            if blocked is not None:
                raise blocked
            value = node.fn(**kwargs)
            if node.is_async or isinstance(value, Awaitable):
                value = await value
            if isinstance(value, Question):
                value = await self.asker.ask(node.key, value)
        except NeedInput as need:
            self._outcomes[node.key] = need
            raise
        self._outcomes[node.key] = value
        return value
