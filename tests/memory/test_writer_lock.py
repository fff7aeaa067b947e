"""One writer per data dir: a second process is refused (or waits), a dead holder frees it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory.backends import backend_for
from memory.errors import DataDirBusyError

HOLD = """
import sys, time
from pathlib import Path
from memory.backends import backend_for
lock = backend_for(None, Path(sys.argv[1])).writer_lock("default").acquire()
print("held", flush=True)
time.sleep(60)
"""


def _holder(data_dir: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(data_dir)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


def test_a_second_writer_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    holder = _holder(tmp_path)
    try:
        with pytest.raises(DataDirBusyError) as busy:
            backend_for(None, tmp_path).writer_lock("default").acquire()
        assert f"pid {holder.pid}" in str(busy.value) and str(tmp_path) in str(busy.value)
        assert "\n" not in str(busy.value)
        other = backend_for(None, tmp_path).writer_lock("other")  # namespaces are separate
        other.acquire()
        other.release()
        started = time.monotonic()
        with pytest.raises(DataDirBusyError, match="after waiting"):
            backend_for(None, tmp_path).writer_lock("default", wait_seconds=0.3).acquire()
        assert time.monotonic() - started >= 0.3
    finally:
        holder.kill()
        holder.wait()


def test_kill_9_frees_the_lock(tmp_path: Path) -> None:
    holder = _holder(tmp_path)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    lock = backend_for(None, tmp_path).writer_lock("default").acquire()
    assert lock.held
    lock.release()
    assert not lock.held


def test_a_waiting_writer_gets_the_lock_once_it_is_released(tmp_path: Path) -> None:
    first = backend_for(None, tmp_path).writer_lock("default").acquire()
    waiter = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys; from pathlib import Path; from memory.backends import backend_for; "
                "backend_for(None, Path(sys.argv[1])).writer_lock('default', 20).acquire(); "
                "print('got it')"
            ),
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    time.sleep(0.5)
    assert waiter.poll() is None  # still waiting
    first.release()
    out, _ = waiter.communicate(timeout=30)
    assert out.strip() == "got it" and waiter.returncode == 0
