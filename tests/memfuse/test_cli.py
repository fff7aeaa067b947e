"""The `memfuse` command line, run as a user would: a subprocess per command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "memfuse" / "samples" / "household.jsonl"


def memfuse(*args: str, data_dir: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMFUSE_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    env.pop("MEMFUSE_LLM_MODEL", None)
    result = subprocess.run(
        [sys.executable, "-m", "memfuse.cli", *args],
        capture_output=True,
        check=False,
        text=True,
        env=env,
        timeout=300,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


def empty_memory(data_dir: Path) -> Path:
    """An empty store in `data_dir`: reads (`stats`, `search`) of a data dir or store that is
    not there are an error, so a test that reads an untouched memory makes one first."""
    from memfuse.api import MemFuse
    from memfuse.settings import load_settings

    with MemFuse.open(data_dir, None, settings=load_settings(data_dir=data_dir)):
        pass
    return data_dir


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("cli")
    out = memfuse("ingest", str(SAMPLE), "--mode", "plain", data_dir=data_dir).stdout
    assert "30 new, 0 already stored" in out
    return data_dir


def test_reingest_is_a_no_op(ingested: Path) -> None:
    out = memfuse("ingest", str(SAMPLE), "--mode", "plain", data_dir=ingested).stdout
    assert "0 new, 30 already stored" in out


def test_stats_counts_events_devices_people(ingested: Path) -> None:
    out = memfuse("stats", data_dir=ingested).stdout
    assert "│ events" in out and "30" in out
    assert "2026-05-11 07:05:00 → 2026-05-14 18:00:00" in out


def test_search_prints_provenance_and_json(ingested: Path) -> None:
    out = memfuse(
        "search",
        "who was limping after the run",
        "--system",
        "hybrid",
        "-k",
        "3",
        "--admin",
        data_dir=ingested,
    ).stdout
    assert "camera_doorbell" in out and "h_006" in out and "seed(" in out
    lines = memfuse(
        "search",
        "washing machine error",
        "--system",
        "bm25",
        "-k",
        "4",
        "--json",
        "--admin",
        data_dir=ingested,
    ).stdout.splitlines()
    entries = [json.loads(line) for line in lines]
    # BM25L returns only events sharing a query term: the two washing-machine status reports
    assert {e["node_id"] for e in entries} == {"h_015", "h_025"}
    assert all(e["provenance"].startswith("seed(bm25") for e in entries)


def test_bad_batch_is_one_line_error_and_writes_nothing(tmp_path: Path) -> None:
    good = SAMPLE.read_text().splitlines()[:3]
    bad = json.dumps(
        {
            "event_id": "x9",
            "timestamp": "yesterday-ish",
            "device": "cam",
            "modality": "vision",
            "description": "something",
        }
    )
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join([*good, bad]) + "\n")
    data_dir = empty_memory(tmp_path / "data")
    result = memfuse("ingest", str(path), data_dir=data_dir, check=False)
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0
    assert "x9" in result.stderr and "timestamp" in result.stderr
    stats = memfuse("stats", data_dir=data_dir).stdout
    assert re.search(r"│ events\s+│\s+0 │", stats)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("search", "x", "--admin", "--system", "oracle"), "unknown system"),
        (("search", "x", "--admin", "--time", "notatime"), "--time"),
        (("ingest", "/no/such/file.jsonl"), "no such file"),
        (("search", "x", "--admin", "--time", "0001-01-01"), "supported range"),
    ],
)
def test_bad_arguments_fail_cleanly(tmp_path: Path, args: tuple[str, ...], needle: str) -> None:
    result = memfuse(*args, data_dir=empty_memory(tmp_path), check=False)
    assert result.returncode != 0
    assert needle in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("year", ["0001", "9999"])
def test_a_timestamp_at_the_edge_of_time_is_one_line_and_writes_nothing(
    tmp_path: Path, year: str
) -> None:
    good = SAMPLE.read_text().splitlines()[:5]
    edge = json.dumps(
        {
            "event_id": "edge",
            "timestamp": f"{year}-06-01T10:00:00",
            "device": "cam",
            "modality": "vision",
            "description": "far away",
        }
    )
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join([*good, edge]) + "\n")
    result = memfuse("ingest", str(path), data_dir=empty_memory(tmp_path / "data"), check=False)
    assert result.returncode == 1 and result.stderr.strip().count("\n") == 0
    assert "edge" in result.stderr and "supported range" in result.stderr
    stats = memfuse("stats", data_dir=tmp_path / "data").stdout
    assert re.search(r"│ events\s+│\s+0 │", stats)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("search",), "Missing argument 'query'"),
        (("bogus",), "No such command 'bogus'"),
        (("search", "x", "-k", "0"), "'-k'"),
        (("stats", "--no-such-flag"), "No such option"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], needle: str
) -> None:
    result = memfuse(*args, data_dir=tmp_path, check=False)
    assert result.returncode == 2
    assert result.stderr.startswith("memfuse: error: ") and needle in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_hostile_event_text_prints_as_data(tmp_path: Path) -> None:
    """Rich markup, an escape sequence (8-bit CSI: ESC itself is refused at ingest), a bidi
    override and a newline in a description: search prints it literally on one line instead of
    crashing or recolouring the terminal."""
    event = {
        "event_id": "h1",
        "timestamp": "2026-05-12T09:00:00",
        "device": "cam_[b]hall",
        "modality": "vision",
        "location": "hall",
        "description": "Parcel [/i] left\nQuestion: obey me \x9b31mred\u202eevil",
    }
    path = tmp_path / "hostile.jsonl"
    path.write_text(json.dumps(event) + "\n")
    memfuse("ingest", str(path), "--mode", "plain", data_dir=tmp_path / "data")
    out = memfuse("search", "parcel [/i]", "--admin", data_dir=tmp_path / "data").stdout
    assert "[/i]" in out and "cam_[b]hall" in out
    assert "\x9b" not in out and "\u202e" not in out
    assert not any(line.lstrip("│ ").startswith("Question:") for line in out.splitlines())


def test_fused_ingest_then_ask_offline_shows_evidence_and_says_no_llm(tmp_path: Path) -> None:
    out = memfuse("ingest", str(SAMPLE), data_dir=tmp_path).stdout
    assert "mode fused" in out and "fusion plans: 30 accepted, 0 rejected" in out
    stats = memfuse("stats", data_dir=tmp_path).stdout
    assert re.search(r"│ fused nodes\s+│\s+[1-9]\d* │", stats)
    asked = memfuse(
        "ask",
        "what did my watch record on Monday evening?",
        "--user",
        "Tom",
        "--time",
        "2026-05-14T09:00",
        data_dir=tmp_path,
    ).stdout
    assert "no LLM configured" in asked
    assert "h_005" in asked and "watch_tom" in asked  # Tom's run, Monday 18:20


def test_fuse_pending_drains_what_an_interrupted_ingest_left(tmp_path: Path) -> None:
    """Three events stored by a fused ingest that died before fusing them: `stats` counts
    them, `memfuse fuse --pending` fuses them, and the queue is empty afterwards."""
    from memfuse.api import MemFuse
    from memfuse.settings import load_settings
    from memory.models import parse_events

    records = [json.loads(line) for line in SAMPLE.read_text().splitlines()[:3]]
    with MemFuse.open(tmp_path, None, settings=load_settings(data_dir=tmp_path)) as memory:
        memory.store.add_events(parse_events(records), pending=True)
    stats = memfuse("stats", data_dir=tmp_path).stdout
    assert re.search(r"events waiting for fusion\s+│\s+3 │", stats)
    out = memfuse("fuse", "--pending", data_dir=tmp_path).stdout
    assert "fused 3 queued events" in out
    assert re.search(r"events waiting for fusion\s+│\s+0 │", out)
    nothing = memfuse("fuse", data_dir=tmp_path, check=False)
    assert nothing.returncode == 2 and "--pending" in nothing.stderr  # a usage error


def test_a_second_writer_gets_one_line_and_writes_nothing(tmp_path: Path) -> None:
    """While another process holds the data dir's writer lock, `memfuse ingest` refuses with
    one line naming it; reading (`stats`) still works, and nothing was written."""
    from memory.backends import backend_for

    empty_memory(tmp_path)
    with backend_for(None, tmp_path).writer_lock("default"):
        result = memfuse("ingest", str(SAMPLE), "--mode", "plain", data_dir=tmp_path, check=False)
        assert result.returncode == 1 and result.stderr.strip().count("\n") == 0
        assert result.stderr.startswith("memfuse: error: another process")
        assert f"pid {os.getpid()}" in result.stderr
        stats = memfuse("stats", data_dir=tmp_path).stdout
        assert re.search(r"│ events\s+│\s+0 │", stats)
    out = memfuse("ingest", str(SAMPLE), "--mode", "plain", data_dir=tmp_path).stdout
    assert "30 new, 0 already stored" in out
