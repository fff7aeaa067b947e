"""Embedders: the bundled MiniLM offline, the persistent cache, an OpenAI-compatible endpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory.embeddings import (
    CachedEmbedder,
    EmbeddingConfig,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    bundled_model_path,
    l2_normalise,
    make_embedder,
)
from memory.errors import ConfigurationError
from memory.models import Event, NodeKind
from memory.store import MemoryStore
from tests.support.embedders import MODEL_TEXTS
from tests.support.fake_openai import fake_vector, start_fake_openai


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def test_default_model_is_the_bundled_minilm_loaded_offline(
    minilm: SentenceTransformerEmbedder,
) -> None:
    assert bundled_model_path().name == "model" and minilm.model_id.endswith("all-MiniLM-L6-v2")
    vectors = minilm.embed(
        [
            "David was limping after his run",
            "After jogging, David walked with a limp",
            "The fridge door was left open",
        ]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    paraphrase, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert paraphrase > 0.6 and unrelated < 0.3
    assert minilm.dim == 384


def test_one_model_per_process(minilm: SentenceTransformerEmbedder) -> None:
    other = SentenceTransformerEmbedder("sentence-transformers/all-MiniLM-L6-v2", batch_size=8)
    assert other.model_id == minilm.model_id
    assert other._model() is minilm._model()


def test_store_with_the_default_embedder(tmp_path: Path, minilm: Any) -> None:
    """No embedder given: the store uses cached MiniLM under its data dir."""
    events = [
        Event(
            event_id="a",
            timestamp="2024-03-01T08:00",
            device="cam_hall",
            modality="vision",
            description="David limps down the hallway",
            characters=["David"],
        ),
        Event(
            event_id="b",
            timestamp="2024-03-01T08:05",
            device="fridge",
            modality="environment",
            description="The fridge door was left open",
        ),
    ]
    with MemoryStore.open(tmp_path / "s") as store:
        assert isinstance(store.embedder, CachedEmbedder)
        store.add_events(events)
        query = store.embed_query("Which person has trouble walking?")
        assert store.dense_search(query, 1, kind=NodeKind.EVENT)[0][0] == "a"
    assert (tmp_path / "s" / "embeddings.sqlite").is_file()
    with MemoryStore.open(tmp_path / "s") as again:
        assert isinstance(again.embedder, CachedEmbedder)
        again.embed_query("Which person has trouble walking?")
        assert (again.embedder.hits, again.embedder.misses) == (1, 0)


def test_cache_serves_identical_vectors_without_calling_the_model(
    tmp_path: Path, hash_embedder: Any
) -> None:
    cache = CachedEmbedder(hash_embedder, tmp_path / "cache.sqlite")
    first = cache.embed(["knee", "fridge", "knee"])
    assert hash_embedder.calls == 1 and hash_embedder.texts == ["knee", "fridge"]
    assert (cache.hits, cache.misses) == (1, 2)
    again = cache.embed(["fridge", "knee"])
    assert hash_embedder.calls == 1, "all hits: the wrapped embedder is not called"
    assert np.array_equal(again, first[[1, 0]])
    mixed = cache.embed(["jazz", "knee"])
    assert hash_embedder.calls == 2 and hash_embedder.texts[-1:] == ["jazz"]
    assert np.array_equal(mixed[1], first[0])
    assert (cache.hits, cache.misses) == (4, 3)
    cache.close()

    reopened = CachedEmbedder(hash_embedder, tmp_path / "cache.sqlite")
    assert np.array_equal(
        reopened.embed(["knee", "fridge", "jazz"]), np.stack([first[0], first[1], mixed[0]])
    )
    assert hash_embedder.calls == 2 and (reopened.hits, reopened.misses) == (3, 0)


def test_cache_is_keyed_by_model(tmp_path: Path, hash_embedder: Any) -> None:
    other = type(hash_embedder)(dim=32, model_id="test:hash-32")
    CachedEmbedder(hash_embedder, tmp_path / "c.sqlite").embed(["knee"])
    vectors = CachedEmbedder(other, tmp_path / "c.sqlite").embed(["knee"])
    assert vectors.shape == (1, 32) and other.calls == 1


def test_openai_embedder_against_a_local_fake_server(tmp_path: Path) -> None:
    with start_fake_openai(embedding_dim=16) as fake:
        embedder = OpenAIEmbedder(
            "fake-embed", base_url=fake.base_url, api_key="sk-test", batch_size=2
        )
        vectors = embedder.embed(["alpha", "beta", "gamma"])
        assert vectors.shape == (3, 16) and embedder.dim == 16
        expected = l2_normalise(np.array([fake_vector(t, 16) for t in ("alpha", "beta", "gamma")]))
        assert np.allclose(vectors, expected, atol=1e-6)
        assert [r["input"] for r in fake.embedding_requests] == [["alpha", "beta"], ["gamma"]]
        assert fake.embedding_requests[0]["model"] == "fake-embed"

        cached = make_embedder(
            EmbeddingConfig(
                provider="openai",
                model="fake-embed",
                base_url=fake.base_url,
                api_key="sk-test",
                cache_path=tmp_path / "e.sqlite",
            )
        )
        assert isinstance(cached, CachedEmbedder)
        assert cached.model_id == f"openai:fake-embed@{fake.base_url}"
        cached.embed(["alpha", "delta"])
        requests = len(fake.embedding_requests)
        assert np.allclose(cached.embed(["delta", "alpha"])[1], vectors[0], atol=1e-6)
        assert len(fake.embedding_requests) == requests


def test_openai_embedder_needs_a_key_or_a_local_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="api_key"):
        OpenAIEmbedder("text-embedding-3-small")


def test_make_embedder_defaults(tmp_path: Path) -> None:
    plain = make_embedder(EmbeddingConfig())
    assert isinstance(plain, SentenceTransformerEmbedder)
    cached = make_embedder(EmbeddingConfig(), default_cache_path=tmp_path / "x.sqlite")
    assert isinstance(cached, CachedEmbedder) and cached.model_id == plain.model_id
    passthrough = SentenceTransformerEmbedder("BAAI/bge-m3")
    assert passthrough.model_id == "st:BAAI/bge-m3"  # named, not loaded: loading is lazy


def test_torch_threads_sets_and_restores() -> None:
    import torch

    from memory.embed_threads import torch_threads

    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before


_PRECISION_TEXTS = MODEL_TEXTS


def test_bfloat16_vectors_stay_within_a_hair_of_float32() -> None:
    """One cache and one index serve both precisions: a text's vector under either is the
    same direction to within cosine 0.999, and neighbours keep their order."""
    exact = SentenceTransformerEmbedder(precision="float32").embed(_PRECISION_TEXTS)
    fast = SentenceTransformerEmbedder(precision="bfloat16").embed(_PRECISION_TEXTS)
    assert fast.dtype == np.float32 and fast.shape == exact.shape
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    assert float(np.min(np.sum(exact * fast, axis=1))) > 0.999
    order = np.argsort(-(exact @ exact[0]))[:3]
    assert list(np.argsort(-(fast @ fast[0]))[:3]) == list(order)
    # a batch and a single text agree under bfloat16 too (the cache stores whichever came first)
    one_by_one = SentenceTransformerEmbedder(precision="bfloat16")
    single = np.stack([one_by_one.embed([text])[0] for text in _PRECISION_TEXTS])
    assert float(np.min(np.sum(single * fast, axis=1))) > 0.999


def test_auto_precision_is_bfloat16_only_on_a_cpu_that_does_it_natively(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch

    from memory import embeddings

    assert embeddings.resolve_precision("float32", "cpu") == "float32"
    assert embeddings.resolve_precision("bfloat16", "cuda") == "bfloat16"
    assert embeddings.resolve_precision("auto", "cuda") == "float32"
    for native in (True, False):
        monkeypatch.setattr(embeddings, "cpu_bfloat16_native", lambda native=native: native)
        assert embeddings.resolve_precision("auto", "cpu") == ("bfloat16" if native else "float32")
    monkeypatch.undo()
    expected = torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
    assert embeddings.cpu_bfloat16_native() is bool(expected)
    with pytest.raises(ValueError, match="precision"):
        EmbeddingConfig(precision="int8")  # type: ignore[arg-type]


def test_the_settings_precision_reaches_the_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory.opener import embedding_config
    from memory.settings import MemFuseSettings

    monkeypatch.setenv("MEMFUSE_EMBEDDING_PRECISION", "float32")
    config = embedding_config(MemFuseSettings(), tmp_path)
    assert config.precision == "float32"
    embedder = make_embedder(config)
    assert isinstance(embedder, CachedEmbedder)
    assert isinstance(embedder.inner, SentenceTransformerEmbedder)
    assert embedder.inner.precision == "float32"
    assert MemFuseSettings.model_fields["embedding_precision"].default == "auto"
