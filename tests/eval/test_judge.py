"""The checklist judge through the fake OpenAI server: parsing, retries, re-asks, errors."""

from __future__ import annotations

import json

import pytest

from eval.judge import Judge, JudgeError, MalformedVerdict, judge_role, parse_verdict
from graphs.llm import LLMProviderError, RetryPolicy
from memfuse.settings import MemFuseSettings
from tests.support.fake_openai import Fail, start_fake_openai

ITEMS = ["The dog limped on Tuesday", "The vet visit was on Friday", "Lucy paid 80 dollars"]


def verdict(*covered: bool) -> str:
    return json.dumps(
        [
            {"index": i, "point": ITEMS[i - 1], "covered": c, "reason": "checked"}
            for i, c in enumerate(covered, start=1)
        ]
    )


def make_judge(fake, delays: list[float] | None = None) -> Judge:
    settings = MemFuseSettings(llm_model="judge-model", llm_base_url=fake.base_url)
    sleep = delays.append if delays is not None else (lambda _s: None)
    return Judge(judge_role(settings, RetryPolicy(base_delay=0.01, sleep=sleep)))


def test_parses_json_and_scores_covered_share():
    with start_fake_openai([verdict(True, False, True)]) as fake:
        result = make_judge(fake).score("q1", "What happened?", "The dog limped.", ITEMS)
    assert result.score == pytest.approx(2 / 3)
    assert [j.covered for j in result.judgements] == [True, False, True]
    assert result.attempts == 1
    request = fake.chat_requests[0]
    assert request["model"] == "judge-model"
    assert request["temperature"] == 0
    assert request.get("max_completion_tokens", request.get("max_tokens")) == 4096
    system, user = request["messages"]
    assert system["role"] == "system" and "JSON" in system["content"]
    assert "Question: What happened?" in user["content"]
    assert "The dog limped." in user["content"]
    assert (
        "1. The dog limped on Tuesday\n2. The vet visit was on Friday\n3. Lucy paid 80 dollars"
        in (user["content"])
    )


def test_retries_provider_errors_with_exponential_backoff():
    delays: list[float] = []
    with start_fake_openai([Fail(500), Fail(503), verdict(True, True, True)]) as fake:
        result = make_judge(fake, delays).score("q1", "Q?", "A.", ITEMS)
    assert result.score == 1.0
    assert fake.failures_served == 2
    assert delays == [0.01, 0.02]


def test_gives_up_after_eight_retries():
    with (
        start_fake_openai([Fail(500)] * 9) as fake,
        pytest.raises(LLMProviderError, match="after 9 attempt"),
    ):
        make_judge(fake).score("q1", "Q?", "A.", ITEMS)
    assert len(fake.chat_requests) == 9


def test_client_errors_are_not_retried():
    with (
        start_fake_openai([Fail(400, "bad request")]) as fake,
        pytest.raises(LLMProviderError, match="after 1 attempt"),
    ):
        make_judge(fake).score("q1", "Q?", "A.", ITEMS)
    assert len(fake.chat_requests) == 1


def test_reasks_with_a_format_correction_after_malformed_output():
    fenced = "```json\n" + verdict(False, False, True) + "\n```"
    with start_fake_openai(["Sure! Everything is covered.", fenced]) as fake:
        result = make_judge(fake).score("q1", "Q?", "A.", ITEMS)
    assert result.score == pytest.approx(1 / 3)
    assert result.attempts == 2
    follow_up = fake.chat_requests[1]["messages"]
    assert [m["role"] for m in follow_up] == ["system", "user", "assistant", "user"]
    assert follow_up[2]["content"] == "Sure! Everything is covered."
    assert "could not be used: the reply is not JSON" in follow_up[3]["content"]
    assert "exactly 3 object(s)" in follow_up[3]["content"]


def test_raises_judge_error_when_still_malformed_after_three_reasks():
    # the first answer plus three format-correction re-asks (paper: re-evaluated up to three times)
    replies = ["not json", verdict(True), "[1, 2, 3]", '[{"index": 1}]']
    with (
        start_fake_openai(replies) as fake,
        pytest.raises(JudgeError, match="q7.*malformed verdict after 4 replies"),
    ):
        make_judge(fake).score("q7", "Q?", "A.", ITEMS)
    assert len(fake.chat_requests) == 4
    assert fake.remaining == 0


def test_parse_verdict_rules():
    reordered = json.dumps(
        [
            {"index": 2, "covered": "false"},
            {"index": 1, "covered": True},
            {"index": 3, "covered": "yes"},
        ]
    )
    parsed = parse_verdict(reordered, ITEMS)
    assert [(j.index, j.covered) for j in parsed] == [(1, True), (2, False), (3, True)]
    assert parsed[1].point == ITEMS[1]  # missing point filled from the checklist
    wrapped = json.dumps({"items": json.loads(verdict(True, True, False))})
    assert [j.covered for j in parse_verdict(wrapped, ITEMS)] == [True, True, False]
    with pytest.raises(MalformedVerdict, match="expected 3 verdict"):
        parse_verdict(verdict(True), ITEMS)
    with pytest.raises(MalformedVerdict, match="judged twice"):
        parse_verdict(json.dumps([{"index": 1, "covered": True}] * 3), ITEMS)
    with pytest.raises(MalformedVerdict, match="covered"):
        parse_verdict(json.dumps([{"index": i, "covered": "maybe"} for i in (1, 2, 3)]), ITEMS)
