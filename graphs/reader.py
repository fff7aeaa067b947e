"""The reader: one fixed prompt that answers a question from a serialized context.

Every system is read by the same reader with the same user message; only the
system message differs between the whole stream (long context) and a retrieved
context, as in the paper (Appendix D). Context lines are put in time order for
every system, so a ranking order never leaks into the answer. It is a fixed
prompt, not a DSPy program: the benchmark metric must not be optimised against.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from graphs.llm import LLMRole, complete, load_prompt, reader_role, render
from memory.models import format_timestamp
from memory.records import ContextEntry
from memory.text import single_line

UNKNOWN_USER = "not specified"
EMPTY_CONTEXT = "(no events)"
# The context block's markers (as written in prompts/reader_user.md) and their defused forms.
BLOCK_MARKERS = {"<<<EVENTS": "<<< EVENTS", "EVENTS>>>": "EVENTS >>>"}


def quoted_lines(lines: Sequence[str]) -> str:
    """The context block's body: one line per entry (line breaks inside an entry become
    spaces) and the block's own markers defused, so no event text can end the block or
    add a line that reads like part of the prompt ("Question: …")."""
    body = []
    for line in lines:
        text = single_line(line)
        for marker, defused in BLOCK_MARKERS.items():
            text = text.replace(marker, defused)
        body.append(text)
    return "\n".join(body)


def ordered_lines(context: Sequence[ContextEntry]) -> list[str]:
    """Serialized context lines in timestamp order (stable for ties)."""
    return [entry.text for entry in sorted(context, key=lambda e: e.timestamp)]


def reader_messages(
    lines: Sequence[str],
    *,
    question: str,
    questioner: str | None,
    question_time: datetime,
    full_context: bool,
) -> list[BaseMessage]:
    """System + user messages for one question; `full_context` picks the whole-stream prompt."""
    system = load_prompt("reader_full_system.md" if full_context else "reader_retrieved_system.md")
    user = render(
        load_prompt("reader_user.md"),
        context=quoted_lines(lines) if lines else EMPTY_CONTEXT,
        question_user=questioner or UNKNOWN_USER,
        question_time=format_timestamp(question_time),
        question=question,
    )
    return [SystemMessage(content=system), HumanMessage(content=user)]


class Reader:
    """Answers questions through the reader role (temperature 1, 2,048 tokens)."""

    def __init__(self, role: LLMRole, model: ChatOpenAI | None = None):
        self.role = role
        self._model = model or role.chat_model()

    def answer(
        self,
        context: Sequence[ContextEntry],
        *,
        question: str,
        questioner: str | None,
        question_time: datetime,
        full_context: bool = False,
    ) -> str:
        messages = reader_messages(
            ordered_lines(context),
            question=question,
            questioner=questioner,
            question_time=question_time,
            full_context=full_context,
        )
        return complete(self.role, messages, self._model).strip()


def read_answer(
    context_lines: list[str],
    *,
    question: str,
    questioner: str | None,
    question_time: datetime,
    settings: Any,
    full_context: bool = False,
) -> str:
    """The answer graph's reader: already-ordered context lines in, answer text out."""
    role = reader_role(settings)
    messages = reader_messages(
        context_lines,
        question=question,
        questioner=questioner,
        question_time=question_time,
        full_context=full_context,
    )
    return complete(role, messages).strip()
