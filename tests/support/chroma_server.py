"""A real `chroma run` server for the store tests (started once per session, on 127.0.0.1)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

_CHROMA = Path(sys.executable).with_name("chroma")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_heartbeat(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chroma server exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"no heartbeat from {url} within {timeout:.0f}s")


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A `chroma run` server on 127.0.0.1 at a free port, stopped at the end of the session."""
    if not _CHROMA.exists():
        pytest.skip(f"no chroma console script at {_CHROMA}")
    port = free_port()
    log = tmp_path_factory.mktemp("chroma-server") / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                str(_CHROMA),
                "run",
                "--path",
                str(log.parent / "data"),
                "--port",
                str(port),
                "--host",
                "127.0.0.1",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
    try:
        _wait_for_heartbeat(f"http://127.0.0.1:{port}/api/v2/heartbeat", process, timeout=60)
        yield "127.0.0.1", port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
