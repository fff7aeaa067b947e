"""The verification graph's nodes: load → verify → (correct → verify)… → report.

Nodes are `(state, runtime) -> partial state` functions wrapped by `graphs.state.node`. The
dataset is read once per file version (`_read`), and each pass verifies the file with the edits
so far applied. An unusable LLM reply never costs a question its offline verdict: a reader that
fails is noted and its reading skipped, a corrector that fails falls back to the offline twin.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

import dspy
from langgraph.runtime import Runtime

from eval.verify.correct import llm_edit, offline_edit
from eval.verify.findings import Edit, Finding
from eval.verify.graph.context import VerificationContext, context_of, reader_lms, verification_lm
from eval.verify.graph.state import State, key
from eval.verify.report import (
    build_report,
    dataset_text,
    output_paths,
    render_markdown,
    write_atomic,
)
from eval.verify.signatures import QuestionCorrector, ScenarioReader
from eval.verify.verifiers import verify_scenario
from eval.verify.view import (
    LoadedBench,
    VerifyScenario,
    apply_edits,
    line,
    load_bench,
    scenarios_of,
)
from graphs.state import fresh_run, node
from memory.formats.memfusebench import Question
from signatures.lm import describe_failure
from signatures.retry import LLMProviderError


@lru_cache(maxsize=4)
def _read_version(path: str, mtime_ns: int, size: int) -> LoadedBench:
    return load_bench(Path(path))


def read(path: str) -> LoadedBench:
    """The file as read (cached until it changes on disk)."""
    stat = Path(path).stat() if Path(path).is_file() else None
    if stat is None:
        return load_bench(Path(path))  # raises the one-line "no such file"
    return _read_version(str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size)


def current(bench: LoadedBench, edits: list[Edit]) -> list[VerifyScenario]:
    """The scenarios as they stand after the edits."""
    if not edits:
        return bench.scenarios
    return scenarios_of(apply_edits(bench, edits, final=False), bench.format, bench.path.name)


@node
def load(state: State, runtime: Runtime[VerificationContext]) -> dict[str, Any]:
    """Start afresh from this run's input and read the file (a bad file stops the run here)."""
    context_of(runtime)
    verification_lm(context_of(runtime))  # policy llm without a model fails here, named
    bench = read(state.dataset)
    output_paths(bench.path, Path(state.out_dir))  # refuses to write over the input
    return {
        **fresh_run(State),
        "source": state.dataset,
        "destination": state.out_dir,
        "questions": bench.n_questions(),
        "status": "running",
    }


@node
def verify(state: State, runtime: Runtime[VerificationContext]) -> dict[str, Any]:
    """Run every offline verifier (and, with an LLM, every reader) on the pending questions."""
    context = context_of(runtime)
    bench = read(state.source)
    found: list[Finding] = []
    notes: list[str] = []
    pending = None if state.pending is None else set(state.pending)
    for scenario in current(bench, state.edits):
        wanted = [
            q.question_id
            for q in scenario.questions
            if pending is None or key(scenario.scenario_id, q.question_id) in pending
        ]
        if not wanted:
            continue
        found += verify_scenario(scenario, wanted)
        readings, failed = _read_questions(context, scenario, wanted)
        found += readings
        notes += failed
    return {"findings": found, "all_findings": found, "round": state.round + 1, "notes": notes}


@node
def correct(state: State, runtime: Runtime[VerificationContext]) -> dict[str, Any]:
    """Decide each flagged question: revise, drop or keep; revised ones are verified again."""
    lm = verification_lm(context_of(runtime))
    scenarios = {s.scenario_id: s for s in current(read(state.source), state.edits)}
    grouped: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for found in state.findings:
        grouped[found.scenario_id, found.question_id].append(found)
    edits: list[Edit] = []
    for (sid, qid), findings in grouped.items():
        scenario = scenarios[sid]
        question = next(q for q in scenario.questions if q.question_id == qid)
        if lm is None:
            edits.append(offline_edit(scenario, question, findings))
        else:
            with dspy.context(lm=lm):
                edits.append(llm_edit(QuestionCorrector(), scenario, question, findings))
    pending = [key(e.scenario_id, e.question_id) for e in edits if e.outcome == "revised"]
    return {"edits": edits, "pending": pending, "findings": []}


@node
def report(state: State, runtime: Runtime[VerificationContext]) -> dict[str, Any]:
    """Drop what is still flagged, write the corrected dataset and the reports."""
    bench = read(state.source)
    still = {(f.scenario_id, f.question_id) for f in state.findings}
    closing = [
        Edit(
            scenario_id=sid,
            question_id=qid,
            outcome="dropped",
            reason=f"still flagged after {state.round - 1} correction round(s)",
        )
        for sid, qid in sorted(still)
    ]
    edits = [*state.edits, *closing]
    dataset_path, json_path, md_path = output_paths(bench.path, Path(state.destination))
    write_atomic(dataset_path, dataset_text(apply_edits(bench, edits), bench.format))
    summary = build_report(bench, state.all_findings, edits, state.round, dataset_path)
    import json

    write_atomic(json_path, json.dumps(summary, ensure_ascii=False, indent=1) + "\n")
    write_atomic(md_path, render_markdown(summary))
    totals = {k: v for k, v in summary.items() if k not in ("flagged_questions",)}
    return {
        "edits": closing,
        "findings": [],
        "status": "done",
        "summary": totals,
        "output_dataset": str(dataset_path),
        "report_json": str(json_path),
        "report_markdown": str(md_path),
    }


def _read_questions(
    context: VerificationContext, scenario: VerifyScenario, wanted: list[str]
) -> tuple[list[Finding], list[str]]:
    """Each reader answers each wanted question from the whole scenario; a judge compares."""
    lms = reader_lms(context)
    if not lms:
        return [], []
    found: list[Finding] = []
    notes: list[str] = []
    questions = {q.question_id: q for q in scenario.questions}
    for qid in wanted:
        question = questions[qid]
        lines = _known_at(scenario, question)
        for label, lm in lms:
            for prompt in context.reader_prompts:
                name = prompt if label == "default" else f"{prompt}@{label}"
                try:
                    with dspy.context(lm=lm):
                        reading = ScenarioReader(prompt)(
                            scenario=lines,
                            asked_by=question.question_user or "",
                            asked_at=str(question.question_time or ""),
                            question=question.question,
                            reference=question.answer,
                        )
                except LLMProviderError:
                    raise
                except Exception as exc:  # noqa: BLE001 - an unusable reply is noted, skipped
                    notes.append(f"reader {name} on {qid}: {describe_failure(exc)}")
                    continue
                if not reading.agrees:
                    found.append(
                        Finding(
                            scenario_id=scenario.scenario_id,
                            question_id=qid,
                            kind="reader_disagrees",
                            reason=f"reader {name} answered {reading.answer!r}: {reading.reason}",
                            by=f"reader:{name}",
                        )
                    )
    return found, notes


def _known_at(scenario: VerifyScenario, question: Question) -> list[str]:
    """The scenario's events up to the asking time, one a line."""
    asked = question.question_time
    return [line(e) for e in scenario.events.values() if asked is None or e.timestamp <= asked]
