"""MemFuse errors over HTTP: a run that a MemFuse error ends gives the API client the error's type
name and its one-line message, as `memfuse` would print it (graphs/served.py).

One real `langgraph dev` for the module (tests/support/langgraph_server.py), with the repo's
`langgraph.json` and no LLM configured; embeddings come from the local fake OpenAI server. Each
case below is a real failing request, sent as a client sends it (`runs.wait`); what the client
must read is the error the server raises for it, built here with the same error class. As root,
the server runs without CAP_DAC_OVERRIDE where setpriv allows, so that a read-only data dir is
read-only for it too (the two cases that need one skip where that cannot be had).

Not reachable through the served graphs, so not here: NodeNotFoundError (the fusion agent's tools
answer an unknown id with a note), InvalidPlanError (a rejection, not an error), InputFormatError
(files are the CLI's).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memory.backends import backend_for
from memory.backends.base import WriterLock
from memory.embeddings import EmbeddingConfig
from memory.errors import (
    STORE_RECOVERY,
    ConfigurationError,
    DamagedFileError,
    DataDirBusyError,
    DataDirError,
    EventConflictError,
    InvalidEventError,
    InvalidQueryError,
    MemFuseError,
    PermissionDeniedError,
    ReadOnlyDataDirError,
    UnknownRecipeError,
)
from memory.models import parse_event
from memory.read_request import NO_REQUESTER
from memory.search.config import RECIPES
from memory.store import MemoryStore
from signatures.retry import LLMProviderError
from tests.memfuse.test_cli_faults import DROP_ROOT_OVERRIDE
from tests.support.fake_openai import Fail, FakeOpenAI, start_fake_openai
from tests.support.langgraph_server import LangGraphDev, langgraph_dev

OFFLINE = {"policy": "offline"}
NO_LLM = (
    "policy 'llm' needs an LLM model: set MEMFUSE_LLM_MODEL (or the run context's llm_model) "
    "or inject an LM"
)


@dataclass
class Served:
    """The module's server, the fake embedding endpoint, a fake LLM endpoint that refuses every
    request, and the command prefix the server runs under."""

    server: LangGraphDev
    fake: FakeOpenAI
    refusing: FakeOpenAI
    prefix: list[str] = field(default_factory=list)
    held: list[WriterLock] = field(default_factory=list)  # writer locks a case holds

    def client(self) -> Any:
        return self.server.client()

    def embedding(self) -> EmbeddingConfig:
        return EmbeddingConfig(
            provider="openai", model="fake-embedder", base_url=self.fake.base_url
        )


def _server_prefix() -> list[str]:
    """As root, setpriv without CAP_DAC_OVERRIDE where it works, so that file modes hold for
    the server as for anyone; nothing otherwise (then the read-only cases skip)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return []
    probe = subprocess.run([*DROP_ROOT_OVERRIDE, "true"], capture_output=True, check=False)
    return list(DROP_ROOT_OVERRIDE) if probe.returncode == 0 else []


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("served-errors")
    prefix = _server_prefix()
    refuse = Fail(400, "the model refuses")
    with start_fake_openai() as fake, start_fake_openai(lambda body: refuse) as refusing:
        dotenv = {
            "MEMFUSE_DATA_DIR": str(root / "data"),
            "MEMFUSE_EMBEDDING_PROVIDER": "openai",
            "MEMFUSE_EMBEDDING_MODEL": "fake-embedder",
            "MEMFUSE_EMBEDDING_BASE_URL": fake.base_url,
            "MEMFUSE_SERVED_WRITE_WAIT_SECONDS": "1",
        }
        with langgraph_dev(root / "server", dotenv, prefix=prefix) as server:
            yield Served(server, fake, refusing, prefix)


# --- the failing requests ---------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One run a client asks for, and the error the server must answer it with."""

    graph: str
    input: dict[str, Any]
    context: dict[str, Any]
    expected: MemFuseError


Setup = Callable[[Served, Path], Request]


def _event(
    event_id: str, description: str = "the cat sat on the mat", **fields: Any
) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "timestamp": "2026-05-01T08:00:00",
        "device": "cam_kitchen",
        "modality": "vision",
        "location": "kitchen",
        "description": description,
        **fields,
    }


def client_sees(error: MemFuseError) -> dict[str, str]:
    """What the client must read for `error`: its type name and its message, unchanged."""
    return {"error": type(error).__name__, "message": str(error)}


def _ask(question: str, **extra: Any) -> dict[str, Any]:
    return {"question": question, "question_time": "2026-05-14T20:00:00", **extra}


def _store_with_one_event(served: Served, data_dir: Path) -> None:
    """A data dir with a store in it (the server's embedding settings), made beside the server."""
    store = MemoryStore.open(data_dir, embedding=served.embedding())
    try:
        store.add_events([parse_event(_event("e1"))])
    finally:
        store.close()


def _read_only(served: Served, data_dir: Path) -> None:
    """Make `data_dir` and its files read-only for the server, or skip where it cannot be."""
    for path in [data_dir, *data_dir.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    probe = subprocess.run([*served.prefix, "test", "-w", str(data_dir)], check=False)
    if probe.returncode != 1:
        pytest.skip("running as root, and CAP_DAC_OVERRIDE cannot be dropped here (setpriv)")


def empty_question(served: Served, tmp: Path) -> Request:
    return Request(
        "retrieval", _ask("   ", admin=True), OFFLINE, InvalidQueryError("the question is empty")
    )


def nobody_asks(served: Served, tmp: Path) -> Request:
    return Request(
        "retrieval", _ask("why was Tom limping?"), OFFLINE, InvalidQueryError(NO_REQUESTER)
    )


def answer_empty_question(served: Served, tmp: Path) -> Request:
    return Request(
        "answer", _ask("", requester="Anna"), OFFLINE, InvalidQueryError("the question is empty")
    )


def unknown_recipe(served: Served, tmp: Path) -> Request:
    return Request(
        "retrieval",
        _ask("why?", admin=True),
        {**OFFLINE, "recipe": "bogus"},
        UnknownRecipeError("bogus", sorted(RECIPES)),
    )


def zero_k(served: Served, tmp: Path) -> Request:
    return Request(
        "retrieval",
        _ask("why?", admin=True),
        {**OFFLINE, "k": 0},
        ConfigurationError("k must be at least 1, got 0"),
    )


def llm_policy_without_llm(served: Served, tmp: Path) -> Request:
    context = {"policy": "llm", "data_dir": str(tmp / "data")}
    return Request("fusion", {"event": _event("p1")}, context, ConfigurationError(NO_LLM))


def synthesis_of_a_week_the_twins_cannot_write(served: Served, tmp: Path) -> Request:
    """Offline the procedural stages draft (no LLM is configured): they write one week."""
    expected = ConfigurationError(
        "the procedural generator writes the 7 days from 2026-05-11, got 3 days from 2026-05-11"
    )
    return Request("synthesis", {"days": 3}, OFFLINE, expected)


def bad_timestamp(served: Served, tmp: Path) -> Request:
    context = {**OFFLINE, "data_dir": str(tmp / "data")}
    expected = InvalidEventError("t1", "timestamp", "unparseable timestamp 'yesterday'")
    return Request("fusion", {"event": _event("t1", timestamp="yesterday")}, context, expected)


def no_event(served: Served, tmp: Path) -> Request:
    context = {**OFFLINE, "data_dir": str(tmp / "data")}
    expected = InvalidEventError(None, "event", "missing: the input needs an event record")
    return Request("fusion", {}, context, expected)


def conflicting_event(served: Served, tmp: Path) -> Request:
    context = {**OFFLINE, "data_dir": str(tmp / "data")}
    first = served.client().runs.wait(
        None, "fusion", input={"event": _event("c1")}, context=context
    )
    assert first["outcome"] == "committed", first
    changed = {"event": _event("c1", "the dog sat on the mat")}
    return Request("fusion", changed, context, EventConflictError("c1", ["description"]))


def data_dir_is_a_file(served: Served, tmp: Path) -> Request:
    path = tmp / "not-a-dir"
    path.write_text("a file\n")
    expected = DataDirError(
        path, "not a directory", f"data dir {path} is a file, not a directory; point it at a folder"
    )
    return Request("fusion", {"event": _event("f1")}, {**OFFLINE, "data_dir": str(path)}, expected)


def damaged_store(served: Served, tmp: Path) -> Request:
    data_dir = tmp / "damaged"
    data_dir.mkdir()
    (data_dir / "default.sqlite").write_bytes(b"not a database, only garbage\n" * 200)
    expected = DamagedFileError(
        data_dir / "default.sqlite", "file is not a database", STORE_RECOVERY
    )
    context = {**OFFLINE, "data_dir": str(data_dir)}
    return Request("retrieval", _ask("why?", admin=True), context, expected)


def admin_read_unrecorded(served: Served, tmp: Path) -> Request:
    data_dir = tmp / "read-only"
    _store_with_one_event(served, data_dir)
    _read_only(served, data_dir)
    expected = PermissionDeniedError(
        "graph:retrieval: admin reads are recorded in the audit log, which is read-only here"
    )
    context = {**OFFLINE, "data_dir": str(data_dir)}
    return Request("retrieval", _ask("why?", admin=True), context, expected)


def write_to_read_only(served: Served, tmp: Path) -> Request:
    data_dir = tmp / "read-only"
    _store_with_one_event(served, data_dir)
    _read_only(served, data_dir)
    context = {**OFFLINE, "data_dir": str(data_dir)}
    expected = ReadOnlyDataDirError(data_dir / "default.sqlite")
    return Request("fusion", {"event": _event("w1")}, context, expected)


def writer_busy(served: Served, tmp: Path) -> Request:
    """A served write waits for the writer lock another writer holds (here this test, as a CLI
    ingest would), then says who holds it; nothing is written meanwhile."""
    data_dir = tmp / "busy"
    _store_with_one_event(served, data_dir)
    lock = backend_for(None, data_dir).writer_lock("default")
    holder = lock.acquire()  # released with the process
    served.held.append(holder)
    context = {**OFFLINE, "data_dir": str(data_dir)}
    expected = DataDirBusyError(str(data_dir), f"pid {os.getpid()}", 1.0)
    return Request("fusion", {"event": _event("b1")}, context, expected)


class LMInvalidRequestError(Exception):
    """Stands for the error DSPy raises on a refused request: its name is in the message."""


def refusing_llm(served: Served, tmp: Path) -> Request:
    context = {
        "policy": "llm",
        "data_dir": str(tmp / "data"),
        "llm_model": "fake-model",
        "llm_base_url": served.refusing.base_url,
    }
    cause = LMInvalidRequestError("[openai/fake-model] the model refuses")
    return Request(
        "fusion", {"event": _event("l1")}, context, LLMProviderError("decision LM", 1, cause)
    )


CASES: list[Setup] = [
    empty_question,
    nobody_asks,
    answer_empty_question,
    unknown_recipe,
    zero_k,
    llm_policy_without_llm,
    synthesis_of_a_week_the_twins_cannot_write,
    bad_timestamp,
    no_event,
    conflicting_event,
    data_dir_is_a_file,
    damaged_store,
    admin_read_unrecorded,
    write_to_read_only,
    writer_busy,
    refusing_llm,
]


@pytest.mark.server
@pytest.mark.parametrize("setup", CASES, ids=[case.__name__ for case in CASES])
def test_a_memfuse_error_reaches_the_client_with_its_message(
    served: Served, tmp_path: Path, setup: Setup
) -> None:
    """Each failing request, as a client sends it: the run's error is the type and the message
    the server raised, not "An internal error occurred" (all a client got before)."""
    request = setup(served, tmp_path)
    out = served.client().runs.wait(
        None, request.graph, input=request.input, context=request.context, raise_error=False
    )
    try:
        assert out == {"__error__": client_sees(request.expected)}
        assert "\n" not in out["__error__"]["message"]
    finally:
        while served.held:
            served.held.pop().release()


@pytest.mark.server
def test_every_way_a_client_reads_a_run_shows_the_message(served: Served) -> None:
    """The run's result (wait, join), the SDK's exception, the thread's error and a stream's
    error event all carry the same type and message."""
    client = served.client()
    expected = {"error": "InvalidQueryError", "message": "invalid query: the question is empty"}
    request = {"input": _ask("", admin=True), "context": OFFLINE}
    with pytest.raises(Exception) as raised:
        client.runs.wait(None, "retrieval", **request)
    assert str(raised.value) == f"{expected['error']}: {expected['message']}"

    thread = client.threads.create()["thread_id"]
    run = client.runs.create(thread, "retrieval", **request)
    assert client.runs.join(thread, run["run_id"]) == {"__error__": expected}
    assert client.runs.get(thread, run["run_id"])["status"] == "error"
    state = client.threads.get(thread)
    assert (state["status"], state["error"]) == ("error", expected)

    streamed = [p.data for p in client.runs.stream(None, "retrieval", **request)]
    assert expected in streamed


# --- the hook itself, in the server's serializer ----------------------------------------------


def test_other_errors_keep_the_servers_treatment() -> None:
    """Only MemFuse errors are shown: any other exception's text may hold what a client should
    not see (a path, a key), so it stays "An internal error occurred", as the server has it."""
    serde = pytest.importorskip("langgraph_api.serde")
    import graphs.served

    assert graphs.served.install()
    assert json.loads(serde.json_dumpb(OSError("/secret/key: denied"))) == {
        "error": "OSError",
        "message": "An internal error occurred",
    }
    assert json.loads(serde.json_dumpb(InvalidQueryError("the question is empty"))) == {
        "error": "InvalidQueryError",
        "message": "invalid query: the question is empty",
    }
    wrapped = serde.default
    assert graphs.served.install() and serde.default is wrapped  # loaded twice, wrapped once


@pytest.mark.server
def test_a_served_write_waits_its_turn_and_writes_once_the_lock_is_free(
    served: Served, tmp_path: Path
) -> None:
    """While another writer holds the lock, a served write adds nothing; once it is free, the
    same request commits (the served fusion graph is a writer like any other)."""
    data_dir = tmp_path / "turns"
    _store_with_one_event(served, data_dir)
    request = {"input": {"event": _event("b1")}, "context": {**OFFLINE, "data_dir": str(data_dir)}}
    client = served.client()
    with backend_for(None, data_dir).writer_lock("default"):
        busy = client.runs.wait(None, "fusion", raise_error=False, **request)
        assert busy["__error__"]["error"] == "DataDirBusyError"
    store = MemoryStore.open(data_dir, embedding=served.embedding())
    try:
        assert not store.has_node("b1")
    finally:
        store.close()
    done = client.runs.wait(None, "fusion", **request)
    assert done["outcome"] == "committed"
