"""A real `langgraph dev` server (the in-memory LangGraph API server) for the served-graph tests.

Started as a user would: from a folder holding a `langgraph.json` (the repo's graph entries,
with absolute paths, and `"env": ".env"`) and a `.env` with the settings the test gives.
Nothing leaves 127.0.0.1: tracing, telemetry and analytics are off, and MEMFUSE_* and
LANGSMITH_* variables of the calling shell are dropped, so only the `.env` configures it.
One launcher for every test module that serves the graphs, so they all test the same server.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).parent / "langgraph"

OFFLINE_ENV = {
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}


@dataclass(frozen=True)
class LangGraphDev:
    """A running server: where it listens and where its output goes."""

    url: str
    log: Path

    def client(self) -> Any:
        """A langgraph_sdk sync client on this server (what an API client uses)."""
        from langgraph_sdk import get_sync_client

        return get_sync_client(url=self.url)


def clean_env() -> dict[str, str]:
    """This process's environment without MemFuse or LangSmith settings, offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "MEMFUSE_"))}
    env.update(OFFLINE_ENV)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(
    directory: Path, dotenv: Mapping[str, str], extra_graphs: Mapping[str, str] | None = None
) -> None:
    """The repo's graph entries with absolute paths (so the server may run from any folder),
    plus `extra_graphs` (name → "absolute/path.py:attr", e.g. a test's agent graphs); `env`
    names the folder's `.env`, written from `dotenv`."""
    spec = json.loads((REPO / "langgraph.json").read_text())
    graphs = {}
    for name, target in spec["graphs"].items():
        path, _, attr = target.partition(":")
        graphs[name] = f"{(REPO / path).resolve()}:{attr}"
    assert spec["env"] == ".env"
    graphs.update(extra_graphs or {})
    config = {**spec, "dependencies": [str(REPO)], "graphs": graphs}
    (directory / "langgraph.json").write_text(json.dumps(config))
    (directory / ".env").write_text("".join(f"{k}={v}\n" for k, v in dotenv.items()))


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited early:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"langgraph dev not ready after {timeout}s:\n{log.read_text()[-3000:]}")


@contextmanager
def langgraph_dev(
    workdir: Path,
    dotenv: Mapping[str, str],
    *,
    prefix: Sequence[str] = (),
    timeout: float = 120,
    extra_graphs: Mapping[str, str] | None = None,
) -> Iterator[LangGraphDev]:
    """Serve the repo's graphs from `workdir` (created; `.env` from `dotenv`) until the block
    ends. `prefix` runs the server under a command (e.g. setpriv, so that file modes hold for
    root as well). Skips when the langgraph CLI is not installed."""
    if not LANGGRAPH.exists():
        pytest.skip("the langgraph CLI (langgraph-cli[inmem]) is not installed in this venv")
    workdir.mkdir(parents=True, exist_ok=True)
    write_config(workdir, dotenv, extra_graphs)
    log = workdir / "server.log"
    port = free_port()
    command = [
        *prefix,
        str(LANGGRAPH),
        "dev",
        "--no-browser",
        "--no-reload",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--config",
        str(workdir / "langgraph.json"),
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command,
            cwd=workdir,
            env=clean_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        server = LangGraphDev(f"http://127.0.0.1:{port}", log)
        _wait_ready(server.url, proc, log, timeout)
        yield server
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
