"""The governance commands as a user runs them: a household whose policy file makes Tom's
watch his own, read as Anna and as Tom, one visibility change, a forget, the history and
the audit log of all of it, an export read back into a second data dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.memfuse.test_cli import SAMPLE, memfuse

POLICY = {"rules": [{"device": "watch_tom", "visibility": "private:Tom"}]}


@pytest.fixture(scope="module")
def household(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("governed")
    (data_dir / "visibility.json").write_text(json.dumps(POLICY))
    memfuse("ingest", str(SAMPLE), "--mode", "plain", data_dir=data_dir)
    return data_dir


def _events(data_dir: Path, *who: str) -> list[dict[str, object]]:
    out = memfuse("events", "--json", *who, data_dir=data_dir).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _ids(rows: list[dict[str, object]]) -> set[str]:
    return {row["event"]["event_id"] for row in rows}  # type: ignore[index]


def test_each_person_lists_and_finds_only_what_they_may_see(household: Path) -> None:
    everything = _events(household, "--admin")
    toms = {r["event"]["event_id"] for r in everything if r["visibility"] == "private:Tom"}  # type: ignore[index]
    assert len(everything) == 30 and toms
    assert not toms & _ids(_events(household, "--user", "Anna"))
    assert toms <= _ids(_events(household, "--user", "Tom"))

    found = memfuse("search", "Tom sleep watch", "--user", "Anna", "--json", data_dir=household)
    ids = {json.loads(line).get("node_id") for line in found.stdout.splitlines()}
    assert ids and not ids & toms
    hidden = memfuse("show", min(toms), "--user", "Anna", data_dir=household, check=False)
    assert hidden.returncode == 1 and "not found" in hidden.stderr
    assert "private:Tom" in memfuse("show", min(toms), "--user", "Tom", data_dir=household).stdout


def test_a_read_must_say_who_asks(household: Path) -> None:
    result = memfuse("search", "sleep", data_dir=household, check=False)
    assert result.returncode == 1 and "say who asks" in result.stderr
    missing = memfuse("stats", data_dir=household / "nowhere", check=False)
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    stats = memfuse("stats", data_dir=household).stdout
    assert "namespace" in stats and "default" in stats and str(household) in stats


def test_visibility_forget_history_and_audit(household: Path, tmp_path: Path) -> None:
    memfuse("visibility", "h_001", "--set", "household", "--user", "Tom", data_dir=household)
    assert "h_001" in _ids(_events(household, "--user", "Anna"))

    nothing = memfuse("forget", data_dir=household, check=False)
    assert nothing.returncode == 2 and "needs a selector" in nothing.stderr  # a usage error
    dry = memfuse(
        "forget", "--device", "watch_tom", "--dry-run", "--user", "Tom", data_dir=household
    ).stdout
    assert "would forget" in dry and "h_001" in dry
    assert "h_001" in _ids(_events(household, "--admin"))  # a dry run changes nothing
    done = memfuse("forget", "--device", "watch_tom", "--user", "Tom", data_dir=household).stdout
    assert "forgot" in done
    assert not {i for i in _ids(_events(household, "--admin")) if i == "h_001"}

    gone = memfuse("history", "h_001", "--user", "Tom", data_dir=household, check=False)
    assert gone.returncode == 1 and "not found" in gone.stderr  # forgotten: only an admin finds it
    history = memfuse("history", "h_001", "--json", "--admin", data_dir=household).stdout
    ops = [json.loads(line)["op"] for line in history.splitlines()]
    assert ops == ["ingest", "visibility", "forget"]
    assert "h_001" not in history  # redacted: found by its digest
    assert "verified" in memfuse("audit", "--verify", data_dir=household).stdout

    export = tmp_path / "backup.jsonl"
    memfuse("export", str(export), "--admin", data_dir=household)
    copy = tmp_path / "copy"
    memfuse("ingest", str(export), data_dir=copy)
    assert _events(copy, "--admin") == _events(household, "--admin")

    log = household / "default.audit.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    lines[2], lines[3] = lines[3], lines[2]
    log.write_text("".join(lines))
    broken = memfuse("audit", "--verify", data_dir=household, check=False)
    assert broken.returncode == 1 and "failed verification" in broken.stderr

    # the log and its .head both deleted: the store's anchor still says what was there
    log.unlink()
    log.with_name(log.name + ".head").unlink()
    deleted = memfuse("audit", "--verify", data_dir=household, check=False)
    assert deleted.returncode == 1 and "the log was deleted or cut" in deleted.stderr


def test_reset_needs_admin_and_yes_then_forgets_the_namespace_on_record(tmp_path: Path) -> None:
    memfuse("ingest", str(SAMPLE), "--mode", "plain", data_dir=tmp_path)
    unconfirmed = memfuse("reset", "--admin", data_dir=tmp_path, check=False)
    assert unconfirmed.returncode == 2 and "--yes" in unconfirmed.stderr
    as_user = memfuse("reset", "--yes", "--user", "Anna", data_dir=tmp_path, check=False)
    assert as_user.returncode == 1 and "needs --admin" in as_user.stderr
    assert len(_events(tmp_path, "--admin")) == 30
    done = memfuse("reset", "--yes", "--admin", "--user", "Anna", data_dir=tmp_path)
    assert "forgot 30 event(s)" in done.stdout
    assert _events(tmp_path, "--admin") == []
    log = memfuse("audit", "--json", "--admin", "--user", "Anna", data_dir=tmp_path).stdout
    entries = [json.loads(line) for line in log.splitlines() if line.strip()]
    forgets = [e for e in entries if e["op"] == "forget"]
    assert len(forgets) == 1 and forgets[0]["details"]["via"] == "reset"
    assert forgets[0]["counts"]["events"] == 30
    assert "chain intact" in memfuse("audit", "--verify", data_dir=tmp_path).stdout
