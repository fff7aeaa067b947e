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
from memory.formats.sniff import FileFormat, Sniffed, read_json, sniff
from memory.jsontext import decode_utf8, load_json
from memory.models import Event, parse_events

InputFormat = Literal["auto", FileFormat]


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Decoded line by line (not by the file object's buffer), so a bad byte has a line number."""
    records: list[dict[str, Any]] = []
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            line = decode_utf8(raw, path, line_no)  # line 1 loses a byte-order mark
            if line.strip():
                records.append(load_json(line, path, line_no))
    return records


def input_format(path: Path) -> FileFormat:
    """A MemFuse export by its header line; JSONL by extension; otherwise peek at the JSON
    (`memory.formats.sniff`, the rule the benchmark reads by too)."""
    return sniff(path).format


def sniff_input(path: Path, fmt: InputFormat = "auto") -> Sniffed:
    """The file's kind, sniffed once (`auto`) or as the caller says; what sniffing read is
    carried on to the reader. An export named as JSONL events is refused here."""
    if not path.exists():
        raise InputFormatError(f"{path}: no such file")
    if fmt == "auto":
        return sniff(path)
    if fmt == "jsonl" and is_export(path):
        raise _export_as_events(path)
    return Sniffed(fmt)


def _export_as_events(path: Path) -> MemFuseError:
    return MemFuseError(
        f"{path} is a MemFuse export (events, packs and edges), not an event file: "
        "import it as an export (`memfuse ingest` does so when it detects one)"
    )


def read_events(
    path: Path, fmt: InputFormat | Sniffed = "auto", scenario: str | None = None
) -> list[Event]:
    """Validate every event of the file; the first bad one aborts with its id and field. A
    file without events is an error too: "ingested 0 events" would hide a wrong path.
    `fmt`: a format name, or the file as `sniff_input` found it."""
    sniffed = fmt if isinstance(fmt, Sniffed) else sniff_input(path, fmt)
    if sniffed.format == "export":
        raise _export_as_events(path)
    events = _read_events(path, sniffed, scenario)
    if not events:
        raise InputFormatError(f"{path}: no events in it (an empty file?); nothing was written")
    return events


def _read_events(path: Path, sniffed: Sniffed, scenario: str | None) -> list[Event]:
    """The events of a file whose kind is known (read once: what sniffing read is reused)."""
    kind = sniffed.format
    if kind == "jsonl":
        if sniffed.data is None and path.suffix == ".jsonl":
            return parse_events(_read_jsonl(path))
        data = sniffed.raw if sniffed.data is not None else read_json(path)[1]
        if not isinstance(data, list):
            raise InputFormatError(f"{path}: expected a JSON array of events")
        return parse_events(data)
    dataset = load_dataset(path, format=kind, sniffed=sniffed)
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
