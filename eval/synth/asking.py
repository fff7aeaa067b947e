"""How a realistic asker names time (`--realism realistic`): often not at all.

The legacy generator words every `{when:…}`, `{day:…}` and `{week}` placeholder as a time
phrase, so nine questions in ten carry one and most resolve to a window that holds all of
their evidence: a retriever that filters by the phrase is handed the answer's day. People
asking about their household mostly do not say when, or place a happening by another one
("the day after the washing machine broke"). In realistic mode a question about one
storyline happening, which its content already singles out, keeps its time phrase with
probability `KEEP`, names a neighbouring happening of another storyline instead with
probability `REFER` (when one lies within a day of it and before the question), and drops
it otherwise; a week-long aggregation drops "this week" with probability `DROP_WEEK`.
Questions whose subject recurs (a routine day, a conflicting claim, one's own readings)
keep the phrase, since without it they would have no single answer. A causal question that
keeps its phrase names the day of the effect, while its cause lies earlier.

The draws use a random stream of their own per question, so that everything else the
generator draws stays as it was.
"""

from __future__ import annotations

import random
import re
from datetime import date, datetime

from eval.synth.world import QuestionDraft, StoryEvent, View

PLACEHOLDER = re.compile(r"\{(when|day):(\w+)\}|\{week\}")
KEEP = 0.35
REFER = 0.25
DROP_WEEK = 0.35
MIN_REFERENCE_WORDS, MAX_REFERENCE_WORDS = 4, 12
# A reference must place its happening on its own: no time of its own, no figures.
_UNFIT = re.compile(r"[{}\d]|\b(before|after|due|yesterday|tomorrow)\b")


def unique_happening(draft: QuestionDraft) -> bool:
    """A storyline question: its content names one happening, with or without a date."""
    return draft.origin != "conflict" and not draft.origin.startswith(("agg_", "fp_"))


def realistic_placeholders(
    text: str,
    draft: QuestionDraft,
    stories: dict[str, StoryEvent],
    qtime: datetime,
    rng: random.Random,
) -> str:
    """`text` with its placeholders kept (for `questions._fill`), dropped or replaced by a
    reference to another happening."""
    if PLACEHOLDER.search(text) is None:
        return text
    u = rng.random()
    if draft.origin.startswith("agg_"):
        return _drop(text) if u < DROP_WEEK and "{when" not in text and "{day" not in text else text
    if not unique_happening(draft) or u < KEEP:
        return text
    if u < KEEP + REFER:
        referred = _refer(text, draft, stories, qtime, rng)
        if referred is not None:
            return referred
    return _drop(text)


def _drop(text: str) -> str:
    text = PLACEHOLDER.sub("", text)
    text = re.sub(r"\s+([?.,;:!])", r"\1", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def _refer(
    text: str,
    draft: QuestionDraft,
    stories: dict[str, StoryEvent],
    qtime: datetime,
    rng: random.Random,
) -> str | None:
    """The first placeholder worded as 'on the day / the day after / the day before' how
    another storyline began; the others dropped. None without a candidate."""
    match = next((m for m in PLACEHOLDER.finditer(text) if m.group(2)), None)
    if match is None or match.group(2) not in draft.moments:
        return None
    own = _episodes(draft, stories)
    day = draft.moments[match.group(2)].date()
    openings: dict[str, StoryEvent] = {}
    for story in sorted(stories.values(), key=lambda s: (s.ts, s.story_id)):
        openings.setdefault(story.episode_id, story)
    options = [
        f"{relation} {clause}"
        for story in openings.values()
        if story.episode_id not in own and story.ts < qtime
        for relation in [_relation(story.ts.date(), day)]
        if relation is not None
        for clause in [_clause(story.fact)]
        if clause is not None
    ]
    if not options:
        return None
    phrase = rng.choice(options)
    return _drop(text[: match.start()] + phrase + text[match.end() :])


def _episodes(draft: QuestionDraft, stories: dict[str, StoryEvent]) -> set[str]:
    ids = {
        ref.story_id
        for item in draft.checklist
        for ref in item.refs
        if isinstance(ref, (View, StoryEvent))
    }
    return {stories[i].episode_id for i in ids if i in stories}


def _relation(other: date, day: date) -> str | None:
    gap = (day - other).days
    return {0: "on the day", 1: "the day after", -1: "the day before"}.get(gap)


def _clause(fact: str) -> str | None:
    """A happening's fact as a subordinate clause, if it is short and fully worded."""
    clause = fact.split(":")[0].strip().rstrip(".")
    words = clause.split()
    if not MIN_REFERENCE_WORDS <= len(words) <= MAX_REFERENCE_WORDS or _UNFIT.search(clause):
        return None
    return clause
