from __future__ import annotations

import math

import pytest

from memory.fusion.candidates import (
    CandidateConfig,
    pack_members,
    retrieve_candidates,
    search_memory,
)
from memory.models import FusedNode, NodeKind

from .scenario import E1, E2, E3, E4, E5, E6, E7, fake_store

R6 = 1 / 6**0.5  # one shared word of 2 and 3: 1/sqrt(6)


@pytest.fixture
def store():
    s = fake_store()
    s.add_events([E1, E2, E3, E4, E5, E6, E7])
    s.put_fused(FusedNode.from_members("fused_pack", "David spilled milk on the table.", [E1, E2]))
    return s


def test_candidates_merge_sources_and_see_only_the_past(store) -> None:
    records = retrieve_candidates(store, E4, CandidateConfig(dense_events=3))
    # e4 {table, towel}: e6 {milk, spill, towel, table} 2/sqrt(8); e1, e2, pack 1/sqrt(6);
    # e3 {water, garden, plant} only via the shared person (Emma), cosine 0; e5/e7 are later.
    assert [r.node_id for r in records] == ["e6", "e1", "e2", "fused_pack", "e3"]
    sims = {r.node_id: r.similarity for r in records}
    assert sims["e6"] == pytest.approx(2 / 8**0.5, abs=1e-4)
    assert sims["e1"] == pytest.approx(R6, abs=1e-4) and sims["e3"] == 0.0
    by_id = {r.node_id: r for r in records}
    assert by_id["e1"].found_by == ("dense", "same_person")
    assert by_id["e3"].found_by == ("same_person",)
    assert by_id["fused_pack"].found_by == ("dense", "pack_of_candidate")
    assert by_id["e1"].packs == ("fused_pack",)
    pack = by_id["fused_pack"]
    assert (pack.kind, pack.member_count, pack.locations, pack.people) == (
        NodeKind.FUSED,
        2,
        ("kitchen",),
        ("David",),
    )


def test_a_packs_places_follow_its_members(store) -> None:
    """The places shown for a pack are remembered between events, until its members change."""

    def places() -> tuple[str, ...]:
        found = {r.node_id: r for r in retrieve_candidates(store, E4, CandidateConfig())}
        return found["fused_pack"].locations

    assert places() == ("kitchen",)
    assert places() == ("kitchen",)  # the remembered answer
    grown = FusedNode.from_members("fused_pack", "David spilled milk on the table.", [E1, E2, E3])
    store.put_fused(grown)
    assert places() == ("garden", "kitchen")


def test_same_moment_from_other_devices(store) -> None:
    records = retrieve_candidates(
        store, E5, CandidateConfig(dense_events=0, dense_fused=0, same_person_radius=0)
    )
    assert [(r.node_id, r.found_by) for r in records] == [("e4", ("same_moment",))]
    assert records[0].similarity == pytest.approx(1.0)


def test_candidate_cap(store) -> None:
    assert len(retrieve_candidates(store, E4, CandidateConfig(max_candidates=2))) == 2


def test_search_memory_finds_past_matches_by_query(store) -> None:
    records = search_memory(store, "garden water", E4)
    assert records[0].node_id == "e3"
    assert records[0].found_by == ("search", "search_bm25")
    assert "e7" not in {r.node_id for r in records}  # later than the current event
    assert "e4" not in {r.node_id for r in records}  # the current event itself


def test_pack_members_in_time_order_with_similarity(store) -> None:
    records = pack_members(store, "fused_pack", E4)
    assert [r.node_id for r in records] == ["e1", "e2"]
    assert records[0].similarity == pytest.approx(R6, abs=1e-4)
    assert records[0].found_by == ("lookup",)
    assert records[0].packs == ("fused_pack",)


def test_rare_overlap_counts_only_words_few_events_use(store) -> None:
    # 7 events, so a word is rare in at most max(0.02 * 7, 3) = 3 of them. e5 and e4 share
    # {table, towel}: "table" is in 6 events, "towel" in 4 (e4, e5, e6, e7) -> nothing rare.
    records = {r.node_id: r for r in retrieve_candidates(store, E5, CandidateConfig())}
    assert records["e4"].rare_overlap == 0.0
    # with a looser notion of rare (at most 4 events) "towel" counts: log((7 + 1) / 4)
    looser = CandidateConfig(rare_min_df=4)
    records = {r.node_id: r for r in retrieve_candidates(store, E5, looser)}
    assert records["e4"].rare_overlap == pytest.approx(math.log(8 / 4), abs=1e-3)


def test_render_is_one_line_with_ids(store) -> None:
    records = retrieve_candidates(store, E4, CandidateConfig(dense_events=3))
    lines = {r.node_id: r.render() for r in records}
    assert lines["fused_pack"].startswith("Fused node [fused_pack] members=2 [2024-05-01 08:00:00")
    assert lines["e1"].startswith("Event [e1] [2024-05-01 08:00:00] [cam_kitchen] [kitchen]")
    assert all("\n" not in line for line in lines.values())
