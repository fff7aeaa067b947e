"""`memory.read_request`: the one rule a read is checked by, wherever it enters."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.errors import InvalidQueryError
from memory.models import utc_now
from memory.read_request import NO_REQUESTER, read_request

AT = datetime(2026, 5, 13, 15, 0)


@given(
    question=st.one_of(st.text(max_size=20), st.none(), st.integers()),
    k=st.one_of(st.integers(-3, 30), st.booleans(), st.floats(allow_nan=False), st.none()),
    requester=st.one_of(st.none(), st.sampled_from(["", "  ", "Anna", " Ben "])),
    admin=st.booleans(),
)
def test_a_request_is_built_only_from_usable_input(
    question: object, k: object, requester: str | None, admin: bool
) -> None:
    usable_text = isinstance(question, str) and bool(question.strip())
    usable_k = isinstance(k, int) and not isinstance(k, bool) and k >= 1
    someone = bool((requester or "").strip()) or admin
    if usable_text and usable_k and someone:
        request = read_request(question, question_time=AT, requester=requester, admin=admin, k=k)
        assert request.question == question and request.k == k and request.admin == admin
        assert request.requester == ((requester or "").strip() or None)
        assert request.question_time == AT
    else:
        with pytest.raises(InvalidQueryError) as raised:
            read_request(question, question_time=AT, requester=requester, admin=admin, k=k)
        assert "\n" not in str(raised.value)


def test_messages_name_what_is_wrong() -> None:
    with pytest.raises(InvalidQueryError, match="the query is empty"):
        read_request("  ", requester="Anna", what="query")
    with pytest.raises(InvalidQueryError, match="k must be a whole number of at least 1, got 0"):
        read_request("milk?", requester="Anna", k=0)
    with pytest.raises(InvalidQueryError) as raised:
        read_request("milk?")
    assert str(raised.value).endswith(NO_REQUESTER)
    with pytest.raises(InvalidQueryError):
        read_request("milk?", requester="Anna", question_time="last Tuesday-ish")


def test_the_time_is_fixed_once() -> None:
    parsed = read_request("milk?", requester="Anna", question_time="2026-05-13T15:00:00")
    assert parsed.question_time == AT
    before = utc_now()
    unset = read_request("milk?", requester="Anna")
    assert before <= unset.question_time <= utc_now()  # the wall clock, read once
