"""Small embedding calls through onnxruntime: the bundled MiniLM, really exported and run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import embeddings, onnx_encoder
from memory.embeddings import EmbeddingConfig, SentenceTransformerEmbedder, make_embedder
from memory.errors import ConfigurationError
from memory.onnx_encoder import ExportUnsupported, OnnxEncoder, export_key, length_groups
from tests.support.embedders import MODEL_TEXTS

TEXTS = MODEL_TEXTS


@pytest.fixture(scope="module")
def minilm() -> Any:
    return SentenceTransformerEmbedder(runtime="torch")._model()


@pytest.fixture(scope="module")
def exported(minilm: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real export, shared: each test copies it where it needs it."""
    folder = tmp_path_factory.mktemp("onnx")
    OnnxEncoder.for_model(minilm, folder)
    (path,) = folder.glob("*.onnx")
    return path


@pytest.fixture(autouse=True)
def fresh_process_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees the per-process export table empty (as a new process would)."""
    monkeypatch.setattr(embeddings, "_ONNX_ENCODERS", {})


def test_small_calls_match_torch_float32(exported: Path) -> None:
    """The exported model's vectors are the model's: cosine > 0.9999 to torch float32 for
    every text, one at a time and in a batch, and neighbours keep their order."""
    torch_exact = SentenceTransformerEmbedder(precision="float32", runtime="torch")
    onnx = SentenceTransformerEmbedder(runtime="onnx", onnx_dir=exported.parent)
    exact = torch_exact.embed(TEXTS)
    batch = onnx.embed(TEXTS)
    single = np.stack([onnx.embed([text])[0] for text in TEXTS])
    assert onnx.small_call_encoder() is not None
    for ours in (batch, single):
        assert ours.dtype == np.float32 and ours.shape == exact.shape
        assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
        assert float(np.min(np.sum(exact * ours, axis=1))) > 0.9999
        assert list(np.argsort(-(ours @ ours[1]))) == list(np.argsort(-(exact @ exact[1])))


def test_texts_of_very_different_lengths_are_split_and_come_back_in_order(
    exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long question with two short rewrites runs as two session calls (the short ones
    padded to each other, not to the question) and each row is its own text's vector."""
    texts = [
        "short rewrite",
        " ".join(TEXTS),  # far longer than the rest
        "another short rewrite",
    ]
    torch_exact = SentenceTransformerEmbedder(precision="float32", runtime="torch")
    onnx = SentenceTransformerEmbedder(runtime="onnx", onnx_dir=exported.parent)
    encoder = onnx.small_call_encoder()
    assert encoder is not None
    batches: list[int] = []
    real_run = encoder._session.run

    def counted(outputs: Any, feed: dict[str, np.ndarray]) -> Any:
        batches.append(len(feed["input_ids"]))
        return real_run(outputs, feed)

    monkeypatch.setattr(encoder._session, "run", counted)
    ours = onnx.embed(texts)
    assert sorted(batches) == [1, 2]
    assert float(np.min(np.sum(torch_exact.embed(texts) * ours, axis=1))) > 0.9999


def _padded_cost(groups: list[list[int]], lengths: list[int], call_cost: int) -> int:
    return sum(call_cost + len(group) * max(lengths[i] for i in group) for group in groups)


def _partitions(items: list[int]) -> Any:
    """Every way to split items into non-empty groups."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in _partitions(rest):
        yield [[first], *partition]
        for i in range(len(partition)):
            yield [*partition[:i], [first, *partition[i]], *partition[i + 1 :]]


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=1, max_value=80), min_size=1, max_size=6),
    call_cost=st.integers(min_value=0, max_value=40),
)
def test_length_groups_cover_every_text_once_at_the_least_padded_cost(
    lengths: list[int], call_cost: int
) -> None:
    groups = length_groups(lengths, call_cost)
    assert sorted(i for group in groups for i in group) == list(range(len(lengths)))
    assert all(groups)
    cheapest = min(
        _padded_cost(p, lengths, call_cost) for p in _partitions(list(range(len(lengths))))
    )
    assert _padded_cost(groups, lengths, call_cost) == cheapest


def test_length_groups_keep_alike_texts_in_one_call() -> None:
    assert length_groups([16, 14, 15]) == [[1, 2, 0]]
    assert length_groups([24, 7, 9]) == [[1, 2], [0]]
    assert length_groups([]) == []


def test_the_default_embedder_runs_small_calls_on_the_export_and_batches_on_torch(
    exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = SentenceTransformerEmbedder(onnx_dir=exported.parent)  # runtime "auto"
    encoder = embedder.small_call_encoder()
    assert encoder is not None
    calls: list[int] = []
    real_encode = encoder.encode

    def counted(texts: Any) -> np.ndarray:
        calls.append(len(texts))
        return real_encode(texts)

    monkeypatch.setattr(encoder, "encode", counted)
    embedder.embed(TEXTS[:3])
    embedder.embed(TEXTS * 2)  # twelve texts: a batch, on torch
    assert calls == [3]


def test_torch_runtime_never_exports(tmp_path: Path) -> None:
    embedder = SentenceTransformerEmbedder(runtime="torch", onnx_dir=tmp_path)
    embedder.embed(["one short text"])
    assert embedder.small_call_encoder() is None
    assert list(tmp_path.iterdir()) == []


def test_an_export_is_made_once_and_found_again(
    minilm: Any, exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(exported, tmp_path / exported.name)
    assert exported.name == f"{export_key(minilm)}.onnx"

    def no_export(model: Any, path: Path) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_encoder, "_export", no_export)
    encoder = OnnxEncoder.for_model(minilm, tmp_path)
    assert encoder.encode(["found again"]).shape == (1, 384)


def test_a_damaged_export_is_made_again(minilm: Any, exported: Path, tmp_path: Path) -> None:
    damaged = tmp_path / exported.name
    damaged.write_bytes(exported.read_bytes()[: 1 << 20])  # a disk that lost the tail
    encoder = OnnxEncoder.for_model(minilm, tmp_path)
    assert damaged.stat().st_size == exported.stat().st_size
    assert encoder.encode(["made again"]).shape == (1, 384)


@pytest.mark.parametrize("fault", ["exporter", "rename"])
def test_a_failed_export_leaves_nothing_behind(
    minilm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """An export that dies half-way (the exporter, or the rename after it wrote everything)
    leaves no model and no temporary file, and `auto` falls back to torch's vectors."""
    import torch

    if fault == "exporter":

        def broken_export(module: Any, args: Any, path: str, **kwargs: Any) -> None:
            Path(path).write_bytes(b"half a model")
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(torch.onnx, "export", broken_export)
    else:

        def broken_replace(src: str, dst: str) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space"):
        OnnxEncoder.for_model(minilm, tmp_path)
    assert list(tmp_path.iterdir()) == []

    fallback = SentenceTransformerEmbedder(precision="float32", runtime="auto", onnx_dir=tmp_path)
    vectors = fallback.embed(TEXTS[:2])
    assert fallback.small_call_encoder() is None
    reference = SentenceTransformerEmbedder(precision="float32", runtime="torch").embed(TEXTS[:2])
    assert np.allclose(vectors, reference, atol=1e-6)
    strict = SentenceTransformerEmbedder(runtime="onnx", onnx_dir=tmp_path)
    with pytest.raises(ConfigurationError, match="onnxruntime cannot run"):
        strict.embed(TEXTS[:1])


def test_a_killed_exports_leftover_is_removed_and_a_running_ones_kept(tmp_path: Path) -> None:
    """`kill -9` mid-export leaves its temporary file; the next export removes it once it is
    old enough not to be another process's export still being written."""
    path = tmp_path / "model.onnx"
    stale = tmp_path / ".model.onnx.killed.tmp"
    running = tmp_path / ".model.onnx.running.tmp"
    other = tmp_path / ".other.onnx.killed.tmp"
    for leftover in (stale, running, other):
        leftover.write_bytes(b"part of a model")
    old = time.time() - onnx_encoder.STALE_EXPORT_SECONDS - 60
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    assert onnx_encoder.remove_stale_exports(path) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([other.name, running.name])


def test_an_export_killed_mid_write_leaves_no_model_and_the_next_one_works(
    minilm: Any, tmp_path: Path
) -> None:
    """A real `kill -9` of a process while it writes the export: no model is left under the
    final name (only the temporary file), and the next process exports and uses it."""
    script = (
        "import sys; from pathlib import Path\n"
        "from memory.embeddings import SentenceTransformerEmbedder\n"
        "from memory.onnx_encoder import OnnxEncoder\n"
        "model = SentenceTransformerEmbedder(runtime='torch')._model()\n"
        "OnnxEncoder.for_model(model, Path(sys.argv[1]))\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)])
    try:
        deadline = time.monotonic() + 120
        while not list(tmp_path.glob(".*.tmp")) and process.poll() is None:
            assert time.monotonic() < deadline, "the export never started"
            time.sleep(0.05)
        time.sleep(0.3)
        process.kill()
    finally:
        process.wait()
    assert list(tmp_path.glob("*.onnx")) == []
    leftovers = list(tmp_path.glob(".*.tmp"))
    assert leftovers  # killed while writing: its temporary file is all it left
    for leftover in leftovers:
        old = time.time() - onnx_encoder.STALE_EXPORT_SECONDS - 60
        os.utime(leftover, (old, old))
    encoder = OnnxEncoder.for_model(minilm, tmp_path)
    assert encoder.encode(["after the kill"]).shape == (1, 384)
    assert [p.suffix for p in tmp_path.iterdir()] == [".onnx"]


def test_a_stack_it_cannot_reproduce_is_refused(tmp_path: Path) -> None:
    """Max pooling is not exported: `auto` keeps torch, `onnx` says why in one line."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Pooling, Transformer

    transformer = Transformer(str(embeddings.bundled_model_path()))
    pooled = SentenceTransformer(modules=[transformer, Pooling(384, "max")], device="cpu")
    with pytest.raises(ExportUnsupported, match="pooling mode 'max'"):
        OnnxEncoder.for_model(pooled, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_an_export_that_disagrees_with_torch_is_refused(minilm: Any, exported: Path) -> None:
    """The agreement check can fail: the same export read with the wrong pooling."""
    wrong = OnnxEncoder(minilm, exported, pooling="cls")
    with pytest.raises(ExportUnsupported, match="agrees with torch only"):
        wrong.check_against(minilm)
    OnnxEncoder(minilm, exported, pooling="mean").check_against(minilm)


def test_the_settings_runtime_reaches_the_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory.opener import embedding_config
    from memory.settings import MemFuseSettings

    assert MemFuseSettings.model_fields["embedding_runtime"].default == "auto"
    monkeypatch.setenv("MEMFUSE_EMBEDDING_RUNTIME", "torch")
    config = embedding_config(MemFuseSettings(), tmp_path)
    embedder = make_embedder(config)
    assert isinstance(embedder, embeddings.CachedEmbedder)
    assert isinstance(embedder.inner, SentenceTransformerEmbedder)
    assert embedder.inner.runtime == "torch"
    with pytest.raises(ValueError, match="runtime"):
        EmbeddingConfig(runtime="tensorrt")  # type: ignore[arg-type]
