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
