"""`memfuse check-dataset`: the independent checker a synthesized benchmark file must pass.

It applies `eval.synth.graph.checks.check_benchmark`, the very checks the synthesis pipeline's
reviewers run before their LLM, to a finished file, and reports every issue rather than the
first: a file the loader refuses (`memfusebench_io.parse` stops at its first broken
reference) is still read model by model so that all of its problems are listed. Only
MemFuseBench files are checked; a LoCoMo file gets a note, since it carries none of the
artifacts (personas, devices, distractors) the checks are about.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from eval.leakage import LeakageReport, measure_leakage
from eval.synth.artifacts import Issue
from eval.synth.graph.checks import check_benchmark
from memfuse.render import safe
from memory.errors import MemFuseError
from memory.formats.loader import benchmark_format
from memory.formats.memfusebench import DatasetError, MemFuseBench
from memory.formats.memfusebench_io import parse

FORMATS = ("memfusebench", "locomo")
EXAMPLES = 3  # messages shown per (scenario, code)


@dataclass
class CheckReport:
    """What checking one file found; `passed` decides the exit status."""

    path: Path
    format: str
    issues: dict[str, list[Issue]] = field(default_factory=dict)
    loader_error: str | None = None  # why `memfusebench_io.parse` refused the file
    note: str | None = None  # why the file was not checked
    leakage: LeakageReport | None = None  # what the wording gives away: reported, not failed

    @property
    def total(self) -> int:
        return sum(len(found) for found in self.issues.values())

    @property
    def passed(self) -> bool:
        return self.total == 0 and self.loader_error is None

    def counts(self) -> Counter[tuple[str, str]]:
        """Issues by (scenario id, code)."""
        return Counter((sid, i.code) for sid, found in self.issues.items() for i in found)

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "file": str(self.path),
            "format": self.format,
            "passed": self.passed,
            "total": self.total,
            "loader_error": self.loader_error,
            "note": self.note,
            "leakage": self.leakage.to_json() if self.leakage is not None else None,
            "issues": {
                sid: [i.model_dump(mode="json") for i in found]
                for sid, found in self.issues.items()
            },
        }
        return json.dumps(data, ensure_ascii=False, indent=1)


def check_dataset(path: Path, fmt: str | None = None) -> CheckReport:
    """Read a benchmark file and run every deterministic check on it."""
    if fmt is not None and fmt not in FORMATS:
        raise MemFuseError(f"--format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    try:
        raw = json.loads(Path(path).read_bytes())
    except OSError as exc:
        raise DatasetError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{Path(path).name}: not valid JSON ({exc})") from None
    fmt = fmt or benchmark_format(raw)
    if fmt == "locomo":
        note = "only MemFuseBench files are checked; this is a LoCoMo file, left unchecked"
        return CheckReport(path=path, format=fmt, note=note)
    bench, loader_error = _read(raw, Path(path).name)
    return CheckReport(
        path=path,
        format=fmt,
        issues=check_benchmark(bench),
        loader_error=loader_error,
        leakage=measure_leakage(bench),
    )


def _read(raw: Any, origin: str) -> tuple[MemFuseBench, str | None]:
    """The bench as the loader reads it; if the loader refuses it on a cross-reference, the
    bench as its models read it (the checks then list every such fault), with the refusal."""
    try:
        return parse(raw, origin=origin), None
    except DatasetError as refusal:
        try:
            return MemFuseBench.model_validate(raw), str(refusal)
        except ValidationError:
            raise refusal from None  # not even the models accept it: that is the message


def render(report: CheckReport, out: Console, examples: int = EXAMPLES) -> None:
    """A table of issue counts by scenario and code, then the first few messages of each."""
    if report.note is not None:
        out.print(f"[yellow]{safe(report.note)}[/yellow]")
        return
    if report.loader_error is not None:
        out.print(f"[red]the loader refuses this file:[/red] {safe(report.loader_error)}")
    counts = report.counts()
    scenarios = len(report.issues)
    if not counts:
        verdict = "passes" if report.loader_error is None else "fails"
        out.print(f"{safe(str(report.path))}: {scenarios} scenario(s), no issues — {verdict}")
        _render_leakage(report.leakage, out)
        return
    table = Table(title=f"{safe(str(report.path))}: {report.total} issue(s)")
    for column in ("scenario", "stage", "code", "issues"):
        table.add_column(column, justify="right" if column == "issues" else "left")
    stages = {(sid, i.code): i.stage for sid, found in report.issues.items() for i in found}
    for (sid, code), n in sorted(counts.items()):
        table.add_row(safe(sid), stages[sid, code], code, str(n))
    out.print(table)
    for sid, found in report.issues.items():
        shown: Counter[str] = Counter()
        for issue in found:
            shown[issue.code] += 1
            if shown[issue.code] <= examples:
                out.print(f"{safe(sid)} [bold]{issue.code}[/bold]: {safe(issue.message)}")
    clean = sum(1 for found in report.issues.values() if not found)
    out.print(f"{scenarios} scenario(s), {clean} without issues")
    _render_leakage(report.leakage, out)


def _render_leakage(leakage: LeakageReport | None, out: Console) -> None:
    """What the wording gives away (see `eval.leakage`), measured but never a failure: a
    hand-written file is not wrong for being written by people."""
    if leakage is None:
        return
    out.print("[bold]wording leakage[/bold] (measured, not a check):")
    for line in leakage.verdicts():
        colour = "yellow" if "above the target" in line else "green"
        out.print(f"  [{colour}]{safe(line)}[/{colour}]")
    for text, n in leakage.most_repeated:
        out.print(f"  {n}× {safe(text)}")
