"""The fusion graph served by `langgraph dev` (in-memory LangGraph API server) over HTTP.

The server runs from a temporary directory (it writes `.langgraph_api/` into its working
directory) with a config holding only the repo's `fusion` entry, so that this test depends
on neither the other graphs nor the network: tracing, telemetry and analytics are off and
the server binds 127.0.0.1.
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
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.models import EdgeType
from memory.store import MemoryStore

REPO = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).parent / "langgraph"

pytestmark = pytest.mark.server

OFFLINE_ENV = {
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _fusion_only_config(directory: Path) -> Path:
    """The repo's `fusion` entry, with absolute paths, as the only graph."""
    spec = json.loads((REPO / "langgraph.json").read_text())
    path, _, attr = spec["graphs"]["fusion"].partition(":")
    config = {
        "dependencies": [str(REPO)],
        "graphs": {"fusion": f"{(REPO / path).resolve()}:{attr}"},
        "env": {},
    }
    target = directory / "langgraph.json"
    target.write_text(json.dumps(config))
    return target


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


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    if not LANGGRAPH.exists():
        pytest.skip("the langgraph CLI (langgraph-cli[inmem]) is not installed in this venv")
    workdir = tmp_path / "server"
    workdir.mkdir()
    config = _fusion_only_config(workdir)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "MEMFUSE_"))}
    env.update(OFFLINE_ENV)
    log = workdir / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(LANGGRAPH),
                "dev",
                "--no-browser",
                "--no-reload",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--config",
                str(config),
            ],
            cwd=workdir,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, proc, log, timeout=120)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def _event(event_id: str, time_: str, device: str, text: str) -> dict[str, object]:
    return {
        "event_id": event_id,
        "timestamp": f"2024-05-01T{time_}:00",
        "device": device,
        "modality": "vision",
        "location": "kitchen",
        "description": text,
        "characters": ["David"],
    }


def test_fusion_graph_over_http(server: str, tmp_path: Path) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=server)
    assert [a["graph_id"] for a in client.assistants.search()] == ["fusion"]
    data_dir = tmp_path / "data"
    context = {"data_dir": str(data_dir), "namespace": "default", "policy": "offline"}

    thread = client.threads.create()
    first = client.runs.wait(
        thread["thread_id"],
        "fusion",
        context=context,
        input={
            "event": _event("k1", "08:00", "cam_kitchen", "David spilled milk on the kitchen table")
        },
    )
    assert first["event_id"] == "k1" and first["outcome"] == "committed"
    assert first["report"]["status"] == "done" and first["violations"] == []

    second = client.runs.wait(
        client.threads.create()["thread_id"],
        "fusion",
        context=context,
        input={
            "event": _event("k2", "08:01", "watch_david", "David says he spilled milk on the table")
        },
    )
    assert second["outcome"] == "committed"
    assert [op["op"] for op in second["plan"]["operations"]] == ["create_fusion_node"]
    (fused_id,) = second["report"]["created"]

    store = MemoryStore.open(data_dir)  # vectors are all in Chroma: opening embeds nothing
    try:
        assert [e.event_id for e in store.all_events()] == ["k1", "k2"]
        assert store.get_fused(fused_id).members == ["k1", "k2"]
        assert store.has_edge("k2", fused_id, EdgeType.BELONG)
        assert store.plan_counts() == {"pending": 0, "done": 2, "rejected": 0}
    finally:
        store.close()
