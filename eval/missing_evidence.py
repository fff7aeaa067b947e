"""Where a controller's missing evidence is: never found, or found and ranked out of the context.

A multi-round system chooses its context from a pool: everything its rounds found. A gold
event missing from the context is then one of three things, and each asks for other work:

- **found by round 1, ranked out**: the question's own search had it, below the k places;
- **found by a later round, ranked out**: a pivot or a later search had it, and it lost the
  contest for a place (`graphs.retrieval.admission`);
- **never found**: no round's search reached it; only a round that searches elsewhere helps.

Counted from the questions.jsonl records (`missing_pooled`, written for systems that report
their pool), per system, gold events summed over questions, categories a dataset reports
apart left out as in Overall. With most of the missing evidence never found, a better
contest cannot buy much: the rounds have to find more.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class MissingEvidence:
    """Gold events of one system's questions, by where they ended up."""

    questions: int = 0
    gold: int = 0
    in_context: int = 0
    ranked_out_round_one: int = 0
    ranked_out_later: int = 0
    never_found: int = 0

    def add(self, record: Mapping[str, Any]) -> None:
        gold = list(dict.fromkeys(record["gold_ids"]))
        missing = set(record["missing_gold"])
        pooled: Mapping[str, int] = record["missing_pooled"]
        self.questions += 1
        self.gold += len(gold)
        self.in_context += sum(1 for g in gold if g not in missing)
        for event_id in missing:
            found = pooled.get(event_id)
            if found is None:
                self.never_found += 1
            elif found <= 1:
                self.ranked_out_round_one += 1
            else:
                self.ranked_out_later += 1

    def summary(self) -> dict[str, Any]:
        """The counts with each as a share of the gold events (None without any), and the
        pool's recall: the share of gold the rounds found at all."""

        def share(part: int) -> float | None:
            return part / self.gold if self.gold else None

        found = self.gold - self.never_found
        return {
            **asdict(self),
            "in_context_share": share(self.in_context),
            "ranked_out_round_one_share": share(self.ranked_out_round_one),
            "ranked_out_later_share": share(self.ranked_out_later),
            "never_found_share": share(self.never_found),
            "pool_recall": share(found),
        }


def missing_evidence(
    records: Iterable[Mapping[str, Any]], apart: Collection[str] = ()
) -> dict[str, dict[str, Any]]:
    """Per system that reported its pool, `MissingEvidence.summary()` over its questions
    (categories in `apart` left out), in run order. Empty when none did."""
    counts: dict[str, MissingEvidence] = {}
    for record in records:
        if "missing_pooled" not in record or record["category"] in apart:
            continue
        counts.setdefault(record["system"], MissingEvidence()).add(record)
    return {system: count.summary() for system, count in counts.items()}
