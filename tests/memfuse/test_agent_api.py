"""The calls agent builders expect: add (free text too), search, get, get_all, delete, history,
reset — each with the same validation, visibility and audit as the rest of MemFuse."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memfuse.api import MemFuse
from memfuse.settings import load_settings
from memory.errors import MemFuseError, NodeNotFoundError
from memory.models import Event, Modality
from memory.selection import EventFilter

T0 = datetime(2026, 5, 20, 9, 0, 0)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemFuse]:
    with MemFuse.open(tmp_path, settings=load_settings(data_dir=tmp_path, user=None)) as opened:
        yield opened


def test_free_text_becomes_an_owned_private_event(memory: MemFuse) -> None:
    result = memory.add("I left the passport in the desk drawer", user="Anna", time=T0)
    (node_id,) = result.ids
    assert result.added == [node_id] and result.unchanged == []
    record = memory.get(node_id, user="Anna")
    assert record is not None
    event = record.event
    assert (event.device, event.owner, event.modality) == ("user:Anna", "Anna", Modality.DIALOGUE)
    assert (event.timestamp, event.characters) == (T0, ("Anna",))
    assert record.visibility == "private:Anna"
    assert memory.get(node_id, user="Tom") is None  # as if it did not exist
    assert [e.actor for e in memory.audit.entries() if e.op == "ingest"] == ["Anna"]


def test_the_same_note_twice_is_stored_once(memory: MemFuse) -> None:
    first = memory.add("the bins go out on Tuesday", user="Anna", time=T0)
    again = memory.add("the bins go out on Tuesday", user="Anna", time=T0)
    assert again.ids == first.ids and again.added == [] and again.unchanged == first.ids
    assert memory.stats().events == 1


def test_an_agent_note_a_list_and_an_event_are_all_added(memory: MemFuse) -> None:
    agent = memory.add("the user prefers short answers", agent="planner", time=T0)
    record = memory.get(agent.ids[0], user="planner")
    assert record is not None and record.event.device == "agent:planner"
    assert record.event.metadata["agent"] == "planner"
    event = Event(
        event_id="cam_1",
        timestamp=T0,
        device="cam_hall",
        modality=Modality.VISION,
        description="a parcel left at the door",
    )
    both = memory.add(["note one", event], user="Tom", time=T0)
    assert len(both.ids) == 2 and "cam_1" in both.ids and both.summary.added == 2


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda m: m.add("no owner", time=T0), "say whose note this is"),
        (lambda m: m.add("   ", user="Anna"), "non-empty text"),
        (lambda m: m.add([], user="Anna"), "nothing to add"),
        (lambda m: m.add(42, user="Anna"), "not int"),
        (lambda m: m.add("x", user="Anna", visibility="secret"), "visibility"),
        (lambda m: m.add("bad\x07bell", user="Anna"), "control"),
        (
            lambda m: m.add(
                [
                    "fine",
                    {
                        "event_id": "e1",
                        "timestamp": "2026-05-20T09:00:00",
                        "device": "d",
                        "modality": "audio",
                        "description": "x",
                    },
                ],
                user="Anna",
                location="kitchen",
            ),
            "describe free text",
        ),
    ],
)
def test_bad_adds_are_one_line_errors_and_write_nothing(
    memory: MemFuse, call: object, needle: str
) -> None:
    with pytest.raises(MemFuseError, match=needle) as raised:
        call(memory)  # type: ignore[operator]
    assert "\n" not in str(raised.value)
    assert memory.stats().events == 0 and memory.audit.entries() == []


def test_search_returns_result_objects_as_of_its_time(memory: MemFuse) -> None:
    added = memory.add("the plumber comes on Friday at ten", user="Anna", time=T0)
    found = memory.search("when does the plumber come", user="Anna", k=5, time=T0)
    assert found.context[0].node_id == added.ids[0] and found.rounds >= 1
    before = memory.search("plumber", user="Anna", k=5, time=T0 - timedelta(minutes=1))
    assert before.context == []  # asked before it was said
    assert memory.search("plumber", user="Tom", k=5, time=T0).context == []


def test_get_all_lists_what_the_reader_may_see(memory: MemFuse) -> None:
    anna = memory.add("Anna's note", user="Anna", time=T0).ids[0]
    tom = memory.add("Tom's note", user="Tom", time=T0 + timedelta(seconds=1)).ids[0]
    shared = memory.add("a household note", user="Tom", visibility="household", time=T0).ids[0]
    assert {r.event.event_id for r in memory.get_all(user="Anna")} == {anna, shared}
    assert {r.event.event_id for r in memory.get_all(user="Tom", since=T0)} == {tom, shared}
    assert [r.event.event_id for r in memory.get_all(user="Tom", device="user:Tom")] == [
        shared,
        tom,
    ]


def test_delete_forgets_what_the_reader_may_change_and_nothing_on_a_bad_id(
    memory: MemFuse,
) -> None:
    anna = memory.add("Anna's secret", user="Anna", time=T0).ids[0]
    shared = memory.add("the wifi password is on the fridge", user="Anna", time=T0)
    memory.set_visibility(shared.ids, "household", user="Anna")
    with pytest.raises(NodeNotFoundError):
        memory.delete(anna, user="Tom")  # not hers to see, so not hers to delete
    with pytest.raises(NodeNotFoundError):
        memory.delete([shared.ids[0], "no_such_id"], user="Tom")
    assert memory.stats().events == 2  # a typo forgot nothing
    report = memory.delete(EventFilter(person="Anna", visibility="private:Anna"), user="Anna")
    assert report.event_ids == [anna]
    assert memory.get(anna, user="Anna") is None
    assert memory.delete(shared.ids[0], user="Tom").event_ids == shared.ids
    assert [e.op for e in memory.history(anna, admin=True, user="Anna")][-1] != "ingest"


def test_reset_is_admin_only_forgets_everything_and_is_on_record(memory: MemFuse) -> None:
    memory.add("one", user="Anna", time=T0)
    memory.add("two", user="Tom", time=T0)
    with pytest.raises(MemFuseError, match="needs --admin"):
        memory.reset(user="Anna")
    assert memory.stats().events == 2
    report = memory.reset(user="Anna", admin=True)
    assert len(report.event_ids) == 2 and memory.stats().events == 0
    last = memory.audit.entries()[-1]
    assert (last.op, last.actor, last.details.get("via")) == ("forget", "Anna", "reset")
    assert memory.verify_audit().ok


def test_memfuse_with_no_arguments_opens_the_settings_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMFUSE_DATA_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("MEMFUSE_USER", "Anna")
    memory = MemFuse()
    try:
        memory.add("hello", time=T0)
        assert memory.get_all()[0].event.owner == "Anna"
    finally:
        memory.close()
    assert (tmp_path / "mine" / "default.sqlite").is_file()
    with MemFuse(data_dir=tmp_path / "mine") as again:
        assert again.stats().events == 1


def test_the_retriever_and_tools_read_as_their_user(memory: MemFuse) -> None:
    note = memory.add("the dog's vaccination is due in June", user="Anna", time=T0).ids[0]
    documents = memory.as_retriever(user="Anna", k=3).invoke("when is the dog vaccinated")
    first = documents[0]
    assert first.metadata["id"] == note and first.metadata["device"] == "user:Anna"
    assert "vaccination" in first.page_content and first.metadata["provenance"]
    assert memory.as_retriever(user="Tom", k=3).invoke("dog vaccination") == []
    answer = memory.as_tool(user="Anna").invoke({"query": "dog vaccination"})
    assert answer.splitlines()[0].startswith(f"{note}: ")
    assert memory.as_tool(user="Tom").invoke({"query": "dog vaccination"}) == "no memories found"
    said = memory.as_tool("add", user="Tom").invoke({"text": "Tom walks the dog at seven"})
    (added,) = memory.get_all(user="Tom")
    assert said == f"remembered as {added.event.event_id}" and added.event.owner == "Tom"
