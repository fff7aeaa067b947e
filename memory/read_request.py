"""One read of the memory, checked once where it enters: the API, a served graph's input or
the benchmark's harness build a `ReadRequest` with `read_request` and hand the object down.

Every layer below trusts it: the retrieval graph takes a request handed in by a Python caller
as it is (`graphs.context.Injected.request`) and checks only a served run's raw input, with
this same rule and these same messages, so a caller sees one wording whichever door it used.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from memory.errors import InvalidQueryError
from memory.models import parse_timestamp, utc_now

NO_REQUESTER = (
    "say who asks: a user, who sees only what they may see (the requester; --user NAME or "
    "MEMFUSE_USER on the command line), or an administrative read of everything (admin, "
    "--admin; recorded in the audit log)"
)


class ReadRequest(BaseModel):
    """A question as a run reads it: the text, the asking time fixed, who asks, and k."""

    question: str = Field(description="The question, verbatim.")
    question_time: datetime = Field(description="When it was asked (the wall clock if unset).")
    requester: str | None = Field(default=None, description='Who asked ("I/me/my").')
    admin: bool = Field(
        default=False, description="An administrative read: every event, whoever may see it."
    )
    k: int = Field(description="Events in the final context.")


def asking_time(value: datetime | str | None) -> datetime:
    """The frozen asking time; the wall clock when a caller (e.g. Studio) gave none."""
    if value is None or value == "":
        return utc_now()
    try:
        return parse_timestamp(value)
    except ValueError as exc:
        raise InvalidQueryError(str(exc)) from None


def read_request(
    question: object,
    *,
    question_time: datetime | str | None = None,
    requester: str | None = None,
    admin: bool = False,
    k: object = 20,
    what: str = "question",
) -> ReadRequest:
    """The request, or a one-line `InvalidQueryError` naming what is wrong: text that is not
    text or is empty, k that is not a whole number ≥ 1, nobody asking without `admin`, a
    time that is not a time. `what` names the text in messages ("question", "query")."""
    if not isinstance(question, str):
        raise InvalidQueryError(f"the {what} must be text, got {type(question).__name__}")
    if not question.strip():
        raise InvalidQueryError(f"the {what} is empty")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidQueryError(f"k must be a whole number of at least 1, got {k!r}")
    who = (requester or "").strip() or None
    if who is None and not admin:
        raise InvalidQueryError(NO_REQUESTER)
    return ReadRequest(
        question=question,
        question_time=asking_time(question_time),
        requester=who,
        admin=bool(admin),
        k=k,
    )
