"""Later rounds' finds enter the final context only by beating the round-1 event they
would displace, on similarity to the question less redundancy with what ranks above."""

from __future__ import annotations

from datetime import date

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from graphs.retrieval.admission import QuestionRelevance, admit_later_finds
from graphs.retrieval.planning import final_selection
from memory.records import Candidate, ExpansionTrace


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def relevance(vectors: dict[str, np.ndarray], redundancy: float) -> QuestionRelevance:
    return QuestionRelevance(unit(1, 0, 0), vectors.get, redundancy=redundancy)


# the question is the x axis; "copy" is a near-copy of "r1"; "cause" points elsewhere
VECTORS = {
    "r1": unit(0.8, 0.6, 0.0),
    "r2": unit(0.6, 0.8, 0.0),
    "copy": unit(0.8, 0.6, 0.01),
    "cause": unit(0.45, 0.0, 0.89),
    "weak": unit(0.1, 0.0, 0.99),
    "close": unit(0.95, 0.0, 0.31),
}


def test_a_find_takes_the_last_place_only_by_beating_its_holder() -> None:
    plain = relevance(VECTORS, 0.0)
    # "close" (0.95 to the question) beats "r2" (0.6): it takes r2's place, r2 follows
    assert admit_later_finds(["r1", "r2"], ["close"], 2, 1, plain) == ["r1", "close", "r2"]
    # "weak" (0.1) does not: round 1 keeps its places, the find is left out, last
    assert admit_later_finds(["r1", "r2"], ["weak"], 2, 1, plain) == ["r1", "r2", "weak"]


def test_a_near_copy_of_what_ranks_above_gives_way_to_a_distinct_find() -> None:
    ranked = ["r1", "copy"]
    # on similarity alone the copy (0.8) keeps its place against the cause (0.45) ...
    assert admit_later_finds(ranked, ["cause"], 2, 1, relevance(VECTORS, 0.0))[:2] == ranked
    # ... but it says nothing r1 does not: with redundancy counted, the cause wins
    assert admit_later_finds(ranked, ["cause"], 2, 1, relevance(VECTORS, 0.6))[:2] == [
        "r1",
        "cause",
    ]


def test_within_a_day_only_the_same_days_near_copies_count() -> None:
    """For a question over several days, "copy" (the same record as r1) on another day is
    news, not a copy: it beats the cause on its similarity to the question."""
    days = {"r1": date(2026, 5, 11), "copy": date(2026, 5, 12), "cause": date(2026, 5, 11)}

    def scoped(day_of: dict[str, date]) -> QuestionRelevance:
        return QuestionRelevance(unit(1, 0, 0), VECTORS.get, redundancy=0.6, day_of=day_of.get)

    # across days (no day_of) the copy gives way to the cause (the test above) ...
    assert admit_later_finds(["r1", "cause"], ["copy"], 2, 1, relevance(VECTORS, 0.6))[:2] == [
        "r1",
        "cause",
    ]
    # ... day-scoped, another day's copy wins the place; the same day's does not
    assert admit_later_finds(["r1", "cause"], ["copy"], 2, 1, scoped(days))[:2] == ["r1", "copy"]
    same_day = {**days, "copy": date(2026, 5, 11)}
    assert admit_later_finds(["r1", "cause"], ["copy"], 2, 1, scoped(same_day))[:2] == [
        "r1",
        "cause",
    ]


def test_slots_bound_the_places_won_and_judged_places_are_never_contested() -> None:
    plain = relevance(VECTORS, 0.0)
    finds = ["close", "r2"]  # 0.95 and 0.6 to the question; the holders: cause 0.45, weak 0.1
    one = admit_later_finds(["r1", "weak", "cause"], finds, 3, 1, plain)
    assert one[:3] == ["r1", "weak", "close"]
    two = admit_later_finds(["r1", "weak", "cause"], finds, 3, 2, plain)
    assert two[:3] == ["r1", "r2", "close"]
    # the judge's picks (protected) are never contested, however weak
    guarded = admit_later_finds(["weak", "cause"], finds, 2, 2, plain, protected=1)
    assert guarded[:2] == ["weak", "close"]
    assert admit_later_finds(["weak", "cause"], finds, 2, 2, plain, protected=2)[:2] == [
        "weak",
        "cause",
    ]


def test_free_places_are_filled_without_a_contest_and_unknown_vectors_never_move() -> None:
    plain = relevance(VECTORS, 0.0)
    # round 1 found one event for two places: the best find fills the other, uncontested
    assert admit_later_finds(["r1"], ["weak", "ghost"], 2, 0, plain) == ["r1", "weak", "ghost"]
    # a find the index has no vector for never wins; a holder without one never loses
    assert admit_later_finds(["r1", "r2"], ["ghost"], 2, 1, plain)[:2] == ["r1", "r2"]
    assert admit_later_finds(["r1", "ghost"], ["close"], 2, 1, plain)[:2] == ["r1", "ghost"]


def test_a_copy_of_a_find_already_let_in_is_no_news() -> None:
    vectors = {
        "top": unit(0.2, 0.0, 0.98),
        "h2": unit(0.55, 0.0, -0.835),
        "h1": unit(0.5, -0.866, 0.0),
        "find": unit(0.9, 0.44, 0.0),
        "its_copy": unit(0.9, 0.44, 0.01),
    }
    # the find takes the last place; its copy (0.9 to the question, 1.0 to the find) would
    # beat h2 on the question alone, but the find already let in below makes it redundant
    out = admit_later_finds(
        ["top", "h2", "h1"], ["find", "its_copy"], 3, 2, relevance(vectors, 1.0)
    )
    assert out[:3] == ["top", "h2", "find"]
    plain = admit_later_finds(
        ["top", "h2", "h1"], ["find", "its_copy"], 3, 2, relevance(vectors, 0)
    )
    assert plain[:3] == ["top", "its_copy", "find"]


# "mate" reads like round 1's best event r1 (mostly the y axis), little like the question
MATES = {**VECTORS, "mate": unit(0.3, 0.95, 0.0)}


def test_read_with_evidence_values_what_belongs_with_the_best_evidence() -> None:
    plain = relevance(MATES, 0.0)
    # on the question alone the mate (0.30) loses to the holder (cause, 0.45) ...
    assert admit_later_finds(["r1", "cause"], ["mate"], 2, 1, plain)[:2] == ["r1", "cause"]
    # ... read with r1 at weight 1, the question is (1.8, 0.6, 0) made unit: mate 0.59, cause 0.43
    read = plain.read_with(["r1"], 1.0)
    assert np.allclose(read.question, unit(1.8, 0.6, 0.0), atol=1e-6)
    assert read.similarity("mate") > read.similarity("cause")
    assert admit_later_finds(["r1", "cause"], ["mate"], 2, 1, read)[:2] == ["r1", "mate"]
    # nothing to read with: the same scale
    assert plain.read_with(["r1"], 0.0) is plain
    assert plain.read_with(["ghost"], 1.0) is plain
    assert plain.read_with([], 1.0) is plain


def _candidate(node_id: str) -> Candidate:
    return Candidate(
        node_id=node_id, kind="event", score=0.5, trace=ExpansionTrace(seed_id=node_id)
    )


def test_final_selection_runs_the_contest_after_the_judged_ids() -> None:
    pool = {i: _candidate(i) for i in ["r1", "r2", "weak", "close"]}
    found = {"weak": (1, 0), "r2": (1, 1), "r1": (1, 2), "close": (2, 0)}
    plain = relevance(VECTORS, 0.0)
    # the judge pinned r1; round 1's order follows; close (round 2) beats the last holder
    assert final_selection(["r1"], pool, 3, found, "history", 1, plain) == ["r1", "weak", "close"]
    # uncontested (no relevance): the old reserved share, whatever the find is worth
    assert final_selection(["r1"], pool, 3, found, "history", 1) == ["r1", "weak", "close"]
    weak_find = {"r1": (1, 0), "r2": (1, 1), "close": (1, 2), "weak": (2, 0)}
    assert final_selection([], pool, 3, weak_find, "history", 1, plain) == ["r1", "r2", "close"]
    assert final_selection([], pool, 3, weak_find, "history", 1) == ["r1", "r2", "weak"]


def test_final_selection_reads_the_question_with_its_first_events() -> None:
    pool = {i: _candidate(i) for i in ["r1", "cause", "mate"]}
    found = {"r1": (1, 0), "cause": (1, 1), "mate": (2, 0)}
    plain = relevance(MATES, 0.0)
    assert final_selection([], pool, 2, found, "history", 1, plain) == ["r1", "cause"]
    with_best = final_selection([], pool, 2, found, "history", 1, plain, evidence=(1, 1.0))
    assert with_best == ["r1", "mate"]
    # read with the first two (r1 and the holder itself), the pull is toward both: cause stays
    both = final_selection([], pool, 2, found, "history", 1, plain, evidence=(2, 1.0))
    assert both == ["r1", "cause"]


# a contest drawn at random: the vectors' seed, round 1's and the later rounds' numbers of
# events, the context size, the places the finds may win and the judged places
CONTESTS = {
    "seed": st.integers(0, 2**32 - 1),
    "n_first": st.integers(0, 12),
    "n_later": st.integers(0, 8),
    "k": st.integers(1, 10),
    "slots": st.integers(0, 4),
    "protected": st.integers(0, 3),
}


def contest(
    seed: int, n_first: int, n_later: int, redundancy: float
) -> tuple[list[str], list[str], QuestionRelevance]:
    """Round 1's ids, the later finds' ids and a relevance over random 4-d vectors."""
    rng = np.random.default_rng(seed)
    first = [f"f{i}" for i in range(n_first)]
    later = [f"l{i}" for i in range(n_later)]
    vectors = {i: unit(*rng.normal(size=4)) for i in [*first, *later]}
    return first, later, QuestionRelevance(unit(1, 0, 0, 0), vectors.get, redundancy=redundancy)


@settings(max_examples=80, deadline=None)
@given(**CONTESTS, redundancy=st.sampled_from([0.0, 0.25, 0.6, 1.0]))
@example(seed=505, n_first=2, n_later=2, k=2, slots=2, protected=0, redundancy=0.25)
def test_the_contest_keeps_every_id_once_and_only_better_finds_win(
    seed: int,
    n_first: int,
    n_later: int,
    k: int,
    slots: int,
    protected: int,
    redundancy: float,
) -> None:
    """Whatever the vectors: every id comes back once; the protected places keep their ids;
    beyond the free places, at most `slots` finds are in the first k; and each find won its
    place with a higher value than the event it displaced, measured against the events
    ranked above that place."""
    first, later, rel = contest(seed, n_first, n_later, redundancy)
    protected = min(protected, len(first), k)
    out = admit_later_finds(first, later, k, slots, rel, protected)
    assert sorted(out) == sorted([*first, *later])
    head = out[:k]
    assert head[:protected] == first[:protected]
    free = max(0, k - len(first))
    won = [i for i in head if i.startswith("l")]
    assert len(won) <= free + slots
    if free == 0:
        displaced = out[k : k + len(won)]
        # contest `step` was for place k-1-step; the places above it still held the events
        # later contests displaced, and the finds earlier contests let in below it count as
        # above too (a copy of one of them is no news either)
        for step, loser in enumerate(displaced):
            position = k - 1 - step
            winner = head[position]
            assert winner.startswith("l") and loser.startswith("f"), step
            above = list(head[:position])
            for later_step in range(step + 1, len(displaced)):
                above[k - 1 - later_step] = displaced[later_step]
            above += [head[k - 1 - earlier] for earlier in range(step)]
            assert rel.values([winner], above)[0] > rel.values([loser], above)[0]


def test_with_reach_a_find_passes_over_a_holder_it_does_not_beat() -> None:
    """Over several days: "r2" (0.6) at the last place outscores the find "cause" (0.45),
    but "weak" (0.1) above it does not — with a reach of two places the find takes weak's."""
    plain = relevance(VECTORS, 0.0)
    ranked = ["r1", "weak", "r2"]
    assert admit_later_finds(ranked, ["cause"], 3, 1, plain)[:3] == ranked
    assert admit_later_finds(ranked, ["cause"], 3, 1, plain, reach=1)[:3] == ranked
    assert admit_later_finds(ranked, ["cause"], 3, 1, plain, reach=2) == [
        "r1",
        "cause",
        "r2",
        "weak",
    ]
    # the judged places stay out of reach
    assert admit_later_finds(ranked, ["cause"], 3, 1, plain, protected=2, reach=3)[:3] == ranked


@settings(max_examples=80, deadline=None)
@given(**CONTESTS, reach=st.integers(1, 10))
@example(seed=57701, n_first=9, n_later=8, k=4, slots=2, protected=0, reach=2)
def test_within_its_reach_every_find_beats_the_event_it_displaced(
    seed: int, n_first: int, n_later: int, k: int, slots: int, protected: int, reach: int
) -> None:
    """Every id once; only the last `reach` unprotected places change; at most `slots` of
    them; and each find beat the event it displaced, against the events ranked above that
    place (the contest walks up, so those are still round 1's) and the finds already let in
    below it."""
    first, later, rel = contest(seed, n_first, n_later, 0.5)
    protected = min(protected, len(first), k)
    out = admit_later_finds(first, later, k, slots, rel, protected, reach)
    assert sorted(out) == sorted([*first, *later])
    if len(first) < k:
        return  # free places are filled uncontested (the test above covers them)
    head = out[:k]
    floor = max(protected, k - reach)
    assert head[:floor] == first[:floor]
    changed = [p for p in range(floor, k) if head[p] != first[p]]
    assert len(changed) <= slots
    for p in changed:
        assert head[p].startswith("l")
        above = [*first[:p], *(head[q] for q in changed if q > p)]
        assert rel.values([head[p]], above)[0] > rel.values([first[p]], above)[0]
