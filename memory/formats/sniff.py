"""What kind of file a user handed us: the one rule, read once.

`memfuse ingest` takes JSONL events, a MemFuseBench or LoCoMo file, or a MemFuse export, and
the benchmark reads the two benchmark formats; both ask here, so a file is never called LoCoMo
by one reader and refused by the other, and a JSON file read to decide its kind is not read
(and parsed) again by the reader that follows: `Sniffed` carries its bytes and JSON on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memory.errors import InputFormatError
from memory.formats.export import is_export
from memory.formats.models import DatasetFormat
from memory.jsontext import decode_utf8, load_json

FileFormat = Literal["jsonl", "memfusebench", "locomo", "export"]


@dataclass(frozen=True)
class Sniffed:
    """A file's kind, with what was read to decide it (None: the name or first line told)."""

    format: FileFormat
    data: bytes | None = None
    raw: Any = None


def dataset_format(raw: Any) -> DatasetFormat | None:
    """The benchmark format a decoded JSON document is in: a dict with `scenario_data` is
    MemFuseBench, a list of samples each with a `conversation` is LoCoMo (its reader names
    what else a sample lacks); None when it is neither."""
    if isinstance(raw, dict) and "scenario_data" in raw:
        return "memfusebench"
    if (
        isinstance(raw, list)
        and raw
        and all(isinstance(s, dict) and "conversation" in s for s in raw)
    ):
        return "locomo"
    return None


def read_json(path: Path) -> tuple[bytes, Any]:
    """A whole JSON file's bytes and document; a bad byte or bad JSON names the file and line."""
    data = path.read_bytes()
    return data, load_json(decode_utf8(data, path), path)


def sniff(path: Path) -> Sniffed:
    """A MemFuse export by its header line; JSONL by extension; else the JSON's content (a
    JSON array that is not LoCoMo is events, read as JSONL is)."""
    if is_export(path):
        return Sniffed("export")
    if path.suffix == ".jsonl":
        return Sniffed("jsonl")
    data, raw = read_json(path)
    if (kind := dataset_format(raw)) is not None:
        return Sniffed(kind, data, raw)
    if isinstance(raw, list):
        return Sniffed("jsonl", data, raw)
    raise InputFormatError(
        f"{path}: not a JSONL event file, a MemFuseBench file, a LoCoMo file or a MemFuse export"
    )
