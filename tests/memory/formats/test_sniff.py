"""One rule for what kind of file a user handed us (`memory.formats.sniff`), used by
`memfuse ingest` and the benchmark alike, and a file read once on its way to events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memfuse.inputs import read_events, sniff_input
from memory.errors import InputFormatError, MemFuseError
from memory.formats.export import EXPORT_FORMAT
from memory.formats.loader import benchmark_format, load_dataset
from memory.formats.sniff import dataset_format, sniff
from tests.support.bench import LOCOMO, write_tiny_bench

EVENT = {
    "event_id": "e1",
    "timestamp": "2024-03-01T08:00:00",
    "device": "watch_david",
    "modality": "health",
    "description": "David slept eight hours",
}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_each_kind_of_file_is_told_by_one_rule(tmp_path: Path) -> None:
    header = json.dumps({"format": EXPORT_FORMAT, "counts": {"events": 0}})
    cases = {
        "export": _write(tmp_path / "backup.json", header + "\n"),
        "jsonl": _write(tmp_path / "events.jsonl", json.dumps(EVENT) + "\n"),
        "memfusebench": write_tiny_bench(tmp_path / "bench.json"),
        "locomo": LOCOMO,
    }
    for kind, path in cases.items():
        assert sniff(path).format == kind, path
    array = sniff(_write(tmp_path / "array.json", json.dumps([EVENT])))
    assert (array.format, array.raw) == ("jsonl", [EVENT])  # events as a JSON array
    with pytest.raises(InputFormatError, match="not a JSONL event file, a MemFuseBench"):
        sniff(_write(tmp_path / "other.json", json.dumps({"foo": 1})))


@pytest.mark.parametrize(
    "raw",
    [
        {"scenario_data": []},
        [{"conversation": {}, "qa": []}],
        [{"conversation": {}}],  # LoCoMo lacking its questions: the reader says so
        [{"conversation": {}, "qa": []}, {"event_id": "e1"}],
        [EVENT],
        [],
        {"foo": 1},
        "text",
    ],
)
def test_ingest_and_the_benchmark_agree_on_what_is_a_benchmark_file(raw: Any) -> None:
    """The benchmark's loader refuses exactly what the shared rule calls neither format."""
    kind = dataset_format(raw)
    if kind is None:
        with pytest.raises(InputFormatError, match="cannot detect the benchmark format"):
            benchmark_format(raw)
    else:
        assert benchmark_format(raw) == kind


def test_a_locomo_sample_without_questions_is_named_by_both_readers(tmp_path: Path) -> None:
    raw = json.loads(LOCOMO.read_text())
    del raw[0]["qa"]
    path = _write(tmp_path / "locomo.json", json.dumps(raw))
    for read in (read_events, load_dataset):
        with pytest.raises(InputFormatError, match="every sample needs 'conversation' and 'qa'"):
            read(path)


def test_a_sniffed_file_is_read_once_on_its_way_to_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = write_tiny_bench(tmp_path / "bench.json")
    expected = read_events(bench)
    reads: list[Path] = []
    original = Path.read_bytes

    def counted(self: Path) -> bytes:
        reads.append(self)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    sniffed = sniff_input(bench)
    assert read_events(bench, sniffed) == expected
    assert reads == [bench]


def test_an_export_is_not_read_as_events(tmp_path: Path) -> None:
    header = json.dumps({"format": EXPORT_FORMAT, "counts": {"events": 0}})
    export = _write(tmp_path / "backup.jsonl", header + "\n")
    for fmt in ("auto", "jsonl"):
        with pytest.raises(MemFuseError, match="is a MemFuse export"):
            read_events(export, fmt)  # type: ignore[arg-type]
    with pytest.raises(InputFormatError, match="no such file"):
        sniff_input(tmp_path / "missing.json")
