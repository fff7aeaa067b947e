"""What each ablated part changes, question by question: not only how much recall it adds.

`memfuse − memfuse_no_X` (eval.baseline) is a difference of means: a part that swaps half the
context on every question and one that never runs can show the same +0.01. Issue 21 asks for
the share of questions where the second round changed the context and raised recall, so
this compares memfuse with each ablation on the same questions (questions.jsonl records,
categories a dataset reports apart left out, as in Overall):

- on how many questions the two contexts hold different events, and on how many memfuse's
  recall is higher or lower;
- the events in memfuse's context only (what the part let in) and in the ablation's only
  (what they took the place of), each with the share of them that is gold evidence.

The last pair says whether the part trades up: a part whose swapped-in events are gold less
often than the ones it displaced costs recall however often it runs.

`later_finds` splits what memfuse's later rounds put in its contexts by what found each event
(the records' `found_by`: a pivot list, or a later round's own search), so the one that earns
the rounds' margin can be told from one that only trades places.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from eval.baseline import PRIMARY, ablations_in
from memory.records import ROUND_SEARCH

EPS = 1e-9  # recall differences below this are ties


@dataclass
class ContextChange:
    """memfuse against one ablation on the questions both answered."""

    questions: int = 0
    changed: int = 0  # the contexts hold different events
    recall_higher: int = 0  # memfuse's recall above the ablation's
    recall_lower: int = 0
    let_in: int = 0  # events in memfuse's context only, summed over questions
    let_in_gold: int = 0
    displaced: int = 0  # events in the ablation's context only
    displaced_gold: int = 0

    def add(self, mine: Mapping[str, Any], other: Mapping[str, Any]) -> None:
        """One question: memfuse's record and the ablation's."""
        ours, theirs = _context(mine), _context(other)
        gold = set(mine["gold_ids"])
        self.questions += 1
        self.changed += ours != theirs
        a, b = mine.get("recall"), other.get("recall")
        if a is not None and b is not None:
            self.recall_higher += a > b + EPS
            self.recall_lower += a < b - EPS
        self.let_in += len(ours - theirs)
        self.let_in_gold += len((ours - theirs) & gold)
        self.displaced += len(theirs - ours)
        self.displaced_gold += len((theirs - ours) & gold)

    def summary(self) -> dict[str, Any]:
        """The counts with their shares (None where there is nothing to divide by)."""
        return {
            **asdict(self),
            "changed_share": _share(self.changed, self.questions),
            "higher_share": _share(self.recall_higher, self.questions),
            "lower_share": _share(self.recall_lower, self.questions),
            "let_in_gold_share": _share(self.let_in_gold, self.let_in),
            "displaced_gold_share": _share(self.displaced_gold, self.displaced),
        }


def _context(record: Mapping[str, Any]) -> set[str]:
    """The record's retrieved event ids (its "... N more" marker is no id)."""
    return {i for i in record["retrieved_ids"] if not str(i).startswith("... ")}


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def context_changes(
    records: Iterable[Mapping[str, Any]], apart: Collection[str] = ()
) -> dict[str, dict[str, Any]]:
    """Per ablation that ran beside memfuse: `ContextChange.summary()` over the questions
    both answered, categories in `apart` left out. Empty when memfuse did not run."""
    rows = list(records)
    by_key = {(r["system"], r["scenario_id"], r["question_id"]): r for r in rows}
    systems: Sequence[str] = list(dict.fromkeys(r["system"] for r in rows))
    if PRIMARY not in systems:
        return {}
    changes: dict[str, dict[str, Any]] = {}
    for ablation in ablations_in(systems):
        change = ContextChange()
        for (system, scenario, question), mine in by_key.items():
            other = by_key.get((ablation, scenario, question))
            if system == PRIMARY and other is not None and mine["category"] not in apart:
                change.add(mine, other)
        changes[ablation] = change.summary()
    return changes


def later_finds(
    records: Iterable[Mapping[str, Any]], apart: Collection[str] = ()
) -> dict[str, dict[str, Any]]:
    """What found the events memfuse's later rounds put in its contexts: per finder, the
    events (summed over questions), how many are gold and the share, and on how many
    questions it put any in; the pivot lists first, then the rounds' own searches. Empty
    when memfuse did not run or no later round put an event in."""
    counts: dict[str, dict[str, int]] = {}
    for record in records:
        if record["system"] != PRIMARY or record["category"] in apart:
            continue
        gold = set(record["gold_ids"])
        finders: Mapping[str, str] = record.get("found_by") or {}
        for event_id, finder in finders.items():
            row = counts.setdefault(finder, {"events": 0, "gold": 0, "questions": 0})
            row["events"] += 1
            row["gold"] += event_id in gold
        for finder in set(finders.values()):
            counts[finder]["questions"] += 1
    return {
        finder: {**row, "gold_share": _share(row["gold"], row["events"])}
        for finder, row in sorted(counts.items(), key=lambda kv: (kv[0] == ROUND_SEARCH, kv[0]))
    }
