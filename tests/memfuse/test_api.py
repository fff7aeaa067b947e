"""The MemFuse class: bad requests are one-line errors raised before anything runs or is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memfuse.api import MemFuse
from memfuse.settings import load_settings
from memory.errors import MemFuseError

SAMPLE = Path(__file__).resolve().parents[2] / "memfuse" / "samples" / "household.jsonl"


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Any:
    data_dir = tmp_path_factory.mktemp("api")
    with MemFuse.open(data_dir, None, settings=load_settings(data_dir=data_dir)) as opened:
        yield opened


def test_an_unknown_ingest_mode_writes_nothing(memory: MemFuse) -> None:
    records = [json.loads(line) for line in SAMPLE.read_text().splitlines()[:3]]
    with pytest.raises(MemFuseError, match="mode: expected 'fused' or 'plain'"):
        memory.ingest(records, mode="weird")  # type: ignore[arg-type]
    assert memory.stats().events == 0


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda m: m.search("", system="bm25"), "the query is empty"),
        (lambda m: m.search(None), "the query must be text"),
        (lambda m: m.search("milk", system="bm25", k=-1), "k must be"),
        (lambda m: m.search("milk", k=0), "k must be"),
        (lambda m: m.ask(""), "the question is empty"),
        (lambda m: m.ask("milk?", k=True), "k must be"),
    ],
)
def test_bad_requests_are_one_line_errors(memory: MemFuse, call: Any, needle: str) -> None:
    with pytest.raises(MemFuseError, match=needle) as raised:
        call(memory)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("call", ["search", "ask", "search_bm25"])
def test_a_read_is_checked_once_at_the_edge(
    memory: MemFuse, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    """The API checks the request; the graph below runs it as given, not checking it again."""
    from graphs.answer import run as answer_run
    from graphs.retrieval import nodes as retrieval_nodes
    from graphs.retrieval import run as retrieval_run
    from memfuse import api

    checks: list[str] = []
    for module in (api, retrieval_run, retrieval_nodes, answer_run):
        real = module.read_request

        def counted(*args: Any, _real: Any = real, _name: str = module.__name__, **kw: Any) -> Any:
            checks.append(_name)
            return _real(*args, **kw)

        monkeypatch.setattr(module, "read_request", counted)
    if call == "search":
        result: Any = memory.search("milk", user="Anna")
    elif call == "ask":
        result = memory.ask("milk?", user="Anna")
    else:
        result = memory.search("milk", system="bm25", user="Anna")
    assert checks == ["memfuse.api"]
    assert result.rounds >= 1
