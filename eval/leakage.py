"""How much a benchmark file gives away by its wording, measured as `memfuse check-dataset`
reports it.

A generated benchmark is only a fair test if a system cannot find the evidence by how it is
written rather than by what it says. Two measures, both independent of any system under test:

- **Storyline wording AUC.** A word-count classifier (multinomial naive Bayes over the words
  and word pairs of each event's description, names and numbers masked) is trained on every
  household but one and scores the events of the one left out; the AUC says how well it tells
  storyline events (the ones questions are about) from the rest. 0.5: the wording tells
  nothing; 1.0: every storyline event reads differently from every background one.
  People write happenings and routine differently too (the maintainers' word-count classifier
  reached 0.83 across four households written by different people; our dev households are one
  household per file, too few for a leave-one-out figure here); the target for a generated
  file is ≤ 0.80.
- **Repeated question texts.** The share of questions whose text, with the household's names
  and all numbers masked, is word for word another question's (hand-written files: 0 %;
  target ≤ 5 %): templates that repeat teach a system the template, not the memory.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from memory.formats.memfusebench import MemFuseBench, Scenario
from memory.models import SourceKind

AUC_TARGET = 0.80
"""Storyline-vs-rest wording AUC a generated file should stay at or under."""
DUPLICATE_TARGET = 0.05
"""Share of questions repeating another's masked text a generated file should stay under."""

_WORD = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*|\d+(?:[.,:]\d+)*")
_NAME, _NUMBER = "<name>", "<n>"


@dataclass(frozen=True)
class LeakageReport:
    """The two measures of one file; None where it has too little to measure (one household,
    or a household without storyline or without background events)."""

    storyline_auc: float | None
    auc_by_household: dict[str, float] = field(default_factory=dict)
    questions: int = 0
    repeated_questions: int = 0
    most_repeated: list[tuple[str, int]] = field(default_factory=list)

    @property
    def repeated_share(self) -> float:
        return self.repeated_questions / self.questions if self.questions else 0.0

    def verdicts(self) -> list[str]:
        """One line per measure, saying whether it meets its target."""
        lines = []
        if self.storyline_auc is None:
            lines.append("storyline wording AUC: not measurable (needs two or more households)")
        else:
            meets = "within" if self.storyline_auc <= AUC_TARGET else "above"
            lines.append(
                f"storyline wording AUC {self.storyline_auc:.2f} (leave one household out; "
                f"{meets} the target {AUC_TARGET:.2f})"
            )
        meets = "within" if self.repeated_share <= DUPLICATE_TARGET else "above"
        lines.append(
            f"repeated question texts {self.repeated_questions} of {self.questions} "
            f"({self.repeated_share:.1%}, names and numbers masked; {meets} the target "
            f"{DUPLICATE_TARGET:.0%})"
        )
        return lines

    def to_json(self) -> dict[str, object]:
        return {
            "storyline_auc": self.storyline_auc,
            "auc_by_household": self.auc_by_household,
            "questions": self.questions,
            "repeated_questions": self.repeated_questions,
            "repeated_share": self.repeated_share,
            "most_repeated": [list(pair) for pair in self.most_repeated],
        }


def measure_leakage(bench: MemFuseBench, shown: int = 5) -> LeakageReport:
    """Both measures over every scenario of the file (`shown`: most repeated texts kept)."""
    scenarios = bench.scenario_data
    by_household = _storyline_aucs(scenarios)
    texts = Counter(masked(q.question, _names(s)) for s in scenarios for q in s.questions)
    repeated = sum(n for n in texts.values() if n > 1)
    return LeakageReport(
        storyline_auc=sum(by_household.values()) / len(by_household) if by_household else None,
        auc_by_household=by_household,
        questions=sum(texts.values()),
        repeated_questions=repeated,
        most_repeated=[(t, n) for t, n in texts.most_common(shown) if n > 1],
    )


def masked(text: str, names: Iterable[str]) -> str:
    """The words of `text`, lower-cased, with these names and every number masked."""
    hidden = {n.casefold() for n in names}
    return " ".join(_masked_words(text, hidden))


def _masked_words(text: str, hidden: set[str]) -> list[str]:
    words = []
    for word in _WORD.findall(text.casefold()):
        stem = word.removesuffix("'s")
        words.append(_NUMBER if word[0].isdigit() else _NAME if stem in hidden else word)
    return words


def _names(scenario: Scenario) -> set[str]:
    """Every name of the household's people (first names and full names alike)."""
    names: set[str] = set()
    for character in scenario.persona.characters:
        words = _WORD.findall(character.name.casefold())
        names.update(word for word in words if not word[0].isdigit())
    return names


def _features(text: str, hidden: set[str]) -> Counter[str]:
    words = _masked_words(text, hidden)
    return Counter(words) + Counter(f"{a} {b}" for a, b in pairwise(words))


_Labelled = list[tuple[Counter[str], bool]]


def _labelled(scenario: Scenario) -> _Labelled:
    """(features, is storyline) of each labelled event; adversarial distractors are left
    out, since they imitate storylines on purpose."""
    hidden = _names(scenario)
    return [
        (_features(e.description, hidden), e.source == SourceKind.STORYLINE)
        for e in scenario.all_events()
        if e.source is not None and e.source != SourceKind.ADVERSARIAL
    ]


def _storyline_aucs(scenarios: Sequence[Scenario]) -> dict[str, float]:
    """Per household: the AUC of a classifier trained on all the other households."""
    data = {s.scenario_id: _labelled(s) for s in scenarios}
    aucs: dict[str, float] = {}
    for held_out, test in data.items():
        train = [row for sid, rows in data.items() if sid != held_out for row in rows]
        if not train or not any(y for _, y in test) or all(y for _, y in test):
            continue
        weights = _naive_bayes(train)
        if weights is None:
            continue
        scores = [(sum(weights.get(w, 0.0) * n for w, n in x.items()), y) for x, y in test]
        aucs[held_out] = _auc(scores)
    return aucs


def _naive_bayes(rows: _Labelled, alpha: float = 1.0) -> dict[str, float] | None:
    """Per feature, log P(feature | storyline) − log P(feature | rest) (Laplace-smoothed)."""
    counts = {True: Counter[str](), False: Counter[str]()}
    for x, y in rows:
        counts[y].update(x)
    if not counts[True] or not counts[False]:
        return None
    vocabulary = set(counts[True]) | set(counts[False])
    totals = {y: sum(c.values()) + alpha * len(vocabulary) for y, c in counts.items()}
    return {
        w: math.log((counts[True][w] + alpha) / totals[True])
        - math.log((counts[False][w] + alpha) / totals[False])
        for w in vocabulary
    }


def _auc(scored: Sequence[tuple[float, bool]]) -> float:
    """The probability that a random storyline event outscores a random other (ties: ½)."""
    ordered = sorted(scored, key=lambda pair: pair[0])
    rank_sum, positives, i = 0.0, 0, 0
    while i < len(ordered):
        j = i
        while j < len(ordered) and ordered[j][0] == ordered[i][0]:
            j += 1
        tied_positives = sum(1 for _, y in ordered[i:j] if y)
        rank_sum += tied_positives * (i + j + 1) / 2  # the mean 1-based rank of the tie
        positives += tied_positives
        i = j
    negatives = len(ordered) - positives
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)
