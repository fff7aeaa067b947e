"""Faults of the data dir and of input files: exit 1 and one `memfuse: error: …` line that
says where and what to do; `--debug` (or MEMFUSE_DEBUG=1) shows the traceback instead.

Most cases run the CLI as a user would (a subprocess); a full disk is simulated in-process
at a write point, and also made real on a small tmpfs where the test may mount one.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memfuse.api import MemFuse
from memfuse.cli import main
from memfuse.settings import load_settings
from memory.embeddings import CachedEmbedder
from memory.store import MemoryStore

SAMPLE = Path(__file__).resolve().parents[2] / "memfuse" / "samples" / "household.jsonl"
PREFIX = "memfuse: error: "
# Root ignores permission bits unless it gives up these capabilities (setpriv, util-linux).
DROP_ROOT_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
                      "--inh-caps=-dac_override,-dac_read_search"]  # fmt: skip


def memfuse(
    *args: str, env: dict[str, str] | None = None, prefix: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    """`memfuse ARGS` in a fresh process (the data dir is always given with --data-dir)."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200", **(env or {})}
    for name in ("MEMFUSE_LLM_MODEL", "MEMFUSE_DATA_DIR"):
        full_env.pop(name, None)
    if env is None or "MEMFUSE_DEBUG" not in env:
        full_env.pop("MEMFUSE_DEBUG", None)
    return subprocess.run(
        [*prefix, sys.executable, "-m", "memfuse.cli", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=300,
        check=False,
    )


def fault_line(result: subprocess.CompletedProcess[str], *, alone: bool = True) -> str:
    """The one error line of a failed command (exit 1, no traceback). `alone`: nothing else
    on stderr; otherwise only progress bars may come before it."""
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(PREFIX)]
    assert len(errors) == 1 and lines[-1] == errors[0], result.stderr
    if alone:
        assert len(lines) == 1, result.stderr
    return errors[0][len(PREFIX) :]


def events_in(data_dir: Path) -> int:
    out = memfuse("stats", "--data-dir", str(data_dir))
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if line.startswith("│ events "))
    return int(row.split("│")[2])


def snapshot(data_dir: Path) -> dict[str, tuple[int, int]]:
    """Every file of the data dir with its size and mtime: equal before and after = untouched."""
    return {
        str(p.relative_to(data_dir)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(data_dir.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def populated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("faults") / "data"
    result = memfuse("ingest", str(SAMPLE), "--mode", "plain", "--data-dir", str(data_dir))
    assert result.returncode == 0, result.stderr
    return data_dir


@pytest.fixture
def data(populated: Path, tmp_path: Path) -> Path:
    """A private copy of the populated data dir (30 events), free to break."""
    return Path(shutil.copytree(populated, tmp_path / "data"))


@pytest.fixture
def new_batch(tmp_path: Path) -> Path:
    path = tmp_path / "new.jsonl"
    rows = [{"event_id": f"new_{i}", "timestamp": f"2026-06-01T10:0{i}:00", "device": "cam",
             "modality": "vision", "description": f"the cat looked at bird number {i}"}
            for i in range(5)]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


# --- a. read-only data dir ---------------------------------------------------------------


def read_only_prefix(path: Path, what: str) -> list[str]:
    """The command prefix under which `path`'s read-only mode really holds: none for a normal
    user; for root, which writes anyway, setpriv without CAP_DAC_OVERRIDE (skip if it can't)."""
    if os.geteuid() != 0:
        return []
    probe = None
    if shutil.which("setpriv"):
        probe = subprocess.run(
            [*DROP_ROOT_OVERRIDE, "test", "-w", str(path)], capture_output=True, check=False
        )
    if probe is None or probe.returncode != 1:  # 0: still writable; 2+: refused
        pytest.skip(
            f"running as root, which writes into {what} anyway, and "
            "CAP_DAC_OVERRIDE cannot be dropped here (setpriv)"
        )
    return list(DROP_ROOT_OVERRIDE)


@pytest.fixture
def read_only(data: Path) -> Iterator[tuple[Path, list[str]]]:
    """The data dir at mode 0o555, and the command prefix under which it really is read-only."""
    data.chmod(0o555)
    try:
        prefix = read_only_prefix(data, "a mode-555 dir")
        yield data, prefix
    finally:
        data.chmod(0o755)


def test_a_read_only_data_dir_still_reads(read_only: tuple[Path, list[str]]) -> None:
    data, prefix = read_only
    before = snapshot(data)
    stats = memfuse("stats", "--data-dir", str(data), prefix=prefix)
    assert stats.returncode == 0, stats.stderr
    assert any(line.startswith("│ events ") and "30" in line for line in stats.stdout.splitlines())
    found = memfuse(
        "search",
        "who was limping after the run",
        "--system",
        "hybrid",
        "-k",
        "3",
        "--json",
        "--user",
        "Anna",
        "--data-dir",
        str(data),
        prefix=prefix,
    )
    assert found.returncode == 0, found.stderr
    ids = [json.loads(line)["node_id"] for line in found.stdout.splitlines()
           if '"node_id"' in line]  # fmt: skip
    assert "h_006" in ids  # dense and lexical search both work without writing anything
    # an admin read must be on record, and the log cannot be written here: refused, saying why
    admin = memfuse("events", "--admin", "--data-dir", str(data), prefix=prefix)
    assert "audit log, which is read-only here" in fault_line(admin)
    assert snapshot(data) == before


def test_a_write_to_a_read_only_data_dir_is_one_line_and_writes_nothing(
    read_only: tuple[Path, list[str]], new_batch: Path
) -> None:
    data, prefix = read_only
    before = snapshot(data)
    result = memfuse(
        "ingest", str(new_batch), "--mode", "plain", "--data-dir", str(data), prefix=prefix
    )
    line = fault_line(result)
    assert f"data dir {data} is read-only" in line and "nothing was written" in line
    assert snapshot(data) == before


# --- b. --data-dir that is a regular file -------------------------------------------------


@pytest.mark.parametrize(
    "command", [("stats",), ("search", "cat", "--admin"), ("ingest", str(SAMPLE))]
)
def test_a_data_dir_that_is_a_file_is_one_line(tmp_path: Path, command: tuple[str, ...]) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a data dir\n")
    line = fault_line(memfuse(*command, "--data-dir", str(path)))
    assert line == f"data dir {path} is a file, not a directory; point it at a folder"
    assert path.read_text() == "not a data dir\n"


def test_a_data_dir_below_a_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("x")
    line = fault_line(memfuse("stats", "--data-dir", str(path / "data")))
    assert line == f"{path / 'data'}: part of this path is a file, not a directory"


# --- c. disk full -------------------------------------------------------------------------


def run_main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str]:
    """`memfuse ARGS` in this process (so a write point can be patched): (exit code, stderr)."""
    monkeypatch.setattr(sys, "argv", ["memfuse", *args])
    for name in ("MEMFUSE_LLM_MODEL", "MEMFUSE_DATA_DIR", "MEMFUSE_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SystemExit) as exited:
        main()
    return int(exited.value.code or 0), capsys.readouterr().err


def _full_inside_the_store_transaction(monkeypatch: pytest.MonkeyPatch) -> None:
    """The events' rows are inserted and indexed in memory, then SQLite reports a full disk."""
    index = MemoryStore._index_events

    def full(self: MemoryStore, *args: object, **kwargs: object) -> None:
        index(self, *args, **kwargs)  # type: ignore[arg-type]
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(MemoryStore, "_index_events", full)


def _full_writing_the_embedding_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(self: CachedEmbedder, rows: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(CachedEmbedder, "_store", full)


@pytest.mark.parametrize(
    ("fill", "where"),
    [(_full_inside_the_store_transaction, "default.sqlite"),
     (_full_writing_the_embedding_cache, "")],
    ids=["sqlite-full-in-transaction", "enospc-in-embedding-cache"],
)  # fmt: skip
def test_a_full_disk_is_one_line_and_leaves_no_half_batch(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], data: Path,
    new_batch: Path, fill: object, where: str,
) -> None:  # fmt: skip
    fill(monkeypatch)  # type: ignore[operator]
    code, stderr = run_main(
        monkeypatch, capsys, "ingest", str(new_batch), "--mode", "plain", "--data-dir", str(data)
    )
    assert code == 1 and "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith(PREFIX)]
    assert len(errors) == 1 and stderr.rstrip().endswith(errors[0]), stderr
    assert errors[0].startswith(f"{PREFIX}disk full at {data / where if where else data}:")
    assert "free some space and run the command again" in errors[0]
    monkeypatch.undo()
    with MemFuse.open(data, settings=load_settings(data_dir=data)) as memory:
        assert memory.stats().events == 30
        assert not any(memory.store.has_node(f"new_{i}") for i in range(5))
        assert memory.store.pending_fusion() == []


def test_a_real_full_disk_is_one_line_and_leaves_no_half_batch(
    tmp_path: Path, populated: Path, new_batch: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (the simulated full disk still runs)")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        data = Path(shutil.copytree(populated, disk / "data"))
        ballast = disk / "ballast"  # leaves 48 KiB: less than a fresh WAL and its index need
        ballast.write_bytes(b"\0" * max(shutil.disk_usage(disk).free - 48 * 1024, 0))
        line = fault_line(
            memfuse("ingest", str(new_batch), "--mode", "plain", "--data-dir", str(data)),
            alone=False,
        )
        assert line.startswith(f"disk full at {data}") or "is the disk full" in line, line
        ballast.unlink()
        assert events_in(data) == 30
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True, check=False)


# --- d. a damaged SQLite file -------------------------------------------------------------

GARBAGE = bytes(range(256)) * 64


@pytest.mark.parametrize("command", [("stats",), ("ingest", str(SAMPLE), "--mode", "plain")])
def test_a_damaged_store_names_the_file_and_the_way_back(
    data: Path, command: tuple[str, ...]
) -> None:
    store = data / "default.sqlite"
    store.write_bytes(GARBAGE)
    line = fault_line(memfuse(*command, "--data-dir", str(data)))
    assert line.startswith(f"{store} is damaged (file is not a database); ")
    assert "restore it from a backup" in line and "memfuse ingest" in line
    assert store.read_bytes() == GARBAGE  # never "repaired" by starting over


def test_the_advice_for_a_damaged_store_works(data: Path) -> None:
    (data / "default.sqlite").write_bytes(GARBAGE)
    aside = data.parent / "aside"
    aside.mkdir()
    for name in ("default.sqlite", "chroma"):  # what the message says to move aside
        (data / name).rename(aside / name)
    result = memfuse("ingest", str(SAMPLE), "--mode", "plain", "--data-dir", str(data))
    assert result.returncode == 0, result.stderr
    assert events_in(data) == 30


def test_a_damaged_embedding_cache_says_it_is_only_a_cache(data: Path) -> None:
    cache = data / "embeddings.sqlite"
    cache.write_bytes(GARBAGE)
    line = fault_line(memfuse("stats", "--data-dir", str(data)))
    assert line.startswith(f"{cache} is damaged (file is not a database); ")
    assert "only a cache: delete it" in line
    cache.unlink()
    assert events_in(data) == 30


# --- e. input files: bad encoding, bad JSON -----------------------------------------------


def _with_bad_line(tmp_path: Path, name: str, bad: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(
        b"".join(line + b"\n" for line in SAMPLE.read_bytes().splitlines()[:3]) + bad + b"\n"
    )
    return path


def test_invalid_utf8_names_the_file_and_line_and_writes_nothing(tmp_path: Path) -> None:
    path = _with_bad_line(tmp_path, "latin1.jsonl", b'{"event_id": "b1", "text": "caf\xe9"}')
    line = fault_line(memfuse("ingest", str(path), "--data-dir", str(tmp_path / "data")))
    assert line.startswith(f"{path}: line 4: not valid UTF-8 (byte 0xe9 at column ")
    assert not (tmp_path / "data").exists()


def test_invalid_json_names_the_file_and_line(tmp_path: Path) -> None:
    path = _with_bad_line(tmp_path, "cut.jsonl", b'{"event_id": "b2", ')
    line = fault_line(memfuse("ingest", str(path), "--data-dir", str(tmp_path / "data")))
    assert line.startswith(f"{path}: line 4: invalid JSON (")


def test_invalid_utf8_in_a_json_array_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "events.json"
    path.write_bytes(b'[\n{"event_id": "a"},\n{"event_id": "\xc3\x28"}\n]\n')
    line = fault_line(memfuse("ingest", str(path), "--data-dir", str(tmp_path / "data")))
    assert line == (
        f"{path}: line 3: not valid UTF-8 (byte 0xc3 at column 15); save the file as UTF-8"
    )


# --- f. --debug shows the traceback; other failures ---------------------------------------


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_shows_the_traceback_of_the_same_fault(data: Path, how: str) -> None:
    (data / "default.sqlite").write_bytes(GARBAGE)
    args = ("stats", "--data-dir", str(data))
    quiet = memfuse(*args)
    if how == "flag":
        loud = memfuse("--debug", *args)
    else:
        loud = memfuse(*args, env={"MEMFUSE_DEBUG": "1"})
    assert loud.returncode == 1
    assert "Traceback (most recent call last)" in loud.stderr
    assert "sqlite3.DatabaseError: file is not a database" in loud.stderr  # the cause, too
    assert loud.stderr.splitlines()[-1] == quiet.stderr.strip()  # and the same line, last


def test_debug_leaves_usage_errors_alone(tmp_path: Path) -> None:
    result = memfuse("--debug", "stats", "--no-such-flag", "--data-dir", str(tmp_path))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(PREFIX)


def test_an_unexpected_error_is_one_line_pointing_at_debug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr("memfuse.inputs.read_events", broken)
    code, stderr = run_main(
        monkeypatch, capsys, "ingest", str(SAMPLE), "--data-dir", str(tmp_path / "data")
    )
    assert code == 1
    assert stderr == (
        f"{PREFIX}unexpected RuntimeError: boom second line (run with --debug for the traceback)\n"
    )
