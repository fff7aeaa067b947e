"""The MemFuse export format: a user's whole memory (or part of it) as one JSONL file.

`memfuse export` writes it and `memfuse ingest` reads it back into an equivalent store (same
events and visibilities, same packs, same causal/semantic edges and weights) without re-running
fusion. Line 1 is a header (`format`, `exported_at`, `namespace`, `embedding_model`, `counts`);
then one object per line: `{"kind": "event", "event": {...}, "visibility": ...}` by (timestamp,
event_id), `{"kind": "fused", "node": {...}}` by node_id, `{"kind": "edge", "edge": {...}}` by
(type, src, dst). Belong edges are implied by the packs' members. Reading validates the whole
file first; importing is one transaction: all of it, or nothing.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Collection, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn, TextIO

from pydantic import BaseModel, Field, ValidationError

from memory.errors import InputFormatError, InvalidEventError, MemFuseError, NodeNotFoundError
from memory.jsontext import BOM, decode_utf8, load_json
from memory.models import Edge, EdgeType, Event, FusedNode, is_fused_id, parse_event
from memory.store_api import MemoryStoreAPI
from memory.text import escape_invisible_json
from memory.visibility import canonical

EXPORT_FORMAT = "memfuse-export-1"
_EXPORTED_EDGES = (EdgeType.CAUSAL, EdgeType.SEMANTIC)
_HEADER_LIMIT = 64 * 1024  # a header is a few hundred bytes; a longer first line is no header
_BODY = {"event": "event", "fused": "node", "edge": "edge"}  # kind → the key of its object
_ID = {"event": "event_id", "fused": "node_id"}
_COUNTS = ("events", "fused", "edges")
_Fail = Callable[..., NoReturn]


class ExportBundle(BaseModel):
    """A validated export, ready to import: every reference in it resolves inside it."""

    header: dict[str, Any]
    events: list[Event]
    visibility: dict[str, str] = Field(description="Event id → canonical visibility.")
    fused: list[FusedNode]
    edges: list[Edge]

    def counts(self) -> dict[str, int]:
        return {"events": len(self.events), "fused": len(self.fused), "edges": len(self.edges)}


# --- writing ------------------------------------------------------------------------------


def export_records(
    store: MemoryStoreAPI, event_ids: Collection[str] | None = None
) -> Iterator[dict[str, Any]]:
    """The export's objects, header first. With `event_ids`, only those events, the packs all
    of whose members are among them, and the edges with both ends exported."""
    events = store.all_events()
    if event_ids is not None:
        wanted = set(event_ids)
        unknown = wanted - {e.event_id for e in events}
        if unknown:
            raise NodeNotFoundError(min(unknown), "event")
        events = [e for e in events if e.event_id in wanted]
    exported = {e.event_id for e in events}
    fused = [n for n in store.all_fused() if set(n.members) <= exported]
    nodes = exported | {n.node_id for n in fused}
    edges: dict[tuple[str, str, str], Edge] = {}
    for node_id in sorted(nodes):
        for edge_type in _EXPORTED_EDGES:
            for edge in store.neighbors(node_id, edge_type):
                if edge.src in nodes and edge.dst in nodes:
                    edges.setdefault(edge.key(), edge)
    ordered = sorted(edges.values(), key=lambda e: (e.type.value, e.src, e.dst))
    embedder = getattr(store, "embedder", None)
    yield {
        "format": EXPORT_FORMAT,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "namespace": getattr(store, "namespace", None),
        "embedding_model": getattr(store, "embedding_model", None)
        or getattr(embedder, "model_id", None),
        "counts": {"events": len(events), "fused": len(fused), "edges": len(ordered)},
    }
    for event in events:
        visibility = store.visibility_of(event.event_id)
        yield {"kind": "event", "event": event.model_dump(mode="json"), "visibility": visibility}
    for node in sorted(fused, key=lambda n: n.node_id):
        yield {"kind": "fused", "node": node.model_dump(mode="json")}
    for edge in ordered:
        yield {"kind": "edge", "edge": edge.model_dump(mode="json")}


def _write(records: Iterator[dict[str, Any]], handle: TextIO) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in records:
        counts = counts or dict(record["counts"])
        handle.write(escape_invisible_json(json.dumps(record, ensure_ascii=False)) + "\n")
    return counts


def write_export(
    store: MemoryStoreAPI, target: Path | TextIO, event_ids: Collection[str] | None = None
) -> dict[str, int]:
    """Write the export to an open text stream, or to a file atomically: into a temporary
    file beside it, synced, then renamed over `target`, so a failure midway (a full disk,
    Ctrl-C) never leaves a partial export under the target's name. Returns the counts."""
    records = export_records(store, event_ids)
    if not isinstance(target, Path):
        return _write(records, target)
    temp: str | None = None
    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with open(fd, "w", encoding="utf-8", newline="\n") as handle:
            counts = _write(records, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
        temp = None
    except OSError as exc:
        why = (exc.strerror or str(exc)).lower()
        raise MemFuseError(f"cannot write the export {target}: {why}; nothing was written") from exc
    finally:
        if temp is not None:
            Path(temp).unlink(missing_ok=True)
    return counts


# --- reading ------------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) of each non-empty line; a bad byte or bad JSON is a one-line
    InputFormatError with the line (the wording of `memfuse ingest`'s JSONL reader)."""
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            line = decode_utf8(raw, path, line_no)  # line 1 loses a byte-order mark
            if line.strip():
                yield line_no, load_json(line, path, line_no)


def is_export(path: Path) -> bool:
    """True when the first non-empty line of `path` is a MemFuse export header."""
    try:
        with Path(path).open("rb") as handle:
            line = b""
            while not line.strip():
                line = handle.readline(_HEADER_LIMIT)
                if not line or len(line) >= _HEADER_LIMIT:
                    return False
        header = json.loads(line.decode("utf-8").removeprefix(BOM))
    except (OSError, ValueError, RecursionError):  # no file, a folder, bad UTF-8 or JSON
        return False
    return isinstance(header, dict) and header.get("format") == EXPORT_FORMAT


def _check_header(header: Any, fail: _Fail) -> dict[str, Any]:
    if not isinstance(header, dict) or "format" not in header:
        fail(f'not a MemFuse export (no "format": "{EXPORT_FORMAT}" header)')
    if (fmt := header["format"]) != EXPORT_FORMAT:
        fail(f"unknown export format version {fmt!r} (this MemFuse reads {EXPORT_FORMAT})")
    counts = header.get("counts")
    if not isinstance(counts, dict) or not all(isinstance(counts.get(k), int) for k in _COUNTS):
        fail('the header\'s "counts" must give whole numbers of events, fused and edges')
    return header


def _invalid(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return f"field '{'.'.join(str(p) for p in err['loc']) or '<record>'}': {err['msg']}"


def _item(record: dict[str, Any], body: dict[str, Any], fail: _Fail) -> Event | FusedNode | Edge:
    """One line's event, fused node or edge, checked on its own (references come later)."""
    if record["kind"] == "event":
        if extra := sorted(set(body) - set(Event.model_fields)):
            fail(f"event: unknown field(s): {', '.join(extra)}")
        try:
            event = parse_event(body)
        except InvalidEventError as exc:
            fail(str(exc))
        if is_fused_id(event.event_id):
            fail(f"event {event.event_id!r}: ids starting with 'fused_' name fused nodes")
        return event
    if record["kind"] == "fused":
        try:
            node = FusedNode.model_validate(body)
        except ValidationError as exc:
            fail(f"fused node: {_invalid(exc)}")
        if not is_fused_id(node.node_id):
            fail(f"fused node {node.node_id!r}: id must start with 'fused_'")
        if len(set(node.members)) != len(node.members) or node.start > node.end:
            fail(f"fused node {node.node_id!r}: repeated members, or start after end")
        return node
    try:
        edge = Edge.model_validate(body)
    except ValidationError as exc:
        fail(f"edge: {_invalid(exc)}")
    if edge.type not in _EXPORTED_EDGES:
        fail(f"{_name(edge)}: belong edges are not exported (a pack's members imply them)")
    if edge.src == edge.dst:
        fail(f"{_name(edge)}: self-loops are not allowed")
    return edge


def _name(item: Event | FusedNode | Edge) -> str:
    if isinstance(item, Event):
        return f"event {item.event_id!r}"
    if isinstance(item, FusedNode):
        return f"fused node {item.node_id!r}"
    return f"{item.type.value} edge {item.src!r} -> {item.dst!r}"


def read_export(path: Path) -> ExportBundle:
    """Read and validate a whole export; the first problem is a one-line InputFormatError
    naming the file and line. Nothing in the returned bundle refers outside it."""
    path = Path(path)
    line_no = header_at = 0

    def fail(problem: str, at: int | None = None) -> NoReturn:
        raise InputFormatError(f"{path}: line {at or line_no}: {problem}")

    header: dict[str, Any] | None = None
    seen: dict[str, dict[Any, tuple[int, Any]]] = {"event": {}, "fused": {}, "edge": {}}
    visibility: dict[str, str] = {}
    for line_no, record in _lines(path):
        if header is None:
            header, header_at = _check_header(record, fail), line_no
            continue
        if not isinstance(record, dict):
            fail(f"expected a JSON object, got {type(record).__name__}")
        kind = record.get("kind")
        if kind not in _BODY:
            fail(f"unknown kind {kind!r} (expected event, fused or edge)")
        keys = {"kind", _BODY[kind]} | ({"visibility"} if kind == "event" else set())
        if missing := sorted(keys - set(record)):
            fail(f"{kind} line without {', '.join(map(repr, missing))}")
        if extra := sorted(set(record) - keys):
            fail(f"{kind} line: unknown key(s) {', '.join(map(repr, extra))}")
        body = record[_BODY[kind]]
        if not isinstance(body, dict):
            fail(f"{kind}: expected a JSON object, got {type(body).__name__}")
        item = _item(record, body, fail)
        ident = item.key() if isinstance(item, Edge) else getattr(item, _ID[kind])
        if ident in seen[kind]:
            fail(f"{_name(item)} repeats line {seen[kind][ident][0]}")
        if isinstance(item, Event):
            try:
                visibility[item.event_id] = canonical(record["visibility"])
            except ValueError as exc:
                fail(f"{_name(item)}: bad visibility: {exc}")
        seen[kind][ident] = (line_no, item)
    if header is None:
        raise InputFormatError(f"{path}: empty file, not a MemFuse export")
    events, fused, edges = seen["event"], seen["fused"], seen["edge"]
    found = {"events": len(events), "fused": len(fused), "edges": len(edges)}
    counts = header["counts"]
    if {k: counts[k] for k in _COUNTS} != found:
        have = ", ".join(f"{n} {k}" for k, n in found.items())
        fail(
            f"the header's counts {counts} do not match the file's ({have}): truncated?", header_at
        )
    for at, node in fused.values():
        for member in node.members:
            if member not in events:
                fail(f"{_name(node)}: member {member!r} is not an exported event", at)
    for at, edge in edges.values():
        for end in (edge.src, edge.dst):
            if end not in events and end not in fused:
                fail(f"{_name(edge)}: {end!r} is neither an exported event nor a fused node", at)
        if edge.type == EdgeType.CAUSAL and (edge.src not in events or edge.dst not in events):
            fail(f"{_name(edge)}: a causal edge must join two events", at)
        if edge.type == EdgeType.CAUSAL and (edge.dst, edge.src, edge.type.value) in edges:
            fail(f"{_name(edge)}: its reverse is exported too (a contradiction)", at)
    return ExportBundle(
        header=header,
        events=[e for _, e in events.values()],
        visibility=visibility,
        fused=[n for _, n in fused.values()],
        edges=[e for _, e in edges.values()],
    )


# --- importing ----------------------------------------------------------------------------


def import_bundle(store: MemoryStoreAPI, bundle: ExportBundle) -> dict[str, int]:
    """Store a read export in one transaction: its events (with their visibility), its packs,
    its edges. Already-stored identical parts are left as they are (importing twice changes
    nothing); an event id stored with other content is an EventConflictError, and then
    nothing is written."""
    with store.transaction():
        report = store.add_events(bundle.events, visibility=bundle.visibility)
        written = 0
        for node in bundle.fused:
            if not store.has_node(node.node_id) or store.get_fused(node.node_id) != node:
                store.put_fused(node)
                written += 1
        edges_added = sum(store.add_edge(edge) for edge in bundle.edges)
    return {
        "events_added": len(report.added),
        "events_unchanged": len(report.unchanged),
        "fused": written,
        "edges_added": edges_added,
    }
