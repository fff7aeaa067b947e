"""Who may change memory: every person × every write (and privileged read) × every other
person's private event is refused, the store and the log unchanged; the owner and an admin
may; `--admin` can be limited to named people; the CLI says it in one line."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memfuse.api import MemFuse
from memfuse.settings import load_settings
from memory.errors import MemFuseError, NodeNotFoundError, PermissionDeniedError
from memory.selection import EventFilter
from memory.store import MemoryStore
from tests.support.embedders import HashEmbedder

PEOPLE = ("Anna", "Tom", "Maya")
DENIED = (NodeNotFoundError, PermissionDeniedError)


def _events() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for n, person in enumerate(PEOPLE):
        for i in range(2):
            rows.append(
                {
                    "event_id": f"{person.lower()}_{i}",
                    "timestamp": f"2026-05-0{n + 1}T0{i + 8}:00:00",
                    "device": f"phone_{person.lower()}",
                    "modality": "app_usage",
                    "location": "home",
                    "description": f"{person} wrote private note {i}",
                    "owner": person,
                }
            )
    rows.append(
        {
            "event_id": "shared_0",
            "timestamp": "2026-05-04T09:00:00",
            "device": "speaker_kitchen",
            "modality": "audio",
            "location": "kitchen",
            "description": "the kitchen speaker played the news",
        }
    )
    return rows


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemFuse]:
    store = MemoryStore.open(tmp_path, embedder=HashEmbedder())
    mem = MemFuse(store, load_settings(data_dir=tmp_path, user=None))
    mem.ingest(_events(), mode="plain", user="setup")
    yield mem
    mem.close()


def _state(memory: MemFuse) -> tuple[dict[str, str], list[str], str]:
    events = sorted(e.event_id for e in memory.store.all_events())
    return memory.store.visibilities(), events, memory.audit.path.read_text()


def _writes(target: str) -> dict[str, Callable[[MemFuse, str], object]]:
    """Every operation that changes memory or reads beyond the requester's view."""
    return {
        "visibility": lambda m, who: m.set_visibility([target], "household", user=who),
        "visibility_to_self": lambda m, who: m.set_visibility([target], f"private:{who}", user=who),
        "forget": lambda m, who: m.forget(EventFilter(event_ids=[target]), user=who),
        "forget_dry_run": lambda m, who: m.forget(
            EventFilter(event_ids=[target]), dry_run=True, user=who
        ),
        "forget_by_device": lambda m, who: m.forget(
            EventFilter(device=m.store.get_event(target).device), user=who
        ),
        "history": lambda m, who: m.history(target, user=who),
        "show": lambda m, who: m.show(target, user=who),
        "audit": lambda m, who: m.audit_entries(user=who),
    }


def test_no_person_may_change_or_look_into_another_persons_private_events(
    memory: MemFuse,
) -> None:
    attempts = allowed = 0
    for owner in PEOPLE:
        for target in (f"{owner.lower()}_0", f"{owner.lower()}_1"):
            for other in (p for p in PEOPLE if p != owner):
                for name, write in _writes(target).items():
                    before = _state(memory)
                    attempts += 1
                    try:
                        result = write(memory, other)
                    except DENIED:
                        result = None
                    # a selector picks among what `other` may see: it finds nothing here
                    selected_nothing = getattr(result, "event_ids", None) == []
                    if result is not None and not selected_nothing:
                        allowed += 1
                    assert _state(memory) == before, (other, name, target)
    print(f"write-permission matrix: {attempts} attempts, {allowed} allowed")
    assert attempts == len(PEOPLE) * 2 * (len(PEOPLE) - 1) * len(_writes("x"))
    assert allowed == 0


def test_an_unknown_id_and_another_persons_private_id_answer_alike(memory: MemFuse) -> None:
    with pytest.raises(NodeNotFoundError) as hidden:
        memory.set_visibility(["anna_0"], "household", user="Tom")
    with pytest.raises(NodeNotFoundError) as missing:
        memory.set_visibility(["no_such_event"], "household", user="Tom")
    assert str(hidden.value).replace("anna_0", "X") == str(missing.value).replace(
        "no_such_event", "X"
    )


def test_the_owner_a_household_member_and_an_admin_may(memory: MemFuse) -> None:
    assert memory.set_visibility(["anna_0"], "people:Anna,Tom", user="Anna") == ["anna_0"]
    # Tom is now in its audience, so he may change it (the rule: what you may see)
    assert memory.set_visibility(["anna_0"], "household", user="Tom") == ["anna_0"]
    assert memory.set_visibility(["shared_0"], "private:Maya", user="Maya") == ["shared_0"]
    assert memory.set_visibility(["tom_1"], "household", admin=True) == ["tom_1"]
    report = memory.forget(EventFilter(event_ids=["maya_1"]), user="Maya")
    assert report.event_ids == ["maya_1"]
    entries = memory.audit.entries(op="visibility")
    assert [e.details.get("admin") for e in entries] == [False, False, False, True]
    assert [e.actor for e in entries[:3]] == ["Anna", "Tom", "Maya"]


def test_a_change_without_anyone_named_is_refused(memory: MemFuse) -> None:
    before = _state(memory)
    with pytest.raises(MemFuseError, match="^say who does this"):
        memory.set_visibility(["shared_0"], "household")
    with pytest.raises(MemFuseError, match="^say who does this"):
        memory.forget(EventFilter(event_ids=["shared_0"]))
    assert _state(memory) == before


def test_the_policy_file_limits_admin_to_named_people(memory: MemFuse, tmp_path: Path) -> None:
    (tmp_path / "visibility.json").write_text(json.dumps({"admins": ["Anna"]}))
    before = _state(memory)
    for who in ("Tom", None):
        with pytest.raises(PermissionDeniedError, match="limits admin to Anna"):
            memory.set_visibility(["tom_0"], "household", user=who, admin=True)
        with pytest.raises(PermissionDeniedError, match="limits admin to Anna"):
            memory.events(user=who, admin=True)
    assert _state(memory) == before
    assert memory.set_visibility(["tom_0"], "household", user="anna", admin=True) == ["tom_0"]


def test_cli_refuses_in_one_line(tmp_path: Path) -> None:
    from tests.memfuse.test_cli_faults import fault_line, memfuse

    data = tmp_path / "data"
    source = tmp_path / "events.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in _events()))
    env = {"MEMFUSE_EMBEDDING_PROVIDER": "hashing"}
    ingest = memfuse("ingest", str(source), "--mode", "plain", "--data-dir", str(data), env=env)
    assert ingest.returncode == 0, ingest.stderr
    log = (data / "default.audit.jsonl").read_text()
    cases = {
        ("visibility", "anna_0", "--set", "household", "--user", "Tom"): "not found",
        ("forget", "anna_0", "--user", "Tom"): "not found",
        ("history", "anna_0", "--user", "Tom"): "anna_0",
        ("audit", "--user", "Tom"): "not allowed: the audit log lists every person's ids",
        ("show", "anna_0", "--user", "Tom"): "anna_0",
        ("visibility", "shared_0", "--set", "household"): "say who does this",
    }
    for args, expected in cases.items():
        line = fault_line(memfuse(*args, "--data-dir", str(data), env=env))
        assert expected in line, (args, line)
    assert (data / "default.audit.jsonl").read_text() == log  # nothing was recorded either
