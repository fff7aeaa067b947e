"""The graphs served by `langgraph dev` (the in-memory LangGraph API server) over HTTP.

One server for the module (tests/support/langgraph_server.py), started as a user would from a
folder holding a `langgraph.json` and a `.env` naming the data dir and the models. Nothing
leaves 127.0.0.1: tracing, telemetry and analytics are off; the embedding endpoint and the
LLM are the local fake OpenAI server (tests/support/fake_openai.py), which the CLI ingests
(subprocesses of `memfuse`) use too. Every run on a thread goes
through the server's checkpointer, so these runs also show what a thread keeps.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from eval.synth import build_one
from eval.synth.artifacts import STAGES
from eval.synth.graph import SynthesisOutput
from memory.audit import AuditLog
from memory.embeddings import EmbeddingConfig
from memory.models import EdgeType
from memory.store import MemoryStore
from tests.support.fake_openai import FakeOpenAI, start_fake_openai
from tests.support.langgraph_server import REPO, LangGraphDev, clean_env, langgraph_dev

MEMFUSE = Path(sys.executable).parent / "memfuse"
SAMPLE = REPO / "memfuse" / "samples" / "household.jsonl"
ASKED = "2026-05-14T20:00:00"

pytestmark = pytest.mark.server


@dataclass
class Served:
    url: str
    data_dir: Path
    log: Path
    fake: FakeOpenAI
    budgets: list[tuple[int, int]]
    """(searches_left, turns_left) of every fusion agent turn the fake LLM was asked."""

    def embedding_env(self) -> dict[str, str]:
        return {
            "MEMFUSE_EMBEDDING_PROVIDER": "openai",
            "MEMFUSE_EMBEDDING_MODEL": "fake-embedder",
            "MEMFUSE_EMBEDDING_BASE_URL": self.fake.base_url,
        }


_CHOICE = "[[ ## action ## ]]\n{action}\n\n[[ ## query ## ]]\n{query}\n\n[[ ## fused_id ## ]]\n\n\n"
_PLAN = {"operations": [{"op": "no_op", "reason": "test"}], "rationale": "test"}


def _agent(budgets: list[tuple[int, int]]) -> Any:
    """The fake LLM as a fusion agent that searches while it may, then submits a no-op."""

    def reply(body: dict[str, Any]) -> str:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if "[[ ## action ## ]]" not in system:
            return f"[[ ## plan ## ]]\n{json.dumps(_PLAN)}\n\n[[ ## completed ## ]]"
        searches = int(re.search(r'"searches_left":\s*(\d+)', user).group(1))  # type: ignore[union-attr]
        turns = int(re.search(r'"turns_left":\s*(\d+)', user).group(1))  # type: ignore[union-attr]
        budgets.append((searches, turns))
        action = "search_memory" if searches else "submit"
        query = "washing machine" if searches else ""
        return _CHOICE.format(action=action, query=query) + "[[ ## completed ## ]]"

    return reply


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("langgraph")
    data_dir = root / "data"
    budgets: list[tuple[int, int]] = []
    with start_fake_openai(_agent(budgets)) as fake:
        served = Served("", data_dir, root / "server" / "server.log", fake, budgets)
        dotenv = {
            "MEMFUSE_DATA_DIR": str(data_dir),
            "MEMFUSE_LLM_MODEL": "fake-model",
            "MEMFUSE_LLM_BASE_URL": fake.base_url,
            **served.embedding_env(),
        }
        with langgraph_dev(root / "server", dotenv) as server:
            served.url, served.log = server.url, server.log
            ingest(served, SAMPLE)
            yield served


def ingest(served: Served, path: Path) -> None:
    """`memfuse ingest` as a user runs it beside the server (offline fusion: no LLM set)."""
    env = {**clean_env(), "MEMFUSE_DATA_DIR": str(served.data_dir), **served.embedding_env()}
    done = subprocess.run(
        [str(MEMFUSE), "ingest", str(path)],
        cwd=path.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def client(served: Served) -> Any:
    return LangGraphDev(served.url, served.log).client()


def ask(served: Served, thread_id: str, question: str, **extra: Any) -> dict[str, Any]:
    context = {"policy": "offline", "k": 6, **extra.pop("context", {})}
    return client(served).runs.wait(
        thread_id,
        "retrieval",
        context=context,
        input={"question": question, "question_time": ASKED, **extra},
    )


def new_thread(served: Served) -> str:
    return str(client(served).threads.create()["thread_id"])


def test_all_graphs_are_served(served: Served) -> None:
    assert sorted(a["graph_id"] for a in client(served).assistants.search()) == [
        "answer",
        "fusion",
        "retrieval",
        "synthesis",
        "verification",
    ]


def test_two_questions_on_one_thread_get_the_contexts_of_two_fresh_threads(
    served: Served,
) -> None:
    shared = new_thread(served)
    limping = ask(served, shared, "why was Tom limping?", requester="Anna")
    washing = ask(served, shared, "what happened to the washing machine?", admin=True)
    fresh = {
        "limping": ask(served, new_thread(served), "why was Tom limping?", requester="Anna"),
        "washing": ask(
            served, new_thread(served), "what happened to the washing machine?", admin=True
        ),
    }
    assert limping == fresh["limping"]
    assert washing == fresh["washing"]
    assert washing["request"]["requester"] is None
    assert "h_015" in washing["event_ids"] and washing["event_ids"] != limping["event_ids"]
    assert washing["plans"][0]["focus"] != limping["plans"][0]["focus"]
    state = client(served).threads.get_state(shared)["values"]
    assert [h["question"] for h in state["history"]] == [
        "why was Tom limping?",
        "what happened to the washing machine?",
    ]
    assert "unregistered type" not in served.log.read_text()  # checkpoints are plain JSON


def test_an_event_the_cli_ingests_is_found_by_the_next_run(served: Served, tmp_path: Path) -> None:
    thread = new_thread(served)
    before = ask(served, thread, "did anyone see the zeppelin?", admin=True)
    assert "z_001" not in before["event_ids"]
    record = {
        "event_id": "z_001",
        "timestamp": "2026-05-14T18:00:00",
        "device": "camera_garden",
        "modality": "vision",
        "location": "garden",
        "description": "A red zeppelin floated low over the garden.",
        "characters": [],
    }
    path = tmp_path / "zeppelin.jsonl"
    path.write_text(json.dumps(record) + "\n")
    ingest(served, path)
    after = ask(served, thread, "did anyone see the zeppelin?", admin=True)
    assert "z_001" in after["event_ids"]


def test_a_missing_data_dir_is_a_note_not_a_new_folder(served: Served, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    out = ask(
        served,
        new_thread(served),
        "why was Tom limping?",
        admin=True,
        context={"data_dir": str(missing)},
    )
    assert out["event_ids"] == []
    assert any("does not exist" in note and str(missing) in note for note in out["notes"])
    assert not missing.exists()


def _event(event_id: str, time_: str, device: str, text: str) -> dict[str, object]:
    return {
        "event_id": event_id,
        "timestamp": f"2024-05-01T{time_}:00",
        "device": device,
        "modality": "vision",
        "location": "kitchen",
        "description": text,
        "characters": ["David"],
    }


def test_the_fusion_budget_is_full_at_the_start_of_every_run(
    served: Served, tmp_path: Path
) -> None:
    context = {"data_dir": str(tmp_path / "fused"), "policy": "llm"}
    thread = new_thread(served)
    served.budgets.clear()
    outputs = [
        client(served).runs.wait(thread, "fusion", context=context, input={"event": event})
        for event in (
            _event("b1", "08:00", "cam_kitchen", "David fixed the washing machine"),
            _event("b2", "09:00", "watch_david", "David washed the towels"),
        )
    ]
    assert [o["turns"] for o in outputs] == [2, 2]
    assert [o["decided_by"] for o in outputs] == ["llm", "llm"]
    assert served.budgets == [(2, 4), (1, 3), (0, 2)] * 2  # the second run starts full again
    assert any("created data dir" in note for note in outputs[0]["notes"])


def test_fusion_over_http_commits_to_the_store(served: Served, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    context = {
        "data_dir": str(data_dir),
        "namespace": "default",
        "policy": "offline",
        # the fake embeddings are random: let similarity not stand in the way of a pack
        "policy_config": {"create_min_similarity": -1.0},
    }
    first = client(served).runs.wait(
        new_thread(served),
        "fusion",
        context=context,
        input={
            "event": _event("k1", "08:00", "cam_kitchen", "David spilled milk on the kitchen table")
        },
    )
    assert first["event_id"] == "k1" and first["outcome"] == "committed"
    assert first["report"]["status"] == "done" and first["violations"] == []
    second = client(served).runs.wait(
        new_thread(served),
        "fusion",
        context=context,
        input={
            "event": _event("k2", "08:01", "watch_david", "David says he spilled milk on the table")
        },
    )
    assert second["outcome"] == "committed" and second["decided_by"] == "offline"
    assert [op["op"] for op in second["plan"]["operations"]] == ["create_fusion_node"]
    (fused_id,) = second["report"]["created"]

    embedding = EmbeddingConfig(
        provider="openai", model="fake-embedder", base_url=served.fake.base_url
    )
    store = MemoryStore.open(data_dir, embedding=embedding)  # the server's embedding settings
    try:
        assert [e.event_id for e in store.all_events()] == ["k1", "k2"]
        assert store.get_fused(fused_id).members == ["k1", "k2"]
        assert store.has_edge("k2", fused_id, EdgeType.BELONG)
        assert store.plan_counts() == {"pending": 0, "done": 2, "rejected": 0}
        assert store.audit_outbox() == []  # every entry delivered by the run that made it
    finally:
        store.close()
    # the served writes are on record, with who made them (the server's graph)
    entries = AuditLog(data_dir / "default.audit.jsonl").entries()
    assert [(e.op, e.actor) for e in entries[1:]] == [
        ("ingest", "server:fusion"),
        ("fusion_plan", "server:fusion"),
        ("ingest", "server:fusion"),
        ("fusion_plan", "server:fusion"),
    ]
    assert [e.ids[0] for e in entries if e.op == "fusion_plan"] == ["k1", "k2"]


def test_the_synthesis_graph_completes_offline(served: Served) -> None:
    """No LLM in play (policy offline): the procedural stages draft, the code reviews, and the
    served graph accepts the household-week `memfuse synth` writes."""
    out = client(served).runs.wait(
        new_thread(served),
        "synthesis",
        context={"policy": "offline"},
        input={"scenario_index": 0, "seed": 4},
    )
    output = SynthesisOutput.model_validate(out)
    assert output.status == "accepted" and output.accepted == list(STAGES), output.notes
    assert {r.issues for r in output.review_log} == {0}
    direct, _ = build_one(0, 4)
    assert output.scenario is not None
    assert output.scenario.model_dump(mode="json") == direct.model_dump(mode="json")


def test_answer_without_a_reader_returns_the_evidence(served: Served) -> None:
    out = client(served).runs.wait(
        new_thread(served),
        "answer",
        context={"policy": "offline", "k": 4, "llm_model": ""},
        input={
            "question": "what happened to the washing machine?",
            "question_time": ASKED,
            "admin": True,
        },
    )
    assert out["answer"] is None and out["note"].startswith("no LLM configured")
    assert len(out["context"]) == 4 and out["decisions"][-1]["step"] == "reader"


PERSONAL = {"phone_anna": "Anna", "watch_anna": "Anna", "phone_tom": "Tom", "watch_tom": "Tom"}
LEAK_QUESTIONS = [
    "why was Tom limping?",
    "how did Tom sleep?",
    "what did Anna buy?",
    "what happened to the washing machine?",
    "who came to the front door?",
    "what did my watch record?",
]


def test_no_requester_sees_another_persons_private_events_over_http(
    served: Served, tmp_path: Path
) -> None:
    """The retrieval and answer graphs, served: asked as Anna or as Tom, over a data dir whose
    phones and watches are their owners' own, no run returns an event the asker may not
    see (checked by id against the visibility each event got); 0 leaks, counted."""
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    for row in rows:
        if row["device"] in PERSONAL:
            row["owner"] = PERSONAL[row["device"]]
    owned = {row["event_id"]: PERSONAL.get(row["device"]) for row in rows}
    path = tmp_path / "owned.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    data_dir = tmp_path / "owned"
    env = {**clean_env(), "MEMFUSE_DATA_DIR": str(data_dir), **served.embedding_env()}
    done = subprocess.run(
        [str(MEMFUSE), "ingest", str(path), "--mode", "plain"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    leaks: list[str] = []
    foreign_seen_by_admin = 0
    for person in ("Anna", "Tom"):
        for graph in ("retrieval", "answer"):
            for question in LEAK_QUESTIONS:
                out = client(served).runs.wait(
                    None,
                    graph,
                    context={"policy": "offline", "k": 8, "data_dir": str(data_dir)},
                    input={"question": question, "question_time": ASKED, "requester": person},
                )
                shown = set(out["event_ids"]) | {e["node_id"] for e in out["context"]}
                leaks += [
                    f"{graph} {person}: {i}" for i in shown if owned.get(i) not in (None, person)
                ]
        admin = ask(
            served,
            new_thread(served),
            "how did Tom sleep?",
            requester=person,
            admin=True,
            context={"data_dir": str(data_dir), "k": 8},
        )
        foreign_seen_by_admin += sum(owned.get(i) not in (None, person) for i in admin["event_ids"])
    admin_reads = AuditLog(data_dir / "default.audit.jsonl").entries(op="admin_read")
    assert [(e.actor, e.details["what"]) for e in admin_reads] == [
        ("Anna", "graph:retrieval"),
        ("Tom", "graph:retrieval"),
    ]  # a served admin read is on record before it runs
    print(f"\nleaks over langgraph dev: {len(leaks)} in {2 * 2 * len(LEAK_QUESTIONS)} runs")
    assert leaks == []
    assert foreign_seen_by_admin > 0  # the check can fail: unrestricted, they do show up
