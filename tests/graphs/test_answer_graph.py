"""The answer graph: retrieval subgraph + reader, with an injected fake reader.

The compiled graph returns JSON data (checkpoints stay plain); the tests read it back through
the output schema, as `answer_question` does."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import dspy
import pytest

from graphs.answer import NO_LLM_NOTE, AnswerContext, AnswerOutput, builder, graph
from memfuse.settings import MemFuseSettings
from memory.models import Event
from memory.store import MemoryStore
from tests.support.embedders import tiny_embedder

ASKED = "2026-05-13T15:00:00"


@pytest.fixture(autouse=True)
def _reset_dspy() -> Iterator[None]:
    with dspy.context(lm=None, adapter=None):
        yield


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    opened = MemoryStore.open(tmp_path / "store", embedder=tiny_embedder())
    texts = [
        "Sleep score 82, 7h10m asleep",
        "Emma made coffee",
        "Lily arrived home from school",
        "Fridge ordered milk",
        "David left home for work",
        "Sleep score 64, restless night",
    ]
    devices = [
        "watch_david",
        "phone_emma",
        "doorbell_cam",
        "kitchen_fridge",
        "phone_david",
        "watch_emma",
    ]
    people = [("David",), ("Emma",), ("Lily",), (), ("David",), ("Emma",)]
    opened.add_events(
        [
            Event(
                event_id=f"e{i}",
                timestamp=datetime(2026, 5, 12, 6 + 2 * i, 0),
                device=devices[i],
                modality="health",
                location="home",
                description=texts[i],
                characters=people[i],
            )
            for i in range(6)
        ]
    )
    yield opened
    opened.close()


OFFLINE = MemFuseSettings(llm_model=None, _env_file=None)


def test_reader_gets_the_retrieved_context_and_its_answer_is_returned(store: MemoryStore) -> None:
    calls: list[dict[str, Any]] = []

    def fake_reader(lines: list[str], **kwargs: Any) -> str:
        calls.append({"lines": lines, **kwargs})
        return "You slept 7h10m (score 82)."

    context = AnswerContext(
        store=store, policy="offline", k=4, reader=fake_reader, settings=OFFLINE
    )
    output = AnswerOutput.model_validate(
        graph.invoke(
            {
                "question": "How did I sleep on Tuesday?",
                "question_time": ASKED,
                "requester": "David",
            },
            context=context,
        )
    )
    assert output.answer == "You slept 7h10m (score 82)."
    assert output.note == ""
    assert output.round == 2
    assert len(calls) == 1
    call = calls[0]
    assert call["lines"] == [entry.text for entry in output.context]
    assert any("Sleep score 82" in line for line in call["lines"])
    assert call["question"] == "How did I sleep on Tuesday?"
    assert call["questioner"] == "David"
    assert call["question_time"] == datetime(2026, 5, 13, 15, 0)
    assert call["settings"] is OFFLINE
    assert call["full_context"] is False


def test_without_an_llm_the_evidence_comes_back_with_a_note(store: MemoryStore) -> None:
    context = AnswerContext(store=store, k=3, settings=OFFLINE)
    output = AnswerOutput.model_validate(
        builder.compile().invoke(
            {"question": "Who arrived home from school?", "question_time": ASKED, "admin": True},
            context=context,
        )
    )
    assert output.answer is None
    assert output.note == NO_LLM_NOTE
    assert output.event_ids[0] == "e2"
    assert len(output.context) == 3
    assert {j.source for j in output.judgements} == {"offline"}
    assert output.decisions[-1].step == "reader"


def test_graph_name() -> None:
    assert graph.name == "answer"
