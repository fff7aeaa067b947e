"""Console rendering shared by the CLI commands: contexts with provenance, stats, JSON lines.

Every `memfuse` call imports this module (`--help` too), so Rich and the data model are
imported by the functions that use them, not here.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from memory.text import escape_invisible_json, single_line

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from memory.records import ContextEntry
    from memory.store_api import StoreStats


def safe(text: str) -> str:
    """Event text as Rich shows it literally: one line, no control or bidi characters, markup
    escaped (a description holding "[/i]" must print as "[/i]", not crash the table)."""
    from rich.markup import escape

    return escape(single_line(text))


def print_json(text: str) -> None:
    """One JSON document (already serialized) on stdout, with bidi and other invisible
    controls escaped (`memory.text.escape_invisible_json`): event text is untrusted, and a
    U+202E in a description must not reorder what `--json` shows in a terminal or a diff."""
    sys.stdout.write(escape_invisible_json(text) + "\n")


def safe_block(text: str) -> str:
    """Like `safe`, for text whose line breaks matter (an LLM's answer): every line kept,
    each made safe on its own."""
    return "\n".join(safe(line) for line in text.splitlines())


def context_table(entries: list[ContextEntry], title: str, gold: set[str] | None = None) -> Table:
    """One row per context entry: when, which device, where, which id, and the path that
    brought it."""
    from rich.table import Table

    from memory.models import NodeKind, format_timestamp

    table = Table(title=title, show_lines=False, expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("time", no_wrap=True)
    table.add_column("device", no_wrap=True, max_width=22, overflow="ellipsis")
    table.add_column("location", no_wrap=True, max_width=16, overflow="ellipsis")
    table.add_column("id", no_wrap=True)
    table.add_column("path", overflow="fold", max_width=28)
    table.add_column("observation", overflow="fold", ratio=1)
    for i, entry in enumerate(entries, start=1):
        node = safe(entry.node_id)
        if gold is not None and entry.kind == NodeKind.EVENT:
            node = f"[green]{node} ✓[/green]" if entry.node_id in gold else node
        description = safe(entry.text.split("] ", 3)[-1])  # without [time] [device] [location]
        if entry.kind == NodeKind.FUSED:
            description = f"[italic]summary:[/italic] {description}"
        path = safe(entry.provenance + (f" via {entry.via_fused}" if entry.via_fused else ""))
        devices = entry.device.split(",")
        device = safe(devices[0]) + (f" +{len(devices) - 1}" if len(devices) > 1 else "")
        table.add_row(
            str(i),
            format_timestamp(entry.timestamp),
            device,
            safe(entry.location),
            node,
            path,
            description,
        )
    return table


def stats_table(stats: StoreStats, where: str, namespace: str | None = None) -> Table:
    from rich.table import Table

    from memory.models import format_timestamp

    table = Table(title=f"MemFuse store — {where}", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("data dir", safe(where))
    if namespace is not None:
        table.add_row("namespace", safe(namespace))
    table.add_row("events", str(stats.events))
    table.add_row("fused nodes", str(stats.fused_nodes))
    table.add_row("mean members per fused node", f"{stats.mean_members:.2f}")
    for kind, count in sorted(stats.edges.items()):
        table.add_row(f"{kind} edges", str(count))
    table.add_row("devices", str(stats.devices))
    table.add_row("people", str(stats.people))
    span = "-"
    if stats.first_event and stats.last_event:
        span = f"{format_timestamp(stats.first_event)} → {format_timestamp(stats.last_event)}"
    table.add_row("time span", span)
    table.add_row("unfinished fusion plans", str(stats.pending_plans))
    table.add_row("events waiting for fusion", str(stats.pending_fusion))
    return table


def console() -> Console:
    """Rich console; when output is not a terminal (logs, `make demo`), tables get 160 columns
    instead of 80 so that provenance columns stay readable."""
    from rich.console import Console

    probe = Console()
    return Console(highlight=False, width=None if probe.is_terminal else max(probe.width, 160))
