"""The checklist judge: marks each answer-checklist item covered or not.

Follows the paper's protocol (Appendix D): temperature 0; provider errors retried
(see graphs.llm); a malformed verdict is re-asked up to three times with a message
that says what was wrong; a question still without a usable verdict raises
JudgeError so that it is reported as an error, never scored as zero.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from eval.metrics import checklist_score
from graphs.llm import LLMRole, RetryPolicy, complete, llm_role, load_prompt, render
from memory.errors import MemFuseError

PROMPTS_DIR = Path(__file__).parent / "prompts"


class JudgeError(MemFuseError):
    """A question stayed unscorable: the judge never returned a usable verdict."""

    def __init__(self, question_id: str, problem: str):
        self.question_id, self.problem = question_id, problem
        super().__init__(f"judge could not score question {question_id!r}: {problem}")


def judge_role(settings: Any, retry: RetryPolicy | None = None) -> LLMRole:
    """Checklist judge: temperature 0, 4,096 output tokens (paper, Appendix D)."""
    return llm_role("judge", settings, temperature=0.0, max_tokens=4096, retry=retry)


FORMAT_RETRIES = 3
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)
_TRUE, _FALSE = {"true", "yes", "covered"}, {"false", "no", "not covered"}


class MalformedVerdict(ValueError):
    """The judge's reply cannot be read as one verdict per checklist item."""


@dataclass(frozen=True)
class ItemJudgement:
    index: int
    point: str
    covered: bool
    reason: str


@dataclass(frozen=True)
class JudgeResult:
    judgements: list[ItemJudgement]
    score: float
    attempts: int  # judge answers it took (1 = first reply was usable)


def checklist_text(items: Sequence[str]) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, start=1))


def judge_messages(question: str, answer: str, items: Sequence[str]) -> list[BaseMessage]:
    user = render(
        load_prompt("judge_user.md", PROMPTS_DIR),
        question=question,
        system_answer=answer or "(empty answer)",
        checklist_text=checklist_text(items),
    )
    return [
        SystemMessage(content=load_prompt("judge_system.md", PROMPTS_DIR)),
        HumanMessage(content=user),
    ]


def correction_message(problem: str, n_items: int) -> HumanMessage:
    """The format-correction follow-up: what was wrong and the exact shape expected."""
    return HumanMessage(
        content=(
            f"Your previous reply could not be used: {problem}. Reply again with only a JSON "
            f"array of exactly {n_items} object(s), one per key point in order, each with the "
            'fields "index" (1-based integer), "point" (string), "covered" (true or false) and '
            '"reason" (string). No text before or after the array.'
        )
    )


def _covered(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise MalformedVerdict(f'"covered" must be true or false, got {value!r}')


def _array(text: str) -> list[Any]:
    cleaned = _FENCE.sub("", text.strip())
    try:
        data = json.loads(cleaned)
    except json.JSONDecodeError:
        start, end = cleaned.find("["), cleaned.rfind("]")
        if start < 0 or end <= start:
            raise MalformedVerdict("the reply is not JSON") from None
        try:
            data = json.loads(cleaned[start : end + 1])
        except json.JSONDecodeError:
            raise MalformedVerdict("the reply is not valid JSON") from None
    if isinstance(data, dict):  # tolerate {"items": [...]} from JSON-mode models
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise MalformedVerdict("expected a JSON array, got an object")
        data = lists[0]
    if not isinstance(data, list):
        raise MalformedVerdict(f"expected a JSON array, got {type(data).__name__}")
    return data


def parse_verdict(text: str, items: Sequence[str]) -> list[ItemJudgement]:
    """One judgement per checklist item, in item order; MalformedVerdict otherwise."""
    data = _array(text)
    if len(data) != len(items):
        raise MalformedVerdict(f"expected {len(items)} verdict(s), got {len(data)}")
    by_index: dict[int, ItemJudgement] = {}
    for position, entry in enumerate(data, start=1):
        if not isinstance(entry, dict) or "covered" not in entry:
            raise MalformedVerdict(f'verdict {position} is not an object with "covered"')
        index = entry.get("index", position)
        if isinstance(index, str) and index.strip().isdigit():
            index = int(index)
        if not isinstance(index, int) or isinstance(index, bool) or not 1 <= index <= len(items):
            raise MalformedVerdict(
                f"verdict {position} has index {index!r}, expected 1..{len(items)}"
            )
        if index in by_index:
            raise MalformedVerdict(f"index {index} is judged twice")
        by_index[index] = ItemJudgement(
            index=index,
            point=str(entry.get("point") or items[index - 1]),
            covered=_covered(entry["covered"]),
            reason=str(entry.get("reason") or ""),
        )
    return [by_index[i] for i in range(1, len(items) + 1)]


class Judge:
    """Scores one answer against its checklist (the covered share of the items)."""

    def __init__(
        self, role: LLMRole, format_retries: int = FORMAT_RETRIES, model: ChatOpenAI | None = None
    ):
        self.role = role
        self.format_retries = format_retries
        self._model = model or role.chat_model()

    def score(
        self, question_id: str, question: str, answer: str, items: Sequence[str]
    ) -> JudgeResult:
        if not items:
            raise JudgeError(question_id, "the question has no checklist items")
        messages = judge_messages(question, answer, items)
        problem = ""
        for attempt in range(1, self.format_retries + 2):
            reply = complete(self.role, messages, self._model)
            try:
                judgements = parse_verdict(reply, items)
            except MalformedVerdict as exc:
                problem = str(exc)
                messages = [
                    *messages,
                    AIMessage(content=reply),
                    correction_message(problem, len(items)),
                ]
                continue
            return JudgeResult(
                judgements, checklist_score([j.covered for j in judgements]), attempt
            )
        raise JudgeError(
            question_id, f"malformed verdict after {self.format_retries + 1} replies ({problem})"
        )
