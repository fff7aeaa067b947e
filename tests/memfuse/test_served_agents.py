"""Agents built on MemFuse, served by a real `langgraph dev`: a tool-calling agent whose
scripted model remembers in one thread and recalls in another through the served store, and
MemFuse's retrieval graph running as a subgraph of an agent's graph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memfuse.api import MemFuse
from memfuse.langgraph_store import item_id
from memfuse.settings import load_settings
from tests.support.langgraph_server import LangGraphDev

CODE_NOTE = "my bike lock code is 4711"


def say(server: LangGraphDev, graph: str, user: str, text: str) -> str:
    """One turn in a new thread, as `user`: the agent's last message."""
    client = server.client()
    thread = client.threads.create()
    state: Any = client.runs.wait(
        thread["thread_id"],
        graph,
        input={"messages": [{"role": "human", "content": text}]},
        config={"configurable": {"user_id": user}},
    )
    return str(state["messages"][-1]["content"])


@pytest.fixture(scope="module")
def remembered(served_memory: tuple[LangGraphDev, Path]) -> tuple[LangGraphDev, Path]:
    server, data_dir = served_memory
    assert say(server, "memory_agent", "Anna", f"Remember that {CODE_NOTE}") == (
        f"remembered: {CODE_NOTE}"
    )
    return server, data_dir


def test_what_one_thread_remembers_another_recalls(remembered: tuple[LangGraphDev, Path]) -> None:
    server, _ = remembered
    assert say(server, "memory_agent", "Anna", "What is my bike lock code?") == CODE_NOTE


def test_another_person_cannot_recall_it(remembered: tuple[LangGraphDev, Path]) -> None:
    server, _ = remembered
    assert say(server, "memory_agent", "Tom", "What is my bike lock code?") == (
        "I have no memory of that."
    )


def test_the_memory_is_an_event_of_its_owner_on_record(
    remembered: tuple[LangGraphDev, Path],
) -> None:
    _, data_dir = remembered
    memory = MemFuse.open(data_dir, settings=load_settings(data_dir=data_dir, user=None))
    try:
        node_id = next(
            r.event.event_id
            for r in memory.get_all(user="Anna", device="langgraph_store")
            if r.event.description == CODE_NOTE
        )
        record = memory.get(node_id, user="Anna")
        assert record is not None and record.visibility == "private:Anna"
        assert memory.get(node_id, user="Tom") is None
        entries = memory.history(node_id, user="Anna")
        assert [(e.op, e.actor) for e in entries][:1] == [("ingest", "Anna")]
        assert node_id.startswith("item_") and node_id != item_id(("Tom", "memories"), "x")
    finally:
        memory.close()


def test_the_retrieval_graph_runs_as_a_subgraph_of_an_agent(
    remembered: tuple[LangGraphDev, Path],
) -> None:
    server, _ = remembered
    answer = say(server, "recall_agent", "Anna", "what is the code of the bike lock")
    assert "4711" in answer
    assert say(server, "recall_agent", "Tom", "what is the code of the bike lock") == (
        "I have no memory of that."
    )
