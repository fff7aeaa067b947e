"""Input kept as given or refused, at the command line: one `memfuse: error: …` line and
nothing written for bad input, exit 2 for a bad option value, offsets stored as UTC, a BOM
accepted, bidi controls escaped in every JSON output, and a read-only store file still read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memfuse import cli
from tests.memfuse.test_cli_faults import read_only_prefix

PREFIX = "memfuse: error: "
RLO = "\u202e"


def record(event_id: str, **changes: object) -> dict[str, object]:
    return {"event_id": event_id, "timestamp": "2026-05-20T10:00:00", "device": "cam",
            "modality": "vision", "description": f"event {event_id}", **changes}  # fmt: skip


def write_jsonl(path: Path, rows: list[dict[str, object]], bom: bool = False) -> Path:
    text = "".join(json.dumps(row) + "\n" for row in rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def run_main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str]:
    """`memfuse ARGS` in this process: (exit code, stderr)."""
    monkeypatch.setattr(sys, "argv", ["memfuse", *args])
    monkeypatch.delenv("MEMFUSE_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exited:
        cli.main()
    return int(exited.value.code or 0), capsys.readouterr().err


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith(PREFIX), err
    return err[len(PREFIX) :].rstrip("\n")


def memfuse(*args: str, prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    for name in ("MEMFUSE_LLM_MODEL", "MEMFUSE_DATA_DIR", "MEMFUSE_DEBUG"):
        env.pop(name, None)
    return subprocess.run(
        [*(prefix or []), sys.executable, "-m", "memfuse.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


# --- refused in one line, nothing written (in-process: nothing gets as far as the store) ----


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("ingest", "{file}", "--format", "xml"), "--format"),
        (("ingest", "{file}", "--mode", "bogus"), "--mode"),
        (("search", "x", "--admin", "--system", "bogus"), "--system"),
        (("bench", "--dataset", "{file}", "--format", "xml"), "--format"),
        (("bench-perf", "--mode", "bogus"), "--mode"),
        (("bench-perf", "--embedder", "bogus"), "--embedder"),
        (("show-question", "--dataset", "{file}", "--system", "bogus"), "--system"),
        (("check-dataset", "{file}", "--format", "xml"), "--format"),
    ],
)
def test_a_bad_option_value_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: tuple[str, ...],
    flag: str,
) -> None:
    file = write_jsonl(tmp_path / "in.jsonl", [record("a")])
    data = tmp_path / "data"
    argv = [a.format(file=file) for a in args] + ["--data-dir", str(data)]
    if args[0] == "check-dataset":
        argv = argv[:-2]  # it reads a file, no data dir
    code, err = run_main(monkeypatch, capsys, *argv)
    line = one_line(err)
    assert code == 2, err
    assert f"Invalid value for '{flag}'" in line and ("bogus" in line or "xml" in line)
    assert not data.exists()


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"", "no events in it"),
        (b"\n\n  \n", "no events in it"),
        (b"\xef\xbb\xbf", "no events in it"),
        (b'{"event_id": "x", "m": ' + b"[" * 3000 + b"]" * 3000 + b"}\n", "line 1: JSON nested"),
    ],
)
def test_an_empty_or_too_deep_jsonl_file_is_one_line_and_writes_nothing(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    content: bytes,
    needle: str,
) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(content)
    code, err = run_main(
        monkeypatch, capsys, "ingest", str(path), "--data-dir", str(tmp_path / "d")
    )
    assert code == 1 and needle in one_line(err) and str(path) in err
    assert not (tmp_path / "d").exists()  # no store, no audit entry


@pytest.mark.parametrize(
    ("content", "needle"),
    [(b"", "empty file"), (b"[]", "no events in it"), (b"[" * 100 + b"]" * 100, "nested deeper")],
)
def test_an_empty_or_too_deep_json_file_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    content: bytes,
    needle: str,
) -> None:
    path = tmp_path / "in.json"
    path.write_bytes(content)
    code, err = run_main(
        monkeypatch, capsys, "ingest", str(path), "--data-dir", str(tmp_path / "d")
    )
    assert code == 1 and needle in one_line(err) and "RecursionError" not in err
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"event_id": "a/../b\nc"}, "event_id"),
        ({"device": "watch\nTom"}, "device"),
        ({"description": "bell\x07"}, "description"),
        ({"characters": ["Tom\x00"]}, "characters"),
        ({"metadata": {"r": 1e400}}, "metadata"),
    ],
)
def test_a_batch_with_one_bad_event_names_it_and_writes_nothing(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    changes: dict[str, object],
    field: str,
) -> None:
    rows = [record("g1"), {**record("bad"), **changes}, record("g2")]
    path = write_jsonl(tmp_path / "in.jsonl", rows)
    text = path.read_text().replace("Infinity", "1e400")  # json.dumps writes 1e400 as Infinity
    path.write_text(text)
    code, err = run_main(
        monkeypatch, capsys, "ingest", str(path), "--data-dir", str(tmp_path / "d")
    )
    line = one_line(err)
    assert code == 1 and f"field '{field}'" in line and "(record 2)" in line
    assert not (tmp_path / "d").exists()


def test_nan_in_a_jsonl_record_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(record("n1")).replace("}", ', "reading": NaN}') + "\n")
    code, err = run_main(
        monkeypatch, capsys, "ingest", str(path), "--data-dir", str(tmp_path / "d")
    )
    assert code == 1
    assert one_line(err) == (
        "event 'n1' (record 1): field 'metadata': key 'reading' is nan, not a finite number "
        "(JSON has no NaN or Infinity)"
    )


# --- stored as given: offsets as UTC, a BOM, bidi text escaped in JSON out ------------------


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two events, from a file with a BOM: one at +05:00 with a bidi override in its text,
    one at -08:00."""
    root = tmp_path_factory.mktemp("as_given")
    rows = [
        record("east", timestamp="2026-05-20T10:00:00+05:00",
               description=f"invoice {RLO}fdp.exe{RLO} paid", owner="Tom"),
        record("west", timestamp="2026-05-20T10:00:00-08:00", description="invoice west"),
    ]  # fmt: skip
    source = write_jsonl(root / "in.jsonl", rows, bom=True)
    data = root / "data"
    result = memfuse("ingest", str(source), "--mode", "plain", "--data-dir", str(data))
    assert result.returncode == 0, result.stderr
    assert "2 new" in result.stdout
    return data


def json_lines(out: str, escaped: bool = True) -> list[dict[str, object]]:
    assert RLO not in out and ("\\u202e" in out) == escaped  # escaped, never raw
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_events_json_has_utc_times_and_escaped_bidi(stored: Path) -> None:
    out = memfuse("events", "--admin", "--json", "--data-dir", str(stored))
    assert out.returncode == 0, out.stderr
    events = {r["event"]["event_id"]: r["event"] for r in json_lines(out.stdout)}  # type: ignore[index]
    assert events["east"]["timestamp"] == "2026-05-20T05:00:00"
    assert events["west"]["timestamp"] == "2026-05-20T18:00:00"
    assert events["east"]["description"] == f"invoice {RLO}fdp.exe{RLO} paid"  # same text back


def test_show_search_and_export_escape_bidi(stored: Path, tmp_path: Path) -> None:
    shown = memfuse("show", "east", "--admin", "--json", "--data-dir", str(stored))
    assert shown.returncode == 0, shown.stderr
    assert json_lines(shown.stdout)[0]["event"]["description"].startswith("invoice \u202e")  # type: ignore[index]
    found = memfuse(
        "search", "invoice", "--admin", "--system", "bm25", "--json", "--data-dir", str(stored)
    )
    assert found.returncode == 0, found.stderr
    # a context line is already one safe line (`single_line`): the override became a space
    assert "east" in {e["node_id"] for e in json_lines(found.stdout, escaped=False)}
    exported = memfuse("export", "-", "--admin", "--data-dir", str(stored))
    assert exported.returncode == 0, exported.stderr
    lines = json_lines(exported.stdout)
    assert {e["event"]["timestamp"] for e in lines[1:]} == {  # type: ignore[index]
        "2026-05-20T05:00:00",
        "2026-05-20T18:00:00",
    }
    backup = tmp_path / "backup.jsonl"
    backup.write_text(exported.stdout)
    again = memfuse("ingest", str(backup), "--data-dir", str(tmp_path / "copy"))
    assert again.returncode == 0, again.stderr
    copy = memfuse("export", "-", "--admin", "--data-dir", str(tmp_path / "copy"))
    assert copy.stdout.splitlines()[1:] == exported.stdout.splitlines()[1:]  # round trip


# --- a read-only store file in a writable data dir ---------------------------------------


@pytest.fixture
def read_only_store(stored: Path, tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    """A copy of the store with `default.sqlite` at mode 444 (its folder writable), and the
    command prefix under which the mode holds (root ignores it unless it drops the capability)."""
    data = Path(shutil.copytree(stored, tmp_path / "data"))
    store = data / "default.sqlite"
    store.chmod(0o444)
    try:
        prefix = read_only_prefix(store, "a mode-444 file")
        yield data, prefix
    finally:
        store.chmod(0o644)


def test_a_read_only_store_file_is_still_read_and_refuses_writes(
    read_only_store: tuple[Path, list[str]], tmp_path: Path
) -> None:
    data, prefix = read_only_store
    store_bytes = (data / "default.sqlite").read_bytes()
    stats = memfuse("stats", "--data-dir", str(data), prefix=prefix)
    assert stats.returncode == 0, stats.stderr
    assert any(line.startswith("│ events ") and " 2 " in line for line in stats.stdout.splitlines())
    found = memfuse(
        "search", "invoice", "--user", "Tom", "--system", "bm25", "--json", "--data-dir", str(data),
        prefix=prefix,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert "east" in {e["node_id"] for e in json_lines(found.stdout, escaped=False)}
    batch = write_jsonl(tmp_path / "new.jsonl", [record("new1")])
    refused = memfuse(
        "ingest", str(batch), "--mode", "plain", "--data-dir", str(data), prefix=prefix
    )
    assert refused.returncode == 1
    line = one_line(refused.stderr.splitlines()[-1] + "\n")
    assert (
        line.startswith(f"{data / 'default.sqlite'} is read-only") and "nothing was written" in line
    )
    assert (data / "default.sqlite").read_bytes() == store_bytes
