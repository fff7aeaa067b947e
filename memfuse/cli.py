"""The `memfuse` command line.

Every command takes `--data-dir` (default: MEMFUSE_DATA_DIR or ./.memfuse). Bad
input and data-dir faults (read-only, full, damaged) are reported as one line on stderr
with a non-zero exit, never a traceback unless asked for with `--debug` (MEMFUSE_DEBUG=1).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from datetime import datetime
from pathlib import Path

import click
import typer
from pydantic import ValidationError

from memfuse.render import console, context_table, safe, safe_block, stats_table
from memfuse.settings import MemFuseSettings, load_settings
from memory.errors import MemFuseError, ReadOnlyDataDirError, storage_fault
from memory.models import parse_timestamp

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="MemFuse: multi-source long-term memory with provenance.",
    pretty_exceptions_enable=False,
)
_DEBUG_ENV = "MEMFUSE_DEBUG"
_debug = False  # set by --debug; read by main() when a command fails
_data_dir_in_use: Path | None = None  # named by a storage fault that reaches main() unnamed


@app.callback()
def _global_options(
    debug: bool = typer.Option(
        False, "--debug", help=f"On an error, print the full traceback (or set {_DEBUG_ENV}=1)."
    ),
) -> None:
    """MemFuse: multi-source long-term memory with provenance."""
    global _debug
    _debug = debug  # the command runs inside app(); main() reads this once it has failed


DataDir = typer.Option(None, "--data-dir", help="Data directory (default: MEMFUSE_DATA_DIR or ./.memfuse).")
Namespace = typer.Option(None, "--namespace", help="Store namespace inside the data dir.")


def _time(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_timestamp(value)
    except ValueError as exc:
        raise MemFuseError(f"--time: {exc}") from None


def _open(data_dir: Path | None, namespace: str | None, *, writer: bool = False):  # -> MemFuse
    """The memory (import kept lazy: torch is slow); writers hold the data dir's writer lock.

    The data dir is checked first, so a file in its place or a read-only dir asked to take a
    write is one line before any lock or store file is touched (readers of a read-only dir
    go on: the store opens it read-only)."""
    from memfuse.api import MemFuse
    from memory.store import prepare_data_dir

    global _data_dir_in_use
    settings = load_settings(data_dir=data_dir)
    root = _data_dir_in_use = data_dir if data_dir is not None else settings.data_dir
    if not prepare_data_dir(root) and writer:
        raise ReadOnlyDataDirError(f"data dir {root}")
    return MemFuse.open(data_dir, namespace, settings=settings, writer=writer)


@app.command()
def ingest(
    file: Path = typer.Argument(..., help="JSONL of events, a MemFuseBench JSON or a LoCoMo JSON."),
    fmt: str = typer.Option("auto", "--format", help="auto | jsonl | memfusebench | locomo"),
    mode: str = typer.Option("fused", "--mode", help="fused (through the fusion agent) | plain (events only)"),
    scenario: str | None = typer.Option(None, "--scenario", help="Only this scenario of a benchmark file."),
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """Validate and store events (all or nothing), fusing each one into the graph."""
    from memfuse.inputs import read_events

    if fmt not in ("auto", "jsonl", "memfusebench", "locomo"):
        raise MemFuseError(f"--format: expected auto, jsonl, memfusebench or locomo, got {fmt!r}")
    if mode not in ("fused", "plain"):
        raise MemFuseError(f"--mode: expected fused or plain, got {mode!r}")
    events = read_events(file, fmt, scenario)  # type: ignore[arg-type]
    out = console()
    with _open(data_dir, namespace, writer=True) as memory:
        summary = memory.ingest(events, mode=mode, progress=True)  # type: ignore[arg-type]
        out.print(
            f"ingested {summary.received} events from {file} in {summary.seconds:.1f}s "
            f"({summary.added} new, {summary.unchanged} already stored; mode {summary.mode})"
        )
        if summary.mode == "fused":
            out.print(f"fusion plans: {summary.plans_accepted} accepted, {summary.plans_rejected} rejected")
        if summary.drained:
            out.print(f"fused {summary.drained} events an interrupted ingest had left queued")
        out.print(stats_table(memory.stats(), str(memory.store.data_dir)))


@app.command()
def fuse(
    pending: bool = typer.Option(False, "--pending", help="Fuse the queued (stored, unfused) events."),
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """Fuse what an interrupted ingest left stored but unfused (`memfuse stats` counts it)."""
    if not pending:
        raise MemFuseError("nothing to do: say what to fuse (--pending)")
    out = console()
    with _open(data_dir, namespace, writer=True) as memory:
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
    user: str | None = typer.Option(None, "--user", help="Who asks ('I/me/my' resolve to them)."),
    k: int = typer.Option(20, "-k", min=1, help="Events in the context."),
    system: str = typer.Option("memfuse", "--system", help="memfuse | naive_rag | bm25 | hybrid"),
    as_json: bool = typer.Option(
        False, "--json", help="Print the context as JSON lines; with --system memfuse a last "
        'line {"trace": …} says who planned and judged each round (llm, offline, offline '
        "fallback: why).",
    ),
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """Print the retrieved context with provenance (time, device, location, id, path)."""
    from memfuse.api import decision_lines

    with _open(data_dir, namespace) as memory:
        result = memory.search_traced(query, system=system, time=_time(time), user=user, k=k)
    if as_json:
        for entry in result.context:
            sys.stdout.write(entry.model_dump_json() + "\n")
        if result.decisions:
            trace = result.model_dump(mode="json", include={"rounds", "decisions", "notes",
                                                            "stop_reason"})
            sys.stdout.write(json.dumps({"trace": trace}) + "\n")
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
    user: str | None = typer.Option(None, "--user", help="Who asks."),
    time: str | None = typer.Option(None, "--time", help="Question time (ISO); default now."),
    k: int = typer.Option(20, "-k", min=1),
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON object: answer, reader_error, decisions (who "
        "decided each step), notes and the evidence."
    ),
    data_dir: Path | None = DataDir,
    namespace: str | None = Namespace,
) -> None:
    """Answer through the `answer` graph (offline: the evidence only, and a note saying so).

    If the configured reader fails (endpoint down past MEMFUSE_LLM_RETRY_SECONDS, an empty
    reply), the evidence is still printed with a one-line reason and the exit code is 1.
    """
    from memfuse.api import decision_lines

    with _open(data_dir, namespace) as memory:
        result = memory.ask(question, user=user, time=_time(time), k=k)
    if as_json:
        sys.stdout.write(result.model_dump_json() + "\n")
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
    """Counts of events, fused nodes and edges by type."""
    with _open(data_dir, namespace) as memory:
        console().print(stats_table(memory.stats(), str(memory.store.data_dir)))


@app.command()
def synth(
    scenarios: int = typer.Option(6, "--scenarios", min=1, help="Households (one week each)."),
    seed: int = typer.Option(7, "--seed"),
    out: Path = typer.Option(Path("data/memfusebench.json"), "--out"),
    person_blind: bool = typer.Option(
        False, "--person-blind",
        help="Drop the people tags (characters) of events from devices that cannot know who "
        "is there (motion, door, climate, lights, appliances...; see eval/person_blind.py).",
    ),
) -> None:
    """Generate a MemFuseBench file procedurally (no LLM) and print its statistics."""
    from eval.synth import synth_command

    stats_ = synth_command(scenarios=scenarios, seed=seed, out=out, person_blind=person_blind)
    console().print(stats_.render())
    console().print(f"wrote {out}")


@app.command()
def bench(
    dataset: Path | None = typer.Option(
        None, "--dataset", help="MemFuseBench or LoCoMo JSON (with --suite: one more source)."
    ),
    fmt: str | None = typer.Option(None, "--format", help="memfusebench | locomo (default: detect)."),
    systems: str = typer.Option("naive_rag,bm25,hybrid,memfuse", "--systems"),
    k: int = typer.Option(20, "-k", min=1),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Questions per scenario."),
    out: Path = typer.Option(Path("bench-out"), "--out"),
    suite: bool = typer.Option(
        False, "--suite", help="Run several sources and report each system's worst gap to hybrid."
    ),
    seeds: str = typer.Option(
        "7,11", "--seeds", help="Suite: generated benchmarks to run (seed 11 is never tuned on)."
    ),
    locomo: list[Path] = typer.Option(
        [], "--locomo", help="Suite: a LoCoMo file to add as a source (repeatable)."
    ),
    dev_file: Path | None = typer.Option(
        None, "--dev-file", help="Suite: dev household (default: ../shared/dev/household_dev.json)."
    ),
    person_blind: bool = typer.Option(
        False, "--person-blind", help="Suite: add seed 7 with person-blind devices' tags removed."
    ),
    scenarios: int = typer.Option(
        6, "--scenarios", min=1, help="Suite: households per generated benchmark."
    ),
    bench_dir: Path = typer.Option(
        Path("data"), "--bench-dir", help="Suite: where generated benchmarks are cached."
    ),
    data_dir: Path | None = DataDir,
) -> None:
    """Compare systems on a benchmark; writes results.json, report.md and a chart.

    With --suite: each source into <out>/<source>/, then <out>/suite.md and suite.json.
    """
    names = [s.strip() for s in systems.split(",") if s.strip()]
    settings = load_settings(data_dir=data_dir)
    if suite:
        _bench_suite(
            names, seeds, locomo, dataset, dev_file, person_blind, scenarios, k, limit, out,
            data_dir, bench_dir, settings,
        )  # fmt: skip
        return
    if dataset is None:
        raise MemFuseError("--dataset is required (or run several sources with --suite)")
    from eval.bench import run_bench
    from eval.report import render_console_table

    results = run_bench(
        dataset, format=fmt, systems=names, k=k, limit=limit, out_dir=out,
        data_dir=data_dir or (out / "stores"), settings=settings, progress=True,
    )
    console().print(render_console_table(results))
    console().print(f"wrote {out / 'results.json'}, {out / 'report.md'}, {out / 'recall_by_category.png'}")


def _seeds(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise MemFuseError(f"--seeds: expected comma-separated integers, got {text!r}") from None


def _bench_suite(
    names: list[str], seeds: str, locomo: list[Path], dataset: Path | None,
    dev_file: Path | None, person_blind: bool, scenarios: int, k: int, limit: int | None,
    out: Path, data_dir: Path | None, bench_dir: Path, settings: MemFuseSettings,
) -> None:  # fmt: skip
    """`bench --suite`: options into a SuiteRequest; the suite itself lives in eval.suite."""
    from eval.report import render_suite_table
    from eval.suite import DEV_FILE, SuiteRequest, run_suite

    request = SuiteRequest(
        systems=names, seeds=_seeds(seeds), locomo=locomo,
        datasets=[dataset] if dataset is not None else [],
        dev_file=dev_file or DEV_FILE, person_blind=person_blind, scenarios=scenarios,
        k=k, limit=limit, out_dir=out, data_dir=data_dir or (out / "stores"), bench_dir=bench_dir,
    )  # fmt: skip
    result = run_suite(request, settings=settings, progress=True)
    out_console = console()
    out_console.print(render_suite_table(result.summary))
    for system, line in result.summary["verdicts"].items():
        out_console.print(f"{system}: {line}")
    out_console.print(f"wrote {result.markdown_path} and {result.json_path}")


@app.command("bench-perf")
def bench_perf(
    events: int = typer.Option(10_000, "--events", min=100),
    queries: int = typer.Option(200, "--queries", min=10),
    mode: str = typer.Option("plain", "--mode", help="plain | fused"),
    data_dir: Path | None = DataDir,
) -> None:
    """Ingest events/s and search p50/p95 latency on synthetic events."""
    from eval.perf import run_perf

    report = run_perf(n_events=events, n_queries=queries, mode=mode, data_dir=data_dir)
    console().print(report.render())


@app.command()
def optimize(
    target: str = typer.Option(..., "--target", help="planner | judge | fusion"),
    optimizer: str = typer.Option(..., "--optimizer", help="bootstrap | mipro | gepa | grid"),
    dataset: Path = typer.Option(
        ..., "--dataset", help="MemFuseBench JSON (LoCoMo: planner/judge only)."
    ),
    train_scenarios: str | None = typer.Option(
        None, "--train-scenarios", help="Scenario ids, e.g. S1,S2 (default: the first 4)."
    ),
    dev_scenarios: str | None = typer.Option(
        None, "--dev-scenarios", help="Scenario ids (default: the last 2)."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Result file (default: programs/<standard name>.json)."
    ),
    k: int = typer.Option(20, "-k", min=1, help="Context size the evidence recall is measured at."),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Questions (fusion: episode slices) per scenario."
    ),
    max_demos: int = typer.Option(4, "--max-demos", min=0, help="Bootstrapped demos/predictor."),
    auto: str = typer.Option("light", "--auto", help="mipro/gepa budget: light | medium | heavy."),
    num_candidates: int | None = typer.Option(
        None, "--num-candidates", min=1, help="mipro candidates (with --num-trials)."
    ),
    num_trials: int | None = typer.Option(
        None, "--num-trials", min=1, help="mipro trials (with --num-candidates)."
    ),
    max_metric_calls: int | None = typer.Option(
        None, "--max-metric-calls", min=1, help="gepa budget instead of --auto."
    ),
    data_dir: Path | None = DataDir,
) -> None:
    """Tune a decision on the benchmark (train/dev split by scenario); save it with a manifest."""
    from eval.optimize import DSPyOptions, OptimizeRequest
    from eval.optimize import optimize as run
    from eval.optimize.report import score_table

    if auto not in ("light", "medium", "heavy"):
        raise MemFuseError(f"--auto: expected light, medium or heavy, got {auto!r}")
    request = OptimizeRequest(
        target=target, optimizer=optimizer, dataset=dataset,  # type: ignore[arg-type]
        train_scenarios=train_scenarios, dev_scenarios=dev_scenarios, out=out, k=k, limit=limit,
        data_dir=(data_dir / "optimize-stores") if data_dir else None,
        dspy=DSPyOptions(
            max_demos=max_demos, auto=auto,  # type: ignore[arg-type]
            num_candidates=num_candidates, num_trials=num_trials,
            max_metric_calls=max_metric_calls,
        ),
        settings=load_settings(data_dir=data_dir),
    )
    result = run(request)
    out_console = console()
    out_console.print(score_table(result.manifest))
    if result.grid is not None:
        verdict = "beats" if result.manifest["beats_defaults"] else "does not beat"
        out_console.print(f"best point: {result.manifest['best_label']} — {verdict} the shipped "
                          "defaults (train better, dev not worse)")
    out_console.print(f"wrote {result.program_path} and {result.manifest_path}")


@app.command("show-question")
def show_question(
    dataset: Path = typer.Option(..., "--dataset"),
    index: int = typer.Option(0, "--index", min=0, help="Question number in the first scenario."),
    system: str = typer.Option("memfuse", "--system"),
    data_dir: Path | None = DataDir,
) -> None:
    """One benchmark question: gold answer, retrieved context with provenance, gold evidence marked ✓."""
    from eval.showcase import show_question as run

    run(dataset, index=index, system=system, data_dir=data_dir, out=console())


def _click_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(usage/click errors, aborts) of click itself and of the copy typer ships inside it
    (`typer._click`, typer >= 0.16): typer raises the latter, which `click.*` never catches."""
    errors: list[type[BaseException]] = [click.exceptions.ClickException]
    aborts: list[type[BaseException]] = [click.exceptions.Abort, typer.Abort]
    try:
        from typer._click import exceptions as vendored  # private, so looked up defensively
    except ImportError:
        pass
    else:
        errors.append(vendored.ClickException)
    return tuple(errors), tuple(aborts)


def error_message(exc: BaseException) -> str:
    """The one line a failed command prints after `memfuse: error: `.

    MemFuse's own errors already say what and where; low-level ones that got this far
    (a full disk during a Chroma flush, a file the store could not name) are mapped by
    `storage_fault`; anything else is named by its type, with the way to see more.
    """
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = f"{where}: {first['msg']}"
    elif isinstance(exc, MemFuseError):
        message = str(exc)
    elif isinstance(exc, json.JSONDecodeError):
        message = f"invalid JSON: {exc}"
    elif isinstance(exc, UnicodeDecodeError):
        message = f"not valid UTF-8 text ({exc.reason} at byte {exc.start})"
    elif (fault := storage_fault(exc, _data_dir_in_use)) is not None:
        message = str(fault)
    elif isinstance(exc, OSError) and exc.strerror:  # a refused connection, a timeout…
        message = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    else:
        message = f"unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)"
    return " ".join(message.split())  # one line, whatever the message held


def _debugging() -> bool:
    return _debug or os.environ.get(_DEBUG_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def main() -> None:
    """Entry point: one `memfuse: error: …` line; exit 2 for usage errors (click's code), 1 for
    bad input, a rejected operation or a data-dir fault (with --debug: the traceback first),
    130 when interrupted."""
    global _debug, _data_dir_in_use
    _debug, _data_dir_in_use = False, None  # main() may run more than once in one process
    click_errors, aborts = _click_errors()
    try:
        app(standalone_mode=False)
    except aborts:
        console().print("interrupted", style="red")
        sys.exit(130)
    except click_errors as exc:
        message = str(exc.format_message())  # type: ignore[attr-defined]
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `memfuse`: the help is the message
            print(message, file=sys.stderr)
        else:
            print(f"memfuse: error: {' '.join(message.split())}", file=sys.stderr)
        sys.exit(exc.exit_code)  # type: ignore[attr-defined]
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 — every failure ends as one line (or --debug)
        if _debugging():
            traceback.print_exception(exc, file=sys.stderr)
        print(f"memfuse: error: {error_message(exc)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
