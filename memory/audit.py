"""A hash-chained, append-only audit log: one entry per governance-relevant operation.

Ingest batches, fusion plans, forgets, visibility changes, admin reads and exports each leave
one JSON line in `<data_dir>/<namespace>.audit.jsonl`: time, actor, operation, counts, ids and
a few scalar details, never event text. Each entry's `hash` covers the previous one's, so
`verify` sees an edited, deleted, inserted or reordered line; a chain cannot see its last lines
cut off, so every append also replaces `<log>.head` (latest seq and hash). With no secret key
this shows edits; it cannot stop someone who rewrites the whole chain and its head.

Forgetting must leave no file holding a forgotten id, yet a chain cannot lose what it hashed.
So the hash skips `ids` and covers `id_digests` (salted sha256, the salt in the first,
"genesis" entry): `redact` nulls ids without breaking the chain, and `find` still matches a
redacted id by digest. Log a forget with its ids, then redact them; ids go in `ids`, never in
`details`, which nothing redacts. Writers take an exclusive `flock` on `<log>.lock` and re-read
the tail under it; a crash mid-append leaves an incomplete last line, which `verify` reports
and the next append cuts off (it never held a committed entry).

This module is the file: appending, locking, reading, redacting, verifying it. The entries,
their chain and the checks on them are `memory.audit_chain`, which the PostgreSQL log shares.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import IO, Any

from memory.audit_chain import (
    GENESIS_PREV,
    AuditEntry,
    VerifyReport,
    _BadLine,
    _draft,
    _fields,
    _is_int,
    _line,
    _parsed,
    _sealed,
    _utc,
    filter_entries,
    id_digest,
    walk_chain,
)
from memory.errors import DamagedFileError, DataDirError, storage_fault

# The log, and the entries it hands out (memory.audit_chain's), which its callers name from here.
__all__ = ["RECOVERY", "AuditEntry", "AuditLog", "AuditReadOnlyError", "VerifyReport"]

RECOVERY = (
    "run `memfuse audit --verify` to see what is wrong; the log is evidence, so MemFuse never "
    "rewrites a damaged one on its own"
)
_CHUNK = 64 * 1024


class AuditReadOnlyError(DataDirError, PermissionError):
    """A write was asked of an audit log opened with `read_only=True`."""

    def __init__(self, path: object):
        super().__init__(path, "read-only", f"audit log {path} is open read-only: nothing written")


def _tail(handle: IO[bytes]) -> tuple[int, bytes | None]:
    """(offset just past the last complete line, that line), read backwards from the end so an
    append costs the same on a log of any length; (0, None) if no line is complete."""
    pos = handle.seek(0, os.SEEK_END)
    buffer, end = b"", -1
    while pos > 0:
        step = min(_CHUNK, pos)
        pos -= step
        handle.seek(pos)
        buffer = handle.read(step) + buffer
        if end < 0 and (newline := buffer.rfind(b"\n")) >= 0:
            end = pos + newline + 1
        if end >= 0 and (start := buffer.rfind(b"\n", 0, end - pos - 1)) >= 0:
            return end, buffer[start + 1 : end - pos - 1]
    return (0, None) if end < 0 else (end, buffer[: end - 1])


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` whole: a crash leaves the old file or the new one, never a mix."""
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    _fsync_dir(path.parent)


class AuditLog:
    """One namespace's audit log, with its `.head` and `.lock` sidecars. `clock` is for tests.

    A store's own log comes from its backend (`Backend.audit_log`): this file beside a SQLite
    store, the same chain in the namespace's schema on PostgreSQL."""

    def __init__(
        self, path: Path, *, read_only: bool = False, clock: Callable[[], datetime] | None = None
    ):
        self.path = Path(path)
        self.read_only = read_only
        self.head_path = self.path.with_name(self.path.name + ".head")
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self._clock = clock or partial(datetime.now, UTC)

    def append(
        self,
        op: str,
        *,
        actor: str,
        counts: Mapping[str, int] | None = None,
        ids: Sequence[str] = (),
        details: Mapping[str, Any] | None = None,
    ) -> AuditEntry:
        args = {"actor": actor, "counts": counts, "ids": ids, "details": details}
        return self.append_many([(op, args)])[0]

    def append_many(self, entries: Sequence[tuple[str, dict[str, Any]]]) -> list[AuditEntry]:
        """Several entries in one locked write and one fsync (e.g. a batch of fusion plans);
        each is (op, append's keyword arguments). The genesis entry is written on the first."""
        if self.read_only:
            raise AuditReadOnlyError(self.path)
        drafts = [_draft(op, args) for op, args in entries]
        if not drafts:
            return []
        try:
            with self._locked(), open(self.path, "a+b") as log:
                made = self._append_locked(log, drafts)
                head = {"seq": made[-1].seq, "hash": made[-1].hash}  # after the log's fsync
                _atomic_write(self.head_path, json.dumps(head).encode())
        except OSError as exc:
            raise (storage_fault(exc, self.path) or exc) from exc
        return made[-len(drafts) :]

    def _append_locked(self, log: IO[bytes], drafts: list[AuditEntry]) -> list[AuditEntry]:
        end, last = _tail(log)  # under the lock: another process may have appended
        repaired = log.seek(0, os.SEEK_END) > end
        if repaired:
            log.truncate(end)
        time = _utc(self._clock()).strftime("%Y-%m-%dT%H:%M:%SZ")
        made: list[AuditEntry] = []
        if last is None:
            salt = secrets.token_hex(16)
            genesis = AuditEntry(
                0, "", drafts[0].actor, "genesis", {}, [], [], {"salt": salt, "format": 1}, "", ""
            )
            made.append(_sealed(0, time, genesis, salt, GENESIS_PREV))
        else:
            made.append(self._entry_or_damaged(last, "the last line"))
            salt = self._salt(log)
        for index, draft in enumerate(drafts):
            if index == 0 and repaired:
                draft = replace(draft, details={**draft.details, "repaired_tail": True})
            made.append(_sealed(made[-1].seq + 1, time, draft, salt, made[-1].hash))
        new = made if last is None else made[1:]
        log.write(b"".join(_line(_fields(entry)) for entry in new))
        log.flush()
        os.fsync(log.fileno())
        if last is None:
            _fsync_dir(self.path.parent)  # the log's own name must survive a crash too
        return new

    def _salt(self, log: IO[bytes]) -> str:
        log.seek(0)
        if not (first := log.readline()).endswith(b"\n"):
            raise LookupError(f"audit log {self.path} has no complete entry yet")
        genesis = self._entry_or_damaged(first, "line 1")
        if genesis.op != "genesis" or not isinstance(salt := genesis.details.get("salt"), str):
            raise DamagedFileError(self.path, "line 1 is not a genesis entry", RECOVERY)
        return salt

    def _entry_or_damaged(self, line: bytes, where: str) -> AuditEntry:
        try:
            return _parsed(line)
        except _BadLine as exc:
            raise DamagedFileError(self.path, f"{where} is not a valid entry: {exc}", RECOVERY)

    @contextmanager
    def _locked(self, exclusive: bool = True) -> Iterator[None]:
        """Exclusive for writers; shared for `verify`, so it never sees an append half done
        (log written, head not yet). A reader never creates the lock file: none, no writer."""
        if exclusive:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.lock_path.exists():
            yield
            return
        with open(self.lock_path, "a" if exclusive else "r") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield  # the OS drops the lock when its holder dies, even by kill -9

    def entries(
        self,
        *,
        op: str | None = None,
        actor: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        node_id: str | None = None,
    ) -> list[AuditEntry]:
        """Entries matching every filter given (`since`/`until` inclusive, naive = UTC); the
        genesis entry included. `node_id` matches digests, so a redacted id is still found.
        A complete line that is not an entry raises DamagedFileError: evidence is not skipped."""
        return filter_entries(self._all_entries(), op, actor, since, until, node_id)

    def _all_entries(self) -> list[AuditEntry]:
        """Every entry in log order, wherever the log keeps them (here: its file's lines)."""
        lines = (_read(self.path) or b"").split(b"\n")[:-1]  # an incomplete tail is no entry
        return [self._entry_or_damaged(line, f"line {n}") for n, line in enumerate(lines, 1)]

    def find(self, node_id: str) -> list[AuditEntry]:
        """Every entry naming `node_id` (an event or a fused node), redacted or not."""
        return self.entries(node_id=node_id)

    def digest(self, node_id: str) -> str:
        """`node_id`'s digest under this log's salt; LookupError if the log has no entry yet."""
        try:
            with open(self.path, "rb") as log:
                return id_digest(self._salt(log), node_id)
        except FileNotFoundError:
            raise LookupError(f"audit log {self.path} has no complete entry yet") from None

    def redact(self, ids: Iterable[str]) -> int:
        """Null every plaintext occurrence of `ids`, replacing the file whole and atomically;
        the chain stays valid since `ids` is unhashed. An incomplete tail is dropped too: it
        never held a committed entry, and may hold the ids. Returns the slots redacted."""
        if self.read_only:
            raise AuditReadOnlyError(self.path)
        targets = {node_id for node_id in ids if node_id}
        if not targets or not self.path.exists():
            return 0
        try:
            with self._locked():
                *complete, tail = self.path.read_bytes().split(b"\n")
                redacted = 0
                for index, line in enumerate(complete):
                    try:
                        raw = json.loads(line)
                        hits = sum(node_id in targets for node_id in raw["ids"])
                    except (ValueError, TypeError, KeyError):  # not an entry: never guess
                        if any(target.encode() in line for target in targets):
                            raise DamagedFileError(
                                self.path, f"line {index + 1} cannot be redacted", RECOVERY
                            ) from None
                        continue
                    if hits:
                        raw["ids"] = [None if i in targets else i for i in raw["ids"]]
                        complete[index], redacted = _line(raw)[:-1], redacted + hits
                if redacted or tail:
                    _atomic_write(self.path, b"".join(line + b"\n" for line in complete))
        except OSError as exc:
            raise (storage_fault(exc, self.path) or exc) from exc
        return redacted

    def verify(self) -> VerifyReport:
        """Walk the whole chain; each problem names its line and what it means."""
        with self._locked(exclusive=False):  # the log and its head as of one moment
            *complete, tail = (_read(self.path) or b"").split(b"\n")
            head = _read(self.head_path)
        problems, count, previous, redactions = walk_chain(complete)
        if tail:
            problems.append(f"line {len(complete) + 1} is incomplete (an interrupted append)")
        problems += self._head_problems(head, previous)
        problems += redactions.problems()
        return VerifyReport(ok=not problems, entries=count, problems=problems)

    def deliver(self, store: Any) -> list[AuditEntry]:
        """Move the store's queued entries (memory.audit_outbox) into the log, in order, then
        tell the store what was delivered and the log's new head (its anchor). Entries a
        cut-short delivery already wrote are recognised by their outbox number and skipped.
        A forget's ids are redacted once its entry is in. Nothing to do on a read-only log
        or store: the next writer delivers."""
        if self.read_only or store.read_only:
            return []
        queued = store.audit_outbox()
        if not queued:
            return []
        anchor = store.audit_anchor() or {}
        done = self._delivered_through(anchor)
        fresh = [q for q in queued if q.seq > done]
        made = self.append_many(
            [(q.op, {**q.args, "details": {**q.args["details"], "outbox": q.seq}}) for q in fresh]
        )
        forgotten = [i for q in fresh if q.op == "forget" for i in q.args["ids"]]
        if forgotten:
            self.redact(forgotten)
        last = made[-1] if made else self._last_entry()
        head = None if last is None else {"seq": last.seq, "hash": last.hash}
        store.ack_audit(queued[-1].seq, head, scrub=any(q.op == "forget" for q in queued))
        return made

    def _delivered_through(self, anchor: Mapping[str, Any]) -> int:
        """The highest outbox number in the log: the anchor's, unless entries follow the
        anchored one (a delivery cut short before its anchor, or admin reads)."""
        through = int(anchor.get("outbox", 0))
        last = self._last_entry()
        if last is None or last.seq == anchor.get("seq"):
            return through
        for entry in self.entries():
            if entry.seq > int(anchor.get("seq", -1)) and _is_int(entry.details.get("outbox")):
                through = max(through, int(entry.details["outbox"]))
        return through

    def _last_entry(self) -> AuditEntry | None:
        """The log's last complete entry, read from the file's end as an append reads it: every
        delivery asks, so it must cost the same on a log of any length (reading the whole log
        made every one-event ingest slower the longer the log: `memfuse bench-perf --stream`)."""
        try:
            with open(self.path, "rb") as log:
                _, last = _tail(log)
        except FileNotFoundError:
            return None
        return None if last is None else self._entry_or_damaged(last, "the last line")

    def verify_anchored(self, anchor: Mapping[str, Any] | None) -> VerifyReport:
        """`verify`, plus the store's anchor: the log must reach the entry the store last saw
        delivered, with that entry's hash, so a deleted, cut or rewritten log is seen even
        with its `.head`."""
        report = self.verify()
        if not anchor:
            return report
        problems = list(report.problems)
        seq, digest = int(anchor["seq"]), str(anchor["hash"])
        at = [e for e in self.entries_unchecked() if e.seq == seq]
        if not at:
            problems.append(
                f"the store records {seq + 1} delivered entries but the log has no entry {seq}: "
                "the log was deleted or cut"
            )
        elif at[0].hash != digest:
            problems.append(f"entry {seq} is not the one the store recorded: the log was rewritten")
        return VerifyReport(ok=not problems, entries=report.entries, problems=problems)

    def entries_unchecked(self) -> list[AuditEntry]:
        """Every well-formed entry (damaged lines skipped: `verify` reports them)."""
        try:
            return self.entries()
        except DamagedFileError:
            return []

    def _head_problems(self, head: bytes | None, last: AuditEntry | None) -> list[str]:
        """The chain cannot see its last lines cut off; the head, replaced on every append, can.
        A head behind the log means lines added by hand, or an append that crashed between its
        fsync and its head update: not a clean log either way (the next append updates it)."""
        name = self.head_path.name
        if head is None:
            return [] if last is None else [f"{name} is missing: a cut end would go unseen"]
        try:
            recorded = json.loads(head)
            seq, digest = int(recorded["seq"]), str(recorded["hash"])
        except (ValueError, TypeError, KeyError):
            return [f"{name} is damaged (not a JSON object with seq and hash)"]
        if last is None:
            return [f"{name} records seq {seq} but the log is empty or missing: it was deleted"]
        if seq > last.seq:
            return [f"the log ends at seq {last.seq}, {name} at {seq}: lines were cut from the end"]
        if seq < last.seq:
            return [f"the log goes past seq {seq}, the last append {name} records (lines added)"]
        if digest != last.hash:
            return [f"the last line is not the one {name} records: it was replaced"]
        return []
