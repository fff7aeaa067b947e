"""The benchmark and export readers take input as given or refuse it in one line: a UTF-8
byte-order mark is accepted, deep nesting is refused naming the file, a LoCoMo turn that cannot
be an event names its event, and an export keeps offsets-as-UTC and bidi text exactly."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from memory.errors import InputFormatError, InvalidEventError
from memory.formats.export import is_export, read_export, write_export
from memory.formats.loader import load_dataset
from memory.formats.memfusebench import DatasetError
from memory.formats.memfusebench_io import load
from memory.models import parse_event
from memory.store import MemoryStore
from tests.support.bench import LOCOMO, write_tiny_bench
from tests.support.embedders import HashEmbedder

BOM = b"\xef\xbb\xbf"


def with_bom(path: Path) -> Path:
    path.write_bytes(BOM + path.read_bytes())
    return path


def test_a_memfusebench_file_with_a_bom_reads_like_one_without(tmp_path: Path) -> None:
    plain = write_tiny_bench(tmp_path / "plain.json")
    marked = with_bom(write_tiny_bench(tmp_path / "marked.json"))
    assert load(marked) == load(plain)
    a, b = load_dataset(plain), load_dataset(marked)
    assert [s.events for s in a.scenarios] == [s.events for s in b.scenarios]


def test_a_locomo_file_with_a_bom_reads(tmp_path: Path) -> None:
    marked = tmp_path / "locomo.json"
    marked.write_bytes(BOM + LOCOMO.read_bytes())
    assert load_dataset(marked).scenarios == load_dataset(LOCOMO).scenarios


def test_deep_nesting_in_a_benchmark_file_is_one_line_naming_it(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"scenario_data": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(InputFormatError, match="deep.json: JSON nested deeper than 64 levels"):
        load_dataset(deep)
    with pytest.raises(DatasetError, match="deep.json: JSON nested deeper than 64 levels"):
        load(deep)


def test_an_empty_benchmark_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    with pytest.raises(InputFormatError, match="empty file"):
        load_dataset(empty)


def test_a_locomo_turn_with_a_control_character_names_its_event(tmp_path: Path) -> None:
    raw = json.loads(LOCOMO.read_text())
    sessions = [k for k, v in raw[0]["conversation"].items() if isinstance(v, list)]
    turn = raw[0]["conversation"][sessions[0]][0]
    turn["speaker"] = "Caro\x1b[2Jline"
    bad = tmp_path / "locomo.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(InvalidEventError) as info:
        load_dataset(bad, format="locomo")
    assert info.value.field in ("device", "characters", "owner")
    assert turn["dia_id"] in str(info.value)


def test_an_export_keeps_utc_times_and_bidi_text_and_escapes_it(tmp_path: Path) -> None:
    text = "receipt says \u202egnp.exe\u202c and \u2066hidden\u2069"
    events = [
        parse_event({"event_id": "a", "timestamp": "2026-05-20T10:00:00+05:00", "device": "cam",
                     "modality": "vision", "description": text, "metadata": {"n": 1.5}}),
        parse_event({"event_id": "b", "timestamp": "2026-05-20T10:00:00-08:00", "device": "cam",
                     "modality": "vision", "description": "west"}),
    ]  # fmt: skip
    with MemoryStore.open(tmp_path / "src", embedder=HashEmbedder()) as source:
        source.add_events(events)
        assert source.events_between(datetime(2026, 5, 20, 5), datetime(2026, 5, 20, 5)) == ["a"]
        assert source.events_between(datetime(2026, 5, 20, 17), datetime(2026, 5, 20, 19)) == ["b"]
        path = tmp_path / "out.jsonl"
        write_export(source, path)
    written = path.read_text(encoding="utf-8")
    assert "\\u202e" in written and "\u202e" not in written and "\u2066" not in written
    assert '"timestamp": "2026-05-20T05:00:00"' in written
    bundle = read_export(path)
    assert sorted(bundle.events, key=lambda e: e.event_id) == events
    with_bom(path)
    assert is_export(path)
    assert read_export(path).events == bundle.events
