"""Runs on a LangGraph thread (a checkpointer, as `langgraph dev` gives every run): each run
starts from its caller's input alone, the thread keeps only its `history`, and checkpoints
hold JSON data only. Real compiled graphs on a real MemoryStore (tiny hashed embedder).

The same behaviour over HTTP is `test_langgraph_dev.py`'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import dspy
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs.answer import AnswerContext
from graphs.answer.graph import builder as answer_builder
from graphs.fusion.context import FusionContext
from graphs.fusion.graph import builder as fusion_builder
from graphs.resources import close_stores
from graphs.retrieval.context import RetrievalContext
from graphs.retrieval.graph import builder as retrieval_builder
from memfuse.settings import MemFuseSettings
from memory.fusion.ops import FusionPlan
from memory.models import Event
from memory.store import MemoryStore
from signatures.fusion import FusionBudget
from tests.support.embedders import tiny_embedder

ASKED = "2026-05-13T15:00:00"
OFFLINE = MemFuseSettings(llm_model=None, _env_file=None)
TEXTS = [
    ("watch_tom", "Tom twisted his ankle on the stairs and started limping", ["Tom"]),
    ("cam_hall", "Tom limping through the hallway holding an ice pack", ["Tom"]),
    ("washer", "Washing machine stopped mid-cycle with error E21", []),
    ("phone_anna", "Anna called the repair service about the washing machine", ["Anna"]),
    ("cam_laundry", "Water pooled under the washing machine in the laundry room", []),
    ("watch_anna", "Anna walked 4000 steps to the bakery", ["Anna"]),
]
FIRST = {"question": "Why was Tom limping?", "question_time": ASKED, "requester": "Anna", "k": 3}
SECOND = {
    "question": "What happened to the washing machine?",
    "question_time": ASKED,
    "admin": True,
}


@pytest.fixture(autouse=True)
def _offline_dspy() -> Iterator[None]:
    with dspy.context(lm=None, adapter=None):
        yield
    close_stores()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    opened = MemoryStore.open(tmp_path / "store", embedder=tiny_embedder())
    opened.add_events(
        [
            Event(
                event_id=f"e{i}",
                timestamp=datetime(2026, 5, 12, 8 + i),
                device=device,
                modality="vision",
                location="home",
                description=text,
                characters=tuple(people),
            )
            for i, (device, text, people) in enumerate(TEXTS)
        ]
    )
    yield opened
    opened.close()


def thread(n: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": n}}


def assert_json_plain(graph: Any, config: dict[str, Any]) -> None:
    """What the checkpointer holds is JSON: nothing to import to read it back."""
    values = graph.checkpointer.get_tuple(config).checkpoint["channel_values"]
    json.dumps(values)


def test_two_questions_on_one_thread_are_answered_as_on_fresh_threads(
    store: MemoryStore,
) -> None:
    graph = retrieval_builder.compile(checkpointer=InMemorySaver())
    context = RetrievalContext(store=store, policy="offline", settings=OFFLINE)
    first = graph.invoke(FIRST, thread("shared"), context=context)
    second = graph.invoke(SECOND, thread("shared"), context=context)
    fresh = graph.invoke(SECOND, thread("fresh"), context=context)
    assert second == fresh
    assert second["request"]["requester"] is None  # not the first caller's
    assert second["event_ids"] != first["event_ids"]
    assert [p["focus"] for p in second["plans"]] == [p["focus"] for p in fresh["plans"]]
    kept = graph.get_state(thread("shared")).values
    assert [h["question"] for h in kept["history"]] == [FIRST["question"], SECOND["question"]]
    assert kept["history"][0]["requester"] == "Anna"
    assert_json_plain(graph, thread("shared"))


def test_the_answer_graph_keeps_questions_and_answers_only(store: MemoryStore) -> None:
    graph = answer_builder.compile(checkpointer=InMemorySaver())
    context = AnswerContext(
        store=store,
        policy="offline",
        settings=OFFLINE,
        reader=lambda lines, **kw: f"{len(lines)} lines about {kw['question']}",
    )
    graph.invoke(FIRST, thread("shared"), context=context)
    second = graph.invoke(SECOND, thread("shared"), context=context)
    assert second == graph.invoke(SECOND, thread("fresh"), context=context)
    assert second["answer"] == f"6 lines about {SECOND['question']}"  # k=3 was the first's
    assert [d["step"] for d in second["decisions"]][-1] == "reader"
    history = graph.get_state(thread("shared")).values["history"]
    assert [(h["question"], h["answer"][:7]) for h in history] == [
        (FIRST["question"], "3 lines"),
        (SECOND["question"], "6 lines"),
    ]
    assert_json_plain(graph, thread("shared"))


class SpendingAgent:
    """A decision program that spends its whole search budget, recording what it was shown."""

    def __init__(self) -> None:
        self.seen: list[tuple[FusionBudget, int]] = []

    def __call__(self, **inputs: Any) -> dspy.Prediction:
        budget: FusionBudget = inputs["budget"]
        self.seen.append((budget, len(inputs["tool_history"])))
        if budget.searches_left:
            return dspy.Prediction(
                action="search_memory", query="washing machine", fused_id="", plan=None
            )
        return dspy.Prediction(
            action="submit", query="", fused_id="", plan=FusionPlan.no_op("budget spent")
        )


def test_the_fusion_budget_is_full_at_the_start_of_every_run(store: MemoryStore) -> None:
    graph = fusion_builder.compile(checkpointer=InMemorySaver())
    agent = SpendingAgent()
    context = FusionContext(store=store, policy="offline", program=agent, settings=OFFLINE)
    full = FusionBudget(
        turns_left=4,
        searches_left=2,
        lookups_left=2,
        max_pack_size=12,
        max_removals_per_op=3,
        max_operations=6,
    )
    outputs = []
    for n, text in enumerate(
        ["The repair man fixed the washing machine", "Tom's ankle was bandaged"]
    ):
        event = {
            "event_id": f"n{n}",
            "timestamp": f"2026-05-12T1{5 + n}:00:00",
            "device": "cam_hall",
            "modality": "vision",
            "location": "home",
            "description": text,
        }
        outputs.append(graph.invoke({"event": event}, thread("shared"), context=context))
    starts = [seen for seen in agent.seen if seen[1] == 1]  # the system's search only
    assert [budget for budget, _ in starts] == [full, full]
    assert len(agent.seen) == 6 and [o["turns"] for o in outputs] == [2, 2]
    kept = graph.get_state(thread("shared")).values
    assert len(kept["tool_history"]) == 3 and kept["searches"] == 2  # the second run's own
    assert [h["event_id"] for h in kept["history"]] == ["n0", "n1"]
    assert_json_plain(graph, thread("shared"))


def test_a_read_of_a_missing_data_dir_says_so_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    context = {"data_dir": str(missing), "policy": "offline"}
    out = retrieval_builder.compile().invoke(SECOND, context=context)
    assert out["event_ids"] == [] and out["context"] == []
    assert any(f"{missing} " in note and "does not exist" in note for note in out["notes"])
    answered = answer_builder.compile().invoke(SECOND, context=context)
    assert answered["answer"] is None and "does not exist" in answered["note"]
    assert not missing.exists()


def test_a_fusion_run_creates_its_data_dir_and_embeds_as_the_settings_say(
    tmp_path: Path,
) -> None:
    """The store a run opens uses the MEMFUSE_EMBEDDING_* settings (here: an OpenAI-compatible
    endpoint, the local fake), and a write may create its data dir, saying so."""
    from tests.support.fake_openai import start_fake_openai

    target = tmp_path / "new"
    event = {
        "event_id": "x1",
        "timestamp": "2026-05-12T08:00:00",
        "device": "cam_hall",
        "modality": "vision",
        "location": "home",
        "description": "Tom came home",
    }
    with start_fake_openai() as fake:
        settings = OFFLINE.model_copy(
            update={
                "embedding_provider": "openai",
                "embedding_model": "fake-embedder",
                "embedding_base_url": fake.base_url,
            }
        )
        context = FusionContext(data_dir=str(target), policy="offline", settings=settings)
        out = fusion_builder.compile().invoke({"event": event}, context=context)
    assert out["outcome"] == "committed"
    assert fake.embedding_requests and fake.embedding_requests[0]["model"] == "fake-embedder"
    assert target.is_dir() and any("created data dir" in note for note in out["notes"])
