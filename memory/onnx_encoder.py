"""Small embedding calls through onnxruntime: the same local model, exported once.

A question, a plan's rewrites, one fused summary: a call of a few short texts is
latency-bound, and torch's eager per-operator overhead is most of its cost. On the 2-core
development box the bundled MiniLM embedded three short texts in 11.0 ms at p50 through
sentence-transformers (bfloat16 autocast, two threads) and in 6.4 ms through onnxruntime
(float32, two threads), one short text in 8.7 ms (torch float32) and 3.2 ms; a batch of 64
event texts took 136 ms under torch's bfloat16 and 180 ms under onnxruntime, so only small
calls come here (`SMALL_BATCH`) and ingest stays on torch. (onnxruntime's int8 dynamic
quantisation was faster again, 2.8 ms for the three texts, but its vectors sat at cosine
0.96-0.97 from float32: another vector space, not kept.)

The export is the model's own transformer (`torch.onnx.export`), taken from the loaded
sentence-transformers model, so the vectors are the model's to float rounding: before its first
use the encoder embeds probe texts both ways and is refused below cosine `AGREEMENT` (the
embedder then stays on torch). The file is cached under a key of the weights and the exporting
library versions, written to a temporary name and renamed into place, so a crash, a full disk or
a second process exporting at the same moment never leaves a half-written model to load (a
killed export's temporary file is removed by the next export, once it is an hour old); a
cached file that fails to load is exported again.

One session per process, on torch's thread count (at most `MAX_THREADS`), its threads spinning
between calls as onnxruntime's do by default. Three question-length texts, p50 / p95 with a pause
between calls: 9.1 / 9.9 ms on two spinning threads and 11.1 / 13.2 ms on two sleeping ones on
the quiet 2-core box (as slow as torch: `memfuse bench` read no gain over torch with them), and
with one busy process beside it 18.3 / 30.6 against 13.4 / 17.1 ms (one thread: 15.8 / 17.0) —
slower under load, but not torch's collapse there (`memory.embed_threads`). A session holds its
own copy of the weights (~150 MB resident), so a second session to choose the thread count per
call, as torch's small calls do, was not made.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

AGREEMENT = 0.9999
"""Least cosine between an exported model's vector and torch's (float32) for a probe text."""
PROBES = (
    "When did the kettle in the kitchen switch on?",
    "watch_anna: heart rate 112 bpm while walking on Elm Street",
    "Callum told Peggy the plumber comes on Friday at 9:30.",
)
OPSET = 17
MAX_THREADS = 4
"""Most intra-op threads for a call of a few short texts (more only add synchronisation;
measured on 2 cores only)."""
CALL_COST_TOKENS = 12
"""A session call's fixed cost in padded token positions (about 1.4 ms against 0.12 ms a
position for the bundled MiniLM on the 2-core box), what `length_groups` weighs padding by."""
STALE_EXPORT_SECONDS = 3600.0
"""Age from which an export's temporary file is taken for a killed process's (an export
takes seconds)."""
_EXPORT_LIBRARIES = ("torch", "transformers", "onnx", "sentence-transformers")


def length_groups(lengths: Sequence[int], call_cost: int = CALL_COST_TOKENS) -> list[list[int]]:
    """The texts' indices split into calls, to cost the fewest padded positions.

    A call pads every text to its longest, and the model computes the padding too: a
    question of 24 tokens with rewrites of 7 and 9 costs 72 positions in one call, 42 in two
    calls plus `call_cost` for the second. Texts are taken shortest first and cut where
    another call costs less than the padding it saves (an exact split of the sorted list:
    a handful of texts, so quadratic is nothing). The calls memfuse made for 123 seed-7
    questions, encoded again both ways in one process, took 8.9-9.0 ms at p50 and 9.6-9.8 ms
    mean instead of 9.5-10.1 and 11.2-11.4 in one call each; alternating `memfuse bench
    --dataset data/memfusebench-seed7-realistic.json --systems hybrid,memfuse,memfuse_no_ar`
    runs read memfuse_no_ar's search p95 27.4 and 23.8 ms against 34.1 and 28.2 (memfuse: 31.8
    and 27.8 against 38.1 and 32.8), the same recall.
    """
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    sizes = [lengths[i] for i in order]
    best = [0] * (len(order) + 1)
    cut = [0] * (len(order) + 1)
    for end in range(1, len(order) + 1):
        best[end], cut[end] = min(
            (best[start] + call_cost + (end - start) * sizes[end - 1], start)
            for start in range(end)
        )
    groups: list[list[int]] = []
    end = len(order)
    while end > 0:
        groups.append(order[cut[end] : end])
        end = cut[end]
    return groups[::-1]


class ExportUnsupported(RuntimeError):
    """The model is not a plain transformer + mean/CLS pooling (+ normalise) stack."""


def default_cache_dir() -> Path:
    """Where exported models live: per user, not per data dir (the model is not the data)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "memfuse" / "onnx"


def session_threads() -> int:
    """The CPU threads torch is configured with (its default: the cores), at most
    `MAX_THREADS`."""
    import torch

    return max(1, min(int(torch.get_num_threads()), MAX_THREADS))


def _pooling_mode(model: Any) -> str:
    """`mean` or `cls` from the model's Pooling module; anything else is not exported."""
    modules = list(model)
    names = [type(m).__name__ for m in modules]
    if names[:2] != ["Transformer", "Pooling"] or any(n != "Normalize" for n in names[2:]):
        raise ExportUnsupported(f"module stack {names}")
    config = modules[1].get_config_dict()
    mode = config.get("pooling_mode")
    if mode is None:  # sentence-transformers < 6 keeps one flag per mode
        flags = {"mean": "pooling_mode_mean_tokens", "cls": "pooling_mode_cls_token"}
        mode = next((m for m, flag in flags.items() if config.get(flag)), None)
    if mode not in ("mean", "cls"):
        raise ExportUnsupported(f"pooling mode {mode!r}")
    return str(mode)


def export_key(model: Any) -> str:
    """A digest of the weights and of the libraries that shape the export."""
    digest = hashlib.blake2b(digest_size=16)
    for name, tensor in sorted(model[0].auto_model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().contiguous().cpu().numpy())  # the buffer, not a copy
    for library in _EXPORT_LIBRARIES:
        try:
            digest.update(f"{library}={importlib.metadata.version(library)}".encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(f"{library}=-".encode())
    digest.update(f"opset={OPSET}".encode())
    return digest.hexdigest()


def remove_stale_exports(path: Path, now: float | None = None) -> int:
    """Remove the temporary files of exports to `path` that a killed process left behind
    (older than `STALE_EXPORT_SECONDS`: a younger one may be another process's, still
    being written). Returns how many were removed."""
    cutoff = (time.time() if now is None else now) - STALE_EXPORT_SECONDS
    removed = 0
    for leftover in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()
                removed += 1
        except FileNotFoundError:  # its own process finished or removed it meanwhile
            continue
    return removed


def _export(model: Any, path: Path) -> None:
    """Export the model's transformer to `path`, atomically (temporary file, then rename)."""
    import torch

    transformer = model[0].auto_model
    sample = model.tokenizer(list(PROBES[:2]), padding=True, return_tensors="pt")
    names = list(sample.keys())

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            hidden: torch.Tensor = self.inner(
                **dict(zip(names, inputs, strict=True))
            ).last_hidden_state
            return hidden

    axes = {name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden"]}
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_exports(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the exporter's tracer warnings are about its own code
            torch.onnx.export(
                LastHidden().eval(),
                tuple(sample[name] for name in names),
                temporary,
                input_names=names,
                output_names=["last_hidden"],
                dynamic_axes=axes,
                opset_version=OPSET,
                dynamo=False,
            )
        with open(temporary, "rb") as written:
            os.fsync(written.fileno())
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)


class OnnxEncoder:
    """One exported sentence-transformers model and the onnxruntime session that runs it."""

    def __init__(self, model: Any, path: Path, pooling: str, threads: int | None = None):
        import onnxruntime

        self._tokenizer = model.tokenizer
        self._max_length = int(model.max_seq_length or 512)
        self._pooling = pooling
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or session_threads()
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # notes about unused initialisers are noise
        self._session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = [i.name for i in self._session.get_inputs()]

    @classmethod
    def for_model(cls, model: Any, cache_dir: Path | None = None) -> OnnxEncoder:
        """The model exported (or found exported) and checked against torch; raises
        `ExportUnsupported` for a stack it cannot reproduce, or the export's own error."""
        pooling = _pooling_mode(model)
        path = (cache_dir or default_cache_dir()) / f"{export_key(model)}.onnx"
        if not path.exists():
            log.info("exporting the embedding model for onnxruntime to %s (once)", path)
            _export(model, path)
        try:
            encoder = cls(model, path, pooling)
        except Exception:  # noqa: BLE001 - onnxruntime's load errors derive from Exception alone
            # a cached file damaged on disk: export it again, once
            log.warning("the exported model at %s did not load; exporting it again", path)
            _export(model, path)
            encoder = cls(model, path, pooling)
        encoder.check_against(model)
        return encoder

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Pooled, unnormalised float32 rows, as the model's Pooling module computes them; texts
        of very different lengths go in separate calls (`length_groups`), the rows in order."""
        ids = self._tokenizer(list(texts), truncation=True, max_length=self._max_length)
        lengths = [len(row) for row in ids["input_ids"]]
        rows: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(lengths)
        for group in length_groups(lengths):
            pooled = self._run({key: [ids[key][i] for i in group] for key in ids})
            for i, row in zip(group, pooled, strict=True):
                rows[i] = row
        return np.stack(rows).astype(np.float32, copy=False)

    def _run(self, unpadded: dict[str, list[list[int]]]) -> np.ndarray:
        features = self._tokenizer.pad(unpadded, padding=True, return_tensors="np")
        feed = {name: np.asarray(features[name], dtype=np.int64) for name in self._inputs}
        hidden = self._session.run(None, feed)[0]
        if self._pooling == "cls":
            return np.asarray(hidden[:, 0], dtype=np.float32)
        mask = np.asarray(features["attention_mask"], dtype=np.float32)[..., None]
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return np.asarray(pooled, dtype=np.float32)

    def check_against(self, model: Any) -> None:
        """Refuse an export whose vectors are not the model's (cosine below `AGREEMENT`)."""
        reference = model.encode(
            list(PROBES), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        ours = self.encode(PROBES)
        ours /= np.linalg.norm(ours, axis=1, keepdims=True)
        agreement = float((reference * ours).sum(axis=1).min())
        if agreement < AGREEMENT:
            raise ExportUnsupported(
                f"the exported model agrees with torch only to cosine {agreement:.6f}"
            )
