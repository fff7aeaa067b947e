"""The last step of `memfuse synth`: verify the file just written and publish the corrected one.

The generator writes its dataset; the verification graph (offline, the same one `memfuse
verify` runs) flags and corrects it in a scratch folder; the corrected dataset then replaces
the written one, in the writer's layout, and the reports land next to it as
`<stem>.verify-report.json` and `<stem>.verify-report.md`. Both name the published file, never
the scratch copy, so a seed still gives byte-identical files.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from eval.verify.graph import VerificationContext
from eval.verify.report import render_markdown, write_atomic
from eval.verify.run import verify_file
from memory.formats.memfusebench_io import dump, load


def report_paths(out: Path) -> tuple[Path, Path]:
    """Where the reports of a published `out` go: beside it, named after it."""
    return (
        out.with_name(f"{out.stem}.verify-report.json"),
        out.with_name(f"{out.stem}.verify-report.md"),
    )


def publish_verified(
    out: Path, context: VerificationContext | None = None, source: Path | None = None
) -> dict[str, Any]:
    """Verify the MemFuseBench file `source` (default: `out` itself), write the corrected
    dataset to `out` (replaced in one step: a reader never sees half a file) and the reports
    beside it; returns the report (totals, counts per kind, every flagged question)."""
    out = Path(out)
    with tempfile.TemporaryDirectory(prefix="memfuse-verify-") as scratch:
        raw = Path(scratch) / out.name
        raw.write_bytes(Path(source or out).read_bytes())
        result = verify_file(raw, Path(scratch) / "verified", context)
        if result.output_dataset is None or result.report_json is None:
            raise RuntimeError(f"verification of {out} ended without a corrected dataset")
        dump(load(Path(result.output_dataset)), out)
        report: dict[str, Any] = json.loads(Path(result.report_json).read_text(encoding="utf-8"))
    report.update(file=f"{out} (as generated)", output=str(out))
    json_path, md_path = report_paths(out)
    write_atomic(json_path, json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    write_atomic(md_path, render_markdown(report))
    return report
