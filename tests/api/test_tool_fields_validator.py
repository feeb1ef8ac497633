"""A tool's arguments are validated without making the arguments model's instance
(`FunctionTool.fields_check`): the same fields, the same errors, word for word, as the
model's own validator gives, for every kind of signature; and a model with more than
fields, or a reassigned `arguments_model`, is still validated by the model itself."""

from typing import Annotated, Any, Literal, Optional

import pydantic
import pytest
from pydantic import BaseModel, Field, model_validator

from mcp_adapters import Client
from mcp_adapters.server import MCPServer
from mcp_adapters.server._functions import FunctionTool, fields_validator

pytestmark = pytest.mark.anyio


class Inner(BaseModel):
    a: int
    b: list[str] = []


class Tree(BaseModel):
    v: int
    kids: list["Tree"] = []


def text_tool(text: str) -> str:
    return text


def scalars(n: int, m: float = 1.5, flag: bool = False, tags: list[str] | None = None) -> str:
    return ""


def nested(inner: Inner, when: Literal["a", "b"] = "a", x: Annotated[int, Field(gt=0)] = 3) -> str:
    return ""


def recursive(tree: Tree, opt: Optional[Inner] = None, anyv: Any = None) -> str:  # noqa: UP045
    return ""


def no_arguments() -> str:
    return ""


def factory(items: list[Inner] = Field(default_factory=list)) -> str:  # noqa: B008
    return ""


SIGNATURES = [text_tool, scalars, nested, recursive, no_arguments, factory]

INPUTS: list[dict[str, Any]] = [
    {},
    {"text": "x"},
    {"text": 1},
    {"text": "x", "extra": 1},
    {"n": "3"},
    {"n": 3, "m": "x"},
    {"n": 1.5},
    {"n": float("nan"), "m": float("inf")},
    {"tags": [1, "a"], "n": 2},
    {"inner": {"a": "1"}},
    {"inner": {"a": "z", "b": [1]}},
    {"inner": {"a": 1}, "when": "c", "x": 0},
    {"inner": Inner(a=1)},
    {"tree": {"v": 1, "kids": [{"v": "q"}, {"v": 2, "kids": [{"v": 3}]}]}},
    {"tree": {"v": 1}, "opt": {"a": 2}, "anyv": [1, {"z": None}]},
    {"items": [{"a": 1}, {"b": 2}]},
    {"items": "no"},
]


def outcome(validate: Any, arguments: dict[str, Any]) -> tuple[Any, ...]:
    try:
        return ("ok", validate(arguments))
    except pydantic.ValidationError as exc:
        return ("error", str(exc), exc.errors(), exc.title, exc.error_count())


def by_model(model: type[BaseModel]) -> Any:
    return lambda arguments: dict(model.__pydantic_validator__.validate_python(arguments).__dict__)


@pytest.mark.parametrize("fn", SIGNATURES, ids=lambda fn: fn.__name__)
def test_the_fields_are_the_models_and_so_are_the_errors(fn: Any) -> None:
    tool = FunctionTool.build(fn)
    model = tool.arguments_model
    assert tool.fields_check[0] is model
    # Not the model's own validator: the cheaper one is what is measured here.
    assert tool.fields_check[1] != model.__pydantic_validator__.validate_python
    for arguments in INPUTS:
        want = outcome(by_model(model), arguments)
        got = outcome(lambda a: tool.fields_check[1](a)[0], arguments)
        assert repr(got) == repr(want), arguments
        assert repr(outcome(tool.parse_arguments, arguments)) == repr(want)


def test_the_parsed_arguments_are_the_callers_own() -> None:
    tool = FunctionTool.build(scalars)
    first = tool.parse_arguments({"n": 1})
    first["ctx"] = object()
    assert tool.parse_arguments({"n": 1}) == {"n": 1, "m": 1.5, "flag": False, "tags": None}


class Checked(BaseModel):
    low: int
    high: int

    @model_validator(mode="after")
    def ordered(self) -> "Checked":
        if self.low > self.high:
            raise ValueError("low above high")
        return self


class PostInit(BaseModel):
    n: int

    def model_post_init(self, context: Any) -> None:
        self.__dict__["n"] = self.n * 10


@pytest.mark.parametrize("model", [Checked, PostInit])
def test_a_model_with_more_than_fields_is_validated_by_itself(model: type[BaseModel]) -> None:
    validate = fields_validator(model)
    for arguments in [{"low": 2, "high": 1}, {"low": 1, "high": 2}, {"n": 2}, {}]:
        want = outcome(by_model(model), arguments)
        assert repr(outcome(lambda a: validate(a)[0], arguments)) == repr(want)


def test_a_reassigned_arguments_model_is_the_one_that_validates() -> None:
    tool = FunctionTool.build(text_tool)
    tool.arguments_model = Checked
    with pytest.raises(pydantic.ValidationError, match="low above high"):
        tool.parse_arguments({"low": 2, "high": 1})
    assert tool.fields_check[0] is Checked
    assert tool.parse_arguments({"low": 1, "high": 2}) == {"low": 1, "high": 2}


async def test_a_call_answers_as_the_model_would() -> None:
    mcp = MCPServer("fields")
    mcp.tool()(scalars)
    mcp.tool()(text_tool)
    async with Client(mcp) as client:
        bad = await client.call_tool("scalars", {"n": "x", "tags": [1]})
        assert bad.is_error
        try:
            mcp._tools["scalars"].arguments_model.model_validate({"n": "x", "tags": [1]})
        except pydantic.ValidationError as exc:
            expected = f"Invalid arguments for tool scalars: {exc}"
        assert bad.content[0].text == expected
        good = await client.call_tool("text_tool", {"text": "hi"})
        assert good.content[0].text == "hi"
        # A reassigned model is used by the plain call's own path too.
        mcp._tools["text_tool"].arguments_model = Checked
        refused = await client.call_tool("text_tool", {"low": 2, "high": 1})
        assert refused.is_error
        assert "low above high" in refused.content[0].text
