"""One `langgraph dev` serving MemFuse's graphs, its LangGraph store and two agent graphs
(tests/support/agent_graphs.py), shared by the served store and agent tests of this folder:
started on first use, stopped when the session ends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.langgraph_server import REPO, LangGraphDev, langgraph_dev

AGENT_GRAPHS = REPO / "tests" / "support" / "agent_graphs.py"


@pytest.fixture(scope="session")
def served_memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LangGraphDev, Path]]:
    """(the server, its data dir). Namespaces are owned by their first label (`(user,
    "memories")`), and no MEMFUSE_USER: each read is the person its namespace names."""
    workdir = tmp_path_factory.mktemp("served_memory")
    data_dir = workdir / "data"
    dotenv = {"MEMFUSE_DATA_DIR": str(data_dir), "MEMFUSE_STORE_OWNERS": "first"}
    extra = {name: f"{AGENT_GRAPHS}:{name}" for name in ("memory_agent", "recall_agent")}
    with langgraph_dev(workdir, dotenv, extra_graphs=extra) as server:
        yield server, data_dir
