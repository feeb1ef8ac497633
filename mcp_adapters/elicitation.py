"""What asking the user returns: exactly three outcomes, typed so `.data` exists
only after `action == "accept"`.

`ElicitationResult[Model]` is a tagged union; a type checker narrows it on
`result.action == "accept"` (or a `match` on the classes), so reading `.data`
before checking the action is a type error, not a runtime surprise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, Literal, TypeAlias, TypeVar

from pydantic import BaseModel
from typing_extensions import TypeAliasType

if TYPE_CHECKING:
    from mcp_core.types import ElicitResult

T = TypeVar("T", bound=BaseModel)


class AcceptedElicitation(BaseModel, Generic[T]):
    """The user submitted the form; `data` is the validated answer."""

    action: Literal["accept"] = "accept"
    data: T


class DeclinedElicitation(BaseModel):
    """The user said no. Not an error: the tool decides what it means."""

    action: Literal["decline"] = "decline"


class CancelledElicitation(BaseModel):
    """The user dismissed the question without choosing."""

    action: Literal["cancel"] = "cancel"


class AcceptedUrlElicitation(BaseModel):
    """The user agreed to open the URL (not that the work there is done)."""

    action: Literal["accept"] = "accept"


# A TypeAliasType keeps the alias generic at runtime too: ElicitationResult[Model] in annotations.
ElicitationResult = TypeAliasType(
    "ElicitationResult",
    AcceptedElicitation[T] | DeclinedElicitation | CancelledElicitation,
    type_params=(T,),
)
UrlElicitationResult: TypeAlias = (
    AcceptedUrlElicitation | DeclinedElicitation | CancelledElicitation
)


def form_outcome(schema: type[T], answer: ElicitResult) -> ElicitationResult[T]:
    """A client's answer as an outcome; an accepted answer is validated against `schema`.

    Raises `pydantic.ValidationError` when the content does not fit the model:
    an invalid answer is never passed on as if it were valid.
    """
    if answer.action == "accept":
        from mcp_core import validate_form_answer

        return AcceptedElicitation[schema](data=validate_form_answer(schema, answer.content))  # type: ignore[valid-type]
    if answer.action == "decline":
        return DeclinedElicitation()
    return CancelledElicitation()


def url_outcome(answer: ElicitResult) -> UrlElicitationResult:
    if answer.action == "accept":
        return AcceptedUrlElicitation()
    if answer.action == "decline":
        return DeclinedElicitation()
    return CancelledElicitation()


__all__ = [
    "AcceptedElicitation",
    "AcceptedUrlElicitation",
    "CancelledElicitation",
    "DeclinedElicitation",
    "ElicitationResult",
    "UrlElicitationResult",
    "form_outcome",
    "url_outcome",
]
