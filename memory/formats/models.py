"""The format-neutral view of a benchmark file, shared by every reader.

MemFuseBench and LoCoMo differ in layout, ids and categories; ingest and the benchmark
harness only need events, questions with gold evidence ids, and (when the format has
them) checklists. The models sit in a module of their own so that each reader and the
loader that dispatches to them import it, and never each other in a cycle.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memory.models import Event

DatasetFormat = Literal["memfusebench", "locomo"]
FORMATS: tuple[str, ...] = ("memfusebench", "locomo")


class ChecklistItem(BaseModel):
    """One key point a complete answer must cover, with the events that support it."""

    model_config = ConfigDict(frozen=True)

    item: str = Field(description="The key point, in words.")
    evidence_ids: list[str] = Field(default_factory=list, description="Events supporting it.")


class BenchQuestion(BaseModel):
    """A question as the harness sees it: text, reference, gold evidence and asking context."""

    model_config = ConfigDict(frozen=True)

    question_id: str
    category: str = Field(description="Diagnostic category; reports break metrics down by it.")
    question: str
    answer: str = Field(description="Reference answer (stringified when the source has a number).")
    evidence_ids: list[str] = Field(default_factory=list, description="Gold evidence event ids.")
    checklist: list[ChecklistItem] | None = Field(
        default=None, description="Answer checklist; None when the format has none (LoCoMo)."
    )
    user: str | None = Field(default=None, description="Who asks; None when unknown.")
    time: datetime = Field(description="When it is asked; events after it are not yet known.")
    device: str | None = Field(default=None, description="Device the question is asked on.")


class BenchScenario(BaseModel):
    """One independent memory: its event stream and the questions asked of it."""

    scenario_id: str
    events: list[Event]
    questions: list[BenchQuestion]
    labelled_events: list[Event] = Field(
        default_factory=list,
        description="The same events WITH the generator's labels (source, episode, storyline "
        "event), for diagnostics such as fusion purity only; never what a system ingests.",
    )


class BenchDataset(BaseModel):
    """A loaded benchmark file, identified by the hash of its bytes (the ingest cache key)."""

    name: str = Field(description="File stem, used in reports.")
    format: DatasetFormat
    content_hash: str = Field(description="sha256 of the file bytes.")
    scenarios: list[BenchScenario]
    apart_categories: list[str] = Field(
        default_factory=list,
        description="Categories reported apart and left out of Overall (LoCoMo adversarial).",
    )
    notes: list[str] = Field(
        default_factory=list, description="Load-time warnings worth reporting."
    )

    def n_questions(self) -> int:
        return sum(len(s.questions) for s in self.scenarios)

    def n_events(self) -> int:
        return sum(len(s.events) for s in self.scenarios)
