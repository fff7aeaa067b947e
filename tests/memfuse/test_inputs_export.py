"""`memfuse ingest`'s input detection knows MemFuse exports from plain event files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memfuse.inputs import input_format, read_events, read_export_bundle
from memory.errors import InputFormatError, MemFuseError
from memory.formats.export import write_export
from memory.models import Edge, EdgeType, Event, FusedNode
from memory.store import MemoryStore
from tests.support.embedders import HashEmbedder

RECORDS = [
    {
        "event_id": "a1",
        "timestamp": "2024-03-01T08:00:00",
        "device": "watch_david",
        "modality": "health",
        "description": "David's heart rate rose to 128 bpm",
        "owner": "David",
    },
    {
        "event_id": "a2",
        "timestamp": "2024-03-01T08:20:00",
        "device": "cam_hall",
        "modality": "vision",
        "description": "David was limping in the hallway",
    },
]


@pytest.fixture
def export_file(tmp_path: Path) -> Path:
    with MemoryStore.open(tmp_path / "store", embedder=HashEmbedder()) as store:
        events = [Event.model_validate(r) for r in RECORDS]
        store.add_events(events)
        store.put_fused(FusedNode.from_members("fused_run", "David ran and then limped", events))
        store.add_edge(Edge(src="a1", dst="a2", type=EdgeType.CAUSAL))
        path = tmp_path / "backup.jsonl"
        write_export(store, path)
    return path


@pytest.fixture
def events_file(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    return path


def test_export_is_detected_under_auto(export_file: Path) -> None:
    assert input_format(export_file) == "export"
    renamed = export_file.rename(export_file.with_suffix(".json"))  # JSONL inside a .json name
    assert input_format(renamed) == "export"


def test_plain_events_still_read_as_events(events_file: Path) -> None:
    assert input_format(events_file) == "jsonl"
    assert [e.event_id for e in read_events(events_file)] == ["a1", "a2"]
    assert [e.event_id for e in read_events(events_file, "jsonl")] == ["a1", "a2"]


@pytest.mark.parametrize("fmt", ["auto", "jsonl", "export"])
def test_read_events_refuses_an_export(export_file: Path, fmt: str) -> None:
    with pytest.raises(MemFuseError, match="is a MemFuse export .* import it as an export"):
        read_events(export_file, fmt)  # type: ignore[arg-type]


def test_read_export_bundle(export_file: Path, tmp_path: Path) -> None:
    bundle = read_export_bundle(export_file)
    assert [e.event_id for e in bundle.events] == ["a1", "a2"]
    assert bundle.visibility == {"a1": "private:David", "a2": "household"}
    assert [n.node_id for n in bundle.fused] == ["fused_run"]
    assert [e.key() for e in bundle.edges] == [("a1", "a2", "causal")]
    with pytest.raises(InputFormatError, match="no such file"):
        read_export_bundle(tmp_path / "missing.jsonl")
