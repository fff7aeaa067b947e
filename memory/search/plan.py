"""The round plan: what one search call is asked to do.

The retrieval controller (an LLM or its offline twin) emits one of these per round;
the CLI and the baselines build the simplest one from a query string. Every
constraint carries a confidence and is honoured only at or above the config's
``constraint_confidence`` (0.6 by default).
"""

from __future__ import annotations

import datetime as dt
from datetime import datetime, time, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_REWRITES = 3
MAX_QUERY_CHARS = 80


class TimeWindow(BaseModel):
    """One bounded span: from ``date`` ``start_time`` to ``end_date`` (default: the same day)
    ``end_time``. ``date`` alone means that whole day; ``end_date`` lets a span cross
    midnight ("Thursday night") or cover several days ("from Thursday to Saturday", or a
    causal question's look-back before its effect).

    A window is a *prior*, never a filter: the search adds the window's events as an
    extra seed list and gives them a small bonus, but never drops what lies outside.
    """

    model_config = ConfigDict(extra="ignore")

    enabled: bool = False
    date: dt.date | None = None
    start_time: dt.time | None = None
    end_date: dt.date | None = Field(
        default=None, description="Last day of a multi-day span (None: the same day as `date`)."
    )
    end_time: dt.time | None = None
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)

    def bounds(self) -> tuple[datetime, datetime] | None:
        """The [start, end] datetimes, or None when the window cannot be applied."""
        if not self.enabled or self.date is None:
            return None
        start = datetime.combine(self.date, self.start_time or time(0, 0, 0))
        end = datetime.combine(self.end_date or self.date, self.end_time or time(23, 59, 59))
        if end < start:
            return None
        return start, end

    def over_days(self, min_confidence: float) -> bool:
        """Is this a confident window longer than a day — a question over several days, where
        the same kind of record on each day (steps, sleep, screen time) is evidence?"""
        bounds = self.bounds() if self.confidence >= min_confidence else None
        return bounds is not None and bounds[1] - bounds[0] > timedelta(days=1)

    @classmethod
    def spanning(cls, start: datetime, end: datetime, confidence: float) -> TimeWindow:
        """An enabled window over [start, end] (any number of days)."""
        return cls(
            enabled=True,
            date=start.date(),
            start_time=start.time(),
            end_date=end.date() if end.date() != start.date() else None,
            end_time=end.time(),
            confidence=confidence,
        )


class CoverageDiversification(BaseModel):
    """Spread the final selection over people and/or devices."""

    model_config = ConfigDict(extra="ignore")

    enabled: bool = False
    dimensions: list[str] = Field(default_factory=list, description="Subset of {user, device}.")
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)

    @field_validator("dimensions")
    @classmethod
    def _dims(cls, value: list[str]) -> list[str]:
        return [d for d in dict.fromkeys(value) if d in ("user", "device")]


class TemporalNeighbors(BaseModel):
    """Pull adjacent events (same device or person) around hits."""

    model_config = ConfigDict(extra="ignore")

    enabled: bool = False
    radius: int = Field(default=1, ge=1, le=3)
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)


class TimelineMode(BaseModel):
    """Favour ordered coverage across the span (sequences, "what happened after…")."""

    model_config = ConfigDict(extra="ignore")

    enabled: bool = False
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)


CausalDirection = Literal["both", "back", "forward", "none"]


class CausalLinks(BaseModel):
    """Which way the graph expansion follows causal edges (cause → effect, written by fusion).

    A causal edge is evidence for a question about causes or consequences: "why did the
    courier leave" walks from the effect it finds back to its causes (`back`), "what happened
    after the fall" from the event forward to its effects (`forward`). For any other question
    it leads to another moment than the one asked about (a perspective question's causal
    neighbours cost household_dev2 0.06 of its perspective recall), so a planner that reads
    the question as neither says `none`. Unset or unsure (below the search's
    `constraint_confidence`), both ways are walked, as before this constraint existed.
    """

    model_config = ConfigDict(extra="ignore")

    direction: CausalDirection = "both"
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)

    @field_validator("direction", mode="before")
    @classmethod
    def _direction(cls, value: object) -> str:
        """An LLM planner's wording of a direction ("backward", "to the effects") read as one;
        anything unreadable as both ways (what the walk did before), never a rejected plan."""
        word = "" if value is None else str(value).strip().lower()
        for direction, cues in _DIRECTION_CUES:
            if any(cue in word for cue in cues):
                return direction
        return "both"


_DIRECTION_CUES: tuple[tuple[CausalDirection, tuple[str, ...]], ...] = (
    ("both", ("both",)),
    ("none", ("none", "no ", "off", "neither")),
    ("back", ("back", "cause", "earlier")),
    ("forward", ("forward", "effect", "consequence", "later")),
)


class EvidencePivot(BaseModel):
    """Search from what the evidence found so far says, not from the question's words alone.

    A later round's tool for what the first search cannot reach: events recorded close in
    time to an anchor (the best evidence so far) at the same place or with the same people,
    on any device (the other side of a conversation, the other sensors in the room, the
    phone of the person the camera saw); and the anchors' most distinctive words added to
    the queries (pseudo-relevance feedback), which finds a cause or a follow-up that shares
    the anchors' vocabulary but not the question's. Only new events count: what the caller
    already holds is never returned again.
    """

    model_config = ConfigDict(extra="ignore")

    enabled: bool = False
    anchors: list[str] = Field(
        default_factory=list, description="Event ids to pivot on, most trusted first (≤ 8)."
    )
    minutes: int = Field(
        default=30, ge=1, le=1440, description="How close in time a co-located event must be."
    )
    terms: int = Field(
        default=5, ge=0, le=20, description="Distinctive anchor words added to the queries."
    )
    series: bool = Field(
        default=False,
        description="Also each anchor's recurring record on the other days of the plan's time "
        "window: per day, the event of the anchor's device within `series_minutes` of the "
        "anchor's time of day that reads most like the anchor (a daily step count, screen "
        "time, night's sleep or evening lock-up). For questions over several days.",
    )
    series_minutes: int = Field(
        default=60, ge=1, le=720, description="How far from the anchor's time of day."
    )
    series_from: dt.date | None = Field(
        default=None,
        description="First day to look for the record on when the plan has no confident "
        "window (with `series_to`; the plan's window wins): the days the evidence itself shows "
        "a recurring record over, when the question names none.",
    )
    series_to: dt.date | None = Field(default=None, description="Last such day.")
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)

    @field_validator("anchors")
    @classmethod
    def _anchors(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(a for a in value if a))[:8]

    def series_days(self) -> tuple[datetime, datetime] | None:
        """[first day 00:00, last day 23:59:59.999999] of `series_from`/`series_to`; None
        unless both are given, in order."""
        if self.series_from is None or self.series_to is None:
            return None
        if self.series_to < self.series_from:
            return None
        return datetime.combine(self.series_from, time.min), datetime.combine(
            self.series_to, time.max
        )


class SeedQuotas(BaseModel):
    model_config = ConfigDict(extra="ignore")

    time_window_quota: int | None = Field(default=None, ge=1, description="Temporal seeds kept.")
    temporal_neighbor_keep: int | None = Field(default=None, ge=1, description="Neighbours kept.")


class RoundPlan(BaseModel):
    """One executable retrieval plan (the paper's round plan schema)."""

    model_config = ConfigDict(extra="ignore")

    focus: str = Field(
        min_length=1, description="Standalone primary query keeping every constraint."
    )
    semantic_queries: list[str] = Field(
        default_factory=list, description="≤ 3 facet rewrites, ≤ 80 chars."
    )
    bm25_query: str = Field(
        default="", description="Lexical query keeping exact names, devices, numbers."
    )
    keywords: list[str] = Field(default_factory=list)
    entities: list[str] = Field(
        default_factory=list, description="People, places, devices, objects."
    )
    time_window: TimeWindow = Field(default_factory=TimeWindow)
    coverage_diversification: CoverageDiversification = Field(
        default_factory=CoverageDiversification
    )
    temporal_neighbors: TemporalNeighbors = Field(default_factory=TemporalNeighbors)
    timeline_mode: TimelineMode = Field(default_factory=TimelineMode)
    pivot: EvidencePivot = Field(default_factory=EvidencePivot)
    causal_links: CausalLinks = Field(default_factory=CausalLinks)
    seed: SeedQuotas = Field(default_factory=SeedQuotas)

    @field_validator("semantic_queries")
    @classmethod
    def _rewrites(cls, value: list[str]) -> list[str]:
        cleaned = [q.strip()[:MAX_QUERY_CHARS] for q in value if q and q.strip()]
        return list(dict.fromkeys(cleaned))[:MAX_REWRITES]

    @classmethod
    def from_query(cls, query: str) -> RoundPlan:
        """The simple path: one query string, no constraints."""
        return cls(focus=query, bm25_query=query)

    def lexical_query(self) -> str:
        return self.bm25_query or " ".join([self.focus, *self.keywords])

    def signature(self) -> str:
        """Canonical form used to refuse a repeated plan."""
        return self.model_dump_json(exclude_none=True)
