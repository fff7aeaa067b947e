"""The shared tokenizer and the incremental BM25L index (checked against rank_bm25 itself)."""

from __future__ import annotations

import inspect
import math
import random
import tracemalloc
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25L

from memory.lexical_index import BM25Params, LexicalIndex
from memory.models import NodeKind
from memory.text import stem, tokenize


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("watch_david", ["watch_david", "watch", "david"]),
        ("Emma cycled 6.1 km.", ["emma", "cycl", "6.1", "km"]),
        ("Alarm at 10:30 on 2024-03-01", ["alarm", "10:30", "2024-03-01"]),
        ("David's knee", ["david", "knee"]),
        ("It was the dog and the cat", ["dog", "cat"]),
        ("wi-fi router", ["wi-fi", "wi", "fi", "router"]),
        ("", []),
    ],
)
def test_tokenize(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("words", "root"),
    [
        (["limping", "limped", "limps", "limp"], "limp"),
        (["batteries", "battery"], "battery"),
        (["watches", "watch"], "watch"),
        (["running", "runs", "run"], "run"),
        (["stopped", "stopping", "stop"], "stop"),
        (["living", "lives", "live"], "liv"),
    ],
)
def test_inflections_meet(words: list[str], root: str) -> None:
    assert {stem(w) for w in words} == {root}


@pytest.mark.parametrize("word", ["status", "glass", "speed", "thing", "bpm", "6.1"])
def test_stemmer_leaves_non_inflections_alone(word: str) -> None:
    assert stem(word) == word


def test_params_are_rank_bm25_defaults() -> None:
    defaults = inspect.signature(BM25L.__init__).parameters
    params = BM25Params()
    assert (params.k1, params.b, params.delta) == (
        defaults["k1"].default,
        defaults["b"].default,
        defaults["delta"].default,
    )


CORPUS = {
    "e1": "David limping after his morning run in the park",
    "e2": "Emma cycled 6.1 km with her phone in the park",
    "e3": "watch_david heart rate 128 bpm during the run",
    "e4": "The fridge door in the kitchen stayed open",
    "e5": "David and Emma talked about David's knee",
    "e6": "Thermostat set to 21.5 degrees in the living room",
}


def _reference(corpus: dict[str, str], query: str) -> dict[str, float]:
    ids = list(corpus)
    scores = BM25L([tokenize(corpus[i]) for i in ids]).get_scores(tokenize(query))
    return {i: float(s) for i, s in zip(ids, scores, strict=True) if s > 0}


@pytest.mark.parametrize(
    "query", ["David run", "park park emma", "watch_david", "knee", "6.1 km", "zebra"]
)
def test_scores_equal_rank_bm25(query: str) -> None:
    index = LexicalIndex()
    for node_id, text in CORPUS.items():
        index.add(node_id, text, NodeKind.EVENT)
    expected = _reference(CORPUS, query)
    got = index.scores(query)
    assert got.keys() == expected.keys()
    for node_id, score in expected.items():
        assert got[node_id] == pytest.approx(score, rel=1e-12)


def test_hand_computed_single_term_score() -> None:
    """One query term, BM25L by hand: idf·tf·(k1+1)(c+δ)/(k1+c+δ), c = tf/(1−b+b·dl/avgdl)."""
    index = LexicalIndex()
    index.add("a", "knee knee ice", NodeKind.EVENT)  # dl 3, tf(knee) 2
    index.add("b", "ice", NodeKind.EVENT)  # dl 1
    avgdl, k1, b, delta = 2.0, 1.5, 0.75, 0.5
    idf = math.log(3) - math.log(1.5)
    c = 2 / (1 - b + b * 3 / avgdl)
    assert index.scores("knee") == {
        "a": pytest.approx(idf * 2 * (k1 + 1) * (c + delta) / (k1 + c + delta))
    }


def test_incremental_updates_match_a_rebuild() -> None:
    rng = random.Random(7)
    words = [
        "david",
        "emma",
        "knee",
        "run",
        "park",
        "fridge",
        "kitchen",
        "watch",
        "phone",
        "jazz",
        "ice",
        "pack",
    ]
    live: dict[str, str] = {}
    index = LexicalIndex()
    for step in range(300):
        node_id = f"n{rng.randrange(40)}"
        if node_id in live and rng.random() < 0.3:
            index.remove(node_id)
            del live[node_id]
        else:
            text = " ".join(rng.choices(words, k=rng.randrange(1, 8)))
            index.add(node_id, text, NodeKind.EVENT)  # a re-add replaces the old text
            live[node_id] = text
        if step % 50 == 49:
            for query in ("david knee", "park jazz ice", "fridge"):
                expected = _reference(live, query)
                got = index.scores(query)
                assert got.keys() == expected.keys()
                assert all(got[i] == pytest.approx(s, rel=1e-12) for i, s in expected.items())
    assert len(index) == len(live)


def test_undo_restores_previous_text() -> None:
    index = LexicalIndex()
    index.add("f1", "knee injury", NodeKind.FUSED)
    undo = index.add("f1", "cooking dinner", NodeKind.FUSED)
    assert index.search("knee", 5) == []
    undo()
    assert [i for i, _ in index.search("knee", 5)] == ["f1"]
    undo_remove = index.remove("f1")
    assert len(index) == 0
    undo_remove()
    assert [i for i, _ in index.search("injury", 5)] == ["f1"]


def test_search_ranks_filters_by_kind_and_breaks_ties_by_id() -> None:
    index = LexicalIndex()
    index.add("e2", "knee ice", NodeKind.EVENT)
    index.add("e1", "knee ice", NodeKind.EVENT)
    index.add("e3", "knee knee ice pack", NodeKind.EVENT)
    index.add("fused_k", "knee care", NodeKind.FUSED)
    index.add("e4", "fridge", NodeKind.EVENT)
    ranked = index.search("knee", 10, kind=NodeKind.EVENT)
    assert [i for i, _ in ranked] == ["e3", "e1", "e2"]
    assert [i for i, _ in index.search("knee", 2, kind=NodeKind.EVENT)] == ["e3", "e1"]
    assert [i for i, _ in index.search("knee", 10, kind=NodeKind.FUSED)] == ["fused_k"]
    assert index.search("knee", 0) == [] and index.search("", 5) == []


# --- random corpora and edit sequences against rank_bm25 itself ---------------------------

# inflections, stopwords, device ids and numbers so that tokenize() merges, drops and splits
_VOCAB = [
    "david",
    "emma",
    "knee",
    "knees",
    "run",
    "running",
    "park",
    "the",
    "and",
    "watch_david",
    "6.1",
    "km",
    "fridge",
    "ice",
    "pack",
    "jazz",
    "limped",
    "limping",
]
_KINDS = [NodeKind.EVENT, NodeKind.FUSED]
_texts = st.lists(st.sampled_from(_VOCAB), max_size=8).map(" ".join)
_ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "add", "add", "remove"]),
        st.integers(0, 11),
        _texts,
        st.sampled_from(_KINDS),
        st.tuples(st.integers(0, 48), st.integers(0, 6)),  # first hour, hours more
    ),
    min_size=1,
    max_size=40,
)
_windows = st.tuples(st.integers(-2, 56), st.integers(-1, 12))  # first hour, hours more
_T0 = datetime(2026, 5, 11)


def _hours(first: int, more: int) -> tuple[datetime, datetime]:
    return _T0 + timedelta(hours=first), _T0 + timedelta(hours=first + more)


def _meets(span: tuple[datetime, datetime], window: tuple[datetime, datetime]) -> bool:
    return span[0] <= window[1] and span[1] >= window[0]


_queries = st.lists(
    st.lists(st.sampled_from(_VOCAB + ["zebra"]), max_size=4).map(" ".join), min_size=1, max_size=4
)


def _reference_ranking(
    live: dict[str, tuple[str, NodeKind]],
    query: str,
    n: int,
    kind: NodeKind | None,
    inside: Callable[[str], bool] = lambda node_id: True,
) -> list[tuple[str, float]]:
    """rank_bm25 over the whole live corpus, then the kind and time filters, then (-score,
    id)."""
    if not live:
        return []
    ids = list(live)
    with np.errstate(divide="ignore", invalid="ignore"):  # an all-empty corpus: avgdl 0
        raw = BM25L([tokenize(live[i][0]) for i in ids]).get_scores(tokenize(query))
    hits = [
        (i, float(s))
        for i, s in zip(ids, raw, strict=True)
        if s > 0 and (kind is None or live[i][1] == kind) and inside(i)
    ]
    return sorted(hits, key=lambda item: (-item[1], item[0]))[:n]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_ops, queries=_queries, n=st.integers(1, 6), window=_windows)
def test_random_corpora_and_edits_equal_rank_bm25(
    ops: list[tuple[str, int, str, NodeKind, tuple[int, int]]],
    queries: list[str],
    n: int,
    window: tuple[int, int],
) -> None:
    """Any sequence of add / re-add / remove (undo included), then every query: the same
    scores as rank_bm25.BM25L over the live corpus (1e-9), per kind, and the same top-n,
    also of the nodes whose time span meets a window."""
    index = LexicalIndex()
    live: dict[str, tuple[str, NodeKind]] = {}
    spans: dict[str, tuple[datetime, datetime]] = {}
    undo_log: list[tuple[object, dict[str, tuple[str, NodeKind]], dict[str, Any]]] = []
    for op, key, text, kind, hours in ops:
        node_id = f"n{key}"
        span = _hours(*hours)
        undo_log.append(
            (
                index.remove(node_id) if op == "remove" else index.add(node_id, text, kind, span),
                dict(live),
                dict(spans),
            )
        )
        if op == "remove":
            live.pop(node_id, None)
        else:
            live[node_id], spans[node_id] = (text, kind), span
    # undo the last few edits, newest first, as a rolled-back transaction does
    for undo, before, spans_before in reversed(undo_log[len(undo_log) // 2 :]):
        undo()  # type: ignore[operator]
        live, spans = before, spans_before
    cut = _hours(*window)
    assert len(index) == len(live)
    for query in queries:
        for kind in (None, *_KINDS):
            expected = _reference_ranking(live, query, len(live), kind)
            got = index.scores(query, kind)
            assert got.keys() == dict(expected).keys()
            for node_id, score in expected:
                assert abs(got[node_id] - score) <= 1e-9 * max(1.0, abs(score))
            top = index.search(query, n, kind)
            assert [i for i, _ in top] == [i for i, _ in expected[:n]]
            inside = _reference_ranking(live, query, n, kind, lambda i: _meets(spans[i], cut))
            got_inside = index.search(query, n, kind, cut)
            assert [i for i, _ in got_inside] == [i for i, _ in inside]
            assert [v for _, v in got_inside] == pytest.approx([v for _, v in inside], rel=1e-9)


def test_tied_scores_rank_by_id_at_the_cutoff() -> None:
    index = LexicalIndex()
    for node_id in ("d", "b", "e", "a", "c"):
        index.add(node_id, "knee", NodeKind.EVENT)
    index.add("z", "knee knee", NodeKind.EVENT)
    assert [i for i, _ in index.search("knee", 3)] == ["z", "a", "b"]


# --- work per query: postings of the query's tokens, not the corpus ---------------------


def _corpus_index(n_docs: int) -> LexicalIndex:
    """n_docs documents over a common vocabulary, plus 3 carrying the rare token "zebra"."""
    rng = random.Random(n_docs)
    index = LexicalIndex()
    for i in range(n_docs):
        words = rng.choices(["david", "emma", "knee", "park", "fridge", "ice"], k=5)
        index.add(f"e{i:05d}", " ".join(words), NodeKind.FUSED if i % 7 == 0 else NodeKind.EVENT)
    for i in range(3):
        index.add(f"z{i}", "zebra david", NodeKind.EVENT)
    return index


def test_rare_token_query_touches_only_its_postings() -> None:
    small, large = _corpus_index(1_000), _corpus_index(10_000)
    for index in (small, large):
        before = index.postings_scored
        hits = index.search("zebra", 10)
        assert [i for i, _ in hits] == ["z0", "z1", "z2"]
        assert index.postings_scored - before == 3  # the same at 1k and at 10k documents
        before = index.postings_scored
        assert index.scores("zebra", kind=NodeKind.FUSED) == {}
        assert index.postings_scored == before  # the last query's scores, filtered by kind
        before = index.postings_scored
        index.search("unknown words only", 10)
        assert index.postings_scored == before
    # a common token costs its own postings, so a mixed query costs exactly the sum
    knee_docs = len(large.scores("knee"))
    assert 0 < knee_docs < 10_003
    before = large.postings_scored
    large.search("zebra knee", 5)
    assert large.postings_scored - before == 3 + knee_docs
    # removals shrink the postings too
    large.remove("z1")
    before = large.postings_scored
    assert [i for i, _ in large.search("zebra", 10)] == ["z0", "z2"]
    assert large.postings_scored - before == 2


def _peak_query_bytes(index: LexicalIndex, query: str) -> int:
    index.search(query, 10)  # warm up
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        index.search(query, 10)
        index.scores(query, kind=NodeKind.EVENT)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_rare_token_query_allocates_nothing_corpus_sized() -> None:
    """Independent of the counter above: a dense per-query array over 10k documents would
    allocate at least 80 kB; the query's peak allocation must not grow with the corpus."""
    small, large = _corpus_index(1_000), _corpus_index(10_000)
    assert _peak_query_bytes(large, "zebra") < _peak_query_bytes(small, "zebra") + 8_000


def test_adds_and_removes_touch_only_their_own_tokens() -> None:
    """No rebuild per add (ingest adds one event at a time): an add appends one posting to
    each of its tokens' lists, a remove takes one out, every other list stays as it was."""
    index = _corpus_index(2_000)
    lists = dict(zip(index._tokens, index._postings, strict=True))
    before = {term: (postings, postings.n) for term, postings in lists.items()}
    index.add("new", "zebra ice ice", NodeKind.EVENT)
    assert index._tokens == list(before)  # no new token
    for term, (postings, size) in before.items():
        assert index._postings[index._token_id[term]] is postings
        assert postings.n == size + (term in {"zebra", "ice"})
    index.remove("new")
    assert {t: p.n for t, p in lists.items()} == {t: n for t, (_, n) in before.items()}


# --- the compact layout: token ids, narrow term frequencies, packed per-document tokens ----


def test_a_term_frequency_past_one_byte_widens_its_postings_and_scores_stay_exact() -> None:
    corpus = {"long": " ".join(["knee"] * 300 + ["ice"]), "short": "knee ice pack"}
    index = LexicalIndex()
    for node_id, text in corpus.items():
        index.add(node_id, text, NodeKind.EVENT)
    assert index.term_counts("long") == {"knee": 300, "ice": 1}
    for query in ("knee", "knee ice", "pack"):
        expected = _reference(corpus, query)
        assert index.scores(query) == pytest.approx(expected, rel=1e-12)
    undo = index.remove("long")
    assert index.scores("knee") == pytest.approx(_reference({"short": "knee ice pack"}, "knee"))
    undo()
    assert index.scores("knee ice") == pytest.approx(_reference(corpus, "knee ice"), rel=1e-12)


def test_term_counts_are_what_was_indexed() -> None:
    index = LexicalIndex()
    index.add("a", "David limped; David's knee", NodeKind.EVENT)
    index.add("b", "knee", NodeKind.EVENT)
    assert index.term_counts("a") == {"david": 2, "limp": 1, "knee": 1}
    index.add("a", "ice pack", NodeKind.FUSED)
    assert index.term_counts("a") == {"ice": 1, "pack": 1}
    index.remove("a")
    assert index.term_counts("a") is None and index.term_counts("b") == {"knee": 1}


def test_an_undo_after_new_tokens_and_reused_slots_restores_the_old_document() -> None:
    """An undo snapshot holds token ids; ids are never reused, so neither a token list
    emptied meanwhile nor a freed slot taken by another document can change what it means."""
    index = LexicalIndex()
    index.add("keep", "park fridge", NodeKind.EVENT)
    undo = index.add("x", "zebra knee", NodeKind.FUSED)
    undo_remove = index.remove("x")  # "zebra" and "knee" postings are now empty
    index.add("y", "jazz lamp zebra", NodeKind.EVENT)  # new tokens; takes x's free slot
    index.remove("y")
    undo_remove()
    live = {"keep": "park fridge", "x": "zebra knee"}
    assert index.term_counts("x") == {"zebra": 1, "knee": 1}
    assert index.scores("zebra knee jazz") == pytest.approx(
        _reference(live, "zebra knee jazz"), rel=1e-12
    )
    assert [i for i, _ in index.search("zebra", 5, kind=NodeKind.FUSED)] == ["x"]
    undo()
    assert index.term_counts("x") is None and index.search("zebra", 5) == []


def test_many_removals_keep_every_document_pointing_at_its_postings() -> None:
    """A removal moves another document's posting into the hole and re-points it there:
    after thousands of removals and re-adds, every document still finds each of its
    postings where it says, and the scores are still rank_bm25's."""
    rng = random.Random(3)
    words = [f"w{i}" for i in range(30)]
    index = LexicalIndex()
    live: dict[str, str] = {}
    for step in range(3_000):
        node_id = f"d{rng.randrange(400)}"
        if node_id in live and rng.random() < 0.5:
            index.remove(node_id)
            del live[node_id]
        else:
            live[node_id] = " ".join(rng.choices(words, k=rng.randrange(1, 12)))
            index.add(node_id, live[node_id], NodeKind.EVENT)
    for node_id, slot in index._slot_of.items():
        tokens, positions = index._postings_of(slot)
        assert all(index._postings[t].slots[p] == slot for t, p in zip(tokens, positions))
        assert index.term_counts(node_id) == Counter(tokenize(live[node_id]))
    assert sum(p.n for p in index._postings) == sum(len(set(tokenize(t))) for t in live.values())
    for query in ("w1 w2", "w7 w7 w29", "w13"):
        assert index.scores(query) == pytest.approx(_reference(live, query), rel=1e-12)


def test_a_repeated_query_reuses_its_scores_until_the_next_write() -> None:
    """One search asks the same BM25L query for all kinds and then for events: the second
    call filters the first one's scores; any write (add, remove, undo) makes it score anew."""
    index = _corpus_index(1_000)
    fresh = _corpus_index(1_000)
    before = index.postings_scored
    assert index.search("knee zebra", 50) == fresh.search("knee zebra", 50)
    cost = index.postings_scored - before
    assert cost > 3
    for kind in (NodeKind.EVENT, NodeKind.FUSED, None):
        assert index.search("Knee, zebra!", 20, kind) == fresh.search("knee zebra", 20, kind)
    assert index.postings_scored - before == cost
    undo = index.add("z9", "zebra knee knee", NodeKind.FUSED)
    fresh.add("z9", "zebra knee knee", NodeKind.FUSED)
    assert index.scores("knee zebra", NodeKind.FUSED) == fresh.scores("knee zebra", NodeKind.FUSED)
    assert index.postings_scored - before == 2 * cost + 2
    undo()
    assert index.scores("knee zebra") == _corpus_index(1_000).scores("knee zebra")
    assert index.postings_scored - before == 3 * cost + 2


def test_rarity_is_bm25l_idf_by_document_frequency() -> None:
    index = LexicalIndex()
    texts = ["kettle on", "kettle off", "kettle boiled dry", "door opened"]
    for i, text in enumerate(texts):
        index.add(f"e{i}", text, NodeKind.EVENT)
    rarity = index.rarity("kettle door piano kettle")
    kettle = tokenize("kettle")[0]  # the index's own (stemmed) token
    assert list(rarity) == [kettle, "door", "piano"]  # distinct tokens, in order
    assert rarity[kettle] == pytest.approx(math.log(5) - math.log(3.5))
    assert rarity["door"] == pytest.approx(math.log(5) - math.log(1.5))
    assert rarity["piano"] == pytest.approx(math.log(5) - math.log(0.5))  # absent: rarest
    index.remove("e3")
    assert index.rarity("door")["door"] == pytest.approx(math.log(4) - math.log(0.5))


def _sharing_uncommon(
    live: dict[str, tuple[str, NodeKind]], query: str, share: float
) -> set[str] | None:
    """The rule of `common_share`, from the live texts: the ids holding a query token found in
    at most `share` of them, or None when no query token is more common, or every one is."""
    tokens = set(tokenize(query))
    held = {i: set(tokenize(text)) for i, (text, _kind) in live.items()}
    common = {t for t in tokens if sum(t in h for h in held.values()) > share * len(held)}
    if not common or common == tokens:
        return None
    return {i for i, h in held.items() if h & (tokens - common)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=_ops,
    queries=_queries,
    n=st.integers(1, 6),
    share=st.sampled_from([0.1, 0.25, 0.35, 0.5, 0.9, 1.0]),
)
def test_common_share_drops_exactly_the_hits_sharing_only_common_tokens(
    ops: list[tuple[str, int, str, NodeKind, tuple[int, int]]],
    queries: list[str],
    n: int,
    share: float,
) -> None:
    """Any corpus and query: a search with `common_share` is rank_bm25's ranking (same scores)
    of the documents holding an uncommon query token, cut at n after that filter; a query with
    no common token, or nothing but common ones, ranks as without it."""
    index = LexicalIndex()
    live: dict[str, tuple[str, NodeKind]] = {}
    for op, key, text, kind, _hours_ in ops:
        node_id = f"n{key}"
        if op == "remove":
            index.remove(node_id)
            live.pop(node_id, None)
        else:
            index.add(node_id, text, kind)
            live[node_id] = (text, kind)
    for query in queries:
        allowed = _sharing_uncommon(live, query, share)
        for kind in (None, *_KINDS):
            full = _reference_ranking(live, query, len(live), kind)
            expected = [h for h in full if allowed is None or h[0] in allowed][:n]
            got = index.search(query, n, kind, common_share=share)
            assert [i for i, _ in got] == [i for i, _ in expected]
            assert [v for _, v in got] == pytest.approx([v for _, v in expected], rel=1e-9)


def test_a_turn_matching_only_its_speakers_name_is_no_hit() -> None:
    """Each speaker's name is in every turn they said; the short turns that share nothing else
    with the question headed plain BM25L's list, above the turn about the restaurant."""
    index = LexicalIndex()
    turns = {
        "t1": "Diego said: which one",
        "t2": "Gabi said: the taco place near the river",
        "t3": "Diego said: PASSED",
        "t4": "Gabi said: mom is visiting next week",
        "t5": "Diego said: I quit the restaurant to run the truck full time",
        "t6": "Gabi said: congratulations on the inspection",
    }
    for node_id, text in turns.items():
        index.add(node_id, text, NodeKind.EVENT)
    question = "Which restaurant did Diego quit?"
    assert index.common(question, 0.35) == ["diego"]  # in half the turns, "said" in all
    assert index.common("Diego said it", 0.5) == ["said"]
    assert [i for i, _ in index.search(question, 3)] == ["t5", "t1", "t3"]
    assert [i for i, _ in index.search(question, 3, common_share=0.35)] == ["t5"]
    # every word of the query is that common ("said" in all six, the name in half): BM25L has
    # nothing else to go on, and ranks as it would without the rule
    everyone = index.search("Diego said", 6)
    assert len(everyone) == 6
    assert index.search("Diego said", 6, common_share=0.35) == everyone
    # a common word beside one no record holds: nothing tells a hit apart, so none is kept
    assert index.search("Diego yesterday", 6, common_share=0.35) == []
    assert len(index.search("Diego yesterday", 6)) == 3
