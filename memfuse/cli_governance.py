"""The governance commands: events, show, history, visibility, forget, export, audit.

They are what users of other memory systems expect (Mem0's get_all/get/history/delete,
Cognee's forget) plus what a household needs (who may see what, a verifiable record of
every change). Each is a thin shell over `memfuse.governance` on `MemFuse`; `memfuse.cli`
merges them into the one `memfuse` app.

Like `memfuse.cli`, this module is imported by every `memfuse` call (`--help` too), so what the
commands need beyond typer (Rich tables, the data model, the memory) they import when they run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from memfuse.cli_common import (
    STDIN,
    Admin,
    DataDir,
    Namespace,
    User,
    open_memory,
    parse_time,
    usage_error,
)
from memfuse.render import console, print_json, safe
from memory.errors import MemFuseError

if TYPE_CHECKING:
    from rich.table import Table

    from memory.audit import AuditEntry
    from memory.selection import EventFilter

governance = typer.Typer(add_completion=False)

Device = typer.Option(None, "--device", help="Only events this device recorded.")
Person = typer.Option(None, "--person", help="Only events naming this person, or on their device.")
Since = typer.Option(None, "--since", help="Only events at or after this time (ISO).")
Until = typer.Option(None, "--until", help="Only events at or before this time (ISO).")
AsJson = typer.Option(False, "--json", help="One JSON object per line instead of a table.")
Writer = typer.Option(
    None,
    "--user",
    help="Who makes the change (default: MEMFUSE_USER): only events this person may see can "
    "be changed; recorded in the audit log.",
)
AdminWrite = typer.Option(
    False,
    "--admin",
    help="Change any event, whoever may see it (recorded in the audit log; the policy file's "
    "`admins` may limit it to named people).",
)


def _selector(
    ids: list[str] | None,
    device: str | None,
    person: str | None,
    since: str | None,
    until: str | None,
    visibility: str | None = None,
) -> EventFilter:
    from memory.selection import EventFilter
    from memory.visibility import canonical

    try:
        wanted = canonical(visibility) if visibility else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--visibility'") from None
    return EventFilter(
        event_ids=list(ids or []),
        device=device,
        person=person,
        since=parse_time(since, "--since"),
        until=parse_time(until, "--until"),
        visibility=wanted,
    )


@governance.command()
def events(
    device: str | None = Device,
    person: str | None = Person,
    since: str | None = Since,
    until: str | None = Until,
    visibility: str | None = typer.Option(
        None, "--visibility", help="Only this visibility: household, private:NAME, people:A,B."
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="At most this many."),
    user: str | None = User,
    admin: bool = Admin,
    as_json: bool = AsJson,
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """List the events you may see, oldest first, with who may see each and its packs."""
    from rich.table import Table

    from memory.models import format_timestamp

    selector = _selector(None, device, person, since, until, visibility)
    with open_memory(data_dir, namespace, must_exist=True) as memory:
        records = memory.events(selector, user=user, admin=admin, limit=limit)
    if as_json:
        for record in records:
            print_json(record.model_dump_json())
        return
    table = Table(title=f"{len(records)} events")
    for column in ("time", "id", "device", "visibility", "packs", "description"):
        table.add_column(column, overflow="fold")
    for record in records:
        e = record.event
        table.add_row(
            format_timestamp(e.timestamp),
            safe(e.event_id),
            safe(e.device),
            safe(record.visibility),
            safe(", ".join(record.fused)),
            safe(e.description[:120]),
        )
    console().print(table)


@governance.command()
def show(
    node_id: str = typer.Argument(..., help="An event id or a fused node id."),
    user: str | None = User,
    admin: bool = Admin,
    as_json: bool = AsJson,
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """An event with its packs, edges and provenance, or a pack with its members."""
    from memory.models import format_timestamp

    with open_memory(data_dir, namespace, must_exist=True) as memory:
        view = memory.show(node_id, user=user, admin=admin)
    if as_json:
        print_json(view.model_dump_json())
        return
    out = console()
    if view.fused is not None:
        node = view.fused
        out.print(f"[bold]{safe(node.node_id)}[/bold] (fused, version {node.version})")
        out.print(f"summary: {safe(node.summary)}")
        out.print(
            f"span: {format_timestamp(node.start)} → {format_timestamp(node.end)}; "
            f"devices: {safe(', '.join(node.devices))}"
        )
        for member in view.members:
            out.print(
                f"  member {safe(member.event_id)} [{format_timestamp(member.timestamp)}] "
                f"[{safe(member.device)}] {safe(member.description[:160])}"
            )
    elif view.event is not None:
        e = view.event
        out.print(f"[bold]{safe(e.event_id)}[/bold] (event) visible to: {safe(view.visibility)}")
        out.print(f"description: {safe(e.description)}")
        for key, value in view.provenance.items():
            out.print(f"  {key}: {safe(str(value))}")
        out.print(f"packs: {safe(', '.join(view.packs)) or '-'}")
    for edge in view.edges:
        out.print(
            f"  {edge['type']} edge {safe(edge['src'])} → {safe(edge['dst'])} "
            f"(weight {edge['weight']:.3f})"
        )


def _audit_table(entries: list[AuditEntry], title: str) -> Table:
    from rich.table import Table

    table = Table(title=title)
    for column in ("seq", "time (UTC)", "actor", "op", "counts", "details", "ids"):
        table.add_column(column, overflow="fold")
    for entry in entries:
        shown = [i if i is not None else "(forgotten)" for i in entry.ids[:5]]
        more = f" … +{len(entry.ids) - 5}" if len(entry.ids) > 5 else ""
        table.add_row(
            str(entry.seq),
            entry.time,
            safe(entry.actor),
            entry.op,
            ", ".join(f"{k} {v}" for k, v in entry.counts.items()),
            safe(", ".join(f"{k}={v}" for k, v in entry.details.items())),
            safe(", ".join(shown) + more),
        )
    return table


def _print_entries(entries: list[AuditEntry], title: str, as_json: bool) -> None:
    if as_json:
        for entry in entries:
            print_json(json.dumps(entry.__dict__, sort_keys=True))
        return
    console().print(_audit_table(entries, title))


@governance.command()
def history(
    node_id: str = typer.Argument(..., help="An event id or a fused node id."),
    user: str | None = User,
    admin: bool = Admin,
    as_json: bool = AsJson,
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """What happened to an event or pack: its audit entries (ingest, fusion, visibility,
    forget), oldest first. A user sees the history of what they may see, listing only ids
    they may see; --admin (audited) any node's, a forgotten one's too (found by digest)."""
    with open_memory(data_dir, namespace, must_exist=True) as memory:
        entries = memory.history(node_id, user=user, admin=admin)
    _print_entries(entries, f"history of {safe(node_id)}: {len(entries)} entries", as_json)


@governance.command()
def audit(
    op: str | None = typer.Option(None, "--op", help="Only this operation (ingest, forget, …)."),
    actor: str | None = typer.Option(None, "--actor", help="Only this actor."),
    since: str | None = Since,
    until: str | None = Until,
    verify: bool = typer.Option(
        False,
        "--verify",
        help="Check the hash chain: exit 1 if any line was edited, deleted, inserted or reordered.",
    ),
    user: str | None = User,
    admin: bool = Admin,
    as_json: bool = AsJson,
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """The audit log: every ingest, fusion plan, visibility change, forget, export and admin
    read, with time, actor, counts and ids (never event text). Listing it takes --admin (it
    names every person's ids; audited); --verify is open to anyone (it prints counts)."""
    after, before = parse_time(since, "--since"), parse_time(until, "--until")
    with open_memory(data_dir, namespace, must_exist=True) as memory:
        if verify:
            report = memory.verify_audit()
            if not report.ok:
                for problem in report.problems:
                    print(f"memfuse: audit: {problem}", file=sys.stderr)
                raise MemFuseError(
                    f"audit log failed verification: {len(report.problems)} problem(s) in "
                    f"{report.entries} entries"
                )
            console().print(f"audit log verified: {report.entries} entries, chain intact")
            return
        entries = memory.audit_entries(
            user=user,
            admin=admin,
            op=op,
            actor=actor,
            since=after,
            until=before,
        )
    _print_entries(entries, f"audit log: {len(entries)} entries", as_json)


@governance.command()
def visibility(
    event_ids: list[str] = typer.Argument(..., help="The events whose visibility changes."),
    to: str = typer.Option(
        ..., "--set", help="household | private:NAME | people:A,B (who may see them)."
    ),
    user: str | None = Writer,
    admin: bool = AdminWrite,
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """Change who may see some events (recorded in the audit log): a user only events they
    may see, an admin any."""
    from memory.visibility import canonical

    try:
        canonical(to)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--set'") from None
    with open_memory(data_dir, namespace, writer=True, must_exist=True) as memory:
        changed = memory.set_visibility(event_ids, to, user=user, admin=admin)
    console().print(f"visibility of {len(changed)} event(s) set to {safe(to)}")


@governance.command()
def forget(
    event_ids: list[str] = typer.Argument(None, help="Events to forget (or use the filters)."),
    device: str | None = Device,
    person: str | None = Person,
    since: str | None = Since,
    until: str | None = Until,
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would go; change nothing."),
    user: str | None = Writer,
    admin: bool = AdminWrite,
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """Forget events everywhere: store, indexes, edges, caches, plan log; packs that lose
    members are re-fused from what remains. Needs at least one selector; a user forgets
    only among the events they may see, an admin anything."""
    selector = _selector(event_ids, device, person, since, until)
    try:
        selector.require_selector("forget")
    except MemFuseError as exc:  # no selector, or --since after --until: a usage error
        raise usage_error(str(exc)) from None
    with open_memory(data_dir, namespace, writer=not dry_run, must_exist=True) as memory:
        report = memory.forget(selector, dry_run=dry_run, user=user, admin=admin)
    verb = "would forget" if report.dry_run else "forgot"
    refused = sum(p.action == "refused" for p in report.packs)
    removed = sum(p.action == "removed" for p in report.packs)
    out = console()
    out.print(
        f"{verb} {len(report.event_ids)} event(s); packs re-fused: {refused}, removed: "
        f"{removed}" + ("" if report.dry_run else f" ({report.seconds:.2f}s)")
    )
    if report.dry_run:
        for event_id in report.event_ids[:50]:
            out.print(f"  {safe(event_id)}")
        if len(report.event_ids) > 50:
            out.print(f"  … and {len(report.event_ids) - 50} more")


@governance.command()
def reset(
    yes: bool = typer.Option(False, "--yes", help="Confirm: every memory of the namespace goes."),
    user: str | None = Writer,
    admin: bool = AdminWrite,
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """Forget everything in the namespace (every event, pack, edge and trace), as one audited
    forget. Admin only, and only with --yes: nothing asks twice in a script."""
    if not yes:
        raise usage_error("reset forgets every memory of the namespace: confirm with --yes")
    with open_memory(data_dir, namespace, writer=True, must_exist=True) as memory:
        report = memory.reset(user=user, admin=admin)
    console().print(f"forgot {len(report.event_ids)} event(s) ({report.seconds:.2f}s)")


@governance.command()
def export(
    out: Path = typer.Argument(..., help="The JSONL file to write ('-' for standard output)."),
    device: str | None = Device,
    person: str | None = Person,
    since: str | None = Since,
    until: str | None = Until,
    user: str | None = User,
    admin: bool = Admin,
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """Write events (those you may see), their packs and edges as JSONL that `memfuse ingest`
    reads back into an equivalent store."""
    selector = _selector(None, device, person, since, until)
    with open_memory(data_dir, namespace, must_exist=True) as memory:
        if str(out) == STDIN:
            memory.export(sys.stdout, selector, user=user, admin=admin)
            return
        counts = memory.export(out, selector, user=user, admin=admin)
    console().print(
        f"exported {counts.get('events', 0)} events, {counts.get('fused', 0)} packs and "
        f"{counts.get('edges', 0)} edges to {safe(str(out))}"
    )
