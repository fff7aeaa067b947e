"""The shared tokenizer and the incremental BM25L index (checked against rank_bm25 itself)."""

from __future__ import annotations

import inspect
import math
import random

import pytest
from rank_bm25 import BM25L

from memory.lexical_index import BM25Params, LexicalIndex
from memory.models import NodeKind
from memory.text import stem, tokenize


@pytest.mark.parametrize(("text", "tokens"), [
    ("watch_david", ["watch_david", "watch", "david"]),
    ("Emma cycled 6.1 km.", ["emma", "cycl", "6.1", "km"]),
    ("Alarm at 10:30 on 2024-03-01", ["alarm", "10:30", "2024-03-01"]),
    ("David's knee", ["david", "knee"]),
    ("It was the dog and the cat", ["dog", "cat"]),
    ("wi-fi router", ["wi-fi", "wi", "fi", "router"]),
    ("", []),
])
def test_tokenize(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize(("words", "root"), [
    (["limping", "limped", "limps", "limp"], "limp"),
    (["batteries", "battery"], "battery"),
    (["watches", "watch"], "watch"),
    (["running", "runs", "run"], "run"),
    (["stopped", "stopping", "stop"], "stop"),
    (["living", "lives", "live"], "liv"),
])
def test_inflections_meet(words: list[str], root: str) -> None:
    assert {stem(w) for w in words} == {root}


@pytest.mark.parametrize("word", ["status", "glass", "speed", "thing", "bpm", "6.1"])
def test_stemmer_leaves_non_inflections_alone(word: str) -> None:
    assert stem(word) == word


def test_params_are_rank_bm25_defaults() -> None:
    defaults = inspect.signature(BM25L.__init__).parameters
    params = BM25Params()
    assert (params.k1, params.b, params.delta) == (
        defaults["k1"].default, defaults["b"].default, defaults["delta"].default)


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


@pytest.mark.parametrize("query", ["David run", "park park emma", "watch_david", "knee",
                                   "6.1 km", "zebra"])
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
    assert index.scores("knee") == {"a": pytest.approx(idf * 2 * (k1 + 1) * (c + delta)
                                                       / (k1 + c + delta))}


def test_incremental_updates_match_a_rebuild() -> None:
    rng = random.Random(7)
    words = ["david", "emma", "knee", "run", "park", "fridge", "kitchen", "watch", "phone",
             "jazz", "ice", "pack"]
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
