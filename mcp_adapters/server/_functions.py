"""Python functions as MCP tools, prompts and resources.

The signature is the contract: parameters become the input schema (a pydantic
model built once at registration), the docstring the description, the return
annotation the output schema. Parameters filled by the framework (the
`Context`, resolver-filled ones) never appear in the schema.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, get_args, get_origin

import pydantic
import pydantic_core

from mcp_adapters._lazy import LazyModule
from mcp_adapters.server._resolve import (
    Consumer,
    PlanBuilder,
    is_context_annotation,
    resolve_marker,
    wants_outcome,
)
from mcp_core import to_wire

if TYPE_CHECKING:
    from mcp_core import types
else:
    types = LazyModule("mcp_core.types", globals(), "types")

# Filled on first use: the content classes live in `mcp_core.types`, the slowest import of
# the core, which a server should pay for only when a tool returns content.
_CONTENT_TYPES: tuple[type[Any], ...] = ()


def _content_types() -> tuple[type[Any], ...]:
    """The content block classes (`CONTENT_TYPES`), built on first use."""
    global _CONTENT_TYPES
    if not _CONTENT_TYPES:
        _CONTENT_TYPES = (
            types.TextContent,
            types.ImageContent,
            types.AudioContent,
            types.EmbeddedResource,
            types.ResourceLink,
        )
    return _CONTENT_TYPES


def __getattr__(name: str) -> Any:
    """`CONTENT_TYPES` stays importable by name (PEP 562) while the models behind it load
    lazily.
    """
    if name == "CONTENT_TYPES":
        return _content_types()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """`include_extras` keeps `Annotated` metadata, which is where resolver markers and
    pydantic field constraints live. A failure names the function: a forward reference that
    cannot be resolved is a registration bug, and must not surface at the first call.
    """
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise TypeError(f"cannot read the type hints of {fn!r}: {exc}") from exc


def _doc(fn: Callable[..., Any]) -> str | None:
    """`inspect.getdoc` cleans the indentation, so the description a client shows is the
    docstring as written, not as indented in the source.
    """
    doc = inspect.getdoc(fn)
    return doc or None


def _is_object_type(annotation: Any) -> bool:
    """Whether a return annotation already renders as a JSON object (no wrapping)."""
    origin = get_origin(annotation) or annotation
    if isinstance(origin, type):
        if issubclass(origin, pydantic.BaseModel) or origin is dict:
            return True
        if typing.is_typeddict(origin):
            return True
    return False


# Return annotations that promise nothing: no output schema is advertised for them, since
# 2025-06-18 (`outputSchema`) obliges a server that declares one to send `structuredContent`
# matching it on every call.
_NO_OUTPUT = {inspect.Signature.empty, None, type(None), Any}


def fields_validator(model: type[pydantic.BaseModel]) -> Callable[[Any], tuple[Any, ...]]:
    """What validates a tool's arguments: `validate(arguments)[0]` is the dict of the
    model's fields that `model`'s own validator would store as the `__dict__` of the
    instance it makes, with the same checks and the same errors.

    A model's core schema is a `model` schema around a `model-fields` one: the inner
    validator checks and converts every field (defaults, nested models, the config's
    extra handling) and gives `(fields, extra, fields_set)`, and the outer one only
    makes the instance and stores those three in it. A tool reads the fields and drops
    the instance at once, so the inner validator, built on its own with the model's
    config (its title, so `str()` of an error names the model as before), is all it
    needs: about 2,300 instructions less per call (the instance, its four attribute
    stores and its `__dict__` read through pydantic's `__getattr__` hook).

    A model with more than fields (a `model_post_init`, a custom `__init__`, a root
    model, a model validator wrapping the schema, one not built yet) is validated by
    its own validator, and its `__dict__` read as before.
    """
    if not model.__pydantic_complete__:
        model.model_rebuild()  # (raises as validating it would, when it cannot be built)
    schema: Any = model.__pydantic_core_schema__
    definitions = None
    if schema["type"] == "definitions":
        definitions, schema = schema["definitions"], schema["schema"]
    inner = schema.get("schema") if schema["type"] == "model" else None
    if (
        inner is None
        or inner["type"] != "model-fields"
        or schema.get("custom_init")
        or schema.get("root_model")
        or schema.get("post_init")
    ):
        validate = model.__pydantic_validator__.validate_python
        return lambda arguments: (validate(arguments).__dict__.copy(),)
    if definitions is not None:
        inner = {"type": "definitions", "schema": inner, "definitions": definitions}
    return pydantic_core.SchemaValidator(inner, schema.get("config")).validate_python


@dataclass
class FunctionTool:
    """A registered tool: the function, its schemas and how to call it.

    Everything a call needs is computed once at registration (the arguments model, the
    schemas, the output adapter), so a call costs a validation and the function itself.
    """

    fn: Callable[..., Any]
    name: str
    title: str | None
    description: str | None
    arguments_model: type[pydantic.BaseModel]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    wrap_output: bool
    output_adapter: pydantic.TypeAdapter[Any] | None
    context_param: str | None
    resolved: list[Consumer]
    is_async: bool
    #: declared to return `str`: its structured form is `{"result": text}`
    text_output: bool = False
    annotations: Any = None
    icons: Any = None
    meta: dict[str, Any] | None = None
    replay_elicitation: bool | None = None
    #: `@mcp.tool(task=...)`: whether a call may (or must) run as a task
    task_support: str = "forbidden"
    extra: dict[str, Any] = field(default_factory=dict)
    #: `(model, validate)`: `validate(arguments)[0]` is what `arguments_model` would hold
    #: in its `__dict__` after validating `arguments`, without the model instance (see
    #: `fields_validator`); `model` is the `arguments_model` it was made for. Derived, not
    #: given: setting `arguments_model` (at construction, or later) sets it too
    #: (`__setattr__`), so a call reads it with no check that it is still current.
    fields_check: tuple[Any, Any] = field(init=False, repr=False, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name == "arguments_model":
            object.__setattr__(self, "fields_check", (value, fields_validator(value)))

    @classmethod
    def build(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Any = None,
        icons: Any = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        replay_elicitation: bool | None = None,
        input_schema: dict[str, Any] | None = None,
        task: str = "forbidden",
    ) -> FunctionTool:
        """The input schema comes from the signature, so the arguments a client sends are
        validated against the same model the schema was drawn from: the two can never
        disagree. Framework-filled parameters (the `Context`, resolver results) are taken
        out first, so a client can neither see nor supply them.
        """
        if task not in ("forbidden", "optional", "required"):
            raise ValueError(f'task must be "forbidden", "optional" or "required", not {task!r}')
        hints = _hints(fn)
        signature = inspect.signature(fn)
        fields: dict[str, Any] = {}
        context_param: str | None = None
        resolved_params: list[tuple[str, Any, Any]] = []
        for pname, parameter in signature.parameters.items():
            # A JSON object schema has named properties only; `*args` and `**kwargs` have no
            # schema, and accepting them would let a client pass arguments nobody validates.
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise TypeError(f"tool {fn.__name__}: *args and **kwargs cannot become a schema")
            annotation = hints.get(pname, Any)
            marker, base = resolve_marker(annotation)
            if marker is not None:
                resolved_params.append((pname, marker, base))
                continue
            if is_context_annotation(annotation):
                context_param = pname
                continue
            default = ... if parameter.default is parameter.empty else parameter.default
            fields[pname] = (annotation, default)
        tool_name = name or fn.__name__
        model = pydantic.create_model(
            f"{tool_name}Arguments",
            # Arbitrary types are allowed so that a tool may take a type pydantic validates
            # by `isinstance` only; its schema then says less, but the call is still
            # checked.
            __config__=pydantic.ConfigDict(arbitrary_types_allowed=True),
            **fields,
        )
        if input_schema is None:
            input_schema = model.model_json_schema()
            # The model's generated title (`<tool>Arguments`) is an implementation detail;
            # the tool's name and title already label it for clients.
            input_schema.pop("title", None)
        # else: the schema you declare is what clients see; arguments are still
        # validated against the signature.
        builder = PlanBuilder(set(fields))
        resolved = [
            Consumer(pname, builder.node_for(marker.fn), wants_outcome(base))
            for pname, marker, base in resolved_params
        ]
        returns = hints.get("return", signature.return_annotation)
        output_schema: dict[str, Any] | None = None
        wrap = False
        adapter: pydantic.TypeAdapter[Any] | None = None
        returns_result = isinstance(returns, type) and issubclass(returns, types.CallToolResult)
        if (
            structured_output is not False
            and returns not in _NO_OUTPUT
            and not returns_result  # a CallToolResult carries its own structured content
            and not _is_content(returns)
        ):
            try:
                adapter = pydantic.TypeAdapter(returns)
                rendered = adapter.json_schema(mode="serialization")
            except (pydantic.PydanticSchemaGenerationError, TypeError):
                if structured_output:
                    raise
                adapter = None
            else:
                # 2025-06-18 requires `outputSchema` to be an object schema; a scalar or
                # list return is wrapped as `{"result": ...}`, the convention the official
                # SDK uses, so clients written against it read the same shape.
                if _is_object_type(returns):
                    output_schema = rendered
                else:
                    wrap = True
                    defs = rendered.pop("$defs", None)
                    output_schema = {
                        "type": "object",
                        "properties": {"result": rendered},
                        "required": ["result"],
                    }
                    if defs:
                        output_schema["$defs"] = defs
        return cls(
            fn=fn,
            name=tool_name,
            title=title,
            description=description if description is not None else _doc(fn),
            arguments_model=model,
            input_schema=input_schema,
            output_schema=output_schema,
            wrap_output=wrap,
            output_adapter=adapter,
            context_param=context_param,
            resolved=resolved,
            is_async=inspect.iscoroutinefunction(fn),
            text_output=returns is str and wrap,
            annotations=annotations,
            icons=icons,
            meta=meta,
            replay_elicitation=replay_elicitation,
            task_support=task,
        )

    def definition(self) -> types.Tool:
        """The `Tool` as `tools/list` shows it; built per listing so a tool's metadata changed
        after registration is what clients see.
        """
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=self.annotations,
            icons=self.icons,
            _meta=self.meta,
        )

    def parse_arguments(self, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Validated keyword arguments, a dict of the caller's own; raises
        pydantic.ValidationError."""
        # Missing arguments are an empty object: a tool without required parameters may be
        # called with no `arguments` member at all (the schema makes it optional).
        # The fields of the model, validated as the model would be (`fields_validator`):
        # the dict is made by this validation, so it is the caller's to add to.
        fields: dict[str, Any] = self.fields_check[1](arguments or {})[0]
        return fields

    def to_wire_result(self, value: Any) -> dict[str, Any]:
        """`to_result` in wire form; text, the common case, without building models.

        The plain-string path skips the models entirely: it is the most common return of a
        tool, and building and dumping a CallToolResult for it was most of a small call's
        cost.
        """
        if type(value) is str:
            wire: dict[str, Any] = {"content": [{"type": "text", "text": value}]}
            if self.output_schema is not None and self.text_output:
                wire["structuredContent"] = {"result": value}
                return wire
            if self.output_adapter is None:
                return wire
        result: dict[str, Any] = to_wire(self.to_result(value))
        return result

    def to_result(self, value: Any) -> types.CallToolResult:
        """A function's return value as a CallToolResult (structured when declared)."""
        if isinstance(value, types.CallToolResult):
            return value
        structured: Any = None
        if self.output_adapter is not None and self.output_schema is not None:
            dumped = self.output_adapter.dump_python(value, mode="json", by_alias=True)
            structured = {"result": dumped} if self.wrap_output else dumped
        return types.CallToolResult(content=to_content(value), structured_content=structured)


def _is_content(annotation: Any) -> bool:
    """A return annotation of content blocks (or a list of them) means the function builds its
    own content: no output schema is drawn for it, since content is not structured output.
    """
    members = (
        get_args(annotation)
        if get_origin(annotation) in (typing.Union, type(int | str))
        else (annotation,)
    )
    for member in members:
        origin = get_origin(member) or member
        if origin is list:
            args = get_args(member)
            if args and _is_content(args[0]):
                return True
        if isinstance(origin, type) and issubclass(origin, _content_types()):
            return True
    return False


def to_content(value: Any) -> list[Any]:
    """Content blocks for a return value: text for scalars, JSON for data."""
    if value is None:
        return []
    content_types = _CONTENT_TYPES or _content_types()
    if isinstance(value, content_types):
        return [value]
    if isinstance(value, str):
        return [types.TextContent(type="text", text=value)]
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, content_types) for v in value)
    ):
        return list(value)
    # Data becomes JSON text as well as structured content: clients that predate
    # `structuredContent` (before 2025-06-18) still see the value, as the spec recommends.
    if isinstance(value, pydantic.BaseModel):
        text = value.model_dump_json(by_alias=True)
    else:
        try:
            text = json.dumps(pydantic.TypeAdapter(Any).dump_python(value, mode="json"))
        except (TypeError, ValueError, pydantic_core.PydanticSerializationError):
            # A value JSON cannot represent still answers, as its `str`: a tool's result
            # should reach the client rather than fail on its serialisation.
            text = str(value)
    return [types.TextContent(type="text", text=text)]


# ------------------------------------------------------------------ prompts


@dataclass
class FunctionPrompt:
    """Prompt arguments are strings on the wire in every revision (`prompts/get`), so only
    their names and whether they are required are taken from the signature.
    """

    fn: Callable[..., Any]
    name: str
    title: str | None
    description: str | None
    arguments: list[dict[str, Any]]
    context_param: str | None
    is_async: bool
    icons: Any = None

    @classmethod
    def build(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Any = None,
    ) -> FunctionPrompt:
        hints = _hints(fn)
        arguments: list[dict[str, Any]] = []
        context_param = None
        for pname, parameter in inspect.signature(fn).parameters.items():
            annotation = hints.get(pname, Any)
            if is_context_annotation(annotation):
                context_param = pname
                continue
            arguments.append({"name": pname, "required": parameter.default is parameter.empty})
        return cls(
            fn,
            name or fn.__name__,
            title,
            description if description is not None else _doc(fn),
            arguments,
            context_param,
            inspect.iscoroutinefunction(fn),
            icons,
        )


# ---------------------------------------------------------------- resources

# RFC 6570 level 1 (simple `{var}` expansion), which is what resource templates use in
# practice; each variable matches one path segment.
_TEMPLATE_VAR = re.compile(r"{([^{}]+)}")


@dataclass
class FunctionResource:
    """A resource (fixed URI) or a resource template (URI with `{variables}`)."""

    fn: Callable[..., Any]
    uri: str
    name: str
    title: str | None
    description: str | None
    mime_type: str | None
    context_param: str | None
    is_async: bool
    pattern: re.Pattern[str] | None = None
    icons: Any = None

    @classmethod
    def build(
        cls,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: Any = None,
    ) -> FunctionResource:
        hints = _hints(fn)
        context_param = None
        for pname in inspect.signature(fn).parameters:
            if is_context_annotation(hints.get(pname, Any)):
                context_param = pname
        pattern = None
        variables = _TEMPLATE_VAR.findall(uri)
        if variables:
            # The literal parts are escaped: a template's dots and query marks match
            # themselves, never any character.
            regex = "".join(
                f"(?P<{part}>[^/]+)" if i % 2 else re.escape(part)
                for i, part in enumerate(_TEMPLATE_VAR.split(uri))
            )
            pattern = re.compile(f"^{regex}$")
        return cls(
            fn,
            uri,
            name or fn.__name__,
            title,
            description if description is not None else _doc(fn),
            mime_type,
            context_param,
            inspect.iscoroutinefunction(fn),
            pattern,
            icons,
        )

    def match(self, uri: str) -> dict[str, str] | None:
        """A template variable never spans a `/`: a URI such as `file:///a/../b` cannot smuggle
        a path into one variable, and the regex has no nested quantifier to backtrack on
        (the ReDoS of CVE-2026-0621, RELIABILITY.md 1.2).
        """
        if self.pattern is None:
            return {} if uri == self.uri else None
        found = self.pattern.match(uri)
        return found.groupdict() if found else None
