"""Reading user input files into validated events, before anything is written.

Three formats: JSONL (one event object per line), a MemFuseBench JSON (its events),
and a LoCoMo JSON (its dialogue turns). The format is detected from the content. The two
benchmark formats are read by `memory.formats`, the same readers the benchmark uses, so a
file that benchmarks is a file that ingests. A fourth, a MemFuse export (`memfuse export`:
events, packs and edges), is detected too but read whole by `read_export_bundle`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from memory.errors import InputFormatError, MemFuseError
from memory.formats.export import ExportBundle, is_export, read_export
from memory.formats.loader import load_dataset
from memory.jsontext import decode_utf8, load_json
from memory.models import Event, parse_events

InputFormat = Literal["auto", "jsonl", "memfusebench", "locomo", "export"]


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Decoded line by line (not by the file object's buffer), so a bad byte has a line number."""
    records: list[dict[str, Any]] = []
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            line = decode_utf8(raw, path, line_no)  # line 1 loses a byte-order mark
            if line.strip():
                records.append(load_json(line, path, line_no))
    return records


def _read_json(path: Path) -> Any:
    """A whole JSON file; a bad byte or bad JSON names the file and its line."""
    return load_json(decode_utf8(path.read_bytes(), path), path)


def detect_format(path: Path) -> InputFormat:
    """A MemFuse export by its header line; JSONL by extension; otherwise peek at the JSON."""
    if is_export(path):
        return "export"
    if path.suffix == ".jsonl":
        return "jsonl"
    data = _read_json(path)
    if isinstance(data, dict) and "scenario_data" in data:
        return "memfusebench"
    if isinstance(data, list) and data and isinstance(data[0], dict) and "conversation" in data[0]:
        return "locomo"
    if isinstance(data, list):
        return "jsonl"  # a JSON array of event objects reads the same way
    raise InputFormatError(
        f"{path}: not a JSONL event file, a MemFuseBench file, a LoCoMo file or a MemFuse export"
    )


def read_events(path: Path, fmt: InputFormat = "auto", scenario: str | None = None) -> list[Event]:
    """Validate every event of the file; the first bad one aborts with its id and field. A
    file without events is an error too: "ingested 0 events" would hide a wrong path."""
    if not path.exists():
        raise InputFormatError(f"{path}: no such file")
    events = _read_events(path, fmt, scenario)
    if not events:
        raise InputFormatError(f"{path}: no events in it (an empty file?); nothing was written")
    return events


def _read_events(path: Path, fmt: InputFormat, scenario: str | None) -> list[Event]:
    kind = detect_format(path) if fmt == "auto" else fmt
    if kind == "export" or (kind == "jsonl" and is_export(path)):
        raise MemFuseError(
            f"{path} is a MemFuse export (events, packs and edges), not an event file: "
            "import it as an export (`memfuse ingest` does so when it detects one)"
        )
    if kind == "jsonl":
        if path.suffix == ".jsonl":
            return parse_events(_read_jsonl(path))
        data = _read_json(path)
        if not isinstance(data, list):
            raise InputFormatError(f"{path}: expected a JSON array of events")
        return parse_events(data)
    dataset = load_dataset(path, format=kind)
    scenarios = dataset.scenarios
    if scenario is not None:
        scenarios = [s for s in scenarios if s.scenario_id == scenario]
        if not scenarios:
            known = ", ".join(s.scenario_id for s in dataset.scenarios)
            raise MemFuseError(f"{path}: no scenario {scenario!r} (have: {known})")
    return [event for s in scenarios for event in s.events]


def read_export_bundle(path: Path) -> ExportBundle:
    """A whole MemFuse export, validated (see `memory.formats.export.read_export`)."""
    if not path.exists():
        raise InputFormatError(f"{path}: no such file")
    return read_export(path)
