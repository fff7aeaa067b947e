from __future__ import annotations

import math

import pytest

from memory.fusion.rarity import DocumentFrequency, content_tokens, frequencies_for

from .scenario import E1, E2, E3, E4, E5, E6, E7, fake_store, make_event


def test_content_tokens_drop_names_and_device_words() -> None:
    # "Emma wiped the table with a towel" on cam_kitchen, people Emma and David
    assert content_tokens(E4) == {"wip", "tabl", "towel"}


def test_shared_rarity_by_hand() -> None:
    filler = [
        make_event(f"f{i}", "07:00", "phone", f"battery {i} percent, signal bars", ["Zoe"])
        for i in range(8)
    ]
    fever = make_event("a", "08:00", "speaker", "thermometer beeps 38.9 battery", ["Raj"])
    note = make_event("b", "08:05", "phone", "Raj reads the thermometer: 38.9 battery", ["Raj"])
    table = DocumentFrequency([*filler, fever, note])
    assert table.documents == 10
    # shared: thermometer (df 2), 38.9 (df 2), battery (df 10, not rare: limit max(0.2, 3) = 3)
    expected = 2 * math.log(11 / 2)
    got = table.shared_rarity(content_tokens(fever), content_tokens(note), 0.02, 3)
    assert got == pytest.approx(expected)
    table.add(note)  # counted once only
    assert table.documents == 10 and table.df["thermometer"] == 2


def test_store_table_is_built_once_and_grows() -> None:
    store = fake_store()
    store.add_events([E1, E2, E3])
    table = frequencies_for(store)
    assert table.documents == 3 and frequencies_for(store) is table
    store.add_events([E4, E5, E6, E7])
    table.add(E4)
    assert table.documents == 4 and table.df["towel"] == 1


def test_the_token_cache_keeps_the_most_recent_events_and_answers_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("memory.fusion.rarity.TOKEN_CACHE", 4)
    table = DocumentFrequency()
    events = [
        make_event(f"t{i}", "07:00", "phone", f"kettle {i} boiled, note {i % 3}", ["Zoe"])
        for i in range(10)
    ]
    for event in events:
        table.add(event)
    assert list(table._tokens) == ["t6", "t7", "t8", "t9"]  # bounded, the oldest left first
    assert table.documents == 10  # the counts keep every event
    for event in events:  # an evicted event is tokenized again, to the same tokens
        assert table.tokens(event) == frozenset(content_tokens(event))
    assert len(table._tokens) == 4
