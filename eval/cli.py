"""The benchmark's commands, mounted into `memfuse` as a plugin.

`memfuse` may not import `eval` (the public package never drags in the benchmark), so
these commands are declared in pyproject.toml under the `memfuse.commands` entry-point
group and `memfuse.cli` merges them in at startup: `memfuse bench …` works as if built in.
Options and the error contract come from `memfuse.cli_common` (eval may import memfuse),
so a failing `memfuse bench` reads exactly like a failing `memfuse ingest`. Heavy imports
stay inside the commands: loading this plugin costs every `memfuse` call (`--help` too), so
this module imports typer and `memfuse.cli_common` only (tests/memfuse/test_cli_conventions.py
checks that listing these commands loads no settings, data model, Rich or memory).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from memfuse.cli_common import STDIN, DataDir, choice, input_path, usage_error
from memfuse.render import console

if TYPE_CHECKING:
    from memfuse.settings import MemFuseSettings

BENCH_SYSTEMS = ("naive_rag", "bm25", "hybrid", "memfuse")  # `bench` without --suite

app = typer.Typer(
    add_completion=False,
    help="MemFuseBench and LoCoMo: generate, benchmark, tune, inspect.",
    pretty_exceptions_enable=False,
)


@app.command()
def synth(
    scenarios: int = typer.Option(6, "--scenarios", min=1, help="Households (one week each)."),
    seed: int = typer.Option(7, "--seed"),
    out: Path = typer.Option(Path("data/memfusebench.json"), "--out"),
    person_blind: bool = typer.Option(
        False,
        "--person-blind",
        help="Drop the people tags (characters) of events from devices that cannot know who "
        "is there (motion, door, climate, lights, appliances...; see eval/person_blind.py).",
    ),
    realism: str = typer.Option(
        "realistic",
        "--realism",
        help="realistic: people tags only where a device can know who it is, no shared sensor "
        "boilerplate, gold evidence limited to what the checklist uses, many questions without "
        "a time phrase; or legacy, the earlier generator, for comparing with older numbers "
        "(see eval/synth/realism.py).",
    ),
    llm: bool = typer.Option(
        False,
        "--llm",
        help="Run the synthesis graph with the LLM drafting, reviewing and correcting every "
        "stage (needs MEMFUSE_LLM_MODEL); a line per accepted stage on stderr.",
    ),
    checkpoint: Path | None = typer.Option(
        None,
        "--checkpoint",
        help="SQLite file of the synthesis graph's checkpoints: run the same command again to "
        "continue an interrupted run (finished scenarios are read back, not redone).",
    ),
    verified: bool = typer.Option(
        True,
        "--verify/--no-verify",
        help="Verify what was generated (the offline `memfuse verify` pass) and write the "
        "corrected dataset, with <name>.verify-report.json and .md beside it; --no-verify "
        "writes the generator's output as it is.",
    ),
) -> None:
    """Generate a MemFuseBench file through the synthesis graph and print its statistics:
    procedural drafts and deterministic review offline (--llm: the LLM drafts, reviews and
    corrects); then verify and publish the corrected file (--no-verify: as generated)."""
    import sys

    from eval.synth.command import synth_command
    from eval.synth.realism import REALISMS

    choice("--realism", realism, REALISMS, "realism")
    made = synth_command(
        scenarios, seed, out, llm=llm, checkpoint=checkpoint, person_blind=person_blind,
        realism=realism, verify=verified,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )  # fmt: skip
    console().print(made.stats.render())
    report = made.verification
    if report is not None:
        from eval.verify.publish import report_paths

        console().print(
            f"verified: {report['questions']} questions, {report['flagged']} flagged: "
            f"{report['revised']} revised, {report['dropped']} dropped, {report['kept']} kept "
            f"(reports: {', '.join(map(str, report_paths(out)))})"
        )
    console().print(f"wrote {out}")


@app.command()
def bench(
    dataset: Path | None = typer.Option(
        None, "--dataset", help="MemFuseBench or LoCoMo JSON (with --suite: one more source)."
    ),
    fmt: str | None = typer.Option(
        None, "--format", help="memfusebench | locomo (default: detect)."
    ),
    systems: str | None = typer.Option(
        None,
        "--systems",
        help="Comma-separated (default: naive_rag,bm25,hybrid,memfuse; with --suite also "
        "memfuse_no_ar,memfuse_no_fusion,memfuse_no_moments). Missing baselines are added "
        "with --suite.",
    ),
    k: int = typer.Option(20, "-k", min=1),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Questions per scenario."),
    out: Path = typer.Option(Path("bench-out"), "--out"),
    suite: bool = typer.Option(
        False,
        "--suite",
        help="Run several sources and report each system's worst gap to the best baseline.",
    ),
    seeds: str = typer.Option(
        "7,11", "--seeds", help="Suite: generated benchmarks to run (seed 11 is never tuned on)."
    ),
    locomo: list[Path] = typer.Option(
        [], "--locomo", help="Suite: a LoCoMo file to add as a source (repeatable)."
    ),
    dev_file: list[Path] = typer.Option(
        [],
        "--dev-file",
        help="Suite: a dev household (repeatable; default: ../shared/dev/household_dev.json "
        "and household_dev2.json).",
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
    as_asker: bool = typer.Option(
        False,
        "--as-asker",
        help="Ask each question as its asker, with visibility enforced (default: every question "
        "reads the whole memory). Compare the two runs to see how much the questions rely on "
        "other people's private events.",
    ),
    data_dir: Path | None = DataDir,
) -> None:
    """Compare systems on a benchmark; writes results.json, report.md and a chart.

    With --suite: each source into <out>/<source>/, then <out>/suite.md and suite.json.
    """
    from eval.systems import SYSTEMS
    from memfuse.settings import load_settings
    from memory.formats.models import FORMATS

    if fmt is not None:
        choice("--format", fmt, FORMATS, "format")
    names = [s.strip() for s in (systems or "").split(",") if s.strip()]
    for name in names:
        choice("--systems", name, tuple(SYSTEMS), "system")
    if suite:
        seed_list = _seeds(seeds)
        _bench_suite(
            names, seed_list, locomo, dataset, dev_file, person_blind, scenarios, k, limit, out,
            data_dir, bench_dir, load_settings(data_dir=data_dir),
        )  # fmt: skip
        return
    if dataset is None:
        raise usage_error("--dataset is required (or run several sources with --suite)")
    settings = load_settings(data_dir=data_dir)
    from eval.bench import run_bench
    from eval.report import render_console_table

    results = run_bench(
        dataset,
        format=fmt,
        systems=names or list(BENCH_SYSTEMS),
        k=k,
        limit=limit,
        out_dir=out,
        data_dir=data_dir or (out / "stores"),
        settings=settings,
        progress=True,
        as_asker=as_asker,
    )
    console().print(render_console_table(results))
    console().print(
        f"wrote {out / 'results.json'}, {out / 'report.md'}, {out / 'recall_by_category.png'}"
    )


def _seeds(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(
            f"expected comma-separated integers, got {text!r}", param_hint="'--seeds'"
        ) from None


def _bench_suite(
    names: list[str], seeds: list[int], locomo: list[Path], dataset: Path | None,
    dev_files: list[Path], person_blind: bool, scenarios: int, k: int, limit: int | None,
    out: Path, data_dir: Path | None, bench_dir: Path, settings: MemFuseSettings,
) -> None:  # fmt: skip
    """`bench --suite`: options into a SuiteRequest; the suite itself lives in eval.suite."""
    from eval.report import render_suite_table
    from eval.suite import DEFAULT_SYSTEMS, DEV_FILES, SuiteRequest, run_suite

    request = SuiteRequest(
        systems=names or DEFAULT_SYSTEMS, seeds=seeds, locomo=locomo,
        datasets=[dataset] if dataset is not None else [],
        dev_files=dev_files or DEV_FILES, person_blind=person_blind, scenarios=scenarios,
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
    embedder: str = typer.Option(
        "model",
        "--embedder",
        help="model (the configured embedding model) | hashing (no model, hashed words: "
        "measures the store at sizes where the model's time would hide it).",
    ),
    stream: int = typer.Option(
        0,
        "--stream",
        min=0,
        help="After the bulk ingest, this many more events one `ingest` call each (a live "
        "household): per-event latency p50/p95.",
    ),
    data_dir: Path | None = DataDir,
) -> None:
    """Ingest events/s (all, first and last tenth), store size, peak RSS, packs and their
    purity, search / controller p50/p95 latency and, with --stream, per-event ingest latency,
    on the synthesis stages' household-weeks laid end to end."""
    from eval.perf import run_perf

    choice("--mode", mode, ("plain", "fused"), "mode")
    choice("--embedder", embedder, ("model", "hashing"), "embedder")
    report = run_perf(
        n_events=events,
        n_queries=queries,
        mode=mode,
        data_dir=data_dir,
        embedder=embedder,
        stream=stream,
    )
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
    from eval.optimize import OPTIMIZERS, DSPyOptions, OptimizeRequest
    from eval.optimize import optimize as run
    from eval.optimize.report import score_table
    from memfuse.settings import load_settings
    from signatures.programs import PROGRAM_TARGETS

    choice("--target", target, PROGRAM_TARGETS, "target")
    choice("--optimizer", optimizer, OPTIMIZERS, "optimizer")
    choice("--auto", auto, ("light", "medium", "heavy"), "budget")
    request = OptimizeRequest(
        target=target,
        optimizer=optimizer,
        dataset=dataset,  # type: ignore[arg-type]
        train_scenarios=train_scenarios,
        dev_scenarios=dev_scenarios,
        out=out,
        k=k,
        limit=limit,
        data_dir=(data_dir / "optimize-stores") if data_dir else None,
        dspy=DSPyOptions(
            max_demos=max_demos,
            auto=auto,  # type: ignore[arg-type]
            num_candidates=num_candidates,
            num_trials=num_trials,
            max_metric_calls=max_metric_calls,
        ),
        settings=load_settings(data_dir=data_dir),
    )
    result = run(request)
    out_console = console()
    out_console.print(score_table(result.manifest))
    if result.grid is not None:
        verdict = "beats" if result.manifest["beats_defaults"] else "does not beat"
        out_console.print(
            f"best point: {result.manifest['best_label']} — {verdict} the shipped "
            "defaults (train better, dev not worse)"
        )
    out_console.print(f"wrote {result.program_path} and {result.manifest_path}")


@app.command("show-question")
def show_question(
    dataset: Path = typer.Option(..., "--dataset"),
    index: int = typer.Option(0, "--index", min=0, help="Question number in the first scenario."),
    question_id: str | None = typer.Option(
        None, "--question", help="A question id, in any scenario (instead of --index)."
    ),
    system: str = typer.Option("memfuse", "--system"),
    data_dir: Path | None = DataDir,
) -> None:
    """One benchmark question: gold answer, retrieved context with provenance, gold evidence
    marked ✓."""
    from eval.showcase import show_question as run
    from eval.systems import SYSTEMS

    choice("--system", system, tuple(SYSTEMS), "system")
    run(
        dataset,
        index=index,
        question_id=question_id,
        system=system,
        data_dir=data_dir,
        out=console(),
    )


@app.command("check-dataset")
def check_dataset(
    file: Path = typer.Argument(..., help="A MemFuseBench JSON file ('-' for standard input)."),
    fmt: str | None = typer.Option(
        None, "--format", help="memfusebench | locomo (default: detect; LoCoMo is not checked)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Every issue as JSON on stdout."),
) -> None:
    """Run every deterministic check of the synthesis pipeline on a benchmark file; exit 1 if
    any issue is found (the independent checker a synthesized file must pass)."""
    import dataclasses
    import sys

    from eval.check import check_dataset as run_checks
    from eval.check import render
    from memory.formats.models import FORMATS

    if fmt is not None:
        choice("--format", fmt, FORMATS, "format")
    with input_path(file) as (path, name):
        report = run_checks(path, fmt)
    if str(file) == STDIN:
        report = dataclasses.replace(report, path=Path(name))
    if as_json:
        sys.stdout.write(report.to_json() + "\n")
    else:
        render(report, console())
    if not report.passed:
        raise SystemExit(1)


@app.command()
def verify(
    file: Path = typer.Argument(..., help="A MemFuseBench or LoCoMo JSON file (never modified)."),
    out: Path = typer.Option(
        Path("verify-out"),
        "--out",
        help="Folder for the corrected dataset and verify-report.json / verify-report.md.",
    ),
    llm: bool = typer.Option(
        False,
        "--llm",
        help="Also let LLM readers answer every question from the whole scenario, a judge "
        "compare them with the gold, and the LLM corrector revise (needs MEMFUSE_LLM_MODEL).",
    ),
    reader_models: str | None = typer.Option(
        None, "--reader-models", help="With --llm: more chat models to read with, comma-separated."
    ),
    rounds: int = typer.Option(2, "--rounds", min=1, help="Correction rounds before dropping."),
) -> None:
    """Verify a benchmark file: flag doubtful questions, correct or drop them, and report."""
    from eval.verify.graph import VerificationContext
    from eval.verify.run import verify_file

    models = [m.strip() for m in (reader_models or "").split(",") if m.strip()]
    context = VerificationContext(
        policy="llm" if llm else "offline", max_rounds=rounds, reader_models=models
    )
    result = verify_file(file, out, context)
    summary = result.summary
    out_console = console()
    out_console.print(
        f"{summary['questions']} questions, {summary['flagged']} flagged: "
        f"{summary['revised']} revised, {summary['dropped']} dropped, {summary['kept']} kept"
    )
    for kind, n in summary["by_kind"].items():
        out_console.print(
            f"  {kind}: {n['flagged']} flagged ({n['revised']} revised, {n['dropped']} dropped, "
            f"{n['kept']} kept)"
        )
    for note in result.notes:
        out_console.print(f"note: {note}")
    out_console.print(
        f"wrote {result.output_dataset}, {result.report_json} and {result.report_markdown}"
    )
