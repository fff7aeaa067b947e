"""The verification report (JSON and Markdown) and the corrected dataset, written atomically.

Counts are of questions: a question flagged twice for one kind counts once under it, and its
outcome is the corrector's last decision. The corrected dataset is the input document with the
edits applied; it is never written over the input.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from eval.verify.findings import KINDS, Edit, Finding
from eval.verify.view import LoadedBench
from memory.errors import InputFormatError


def build_report(
    bench: LoadedBench, findings: list[Finding], edits: list[Edit], rounds: int, output: Path
) -> dict[str, Any]:
    """The report as a JSON-plain dict."""
    final = {(e.scenario_id, e.question_id): e for e in edits}  # the last decision stands
    flagged: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for finding in findings:
        flagged[finding.scenario_id, finding.question_id].append(finding)
    texts = {
        (s.scenario_id, q.question_id): q.question for s in bench.scenarios for q in s.questions
    }
    by_kind: dict[str, dict[str, int]] = {
        kind: {"flagged": 0, "revised": 0, "dropped": 0, "kept": 0} for kind in KINDS
    }
    entries = []
    for key, found in flagged.items():
        edit = final.get(key)
        outcome = edit.outcome if edit is not None else "kept"
        for kind in dict.fromkeys(f.kind for f in found):
            by_kind[kind]["flagged"] += 1
            by_kind[kind][outcome] += 1
        entries.append(
            {
                "scenario_id": key[0],
                "question_id": key[1],
                "question": texts.get(key, ""),
                "kinds": list(dict.fromkeys(f.kind for f in found)),
                "findings": [f.model_dump(mode="json") for f in found],
                "outcome": outcome,
                "outcome_reason": edit.reason if edit is not None else "no correction decided",
                "decided_by": edit.by if edit is not None else "",
            }
        )
    outcomes = [e["outcome"] for e in entries]
    return {
        "file": str(bench.path),
        "format": bench.format,
        "output": str(output),
        "questions": bench.n_questions(),
        "flagged": len(entries),
        "revised": outcomes.count("revised"),
        "dropped": outcomes.count("dropped"),
        "kept": outcomes.count("kept"),
        "rounds": rounds,
        "by_kind": {k: v for k, v in by_kind.items() if v["flagged"]},
        "flagged_questions": entries,
    }


def render_markdown(report: dict[str, Any]) -> str:
    """The report for people: totals, a table per kind, then every flagged question."""
    lines = [
        f"# Verification of `{report['file']}`",
        "",
        (
            f"{report['questions']} questions ({report['format']}), {report['flagged']} flagged: "
            f"{report['revised']} revised, {report['dropped']} dropped, {report['kept']} kept "
            f"({report['rounds']} verification round(s)). Corrected dataset: `{report['output']}`."
        ),
        "",
        "| kind | flagged | revised | dropped | kept |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for kind, n in report["by_kind"].items():
        lines.append(f"| {kind} | {n['flagged']} | {n['revised']} | {n['dropped']} | {n['kept']} |")
    lines += ["", "## Flagged questions", ""]
    for entry in report["flagged_questions"]:
        lines.append(f"### {entry['scenario_id']} / {entry['question_id']} — {entry['outcome']}")
        lines.append("")
        lines.append(f"> {entry['question']}")
        lines.append("")
        for found in entry["findings"]:
            lines.append(f"- **{found['kind']}** ({found['by']}): {found['reason']}")
        lines.append(f"- outcome: {entry['outcome']} — {entry['outcome_reason']}")
        lines.append("")
    return "\n".join(lines) + "\n"


def write_atomic(path: Path, text: str) -> Path:
    """Write through a temporary file in the same folder, then rename over the target."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def output_paths(source: Path, out_dir: Path) -> tuple[Path, Path, Path]:
    """The corrected dataset, the JSON report and the Markdown report; never the input."""
    dataset = out_dir / f"{source.stem}.verified.json"
    if dataset.resolve() == source.resolve():
        raise InputFormatError(f"refusing to overwrite the input {str(source)!r}")
    return dataset, out_dir / "verify-report.json", out_dir / "verify-report.md"


def dataset_text(raw: Any, fmt: str) -> str:
    """The corrected document; MemFuseBench in the writer's layout (keys sorted, indent 1)."""
    if fmt == "memfusebench":
        return json.dumps(raw, sort_keys=True, ensure_ascii=False, indent=1) + "\n"
    return json.dumps(raw, ensure_ascii=False, indent=1) + "\n"
