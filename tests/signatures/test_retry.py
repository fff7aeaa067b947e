"""signatures.retry: the retry budget, counted without a server (the waits are recorded)."""

from __future__ import annotations

import pytest

from memfuse.settings import MemFuseSettings
from signatures.retry import LLMProviderError, RetryPolicy, call_with_retries, one_line


class Flaky(Exception):
    """A transient provider error."""


def test_no_retry_starts_past_the_budget() -> None:
    waits: list[float] = []
    calls = 0

    def always_failing() -> str:
        nonlocal calls
        calls += 1
        raise Flaky("503")

    policy = RetryPolicy(retries=8, base_delay=1.0, budget_s=2.5, sleep=waits.append)
    with pytest.raises(LLMProviderError, match="after 3 attempt"):
        call_with_retries(
            "test", always_failing, policy, errors=(Flaky,), transient=lambda exc: True
        )
    assert waits == [1.0, 2.0] and calls == 3  # a third wait (4 s) would pass 2.5 s


def test_without_a_budget_the_retry_count_alone_bounds_a_call() -> None:
    waits: list[float] = []
    policy = RetryPolicy(retries=2, base_delay=0.5, sleep=waits.append)
    replies = iter([Flaky("a"), Flaky("b"), "ok"])

    def call() -> str:
        reply = next(replies)
        if isinstance(reply, Exception):
            raise reply
        return reply

    assert (
        call_with_retries(
            "test", call, policy, errors=(Flaky,), transient=lambda exc: True, endpoint="x"
        )
        == "ok"
    )
    assert waits == [0.5, 1.0]


def test_settings_give_the_budgeted_policy() -> None:
    settings = MemFuseSettings(llm_retries=1, llm_retry_seconds=4.0, _env_file=None)
    policy = RetryPolicy.from_settings(settings)
    assert (policy.retries, policy.budget_s) == (1, 4.0)
    assert RetryPolicy().budget_s is None  # the benchmark's paper policy is unbounded


def test_provider_text_is_shown_as_one_short_line() -> None:
    assert one_line("a\nb\u202ec", 200) == "a b c"
    assert one_line("x" * 300, 10) == "x" * 9 + "…"
