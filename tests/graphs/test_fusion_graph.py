"""The fusion graph end to end on the real MemoryStore, with hand-computable vectors.

The LLM path is driven by DummyLM (scripted answers); every test compiles a fresh graph and
reads its JSON state back through the State model (as LangGraph hands it to the nodes).
Vectors come from a keyword embedder: cosine = |A∩B| / sqrt(|A|·|B|) over the vocabulary
words two index texts contain (an event's index text also holds its device, place, people).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import numpy as np
import pytest
from dspy.utils.dummies import DummyLM

from eval.perf import household_weeks
from graphs.fusion.context import FusionContext
from graphs.fusion.graph import builder
from graphs.fusion.ingest import ingest_events
from graphs.fusion.state import State
from graphs.resources import close_stores, replay_once, resources_for
from memory.fusion.commit import replay_pending
from memory.fusion.ops import FusionPlan
from memory.models import EdgeType, Event, FusedNode, NodeKind, parse_event
from memory.store import MemoryStore
from tests.support.counting import count_write_transactions
from tests.support.embedders import KeywordEmbedder, tiny_embedder

VOCAB = ["milk", "cereal", "spill", "table", "towel", "garden", "water", "plant"]
UPDATED = "David spilled milk on the table and Emma wiped it with a towel."


def make_event(
    event_id: str, time: str, device: str, text: str, people: list[str], location: str = "kitchen"
) -> Event:
    return parse_event(
        {
            "event_id": event_id,
            "timestamp": f"2024-05-01T{time}:00",
            "device": device,
            "modality": "vision",
            "location": location,
            "description": text,
            "characters": people,
        }
    )


E1 = make_event("e1", "08:00", "cam_kitchen", "David spilled milk on the table", ["David"])
E2 = make_event(
    "e2", "08:01", "watch_david", "David says the milk spill is on the table", ["David"]
)
E3 = make_event("e3", "08:30", "phone_emma", "Emma watered the garden plants", ["Emma"], "garden")
E4 = make_event(
    "e4", "09:00", "cam_kitchen", "Emma wiped the table with a towel", ["Emma", "David"]
)
E6 = make_event("e6", "07:00", "fridge_cam", "Milk spill and a towel on the table", ["David"])


@pytest.fixture(autouse=True)
def _reset_dspy():
    dspy.settings.configure(lm=None, adapter=None)
    yield
    dspy.settings.configure(lm=None, adapter=None)


def open_store(path: Path) -> MemoryStore:
    return MemoryStore.open(path, embedder=KeywordEmbedder(VOCAB))


def seed(store: MemoryStore) -> None:
    store.add_events([E1, E2, E3, E6])
    store.put_fused(
        FusedNode.from_members("fused_pack", "David spilled milk on the table.", [E1, E2])
    )
    store.put_fused(FusedNode.from_members("fused_single", "Emma watered the garden.", [E3]))


@pytest.fixture
def store(tmp_path: Path):
    s = open_store(tmp_path / "store")
    seed(s)
    yield s
    s.close()


def snapshot(store: MemoryStore) -> tuple[Any, ...]:
    fused = {n.node_id: n.model_dump() for n in store.all_fused()}
    nodes = [e.event_id for e in store.all_events()] + list(fused)
    edges = sorted(
        {(e.src, e.dst, e.type.value, e.weight) for n in nodes for e in store.neighbors(n)}
    )
    return fused, edges


def llm_context(store: MemoryStore, answers: list[dict[str, Any]], **kw: Any) -> FusionContext:
    return FusionContext(
        store=store,
        policy="llm",
        lm=DummyLM(answers),
        data_dir="unused",
        namespace="default",
        llm_model="dummy",
        llm_base_url="http://unused",
        llm_temperature=1.0,
        llm_max_tokens=100,
        **kw,
    )


def run(event: Event | dict[str, Any], ctx: FusionContext) -> dict[str, Any]:
    """Run a fresh compiled graph; return the final full state, typed."""
    final: dict[str, Any] = {}
    for values in builder.compile().stream({"event": event}, context=ctx, stream_mode="values"):
        final = values
    return dict(State.model_validate(final))


def choose(action: str, query: str = "", fused_id: str = "") -> dict[str, str]:
    return {"action": action, "query": query, "fused_id": fused_id}


def propose(*operations: dict[str, Any]) -> dict[str, str]:
    return {"plan": json.dumps({"operations": list(operations), "rationale": "test"})}


SEARCH_LOOKUP_COMMIT = [
    choose("search_memory", query="milk spill on the table"),
    choose("get_pack_members", fused_id="fused_pack"),
    choose("submit"),
    propose(
        {"op": "update_fusion_node", "fused_id": "fused_pack", "summary": UPDATED},
        {"op": "create_edge", "target_id": "e1", "reason": "the spill caused the wiping"},
    ),
]
"""Search, look a pack up, submit: an update of the pack and a causal edge."""


def test_search_lookup_submit_commits_the_plan(store: MemoryStore) -> None:
    ctx = llm_context(store, SEARCH_LOOKUP_COMMIT)
    state = run(E4, ctx)
    assert state["outcome"] == "committed" and state["violations"] == []
    assert [(s.tool, s.argument, s.automatic) for s in state["tool_history"]] == [
        ("search_memory", E4.description, True),
        ("search_memory", "milk spill on the table", False),
        ("get_pack_members", "fused_pack", False),
    ]
    assert [r.node_id for r in state["tool_history"][2].results] == ["e1", "e2"]
    assert (state["turns"], state["searches"], state["lookups"]) == (2, 1, 1)
    assert state["inspected"] == {"fused_pack": ["e1", "e2"]}
    assert len(ctx.injected.lm.history) == 4

    node = store.get_fused("fused_pack")
    assert (node.members, node.version, node.summary) == (["e1", "e2", "e4"], 2, UPDATED)
    assert store.has_edge("e4", "fused_pack", EdgeType.BELONG)
    assert store.has_edge("e1", "e4", EdgeType.CAUSAL)
    # new summary {spill, milk, table, towel} = e6's words exactly -> cosine 1 > 0.8; the members
    # are skipped; e4 itself {table, towel} vs e6: 2/sqrt(8) = 0.71 -> no edge of its own.
    semantic = [
        (e.src, e.dst, round(e.weight, 4)) for e in store.neighbors("fused_pack", EdgeType.SEMANTIC)
    ]
    assert semantic == [("e6", "fused_pack", 1.0)] or semantic == [("fused_pack", "e6", 1.0)]
    assert store.neighbors("e4", EdgeType.SEMANTIC) == []
    assert store.plan_counts() == {"pending": 0, "done": 1, "rejected": 0}
    assert state["report"].edges_added == {"causal": 1, "semantic": 1}


REJECTIONS = [
    pytest.param(
        [choose("submit"), propose({"op": "create_edge", "target_id": "e42"})],
        "op 0 (create_edge): id 'e42' was not shown to the agent (invented or unseen)",
        id="invented-id",
    ),
    pytest.param(
        [
            choose("submit"),
            propose(
                {"op": "update_fusion_node", "fused_id": "fused_pack", "summary": UPDATED},
                {"op": "create_edge", "source_id": "e1", "target_id": "e2"},
            ),
        ],
        "op 1 (create_edge): connects two old memories 'e1' and 'e2'",
        id="edge-between-old-memories",
    ),
    pytest.param(
        [
            choose("get_pack_members", fused_id="fused_single"),
            choose("submit"),
            propose(
                {
                    "op": "remove_member",
                    "fused_id": "fused_single",
                    "member_ids": ["e3"],
                    "summary": "Emma watered the garden plants.",
                }
            ),
        ],
        "op 0 (remove_member): 'fused_single' is a singleton pack; removing would empty it",
        id="remove-from-singleton",
    ),
    pytest.param(
        [choose("submit"), {"plan": "{this is not a plan"}],
        "malformed plan",
        id="malformed-plan",
    ),
]


@pytest.mark.parametrize(("answers", "violation"), REJECTIONS)
def test_bad_plans_are_rejected_whole(store: MemoryStore, answers, violation: str) -> None:
    store.add_events([E4])  # so that "unchanged" compares the graph, not the new event
    before = snapshot(store)
    state = run(E4, llm_context(store, answers))
    assert state["outcome"] == "rejected"
    assert any(v.startswith(violation) for v in state["violations"]), state["violations"]
    assert snapshot(store) == before  # no fused node, member or edge changed
    assert store.plan_counts() == {"pending": 0, "done": 0, "rejected": 1}
    status, reason = store.plan_status(state["plan_id"])
    assert status == "rejected" and violation in (reason or "")


OVER_BUDGET = [choose("search_memory", query=f"q{i}") for i in range(2)] + [
    choose("get_pack_members", fused_id="fused_pack"),
    choose("get_pack_members", fused_id="fused_pack"),
    propose({"op": "no_op", "reason": "nothing"}),
]
"""Four tool calls, the last a repeated lookup, under `TIGHT_BUDGET`."""
TIGHT_BUDGET = {"max_tool_turns": 4, "max_searches": 2, "max_pack_lookups": 2}


def test_tool_budget_is_bounded(store: MemoryStore) -> None:
    state = run(E4, llm_context(store, OVER_BUDGET, **TIGHT_BUDGET))
    assert state["turns"] == 4 and state["outcome"] == "committed"
    assert state["tool_history"][-1].note.endswith(
        "already inspected in this trajectory (turn wasted)"
    )


def test_unknown_pack_lookup_returns_a_note_not_an_error(store: MemoryStore) -> None:
    answers = [
        choose("get_pack_members", fused_id="fused_nope"),
        choose("submit"),
        propose({"op": "no_op", "reason": "nothing"}),
    ]
    state = run(E4, llm_context(store, answers))
    step = state["tool_history"][-1]
    assert step.results == [] and "not a fused node id shown" in step.note
    assert state["outcome"] == "committed"


def test_offline_policy_runs_the_same_graph(store: MemoryStore) -> None:
    ctx = FusionContext(
        store=store,
        policy="offline",
        data_dir="unused",
        namespace="default",
        policy_config={"causal_min_rarity": 1.0},
    )
    state = run(E4.model_dump(mode="json"), ctx)  # a JSON record is accepted too
    # e6 (07:00, David) is similar (0.71) but not a duplicate; of the words they share, "towel"
    # is rare (2 of 5 events use it, rare = at most 3): overlap log(6 / 2) = 1.10 >= 1
    assert state["outcome"] == "committed"
    assert [o.op for o in state["plan"].operations] == ["create_edge"]
    assert store.has_edge("e6", "e4", EdgeType.CAUSAL)
    assert [r.node_id for r in state["accumulation"]][-2:] == ["e2", "e3"]  # from the store


def _crash_once(monkeypatch, store: MemoryStore, method: str) -> None:
    original = getattr(store, method)

    def boom(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(store, method, original)
        raise RuntimeError(f"injected crash in {method}")

    monkeypatch.setattr(store, method, boom)


VALID = [
    choose("submit"),
    propose(
        {"op": "update_fusion_node", "fused_id": "fused_pack", "summary": UPDATED},
        {"op": "create_edge", "target_id": "e1"},
    ),
]


@pytest.mark.parametrize("method", ["add_edge", "put_fused", "mark_plan"])
def test_crash_mid_commit_is_repaired_on_reopen(tmp_path: Path, monkeypatch, method: str) -> None:
    clean = open_store(tmp_path / "clean")
    seed(clean)
    run(E4, llm_context(clean, list(VALID)))
    expected = snapshot(clean)
    clean.close()

    store = open_store(tmp_path / "crash")
    seed(store)
    _crash_once(monkeypatch, store, method)
    with pytest.raises(RuntimeError, match="injected crash"):
        run(E4, llm_context(store, list(VALID)))
    assert store.plan_counts()["pending"] == 1
    store.close()

    store = open_store(tmp_path / "crash")
    (report,) = replay_pending(store)
    assert report.replayed and report.status == "done"
    assert snapshot(store) == expected
    assert store.plan_counts() == {"pending": 0, "done": 1, "rejected": 0}
    store.close()


def test_stores_opened_from_the_context_are_cached_and_replayed(
    tmp_path: Path, monkeypatch
) -> None:
    store = open_store(tmp_path / "s")
    seed(store)
    _crash_once(monkeypatch, store, "add_edge")
    with pytest.raises(RuntimeError):
        run(E4, llm_context(store, list(VALID)))
    store.close()
    opened: list[Path] = []
    real_open = MemoryStore.open

    def fake_open(data_dir: Path, namespace: str = "default", **_: Any) -> MemoryStore:
        opened.append(Path(data_dir))
        return real_open(data_dir, namespace=namespace, embedder=KeywordEmbedder(VOCAB))

    monkeypatch.setattr(MemoryStore, "open", staticmethod(fake_open))
    ctx = FusionContext(data_dir=str(tmp_path / "s"), namespace="default", policy="offline")
    try:
        first = resources_for(ctx, write=True).require_store()
        replay_once(first)  # what a fusion run's first node does
        assert first.plan_counts()["pending"] == 0
        assert first.get_fused("fused_pack").members == ["e1", "e2", "e4"]
        again = FusionContext(data_dir=str(tmp_path / "s"), namespace="default", policy="offline")
        assert resources_for(again, write=True).store is first and opened == [tmp_path / "s"]
    finally:
        close_stores()


def test_lost_chroma_writes_are_rebuilt_on_reopen(tmp_path: Path, monkeypatch) -> None:
    """A crash after the SQLite commit but before the buffered Chroma write."""
    store = open_store(tmp_path / "s")
    seed(store)
    store.flush()
    state = run(E4, llm_context(store, list(VALID)))
    assert state["outcome"] == "committed"
    expected = snapshot(store)
    monkeypatch.setattr(store._vectors, "flush", lambda: None)  # the process dies: buffer lost
    store._db.close()
    reopened = open_store(tmp_path / "s")
    assert snapshot(reopened) == expected
    assert np.allclose(reopened.vector("fused_pack"), reopened.embed_query(UPDATED))
    hits = reopened.dense_search(reopened.embed_query(UPDATED), 1, NodeKind.FUSED)
    assert hits == [("fused_pack", pytest.approx(1.0, abs=1e-5))]
    reopened.close()


# --- ingest ---------------------------------------------------------------------------------


def test_ingest_offline_hand_computed(tmp_path: Path) -> None:
    """Events in time order: e6 07:00, e1 08:00, e2 08:01, e3 08:30, e4 09:00 (words per
    index text: e6 {milk, spill, towel, table}, e1/e2 {milk, spill, table}, e3 {water, garden,
    plant}, e4 {table, towel}).

    Rare words (policy threshold lowered to 0.5 for this tiny store): counted over the events
    fused so far, the current one included (no look-ahead); with so few, a word is rare in at
    most 3 of them.

    e6: nothing before it -> no_op. e1 (2 events seen): e6 is an hour earlier, shares David,
    milk and spill (2 x log(3/2) = 0.81), cosine 3/sqrt(12) = 0.87 -> causal e6->e1, and its
    own semantic edge to e6 (> 0.8). e2 (3 seen): e1 on another device one minute earlier ->
    new pack {e1, e2}; e6 -> e2 causal (2 x log(4/3) = 0.58); semantic e2-e1 (1.0) and e2-e6
    (0.87); the pack's summary {spill, milk, table} to e6 (0.87).
    e3: unrelated -> no_op. e4 (5 seen): the pack ended 59 min before (gap 10) -> no update;
    e6 shares David and "towel" (log(6/2) = 1.10; "table" is in 4 events, not rare), cosine
    2/sqrt(8) = 0.71 -> causal e6->e4.
    """
    store = open_store(tmp_path / "s")
    ctx = FusionContext(
        policy="offline",
        data_dir="unused",
        namespace="default",
        policy_config={"causal_min_rarity": 0.5},
    )
    begun = count_write_transactions(store)
    report = ingest_events(store, [E4, E3, E2, E1, E6], config=ctx, progress=False)
    # the chunk's events stored and queued at once, then the five events' plans under one
    # commit (each plan its own savepoint): nothing written twice
    assert begun() == 1 + 1
    assert (report.events, report.added, report.accepted, report.rejected) == (5, 5, 5, 0)
    assert report.ops == {"no_op": 2, "create_edge": 3, "create_fusion_node": 1}
    assert report.edges_added == {"causal": 3, "semantic": 4}
    assert (report.fused_created, report.fused_updated, report.tool_calls) == (1, 0, 0)
    assert report.events_per_s > 0
    (pack,) = store.all_fused()
    assert pack.members == ["e1", "e2"] and pack.devices == ["cam_kitchen", "watch_david"]
    causal = sorted(
        (e.src, e.dst) for n in ("e1", "e2", "e4") for e in store.neighbors(n, EdgeType.CAUSAL)
    )
    assert causal == [("e6", "e1"), ("e6", "e2"), ("e6", "e4")]
    assert store.has_edge(pack.node_id, "e6", EdgeType.SEMANTIC)
    assert store.plan_counts() == {"pending": 0, "done": 5, "rejected": 0}

    again = ingest_events(store, [E1, E2, E3, E4, E6], config=ctx, progress=False)
    assert (again.events, again.skipped, again.added) == (0, 5, 0)  # already fused: skipped
    store.close()


def test_plans_committed_one_by_one_build_the_same_graph(tmp_path: Path) -> None:
    """`plans_per_commit=1` commits each plan on its own (the plan logged, then applied: two
    transactions an event); the graph is the one a grouped commit builds."""
    graphs = []
    for plans in (1, 32):
        store = open_store(tmp_path / f"s{plans}")
        ctx = FusionContext(
            policy="offline", policy_config={"causal_min_rarity": 0.5}, plans_per_commit=plans
        )
        begun = count_write_transactions(store)
        ingest_events(store, [E4, E3, E2, E1, E6], config=ctx, progress=False)
        assert begun() == (1 + 2 * 5 if plans == 1 else 1 + 1)
        graphs.append(
            (
                [(n.node_id, n.members, n.summary) for n in store.all_fused()],
                sorted(
                    (e.src, e.dst, e.type.value, round(e.weight, 6))
                    for n in ("e1", "e2", "e3", "e4", "e6")
                    for e in store.neighbors(n)
                ),
            )
        )
        store.close()
    assert graphs[0] == graphs[1] and graphs[0][0]


def test_a_grouped_ingest_answers_its_dense_searches_ahead_and_builds_the_same_graph(
    tmp_path: Path,
) -> None:
    """A grouped offline ingest primes each group's dense event searches in one product
    (`prime_candidate_searches`): a generated household fuses into the very graph that plans
    committed one by one, unprimed, build (weights compared exactly), for fewer rows scored."""
    events = next(household_weeks(400, seed=13)).events[:400]
    snapshots, scored = [], []
    for plans in (1, 32):
        store = MemoryStore.open(tmp_path / f"p{plans}", embedder=tiny_embedder())
        ctx = FusionContext(policy="offline", plans_per_commit=plans)
        report = ingest_events(store, events, config=ctx, progress=False)
        assert report.accepted == len(events) and report.ops.get("create_fusion_node", 0) > 0
        snapshots.append(snapshot(store))
        scored.append(store._vectors.rows_scored)
        store.close()
    assert snapshots[0] == snapshots[1]
    assert scored[1] < scored[0]


class RecordingPolicy:
    """A decision program that records what it was shown and keeps every event atomic."""

    def __init__(self) -> None:
        self.zones: list[list[str]] = []

    def __call__(self, **inputs: Any) -> dspy.Prediction:
        self.zones.append([r.node_id for r in inputs["accumulation_zone"]])
        plan = FusionPlan.no_op("recording only")
        return dspy.Prediction(action="submit", query="", fused_id="", plan=plan)


def test_ingest_carries_the_accumulation_window(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s")
    policy = RecordingPolicy()
    ctx = FusionContext(
        policy="offline", program=policy, window_size=2, data_dir="unused", namespace="default"
    )
    ingest_events(store, [E6, E1, E2, E3, E4], config=ctx, progress=False, chunk_size=2)
    assert policy.zones == [[], ["e6"], ["e6", "e1"], ["e1", "e2"], ["e2", "e3"]]
    store.close()


def test_llm_policy_over_an_openai_compatible_endpoint(store: MemoryStore) -> None:
    """No injected LM: the graph builds it from the llm_* settings (a local fake server)."""
    from tests.support.fake_openai import start_fake_openai

    plan = {"operations": [{"op": "create_edge", "target_id": "e1"}], "rationale": "cause"}
    choice = "[[ ## action ## ]]\nsubmit\n\n[[ ## query ## ]]\n\n\n[[ ## fused_id ## ]]\n\n\n"
    replies = [
        choice + "[[ ## completed ## ]]",
        f"[[ ## plan ## ]]\n{json.dumps(plan)}\n\n[[ ## completed ## ]]",
    ]
    with start_fake_openai(replies) as fake:
        ctx = FusionContext(
            store=store,
            policy="llm",
            llm_model="fake-model",
            llm_base_url=fake.base_url,
            llm_temperature=1.0,
            llm_max_tokens=512,
            data_dir="unused",
            namespace="default",
        )
        state = run(E4, ctx)
        assert len(fake.chat_requests) == 2
        assert fake.chat_requests[0]["model"] == "fake-model"
        system = fake.chat_requests[1]["messages"][0]["content"]
        assert "Never invent or guess an id." in system
    assert state["outcome"] == "committed"
    assert store.has_edge("e1", "e4", EdgeType.CAUSAL)


def test_llm_policy_without_a_model_is_a_configuration_error(store: MemoryStore) -> None:
    from memory.errors import ConfigurationError

    ctx = FusionContext(
        store=store,
        policy="llm",
        llm_model="",
        llm_base_url="",
        llm_temperature=1.0,
        llm_max_tokens=10,
        data_dir="x",
        namespace="default",
    )
    with pytest.raises(ConfigurationError, match="needs an LLM model"):
        run(E4, ctx)


def test_singleton_packs_are_not_inspected(store: MemoryStore) -> None:
    answers = [
        choose("get_pack_members", fused_id="fused_single"),
        choose("submit"),
        propose({"op": "no_op", "reason": "nothing"}),
    ]
    state = run(E4, llm_context(store, answers))
    step = state["tool_history"][-1]
    assert step.results == [] and step.note.startswith("singleton pack: not inspected")
    assert state.get("inspected", {}) == {} and state["lookups"] == 1


@pytest.mark.parametrize(
    "last",
    [
        make_event("e1", "23:00", "cam_kitchen", "A different text under a stored id", ["David"]),
        make_event("fused_x", "23:00", "cam_kitchen", "An id with the reserved prefix", []),
    ],
    ids=["stored-id-other-content", "reserved-prefix"],
)
def test_a_bad_last_record_writes_nothing_at_any_chunk_size(
    store: MemoryStore, last: Event
) -> None:
    """A batch is checked whole before its first chunk is written: 40 good events in chunks
    of 4, then one bad record, leave the store exactly as it was."""
    before = snapshot(store)
    good = [
        make_event(f"n{i:02d}", f"10:{i:02d}", "cam_kitchen", f"Reading {i}", []) for i in range(40)
    ]
    with pytest.raises(Exception) as raised:
        ingest_events(
            store,
            [*good, last],
            config=FusionContext(policy="offline"),
            progress=False,
            chunk_size=4,
        )
    assert last.event_id in str(raised.value)
    assert snapshot(store) == before
    assert not any(store.has_node(e.event_id) for e in good)


def _stream() -> list[Event]:
    """Twelve events, some of them fusing (same moment, other device) and causal."""
    people = [["David"], ["David"], ["Emma"], ["David", "Emma"]]
    devices = ["cam_kitchen", "watch_david", "phone_emma", "fridge_cam"]
    texts = [
        "David spilled milk on the table",
        "David says the milk spill is on the table",
        "Emma watered the garden plants",
        "Emma wiped the table with a towel",
    ]
    return [
        make_event(
            f"s{i:02d}",
            f"{8 + i // 4:02d}:{(i % 4) * 2:02d}",
            devices[i % 4],
            texts[i % 4],
            people[i % 4],
        )
        for i in range(12)
    ]


def test_an_interrupted_ingest_leaves_its_events_queued_and_the_rerun_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fusion of the 6th event fails (an LLM outage, say): the rest of its chunk stays
    stored and queued with the reason; ingesting the same batch again fuses the queue, and
    the graph equals an uninterrupted run's."""
    import graphs.fusion.ingest as ingest_module

    ctx = FusionContext(policy="offline")
    clean = open_store(tmp_path / "clean")
    ingest_events(clean, _stream(), config=ctx, progress=False, chunk_size=8)
    assert clean.pending_fusion() == []

    broken = open_store(tmp_path / "broken")
    real = ingest_module._fuse_one
    calls = {"n": 0}

    def outage(event: Event, *args: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 6:
            raise ConnectionError("LLM endpoint down")
        real(event, *args)

    monkeypatch.setattr(ingest_module, "_fuse_one", outage)
    with pytest.raises(ConnectionError):
        ingest_events(broken, _stream(), config=ctx, progress=False, chunk_size=8)
    assert broken.pending_fusion() == [f"s{i:02d}" for i in range(5, 8)]  # s08+ never stored
    assert broken.pending_reasons() == {"s05": "ConnectionError: LLM endpoint down"}
    assert broken.stats().pending_fusion == 3
    monkeypatch.setattr(ingest_module, "_fuse_one", real)

    broken.close()
    reopened = open_store(tmp_path / "broken")  # the queue is on disk
    assert reopened.pending_fusion() == ["s05", "s06", "s07"]
    report = ingest_events(reopened, _stream(), config=ctx, progress=False, chunk_size=8)
    assert report.drained == 3 and report.skipped == 5 and report.added == 4
    assert reopened.pending_fusion() == [] and reopened.stats().pending_fusion == 0
    assert snapshot(reopened) == snapshot(clean)
    reopened.close()
    clean.close()


def test_queued_events_outside_the_batch_are_fused_first(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s")
    store.add_events(_stream()[:3], pending=True)  # stored by an ingest that died
    report = ingest_events(
        store, _stream()[3:], config=FusionContext(policy="offline"), progress=False
    )
    assert report.drained == 3 and report.events == 12
    assert store.pending_fusion() == []
    store.close()


REPAIR_VOCAB = ["brass", "gasket", "plumbco", "valve", "ordered", "fitted", "leaks", "toast"]


def _repair_stream() -> list[Event]:
    """Thirty events of a morning: filler readings, a cause (Emma orders a Plumbco brass valve
    gasket) and its effect an hour later (she fits it) sharing four words no earlier event
    used, then four later events that repeat those words. Counting those later events when
    judging the effect makes the shared words look common and drops the causal edge."""
    filler = [
        make_event(f"f{i:02d}", f"07:{i:02d}", f"sensor_{i % 5}", f"Reading number {i} logged", [])
        for i in range(20)
    ]
    cause = make_event(
        "c1", "08:00", "phone_emma", "Emma ordered a brass valve gasket from Plumbco", ["Emma"]
    )
    effect = make_event(
        "c2", "09:00", "cam_kitchen", "Emma fitted the brass valve gasket from Plumbco", ["Emma"]
    )
    later = [
        make_event(
            f"l{i}",
            f"1{i}:30",
            "cam_kitchen",
            "The brass valve gasket from Plumbco leaks",
            ["David"],
        )
        for i in range(4)
    ]
    toast = [
        make_event(f"t{i}", f"08:{10 + i:02d}", "cam_kitchen", "David burned the toast", ["David"])
        for i in range(4)
    ]
    return [*filler, cause, effect, *later, *toast]


def test_any_batching_gives_the_same_graph(tmp_path: Path) -> None:
    """No look-ahead: fusion decisions (candidate rarity included) use only events already
    past fusion, so one batch, chunks of one, and three separate ingests build one graph."""
    ctx = FusionContext(policy="offline")
    stream = _repair_stream()

    def open_store(path: Path) -> MemoryStore:
        return MemoryStore.open(path, embedder=KeywordEmbedder(REPAIR_VOCAB))

    whole = open_store(tmp_path / "whole")
    ingest_events(whole, stream, config=ctx, progress=False, chunk_size=256)
    singles = open_store(tmp_path / "singles")
    ingest_events(singles, stream, config=ctx, progress=False, chunk_size=1)
    parts = open_store(tmp_path / "parts")
    for piece in (stream[:7], stream[7:23], stream[23:]):
        ingest_events(parts, piece, config=ctx, progress=False, chunk_size=5)
    expected = snapshot(whole)
    _fused, edges = expected
    assert ("c1", "c2", EdgeType.CAUSAL.value) in {e[:3] for e in edges}
    assert snapshot(singles) == expected
    assert snapshot(parts) == expected
    for store in (whole, singles, parts):
        store.close()
