"""Query embeddings in a benchmark: every question is timed as if it had never been asked.

`bench` embeds the questions' own texts before it times anything, so every system searches
with the same question vector and latency compares searches, not who encoded the question
first. Anything else a system embeds while it answers — memfuse's focus with the asker's name
for "I", its rewrites, a later round's queries — is its own cost, and a user's new question
pays it. A data dir's embedding cache keeps every text it ever embedded, though: a second run
on the same data dir, or an ablation run after memfuse in the same run (which finds round 1's
texts already there), timed memfuse without its model calls. Measured at a535559 with the
cache emptied first, a new question cost memfuse 22–33 ms at p50 where the warm runs had read
6–10 ms (docs/experiments.md, "On questions the embedding cache has not seen").

So while a store's questions are timed, its embedder is `FreshQueries`: the question texts
come from the vectors embedded before timing, every other text from the model itself, once
per question (remembered until the next question, as the cache would within one answer), and
nothing is written to the cache.

That search time leaves out the question's own encoding, which every system but BM25 needs
and a user waits for too. `from_text` latency adds it: the model's time for the question
alone (`question_encode_ms`), charged to each system that read the question's vector. memfuse,
which could encode the question in the same call as its own texts, is charged the full
separate call, so its figure errs high.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from memory.embeddings import Embedder, uncached


class FreshQueries:
    """An embedder for timed questions: their own texts as embedded before timing, any other
    text encoded by the model the first time a question asks for it."""

    def __init__(self, embedder: Embedder, questions: Sequence[str]):
        self._embedder = embedder
        self._model = uncached(embedder)
        texts = list(dict.fromkeys(questions))
        vectors = embedder.embed(texts) if texts else np.zeros((0, 0), dtype=np.float32)
        self._questions: dict[str, np.ndarray] = dict(zip(texts, vectors, strict=True))
        self._this_question: dict[str, np.ndarray] = {}
        self.encoded = 0
        """Texts the model encoded since the last `next_question` (the warm-up's, before it)."""
        self.read_question = False
        """Whether the system asked for a question's own vector since the last `next_question`
        (BM25 alone never does): a user would have waited for its encoding as well."""

    @property
    def model_id(self) -> str:
        return self._embedder.model_id

    @property
    def dim(self) -> int:
        return self._embedder.dim

    def next_question(self) -> None:
        """Forget what the last question had encoded: the next one pays for its own texts."""
        self._this_question.clear()
        self.encoded = 0
        self.read_question = False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.read_question = self.read_question or any(t in self._questions for t in texts)
        new = [
            text
            for text in dict.fromkeys(texts)
            if text not in self._questions and text not in self._this_question
        ]
        if new:
            vectors = np.asarray(self._model.embed(new), dtype=np.float32)
            self.encoded += len(new)
            self._this_question.update(zip(new, vectors, strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # looked up in place: this runs inside the timed search, so no merged copy per call
        rows = [self._questions.get(text, self._this_question.get(text)) for text in texts]
        return np.stack([np.asarray(row, dtype=np.float32) for row in rows])


def question_encode_ms(store: Any, questions: Sequence[str]) -> dict[str, float]:
    """Per question text, the model's time to encode it alone, as for a user's new question
    (after one untimed call, so no first-call cost is in it); empty for a store without an
    embedder of its own. Timed once per store, so every system is charged the same figure
    (`from_text` latency)."""
    embedder = getattr(store, "embedder", None)
    texts = list(dict.fromkeys(questions))
    if embedder is None or not texts:
        return {}
    model = uncached(embedder)
    model.embed([f"untimed: {texts[0]}"])
    timed: dict[str, float] = {}
    for text in texts:
        started = time.perf_counter()
        model.embed([text])
        timed[text] = (time.perf_counter() - started) * 1000.0
    return timed


@contextmanager
def fresh_queries(store: Any, questions: Sequence[str]) -> Iterator[FreshQueries | None]:
    """`store` embedding through `FreshQueries` for the block, its own embedder restored after
    (whatever the block raised). None, and nothing changed, for a store without an embedder
    of its own (a system that reads the raw event stream)."""
    embedder = getattr(store, "embedder", None)
    if embedder is None:
        yield None
        return
    fresh = FreshQueries(embedder, questions)
    store.embedder = fresh
    try:
        yield fresh
    finally:
        store.embedder = embedder
