"""The `memfuse` command line.

Every command takes `--data-dir` (default: MEMFUSE_DATA_DIR or ./.memfuse). Bad
input and data-dir faults (read-only, full, damaged) are reported as one line on stderr
with a non-zero exit, never a traceback unless asked for with `--debug` (MEMFUSE_DEBUG=1).

Commands beyond the memory's own are plugins: an installed package names a Typer app in
the `memfuse.commands` entry-point group and its commands join these at startup. That is
how the benchmark commands (synth, bench, bench-perf, optimize, show-question) arrive from
`eval.cli` while this module never imports `eval` (nothing may; see `memfuse.layers`).
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import typer

from memfuse.cli_common import (
    DEBUG_ENV,
    Admin,
    DataDir,
    Namespace,
    User,
    choice,
    input_path,
    open_memory,
    parse_time,
    run,
    state,
    usage_error,
)
from memfuse.render import console, context_table, print_json, safe, safe_block, stats_table

PLUGIN_GROUP = "memfuse.commands"

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="MemFuse: multi-source long-term memory with provenance.",
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: Rich is not imported to print it
)


def version() -> str:
    """The installed memfuse's version (its package metadata)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("memfuse")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _print_version(wanted: bool) -> None:
    if wanted:
        print(f"memfuse {version()}")
        raise typer.Exit()


@app.callback()
def _global_options(
    debug: bool = typer.Option(
        False, "--debug", help=f"On an error, print the full traceback (or set {DEBUG_ENV}=1)."
    ),
    _version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        expose_value=False,
        callback=_print_version,
        help="Print `memfuse <version>` and exit.",
    ),
) -> None:
    """MemFuse: multi-source long-term memory with provenance."""
    state.debug = debug  # the command runs inside app(); run() reads this once it has failed


@app.command()
def ingest(
    file: Path = typer.Argument(
        ...,
        help="JSONL of events, a MemFuseBench JSON, a LoCoMo JSON or a `memfuse export` "
        "('-' for standard input).",
    ),
    fmt: str = typer.Option(
        "auto", "--format", help="auto | jsonl | memfusebench | locomo | export"
    ),
    mode: str = typer.Option(
        "fused", "--mode", help="fused (through the fusion agent) | plain (events only)"
    ),
    scenario: str | None = typer.Option(
        None, "--scenario", help="Only this scenario of a benchmark file."
    ),
    user: str | None = typer.Option(
        None, "--user", help="Who ingests (default: MEMFUSE_USER): the audit log's actor."
    ),
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """Validate and store events (all or nothing), fusing each one into the graph."""
    choice("--format", fmt, ("auto", "jsonl", "memfusebench", "locomo", "export"), "format")
    choice("--mode", mode, ("fused", "plain"), "mode")
    with input_path(file) as (path, name):
        _ingest(path, name, fmt, mode, scenario, user, data_dir, namespace)


def _ingest(
    file: Path, name: str, fmt: str, mode: str, scenario: str | None, user: str | None,
    data_dir: Path | None, namespace: str | None,
) -> None:  # fmt: skip
    """`ingest` once its input is a file (`name`: how to call it, '<stdin>' for '-')."""
    from memfuse.inputs import read_events, sniff_input

    out = console()
    sniffed = sniff_input(file, fmt)  # type: ignore[arg-type]
    if sniffed.format == "export":
        with open_memory(data_dir, namespace, writer=True) as memory:
            counts = memory.import_export(file, user=user)
            out.print(
                f"imported {safe(name)}: {counts['events_added']} new events "
                f"({counts['events_unchanged']} already stored), {counts['fused']} packs, "
                f"{counts['edges_added']} new edges"
            )
            out.print(stats_table(memory.stats(), str(memory.store.data_dir), memory.namespace))
        return
    events = read_events(file, sniffed, scenario)
    with open_memory(data_dir, namespace, writer=True) as memory:
        summary = memory.ingest(events, mode=mode, progress=True, user=user)  # type: ignore[arg-type]
        out.print(
            f"ingested {summary.received} events from {safe(name)} in {summary.seconds:.1f}s "
            f"({summary.added} new, {summary.unchanged} already stored; mode {summary.mode})"
        )
        if summary.mode == "fused":
            out.print(
                f"fusion plans: {summary.plans_accepted} accepted, "
                f"{summary.plans_rejected} rejected"
            )
        if summary.drained:
            out.print(f"fused {summary.drained} events an interrupted ingest had left queued")
        out.print(stats_table(memory.stats(), str(memory.store.data_dir)))


@app.command()
def fuse(
    pending: bool = typer.Option(
        False, "--pending", help="Fuse the queued (stored, unfused) events."
    ),
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """Fuse what an interrupted ingest left stored but unfused (`memfuse stats` counts it)."""
    if not pending:
        raise usage_error("nothing to do: say what to fuse (--pending)")
    out = console()
    with open_memory(data_dir, namespace, writer=True) as memory:
        summary = memory.fuse_pending(progress=True)
        out.print(
            f"fused {summary.drained} queued events in {summary.seconds:.1f}s "
            f"({summary.plans_accepted} plans accepted, {summary.plans_rejected} rejected)"
        )
        out.print(stats_table(memory.stats(), str(memory.store.data_dir)))


@app.command()
def search(
    query: str = typer.Argument(..., help="What to look for."),
    time: str | None = typer.Option(None, "--time", help="Question time (ISO); default now."),
    user: str | None = User,
    admin: bool = Admin,
    k: int = typer.Option(20, "-k", min=1, help="Events in the context."),
    system: str = typer.Option("memfuse", "--system", help="memfuse | naive_rag | bm25 | hybrid"),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print the context as JSON lines; with --system memfuse a last "
        'line {"trace": …} says who planned and judged each round (llm, offline, offline '
        "fallback: why).",
    ),
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """Print the retrieved context with provenance (time, device, location, id, path)."""
    when = parse_time(time)  # usage errors first, before the memory's API is loaded
    from memfuse.api import SEARCH_SYSTEMS, decision_lines

    choice("--system", system, SEARCH_SYSTEMS, "system")
    with open_memory(data_dir, namespace, must_exist=True) as memory:
        result = memory.search(query, system=system, time=when, user=user, admin=admin, k=k)
    if as_json:
        for entry in result.context:
            print_json(entry.model_dump_json())
        if result.decisions:
            trace = result.model_dump(
                mode="json", include={"rounds", "decisions", "notes", "stop_reason"}
            )
            print_json(json.dumps({"trace": trace}))
        return
    entries = result.context
    title = f"{system}: {safe(repr(query))} — {len(entries)} entries, {result.rounds} round(s)"
    out = console()
    out.print(context_table(entries, title))
    for line in decision_lines(result.decisions):
        out.print(safe(line))


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question."),
    user: str | None = User,
    admin: bool = Admin,
    time: str | None = typer.Option(None, "--time", help="Question time (ISO); default now."),
    k: int = typer.Option(20, "-k", min=1),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print one JSON object: answer, reader_error, decisions (who "
        "decided each step), notes and the evidence.",
    ),
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """Answer through the `answer` graph (offline: the evidence only, and a note saying so).

    If the configured reader fails (endpoint down past MEMFUSE_LLM_RETRY_SECONDS, an empty
    reply), the evidence is still printed with a one-line reason and the exit code is 1.
    """
    when = parse_time(time)  # a usage error first, before the memory's API is loaded
    from memfuse.api import decision_lines

    with open_memory(data_dir, namespace, must_exist=True) as memory:
        result = memory.ask(question, user=user, admin=admin, time=when, k=k)
    if as_json:
        print_json(result.model_dump_json())
    else:
        out = console()
        if result.answer is not None:
            out.print(f"[bold]Answer:[/bold] {safe_block(result.answer)}\n")
        if result.note:
            out.print(f"[yellow]{safe(result.note)}[/yellow]")
        out.print(context_table(result.context, f"evidence ({result.rounds} round(s))"))
        for line in decision_lines(result.decisions):
            out.print(safe(line))
    if result.reader_error is not None:
        raise SystemExit(1)  # the evidence is out; the answer that was asked for is not


@app.command()
def stats(data_dir: Path | None = DataDir, namespace: str | None = Namespace) -> None:
    """Counts of events, fused nodes and edges by type, and which memory they are of."""
    from memfuse.settings import load_settings
    from memory.opener import read_stats

    settings = load_settings(data_dir=data_dir)
    root = state.data_dir = (data_dir or settings.data_dir).expanduser()
    name = namespace or settings.namespace
    console().print(
        stats_table(read_stats(settings, data_dir=root, namespace=name), str(root), name)
    )


def _command_name(command: typer.models.CommandInfo) -> str:
    """The name Typer will give the command (its explicit name, else the function's)."""
    if command.name:
        return command.name
    callback = command.callback
    return (callback.__name__ if callback else "").lower().replace("_", "-")


def _warn(message: str) -> None:
    print(f"memfuse: warning: {' '.join(message.split())}", file=sys.stderr)


def _load_plugin(entry: EntryPoint) -> typer.Typer | None:
    """The plugin's app; None, silently, when its package is not installed (the entry point
    outlived it), with a warning when it is there but broken, so `memfuse` still runs."""
    try:
        plugin = entry.load()
    except ModuleNotFoundError as exc:
        if exc.name and (entry.module == exc.name or entry.module.startswith(exc.name + ".")):
            return None
        _warn(f"plugin {entry.name!r} ({entry.value}) not loaded: {exc}")
        return None
    except Exception as exc:  # noqa: BLE001 — a broken plugin must not take `memfuse` down
        _warn(f"plugin {entry.name!r} ({entry.value}) not loaded: {type(exc).__name__}: {exc}")
        return None
    if not isinstance(plugin, typer.Typer):
        _warn(
            f"plugin {entry.name!r} ({entry.value}) is a {type(plugin).__name__}, not a Typer app"
        )
        return None
    return plugin


def load_plugins(target: typer.Typer, plugins: list[EntryPoint] | None = None) -> list[str]:
    """Merge the commands of every `memfuse.commands` plugin into `target`; the names added.

    Built-in commands win a name clash (a plugin cannot redefine `ingest`). Safe to call
    again in the same process: a command already merged is recognised and skipped.
    """
    if plugins is None:
        plugins = sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: e.name)
    taken = {_command_name(c): c for c in target.registered_commands}
    added: list[str] = []
    for entry in plugins:
        plugin = _load_plugin(entry)
        for command in plugin.registered_commands if plugin is not None else []:
            name = _command_name(command)
            if taken.get(name) is command:
                continue  # merged by an earlier call
            if name in taken:
                _warn(f"plugin {entry.name!r}: command {name!r} already exists; ignored")
                continue
            target.registered_commands.append(command)
            taken[name] = command
            added.append(name)
    return added


def _merge_governance() -> None:
    """The governance commands (`memfuse.cli_governance`) join the built-in ones."""
    from memfuse.cli_governance import governance

    names = {_command_name(c) for c in app.registered_commands}
    app.registered_commands.extend(
        c for c in governance.registered_commands if _command_name(c) not in names
    )


_merge_governance()


def main() -> None:
    """Entry point: the built-in commands plus the plugins', under `cli_common.run`'s error
    contract (one `memfuse: error: …` line; exit 2 usage, 1 failure, 130 interrupted)."""
    load_plugins(app)
    run(app)


if __name__ == "__main__":
    main()
