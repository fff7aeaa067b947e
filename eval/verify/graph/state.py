"""The verification graph's input, output and state.

The state stays small and JSON-plain: the dataset is named by its path and read by the nodes
(cached per file version), and what the run accumulates is findings and edits; the current
version of the dataset is always the file with the edits applied.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from eval.verify.findings import Edit, Finding
from graphs.state import Input

Status = Literal["running", "done"]


class VerificationInput(BaseModel):
    """What a caller gives: the benchmark file and where the results go."""

    dataset: str = Field(description="A MemFuseBench or LoCoMo JSON file (never overwritten).")
    out_dir: str = Field(
        default="verify-out",
        description="Folder for the corrected dataset and the JSON and Markdown reports.",
    )


class VerificationOutput(BaseModel):
    """What a run reports."""

    status: Status = Field(default="running", description="done once the report is written.")
    questions: int = Field(default=0, description="Questions in the input file.")
    summary: dict[str, Any] = Field(
        default_factory=dict,
        description="Totals (flagged, revised, dropped, kept) and counts per kind.",
    )
    output_dataset: str | None = Field(default=None, description="The corrected dataset.")
    report_json: str | None = Field(default=None, description="The JSON report.")
    report_markdown: str | None = Field(default=None, description="The Markdown report.")
    notes: Annotated[list[str], operator.add] = Field(
        default_factory=list, description="What went differently (an unusable reader reply...)."
    )


class State(VerificationOutput):
    """Everything the nodes work with."""

    dataset: Input[str] = ""
    out_dir: Input[str] = "verify-out"

    source: str = Field(default="", description="The file verified (from the input).")
    destination: str = Field(default="verify-out", description="Where results go.")
    round: int = Field(default=0, description="Verification passes done.")
    pending: list[str] | None = Field(
        default=None,
        description="Questions ('scenario::question') the next pass verifies; None: all.",
    )
    findings: list[Finding] = Field(
        default_factory=list, description="What the latest pass found (the corrector's work)."
    )
    all_findings: Annotated[list[Finding], operator.add] = Field(
        default_factory=list, description="Every finding of every pass."
    )
    edits: Annotated[list[Edit], operator.add] = Field(
        default_factory=list, description="Every correction, oldest first (the last one stands)."
    )


def key(scenario_id: str, question_id: str) -> str:
    return f"{scenario_id}::{question_id}"
