"""The process's shared stores: a store a graph run opens is kept for the life of the process,
so it is settled once (`memory.heap`), and closing the shared stores hands it back."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphs import resources
from graphs.resources import close_stores, shared_store
from memory import heap
from memory.settings import load_settings


def test_a_served_store_is_settled_once_and_thawed_when_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settled: list[int] = []
    real = heap.settle

    def counted() -> None:
        settled.append(1)
        real()

    monkeypatch.setattr(resources.heap, "settle", counted)
    settings = load_settings(embedding_provider="hashing")
    heap.thaw()
    try:
        first = shared_store(tmp_path, "default", settings)
        assert settled == [1] and heap.frozen() > 0
        assert shared_store(tmp_path, "default", settings) is first and settled == [1]
    finally:
        close_stores()
    assert heap.frozen() == 0
