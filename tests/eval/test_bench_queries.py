"""Timed questions pay for their own texts: `FreshQueries` and the bench that uses it."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from eval import systems as systems_module
from eval.bench import QUERY_EMBEDDING_NOTE, run_bench
from eval.bench_queries import FreshQueries, fresh_queries, question_encode_ms
from eval.systems import IngestMode, plain_ingest
from memfuse.settings import MemFuseSettings
from memory.embeddings import CachedEmbedder
from memory.formats.loader import load_dataset
from tests.support.bench import BagOfWordsEmbedder, write_tiny_bench


class CountingModel(BagOfWordsEmbedder):
    """The bag-of-words model, recording every text it is asked to encode."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen.extend(texts)
        return super().embed(texts)


class StoreWith:
    """What the bench needs of a store here: its embedder, as an attribute it may swap."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder


@pytest.fixture
def cached(tmp_path):
    model = CountingModel()
    embedder = CachedEmbedder(model, tmp_path / "embeddings.sqlite")
    yield model, embedder
    embedder.close()


def test_a_question_text_comes_from_before_timing_and_any_other_text_from_the_model(cached):
    model, embedder = cached
    embedder.embed(["Why did Rex limp?", "Rex limp paw"])  # both in the on-disk cache now
    fresh = FreshQueries(embedder, ["Why did Rex limp?"])
    model.seen.clear()

    fresh.next_question()
    rows = fresh.embed(["Why did Rex limp?", "Rex limp paw", "Rex limp paw"])
    assert model.seen == ["Rex limp paw"]  # cached on disk, encoded all the same; once
    assert np.allclose(
        rows, BagOfWordsEmbedder().embed(["Why did Rex limp?", *["Rex limp paw"] * 2])
    )
    fresh.embed(["Rex limp paw"])
    assert model.seen == ["Rex limp paw"] and fresh.encoded == 1  # remembered within a question

    assert fresh.read_question  # the question's own vector was asked for
    fresh.next_question()
    fresh.embed(["Rex limp paw"])
    assert model.seen == ["Rex limp paw"] * 2 and fresh.encoded == 1  # the next question pays
    assert not fresh.read_question  # this one asked only for a text of its own
    assert fresh.embed([]).shape == (0, BagOfWordsEmbedder.dim)
    assert fresh.model_id == embedder.model_id and fresh.dim == embedder.dim


def test_what_a_timed_question_encodes_is_never_written_to_the_cache(cached):
    _, embedder = cached
    FreshQueries(embedder, []).embed(["a text only a question asked"])
    misses = embedder.misses
    embedder.embed(["a text only a question asked"])
    assert embedder.misses == misses + 1  # not found on disk: the model encodes it again


def test_each_question_is_timed_alone_through_the_model(cached):
    model, embedder = cached
    store = StoreWith(embedder)
    embedder.embed(["Why?", "Who?"])  # on disk: the timing must encode them all the same
    model.seen.clear()
    timed = question_encode_ms(store, ["Why?", "Who?", "Why?"])
    assert list(timed) == ["Why?", "Who?"] and all(ms >= 0.0 for ms in timed.values())
    assert model.seen == ["untimed: Why?", "Why?", "Who?"]  # one untimed call first
    assert question_encode_ms(object(), ["Why?"]) == {}  # no embedder of its own
    assert question_encode_ms(store, []) == {}


def test_the_store_gets_its_own_embedder_back_whatever_the_block_raised(cached):
    _, embedder = cached
    store = StoreWith(embedder)
    with pytest.raises(RuntimeError), fresh_queries(store, ["q?"]) as fresh:
        assert store.embedder is fresh and isinstance(fresh, FreshQueries)
        raise RuntimeError("a system failed mid-question")
    assert store.embedder is embedder
    with fresh_queries(object(), ["q?"]) as none:  # the raw event stream: nothing to swap
        assert none is None


def test_every_run_and_every_system_pays_for_the_texts_it_embeds(tmp_path, monkeypatch):
    """A second run on the same data dir, and an ablation run after memfuse, encode the plan's
    texts again: none of them is timed warm from what an earlier run left in the cache."""
    monkeypatch.setitem(systems_module.INGESTORS, "fused", IngestMode("fused", plain_ingest, "t1"))
    dataset = write_tiny_bench(tmp_path / "tiny.json")
    questions = {q.question for s in load_dataset(dataset).scenarios for q in s.questions}
    model = CountingModel()
    embedder = CachedEmbedder(model, tmp_path / "stores" / "embeddings.sqlite")

    def bench(out: str):
        model.seen.clear()
        return run_bench(
            dataset,
            systems=["memfuse", "memfuse_no_ar", "hybrid", "bm25"],
            k=5,
            out_dir=tmp_path / out,
            data_dir=tmp_path / "stores",
            progress=False,
            llm=False,
            settings=MemFuseSettings(),
            embedder=embedder,
        )

    try:
        first, second = bench("one"), bench("two")
    finally:
        embedder.close()
    # the second run found every question and every event on disk, and still encoded texts:
    # those the systems embedded while answering, and each question once per store (two: the
    # fused one memfuse and memfuse_no_ar share, the plain one) to time its encoding
    seen = Counter(model.seen)
    assert {q: seen[q] for q in questions} == dict.fromkeys(questions, 2)
    assert set(seen) - questions - {t for t in seen if t.startswith(("untimed:", "warm-up:"))}
    for run in (first, second):
        overall = {n: b["overall"] for n, b in run.results["systems"].items()}
        assert overall["memfuse"]["query_texts_encoded"] > 0
        assert overall["memfuse_no_ar"]["query_texts_encoded"] > 0  # not warm from memfuse
        assert overall["hybrid"]["query_texts_encoded"] == 0  # it searches the question alone
    records = [json.loads(line) for line in (tmp_path / "two" / "questions.jsonl").open()]
    charged = {r["system"]: set() for r in records}
    for r in records:
        charged[r["system"]].add(r["question_encode_ms"] > 0)
    # a user of hybrid or memfuse waits for the question's encoding; one of bm25 does not
    assert charged == {
        "memfuse": {True},
        "memfuse_no_ar": {True},
        "hybrid": {True},
        "bm25": {False},
    }
    hybrid = second.results["systems"]["hybrid"]["overall"]
    assert hybrid["from_text_p50_ms"] > hybrid["search_p50_ms"]
    bm25 = second.results["systems"]["bm25"]["overall"]
    assert bm25["from_text_p50_ms"] == bm25["search_p50_ms"]
    same = {n: b["overall"]["evidence_recall"] for n, b in first.results["systems"].items()}
    assert same == {
        n: b["overall"]["evidence_recall"] for n, b in second.results["systems"].items()
    }
    info = json.loads((tmp_path / "two" / "run_info.json").read_text())
    assert QUERY_EMBEDDING_NOTE in info["notes"]
