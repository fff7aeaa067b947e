"""Run-time knobs of the retrieval controller (LangGraph Studio's run form).

The shared fields (data dir, namespace, policy, LLM) and the rules for live objects are
`graphs.context.RunContext`'s; this adds the loop's own knobs and their checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from graphs.context import RunContext, about
from memory.errors import ConfigurationError, UnknownRecipeError
from memory.search.config import RECIPES

Backfill = Literal["history", "score"]


@dataclass(kw_only=True)
class RetrievalContext(RunContext):
    """Knobs of one retrieval run."""

    recipe: str = field(
        default="memfuse",
        metadata=about(f"Search recipe for every round: one of {sorted(RECIPES)}."),
    )
    k: int = field(
        default=20, metadata=about("Events in the final context (the input's k wins when given).")
    )
    min_rounds: int = field(
        default=1,
        metadata=about(
            "Rounds before the judge may stop (paper: 2; MemFuse runs a further round only "
            "when the judge aims it at something the first one could not reach)."
        ),
    )
    max_rounds: int = field(default=5, metadata=about("Hard cap on rounds (paper: 5)."))
    use_controller: bool = field(
        default=True,
        metadata=about("Multi-round judged loop; off = one search round (the w/o AR ablation)."),
    )
    use_constraints: bool = field(
        default=True,
        metadata=about(
            "Honour plan constraints; off = rewritten queries only (the w/o RC ablation)."
        ),
    )
    followup_share: float = field(
        default=0.2,
        metadata=about(
            "Share of the final context later rounds' finds may win from round 1 (at least "
            "one place when above 0): each takes the last round-1 place still held only by "
            "scoring above the event there (see followup_redundancy)."
        ),
    )
    followup_redundancy: float = field(
        default=0.5,
        metadata=about(
            "How a later find and the round-1 event it contests are compared: cosine to the "
            "question less this times how near a copy each is of an event ranked above (0 "
            "below cosine 0.8, 1 for an exact copy; see graphs.retrieval.admission). 0 = "
            "similarity to the question alone."
        ),
    )
    followup_evidence_events: int = field(
        default=3,
        metadata=about(
            "The contest reads the question with its best evidence: the first this many events "
            "of the order the finds contest (the judged ids, then round 1's ranking). 0 = the "
            "question alone. See followup_evidence_weight."
        ),
    )
    followup_evidence_weight: float = field(
        default=0.3,
        metadata=about(
            "How far the contest's question vector is pulled toward the best evidence: the "
            "question's unit vector plus this times the unit mean of those events' vectors "
            "(relevance feedback, used only to value finds and the places they contest; "
            "round 1's ranking is untouched, so memfuse_no_ar reads as before). A find that "
            "belongs with what the question has found (the repair visit's other records, the "
            "next day's reading of the same record) is worth more than a tail event the "
            "question's words alone rank beside it. 0 = the question alone. `memfuse bench "
            "--suite`, memfuse at 0.3 with 3 events against 0 (seed 7, seed 11, household_dev, "
            "household_dev2, conversations): 0.467 / 0.473 / 0.899 / 0.830 / 0.820 -> 0.473 / "
            "0.475 / 0.899 / 0.835 / 0.821; 0.2 or 0.4 with 3 events alike (seed 11 +0.001, "
            "conversations -0.001 at 0.4); 0.3 with 1 event 0.472 / 0.474 / 0.899 / 0.832 / "
            "0.828, with 5 household_dev 0.892 and the conversations 0.818. Without moments "
            "the pull costs the conversations 0.015 (memfuse_no_fusion and memfuse_no_moments "
            "0.787 -> 0.772): read with its best turns, a turn's neighbours in the session look "
            "like evidence."
        ),
    )
    copies_within_day: bool = field(
        default=True,
        metadata=about(
            "For a question over several days (the question plan's confident window is longer "
            "than a day, or a pivot round found an anchor's record on other days: the evidence "
            "showed one recurring), count a later find as a copy only of events above it on the "
            "same day: the same record on another day (a daily step count, screen time, sleep) is "
            "news to it. Off, or for any other question = copies across any days (on the "
            "conversations, day-scoped copies for every question let near-repeats from other "
            "sessions in: 0.715 -> 0.707)."
        ),
    )
    over_days_reach: float = field(
        default=0.2,
        metadata=about(
            "For a question over several days (as for copies_within_day), the share of k "
            "at the end of round 1's places that later finds contest, each taking the first "
            "place, from the last up, whose event it beats, and passing over one it does not "
            "(0 = stop at the first event no find beats, as for every other question). "
            "Another day's record found by the pivot's series is news such a question needs, "
            "and one strong round-1 event at the last place kept it out: on seed 11 a week's "
            "screen-time reports scored 0.43 against the last place's 0.44, with 0.04 and 0.13 "
            "just above it. 0.2 against 0 on the dev sources (`memfuse bench --suite`): "
            "household_dev +0.007, seed 11 +0.002, seed 7 -0.001 (two questions up, three "
            "down), the rest unchanged; 0.3 and 0.5 the same but seed 7 -0.002, all of k seed "
            "11 -0.002 more; for every question (not only over several days) the "
            "conversations lost 0.04."
        ),
    )
    backfill: Backfill = field(
        default="history",
        metadata=about(
            "Order of the back-fill after the judged ids: history (as the searches found them, "
            "round by round) or score (best score across rounds)."
        ),
    )

    def followup_slots(self) -> int:
        """Places kept for later rounds' new finds: the share of k, at least one when above 0."""
        return max(1, round(self.k * self.followup_share)) if self.followup_share > 0 else 0

    def over_days_places(self) -> int:
        """Places at the end of the context a later find may contest over several days."""
        return round(self.k * self.over_days_reach)

    def check(self) -> None:
        super().check()
        if self.k < 1:
            raise ConfigurationError(f"k must be at least 1, got {self.k}")
        if self.min_rounds < 1:
            raise ConfigurationError(f"min_rounds must be at least 1, got {self.min_rounds}")
        if not 0.0 <= self.followup_share <= 1.0:
            raise ConfigurationError(
                f"followup_share must be between 0 and 1, got {self.followup_share}"
            )
        if self.max_rounds < self.min_rounds:
            raise ConfigurationError(
                f"max_rounds ({self.max_rounds}) must be at least min_rounds ({self.min_rounds})"
            )
        if not 0.0 <= self.followup_redundancy <= 1.0:
            raise ConfigurationError(
                f"followup_redundancy must be between 0 and 1, got {self.followup_redundancy}"
            )
        if self.followup_evidence_events < 0:
            raise ConfigurationError(
                f"followup_evidence_events must be 0 or more, got {self.followup_evidence_events}"
            )
        if self.followup_evidence_weight < 0.0:
            raise ConfigurationError(
                f"followup_evidence_weight must be 0 or more, got {self.followup_evidence_weight}"
            )
        if not 0.0 <= self.over_days_reach <= 1.0:
            raise ConfigurationError(
                f"over_days_reach must be between 0 and 1, got {self.over_days_reach}"
            )
        if self.backfill not in ("history", "score"):
            raise ConfigurationError(f"backfill must be history or score, got {self.backfill!r}")
        if self.recipe not in RECIPES:
            raise UnknownRecipeError(self.recipe, sorted(RECIPES))
