"""signatures.lm: one model-name rule, a DSPy LM under the retry budget, who decided.

The DSPy LM is exercised end to end against the local fake OpenAI server
(tests/support/fake_openai.py): what it sends, how long it keeps retrying a failing endpoint,
and that an endpoint which just gave up is not called again at once. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import dspy
import pytest
from dspy.utils.exceptions import AdapterParseError

from memfuse.settings import MemFuseSettings
from memory.errors import ConfigurationError
from signatures.lm import describe_failure, lm_from_settings, model_names, offline_fallback
from signatures.retry import LLMProviderError, LLMUnavailableError, forget_outages
from tests.support.fake_openai import Fail, start_fake_openai


@pytest.fixture(autouse=True)
def _fresh_endpoints() -> Iterator[None]:
    forget_outages()
    yield
    forget_outages()


@pytest.mark.parametrize(
    ("configured", "provider", "endpoint", "litellm"),
    [
        (
            "Qwen/Qwen2.5-7B-Instruct",
            "openai",
            "Qwen/Qwen2.5-7B-Instruct",
            "openai/Qwen/Qwen2.5-7B-Instruct",
        ),
        ("gpt-4o-mini", "openai", "gpt-4o-mini", "openai/gpt-4o-mini"),
        ("openai/gpt-4o-mini", "openai", "gpt-4o-mini", "openai/gpt-4o-mini"),
        ("openai/openai/gpt-oss-20b", "openai", "openai/gpt-oss-20b", "openai/openai/gpt-oss-20b"),
        (
            "hosted_vllm/Qwen/Qwen2.5-7B-Instruct",
            "hosted_vllm",
            "Qwen/Qwen2.5-7B-Instruct",
            "hosted_vllm/Qwen/Qwen2.5-7B-Instruct",
        ),
        (" gpt-4o-mini ", None, "gpt-4o-mini", "openai/gpt-4o-mini"),
    ],
)
def test_one_rule_names_the_model_for_both_clients(
    configured: str, provider: str | None, endpoint: str, litellm: str
) -> None:
    names = model_names(configured, provider)
    assert (names.endpoint, names.litellm) == (endpoint, litellm)


@pytest.mark.parametrize(
    ("model", "provider"), [("", "openai"), ("openai/", "openai"), ("gpt-4o-mini", "open/ai")]
)
def test_a_name_the_rule_cannot_read_is_a_configuration_error(model: str, provider: str) -> None:
    with pytest.raises(ConfigurationError, match="MEMFUSE_LLM_"):
        model_names(model, provider)


@pytest.mark.parametrize(
    "configured", ["Qwen/Qwen2.5-7B-Instruct", "gpt-4o-mini", "openai/gpt-4o-mini"]
)
def test_the_decision_lm_sends_the_endpoint_name(configured: str) -> None:
    with start_fake_openai(["pong"]) as fake:
        settings = MemFuseSettings(llm_model=configured, llm_base_url=fake.base_url, _env_file=None)
        lm = lm_from_settings(settings)
        assert lm is not None and lm("ping") == ["pong"]
    assert fake.models == [model_names(configured).endpoint]


def test_a_failing_endpoint_costs_one_budget_then_is_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with start_fake_openai(lambda body: Fail(500)) as fake:
        settings = MemFuseSettings(
            llm_model="m", llm_base_url=fake.base_url, llm_retry_seconds=2.0, _env_file=None
        )
        lm = lm_from_settings(settings)
        assert lm is not None
        started = time.monotonic()
        with (
            caplog.at_level(logging.WARNING, logger="memfuse.llm"),
            pytest.raises(LLMProviderError, match="after 2 attempt"),
        ):
            lm("ping")
        spent = time.monotonic() - started
        # waits 1 s, then the next wait (2 s) would end past the 2 s budget: it gives up
        assert spent < 2.5 and fake.failures_served == 2
        lines = [r.getMessage() for r in caplog.records]
        assert any("retry 1 of 3 in 1s" in line for line in lines)
        assert any(
            "giving up after 2 attempt(s)" in line and "budget spent" in line for line in lines
        )
        assert all("\n" not in line for line in lines)

        started = time.monotonic()
        with pytest.raises(LLMUnavailableError, match="not sent: the endpoint failed"):
            lm("ping again")
        assert time.monotonic() - started < 0.5 and fake.failures_served == 2


def test_a_refused_request_is_not_retried_and_does_not_mark_the_endpoint_down() -> None:
    with start_fake_openai([Fail(400, "no such model"), "pong"]) as fake:
        lm = lm_from_settings(
            MemFuseSettings(llm_model="m", llm_base_url=fake.base_url, _env_file=None)
        )
        assert lm is not None
        with pytest.raises(LLMProviderError, match="after 1 attempt"):
            lm("ping")
        assert lm("ping") == ["pong"]


def test_a_parse_failure_is_described_with_what_came_back() -> None:
    class Answer(dspy.Signature):
        """Answer."""

        question: str = dspy.InputField()
        answer: int = dspy.OutputField()

    exc = AdapterParseError("JSONAdapter", Answer, "I would rather not say\nreally")
    reason = describe_failure(exc)
    assert reason.startswith("LLM output unusable (expected fields answer; parsed none;")
    assert "'I would rather not say really'" in reason and "\n" not in reason
    assert offline_fallback(reason).startswith("offline fallback: LLM output unusable")
