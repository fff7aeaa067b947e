"""What was optimised, how, on what, and how much it helped: the JSON next to every result.

A manifest makes a program reproducible and checkable: the dataset's sha256 and the
train/dev scenarios say what it saw; the optimiser, LM and library versions say how it
was made; the signature version ties it to the code it was compiled for (the run-time
loader refuses a mismatch); the before/after scores say whether it is worth loading.
Files are written to a temporary name and renamed, so a crash never leaves half a program.
"""

from __future__ import annotations

import hashlib
import json
import platform
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import dspy

from signatures.programs import manifest_path

LIBRARIES = (
    "memfuse",
    "dspy",
    "langgraph",
    "chromadb",
    "pydantic",
    "litellm",
    "optuna",
    "gepa",
    "sentence-transformers",
)


def library_versions() -> dict[str, str | None]:
    """Installed versions of the libraries a result depends on (None when absent)."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def lm_name(lm: Any) -> str | None:
    return str(getattr(lm, "model", None) or type(lm).__name__) if lm is not None else None


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def save_program(module: dspy.Module, path: str | Path) -> Path:
    """DSPy's own state-only JSON (`module.save`), written atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.json")
    module.save(str(tmp))
    tmp.replace(path)
    return path


def save_policy(overrides: dict[str, Any], path: str | Path) -> Path:
    """A tuned policy: the JSON of config overrides (`PlannerPolicy` / `FusionPolicy` shape)."""
    path = Path(path)
    _atomic_write(path, json.dumps(overrides, indent=1, sort_keys=True) + "\n")
    return path


def write_manifest(program: str | Path, manifest: dict[str, Any]) -> Path:
    """`programs/x.json` → `programs/x.manifest.json`."""
    path = manifest_path(program)
    _atomic_write(path, json.dumps(manifest, indent=1, default=str) + "\n")
    return path


def base_manifest(
    *,
    target: str,
    optimizer: str,
    program: Path,
    dataset: Path,
    train: tuple[str, ...],
    dev: tuple[str, ...],
    k: int,
    limit: int | None,
    lm: Any,
) -> dict[str, Any]:
    """The fields every manifest has; scores and optimiser details are added by the caller."""
    return {
        "target": target,
        "optimizer": optimizer,
        "program": program.name,
        "lm": lm_name(lm),
        "dataset": str(dataset),
        "dataset_sha256": file_sha256(dataset),
        "train_scenarios": list(train),
        "dev_scenarios": list(dev),
        "k": k,
        "limit": limit,
        "library_versions": library_versions(),
        "created_at": datetime.now().isoformat(timespec="seconds"),
    }


def defaults_update(manifest: dict[str, Any]) -> dict[str, Any]:
    """What shipping a grid winner as the new defaults changes: each moved axis's default
    before and its value after, and whether the winner qualifies (train better, dev not
    worse). The edit of the config classes itself is a reviewed code change."""
    best = manifest.get("best") or {}
    return {
        "recommended": bool(manifest.get("beats_defaults")) and bool(best),
        "before": {name: manifest["defaults"].get(name) for name in best},
        "after": dict(best),
    }
