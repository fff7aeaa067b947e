"""The offline twin of `PlanRetrievalRound`: the same inputs, the same `RoundPlan` out.

Without an LLM the plan is read off the question with transparent rules: the time
words resolve against the question time (`time_resolution`), names and device ids
come from what the store knows (a family word such as "mum" is never guessed to be
someone), "I/me/my" become the requester in the rewrites and the lexical query (both in
`question_words`; the focus keeps the asker's own words, see `plan_from_reading`), and cue
words switch on coverage, timeline and neighbour constraints. The question's direction (why →
look back, "what happened after" → look forward) is read with its time words, in
`time_resolution`. It also holds the plan variations the controller falls back on when a
proposed plan repeats an executed one.

Seed quotas follow the paper's decision table. ``temporal_neighbor_keep`` is left
unset: in the engine it counts the neighbours pulled (default 6), which is the
paper's "keep 24 of the 30 seeds, give the rest to neighbours" already.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import dspy
from pydantic import BaseModel, ConfigDict, Field

from memory.search.plan import (
    MAX_QUERY_CHARS,
    MAX_REWRITES,
    CausalDirection,
    CausalLinks,
    CoverageDiversification,
    RoundPlan,
    SeedQuotas,
    TemporalNeighbors,
    TimelineMode,
    TimeWindow,
)
from memory.text import tokenize
from signatures.question_words import (
    _straight_quotes,
    find_devices,
    find_keywords,
    find_named,
    find_people,
    resolve_pronouns,
)
from signatures.time_resolution import (
    WHOLE_DAY,
    TimeResolution,
    resolve_time,
    strip_time_expressions,
    window_is_full_day,
)

_COVERAGE_CUE = re.compile(
    r"\b(each|everyone|everybody|every\s+one|who|whom|both|all\s+of\s+us|family|household"
    r"|compare|compared|comparison|differ|different|differently|perspectives?|point\s+of\s+view"
    r"|viewpoints?|according\s+to|which\s+(devices?|sensors?|sources?|people|person)"
    r"|what\s+(devices?|sensors?|sources?)|disagree|conflict\w*|contradict\w*)\b"
)
_DEVICE_DIMENSION = re.compile(
    r"\b(devices?|sensors?|sources?|records?|recorded|according\s+to|logged|cameras?"
    r"|which\s+device|disagree|conflict\w*|contradict\w*)\b"
)
_USER_DIMENSION = re.compile(
    r"\b(who|whom|everyone|everybody|each\s+(person|of\s+us|of\s+them|member)|both|people"
    r"|family|household|perspectives?|point\s+of\s+view|viewpoints?|all\s+of\s+us)\b"
)
_TIMELINE_CUE = re.compile(
    r"\b(what\s+happened|in\s+what\s+order|order\s+of|sequence|before|after|led\s+to"
    r"|lead\s+to|leading\s+up|why|timeline|steps?|step\s+by\s+step|process|unfold\w*"
    r"|progress\w*|itinerary|route|first|then|finally)\b"
)
_NEIGHBOUR_CUE = re.compile(
    r"\bwhat\s+happened\s+(during|after|around|before|while|when|at|in)\b"
    r"|\b(in\s+what\s+order|sequence|timeline|step\s+by\s+step|each\s+time|every\s+time"
    r"|how\s+many\s+times|throughout|full\s+story|play\s+by\s+play)\b"
)
_CAUSE_CUE = re.compile(r"\b(why|reason|cause[ds]?|because|led\s+to|lead\s+to|how\s+come)\b")
_CAUSAL_WALK: dict[str, CausalDirection] = {"back": "back", "forward": "forward", "within": "none"}
"""The question's direction (`time_resolution.question_direction`) → which causal edges to walk."""


class OfflinePlannerConfig(BaseModel):
    """The offline planner's numbers: the seed-quota table and how sure each cue word is.

    Defaults restate the paper's quota table; `memfuse optimize --target planner
    --optimizer grid` searches them (a confidence below the search config's
    `constraint_confidence` switches that constraint off).
    """

    model_config = ConfigDict(frozen=True)

    quota_default: int = Field(default=15, ge=1, description="Window seeds, no coverage/timeline.")
    quota_coverage: int = Field(default=20, ge=1, description="Window seeds with coverage only.")
    quota_timeline: int = Field(
        default=25, ge=1, description="Window seeds for a timeline inside a window under a day."
    )
    quota_day_focused: int = Field(
        default=12, ge=1, description="Whole-day window, one subject or object."
    )
    quota_day_broad: int = Field(
        default=15, ge=1, description="Whole-day window, reconstruction or several subjects."
    )
    coverage_confidence: float = Field(
        default=0.8, ge=0, le=1, description="Coverage asked for by a cue word (each, who, both)."
    )
    coverage_implicit_confidence: float = Field(
        default=0.7, ge=0, le=1, description="Coverage implied by two named people, no cue word."
    )
    timeline_confidence: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Timeline mode from a sequence cue word. 0.5, under the search's 0.6 "
        "threshold, keeps it off: the planner grid on the train scenarios found that reserving "
        "slots across the span cost more evidence than it found (re-tune with an LLM planner).",
    )
    neighbor_confidence: float = Field(
        default=0.75, ge=0, le=1, description="Temporal neighbours from a sequence/period cue."
    )
    neighbor_radius: int = Field(default=3, ge=1, le=3, description="Neighbour radius when cued.")
    causal_confidence: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="Causal edges walked back for a why-question, forward for a what-followed "
        "one, not at all for any other (`CausalLinks`). Below the search's 0.6 both ways are "
        "walked for every question: `memfuse bench --suite`, memfuse 0.453 / 0.458 / 0.899 / "
        "0.801 / 0.748 (seed 7, seed 11, household_dev, household_dev2, conversations) "
        "against 0.452 / 0.459 / 0.899 / 0.811 / 0.748 with it.",
    )


DEFAULT_PLANNER_CONFIG = OfflinePlannerConfig()


@dataclass(frozen=True)
class QuestionReading:
    """What the offline planner read off the question (the first plan is built from it)."""

    asked: str
    """The question as asked: the plan's focus (see `plan_from_reading`)."""
    resolved: str
    """The question with I/me/my as the asker's name: the rewrites and the lexical query."""
    time: TimeResolution
    people: list[str]
    devices: list[str]
    named: list[str]
    keywords: list[str]
    coverage: CoverageDiversification
    timeline: TimelineMode
    neighbors: TemporalNeighbors

    @property
    def entities(self) -> list[str]:
        return list(dict.fromkeys([*self.people, *self.devices, *self.named]))


def read_question(
    question: str,
    question_time: datetime,
    requester: str | None,
    known_people: Iterable[str],
    known_devices: Iterable[str],
    config: OfflinePlannerConfig = DEFAULT_PLANNER_CONFIG,
) -> QuestionReading:
    """Everything the offline planner needs from the question, in one pass."""
    asked, question = question, _straight_quotes(question)
    lowered = " ".join(question.lower().split())
    people = find_people(question, known_people, requester)
    devices = find_devices(question, known_devices, people)
    timeless = strip_time_expressions(question)
    named = find_named(timeless, [*people, *devices, *(w for p in people for w in p.split())])
    keywords = find_keywords(timeless, exclude=[*people, *named])
    return QuestionReading(
        asked=asked.strip(),
        resolved=resolve_pronouns(question.strip(), requester),
        time=resolve_time(question, question_time),
        people=people,
        devices=devices,
        named=named,
        keywords=keywords,
        coverage=_coverage(lowered, people, devices, config),
        timeline=_timeline(lowered, config),
        neighbors=_neighbors(lowered, config),
    )


def _coverage(
    text: str, people: list[str], devices: list[str], config: OfflinePlannerConfig
) -> CoverageDiversification:
    cue = _COVERAGE_CUE.search(text)
    if not cue and len(people) < 2:
        return CoverageDiversification(enabled=False, confidence=0.8)
    dimensions = []
    if _USER_DIMENSION.search(text) or len(people) >= 2:
        dimensions.append("user")
    if _DEVICE_DIMENSION.search(text) or len(devices) >= 2:
        dimensions.append("device")
    confidence = config.coverage_confidence if cue else config.coverage_implicit_confidence
    return CoverageDiversification(
        enabled=True, dimensions=dimensions or ["user", "device"], confidence=confidence
    )


def _timeline(text: str, config: OfflinePlannerConfig) -> TimelineMode:
    if _TIMELINE_CUE.search(text):
        return TimelineMode(enabled=True, confidence=config.timeline_confidence)
    return TimelineMode(enabled=False, confidence=0.8)


def _neighbors(text: str, config: OfflinePlannerConfig) -> TemporalNeighbors:
    if _NEIGHBOUR_CUE.search(text):
        return TemporalNeighbors(
            enabled=True, radius=config.neighbor_radius, confidence=config.neighbor_confidence
        )
    return TemporalNeighbors(enabled=False, radius=1, confidence=0.8)


def clip_query(text: str, limit: int = MAX_QUERY_CHARS) -> str:
    """A query of at most `limit` characters; long ones lose stopwords first, then tail words."""
    text = " ".join(text.replace("?", " ").split())
    if len(text) <= limit:
        return text
    words = [w for w in text.split() if tokenize(w) or w[:1].isupper()]
    clipped = ""
    for word in words:
        candidate = f"{clipped} {word}".strip()
        if len(candidate) > limit:
            break
        clipped = candidate
    return clipped or text[:limit].strip()


def _entity_query(entity: str, keywords: list[str]) -> str:
    """The entity with the question's main terms, minus the words the entity already says."""
    own = set(tokenize(entity))
    terms = [k for k in keywords if not set(tokenize(k)) <= own][:4]
    return " ".join([entity, *terms])


def _rewrites(reading: QuestionReading) -> list[str]:
    """The question, each entity with the main terms, and one facet-specific query (≤ 3)."""
    terms = " ".join(reading.keywords[:4])
    first = clip_query(reading.resolved)
    facet = ""
    if _CAUSE_CUE.search(reading.resolved.lower()):
        facet = f"what caused {terms}"
    elif reading.timeline.enabled:
        facet = f"{terms} sequence of events before and after"
    elif reading.coverage.enabled and len(reading.entities) < 2:
        # With two or more entities the per-entity rewrites already spread the search.
        facet = f"{terms} observed by each person and device"
    per_entity = [_entity_query(entity, reading.keywords) for entity in reading.entities]
    slots = MAX_REWRITES - 1 - (1 if facet else 0)
    if len(per_entity) > slots > 0:
        # Too many entities for the slots: the last slot names all of them at once.
        merged = f"{' '.join(reading.entities)} {terms}"
        per_entity = [*per_entity[: slots - 1], merged]
    queries = [first, *per_entity[:slots], *([facet] if facet else [])]
    if len(queries) < MAX_REWRITES and len(reading.keywords) > 4:
        queries.append(" ".join(reading.keywords[2:]))
    clipped = [clip_query(q) for q in queries if q.strip()]
    return list(dict.fromkeys(q for q in clipped if q))[:MAX_REWRITES]


def _seed_quotas(
    reading: QuestionReading, window: TimeWindow, config: OfflinePlannerConfig
) -> SeedQuotas:
    """The paper's time-window quota table (only meaningful with a window).

    A window over several days is a reconstruction across them: the broad whole-day quota.
    """
    if not window.enabled:
        return SeedQuotas()
    if window.end_date is not None and window.end_date != window.date:
        return SeedQuotas(time_window_quota=config.quota_day_broad)
    if window_is_full_day(window):
        broad_day = reading.timeline.enabled or reading.coverage.enabled
        quota = config.quota_day_broad if broad_day else config.quota_day_focused
        return SeedQuotas(time_window_quota=quota)
    if reading.timeline.enabled:
        return SeedQuotas(time_window_quota=config.quota_timeline)
    if reading.coverage.enabled:
        return SeedQuotas(time_window_quota=config.quota_coverage)
    return SeedQuotas(time_window_quota=config.quota_default)


def plan_from_reading(
    reading: QuestionReading, config: OfflinePlannerConfig = DEFAULT_PLANNER_CONFIG
) -> RoundPlan:
    """The first-round plan for a question reading.

    The focus is the question in the asker's own words, the text the guard's dense list
    reads too (one vector serves both). The version with the asker's name for I/me/my is the
    first rewrite: the name in the whole question's vector drew that query to every event of
    the asker, even where "me" is only who the answer is for ("tell me", "give me"), while
    the name in a rewrite, the lexical query and the entities still finds the asker's own
    events. `memfuse bench --suite`, memfuse with the name in the focus: 0.452 / 0.468 /
    0.899 / 0.830 / 0.820 (seed 7, seed 11, household_dev, household_dev2, conversations);
    without: 0.467 / 0.473 / 0.899 / 0.830 / 0.820. Without the name in the first rewrite as
    well: 0.463 / 0.469 / 0.899 / 0.837 / 0.820."""
    entities = reading.entities
    lexical = reading.resolved.replace("?", " ")
    extra = [e for e in entities if e.lower() not in lexical.lower()]
    window = reading.time.window
    return RoundPlan(
        focus=reading.asked,
        semantic_queries=_rewrites(reading),
        bm25_query=" ".join([lexical.strip(), *extra]).strip(),
        keywords=reading.keywords,
        entities=entities,
        time_window=window,
        coverage_diversification=reading.coverage,
        temporal_neighbors=reading.neighbors,
        timeline_mode=reading.timeline,
        causal_links=CausalLinks(
            direction=_CAUSAL_WALK[reading.time.direction], confidence=config.causal_confidence
        ),
        seed=_seed_quotas(reading, window, config),
    )


def first_unexecuted(
    candidates: Iterable[RoundPlan], executed: Iterable[RoundPlan]
) -> RoundPlan | None:
    """The first candidate whose signature differs from every executed plan."""
    seen = {plan.signature() for plan in executed}
    for plan in candidates:
        if plan.signature() not in seen:
            return plan
    return None


def plan_for_terms(base: RoundPlan, terms: list[str], anchors: list[str]) -> RoundPlan:
    """A plan aimed at specific missing terms, keeping the question's anchors and window."""
    terms = [t for t in dict.fromkeys(terms) if t.strip()]
    anchor_text = " ".join(a for a in anchors if a not in terms)
    focus = " ".join([*terms, anchor_text]).strip() or base.focus
    rewrites = [clip_query(f"{term} {anchor_text}") for term in terms]
    return base.model_copy(
        update={
            "focus": focus,
            "semantic_queries": RoundPlan(focus=focus, semantic_queries=rewrites).semantic_queries,
            "bm25_query": " ".join([*terms, anchor_text]).strip(),
            "keywords": terms or base.keywords,
        }
    )


def alternative_plans(base: RoundPlan, missing: list[str] | None = None) -> Iterator[RoundPlan]:
    """Plans that differ from `base`, most targeted first; the caller skips executed ones.

    Order: the missing terms with the question's anchors; each entity on its own; the
    same queries with adjacent snippets pulled in; a window widened to its whole day;
    no window at all (evidence may sit outside the parsed span); the keywords alone.
    """
    anchors = [*base.entities]
    if missing:
        yield plan_for_terms(base, missing, anchors)
    for entity in base.entities:
        others = [k for k in base.keywords if k.lower() not in entity.lower()]
        yield plan_for_terms(base, [entity, *others[:3]], [])
    if not base.temporal_neighbors.enabled:
        yield base.model_copy(
            update={"temporal_neighbors": TemporalNeighbors(enabled=True, radius=3, confidence=0.7)}
        )
    window = base.time_window
    if window.enabled and not window_is_full_day(window):
        # Same first and last day (a multi-day or overnight window stays multi-day).
        whole = window.model_copy(update={"start_time": WHOLE_DAY[0], "end_time": WHOLE_DAY[1]})
        yield base.model_copy(
            update={"time_window": whole, "seed": SeedQuotas(time_window_quota=15)}
        )
    if window.enabled:
        yield base.model_copy(
            update={"time_window": TimeWindow(enabled=False, confidence=0.0), "seed": SeedQuotas()}
        )
    if base.keywords:
        words = " ".join([*base.entities, *base.keywords])
        yield base.model_copy(
            update={"focus": words, "semantic_queries": [clip_query(words)], "bm25_query": words}
        )


class OfflineRoundPlanner(dspy.Module):
    """Deterministic twin of `RoundPlanner`: `forward(**planner_inputs) -> Prediction(plan)`."""

    def __init__(self, config: OfflinePlannerConfig | None = None) -> None:
        super().__init__()
        self.config = config or DEFAULT_PLANNER_CONFIG

    def forward(
        self,
        question: str,
        question_time: str,
        calendar: str = "",
        requester: str = "",
        known_people: list[str] | None = None,
        known_devices: list[str] | None = None,
        previous_plans: list[RoundPlan] | None = None,
        searched_queries: list[str] | None = None,
        **_: Any,
    ) -> dspy.Prediction:
        reading = read_question(
            question,
            datetime.fromisoformat(question_time),
            requester or None,
            known_people or [],
            known_devices or [],
            self.config,
        )
        plan = plan_from_reading(reading, self.config)
        previous = list(previous_plans or [])
        if previous:
            candidates = [plan, *alternative_plans(plan)]
            plan = first_unexecuted(candidates, previous) or plan
        return dspy.Prediction(plan=plan)
