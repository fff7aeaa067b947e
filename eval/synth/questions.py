"""Stage 4: questions in the six categories, with answers, evidence and checklists.

Episode templates and conflict builders already proposed drafts that point at views and
observations; this stage adds aggregation questions (`aggregation`) and first-person ones
(`first_person`) computed from the routine facts, then resolves every draft: evidence = the
union of its checklist's observations, question time = some hours after the latest
evidence (at a waking hour), and relative time phrases worded from that question time.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta

from eval.categories import CATEGORIES
from eval.synth.aggregation import aggregation_drafts  # noqa: F401  (re-exported)
from eval.synth.asking import PLACEHOLDER, realistic_placeholders
from eval.synth.errors import SynthesisError
from eval.synth.first_person import first_person_drafts  # noqa: F401  (re-exported)
from eval.synth.paraphrase import vary
from eval.synth.personas import Household
from eval.synth.phrasing import polish
from eval.synth.timewords import on_day, over_week, when
from eval.synth.world import Obs, Question, QuestionDraft, StoryEvent, View

# ---------------------------------------------------------------- resolution


# How far a checklist item's reference to one view reaches: for causal, fusion and
# first-person questions the observations of that happening the template named (devices that
# sensed it in passing do not carry the item); perspective items are one device each, so
# just the view.
WIDEN = {"causal": "named", "fusion": "named", "user_query": "named"}
# Categories whose overall evidence is every observation (ambient ones included) of every
# happening the checklist touches: to piece a happening together or explain it, all of its
# traces are relevant, while each checklist item still names the observations it rests on.
# `--realism realistic` (eval.synth.realism) skips this widening: evidence is then what the
# checklist (and, for causal questions, the causal chain) uses, without ambient traces.
WHOLE_EVENT_EVIDENCE = ("causal", "fusion")


def _keys(
    ref: View | StoryEvent | Obs,
    stories: dict[str, StoryEvent],
    widen: str | None,
    named_only: bool = False,
) -> list[str]:
    if isinstance(ref, Obs):
        return [ref.key]
    if isinstance(ref, View):
        story = stories.get(ref.story_id)
        if story is None or widen is None:
            return [ref.obs_key] if ref.obs_key else []
        views = [v for v in story.views if widen == "all" or not v.ambient or v is ref]
        return [v.obs_key for v in views if v.obs_key]
    return [v.obs_key for v in _named(ref, named_only) if v.obs_key]


def _named(story: StoryEvent, named_only: bool) -> list[View]:
    """The views of a happening that an item resting on the whole happening cites. With
    `named_only` (realistic) those its template named, not the pulse sample or Wi-Fi fix a
    device logged in passing (`Ep.fill`), unless it has no other: such padding also made thin
    questions pass the filter's evidence and device counts."""
    if not named_only:
        return story.views
    return [v for v in story.views if not v.ambient] or story.views


def _chain(
    draft: QuestionDraft, stories: dict[str, StoryEvent], named_only: bool = False
) -> list[str]:
    """Observations of every story event on the causal path the question asks about (with
    `named_only`, the named ones: `_named`): the ancestors of its latest referenced event that
    are not older than its earliest one."""
    ids = {r.story_id for item in draft.checklist for r in item.refs if isinstance(r, View)}
    ids |= {r.story_id for item in draft.checklist for r in item.refs if isinstance(r, StoryEvent)}
    ids &= set(stories)
    if not ids:
        return []
    target = max(ids, key=lambda i: (stories[i].ts, i))
    start = min(stories[i].ts for i in ids)
    chain, todo = set(), [target]
    while todo:
        sid = todo.pop()
        if sid in chain or sid not in stories or stories[sid].ts < start:
            continue
        chain.add(sid)
        todo += stories[sid].causes
    ordered = sorted(chain, key=lambda i: stories[i].ts)
    return [v.obs_key for sid in ordered for v in _named(stories[sid], named_only) if v.obs_key]


def _waking(ts: datetime, rng: random.Random) -> datetime:
    if ts.hour < 7:
        return ts.replace(hour=7, minute=rng.randint(0, 50))
    if ts.hour >= 22:
        return (ts + timedelta(days=1)).replace(hour=8, minute=rng.randint(0, 50))
    return ts


def resolve(
    hh: Household,
    drafts: list[QuestionDraft],
    obs_by_key: dict[str, Obs],
    rng: random.Random,
    stories: dict[str, StoryEvent],
) -> list[Question]:
    """Concrete questions (provisional ids `C<n>`), in draft order."""
    out: list[Question] = []
    for n, draft in enumerate(drafts, start=1):
        checklist: list[tuple[str, list[str]]] = []
        anchors: list[list[str]] = []
        widen = WIDEN.get(draft.category)
        named_only = hh.realism != "legacy"
        for item in draft.checklist:
            keys = list(
                dict.fromkeys(
                    k
                    for ref in item.refs
                    for k in _keys(ref, stories, widen, named_only)
                    if k in obs_by_key
                )
            )
            checklist.append((item.item, keys))
            anchors.append(list(item.anchors))
        evidence = list(dict.fromkeys(k for _, keys in checklist for k in keys))
        if draft.category == "causal":
            chain = _chain(draft, stories, named_only)
            evidence += [k for k in chain if k in obs_by_key and k not in evidence]
        if draft.category in WHOLE_EVENT_EVIDENCE and hh.realism == "legacy":
            touched = {
                r.story_id
                for item in draft.checklist
                for r in item.refs
                if isinstance(r, (View, StoryEvent))
            }
            evidence += [
                v.obs_key
                for sid in sorted(touched)
                if sid in stories
                for v in stories[sid].views
                if v.obs_key in obs_by_key and v.obs_key not in evidence
            ]
        evidence.sort(key=lambda k: (obs_by_key[k].ts, k))
        if not evidence:
            latest = max(draft.moments.values(), default=datetime(2026, 5, 17, 12))
        else:
            latest = max([obs_by_key[k].ts for k in evidence] + list(draft.moments.values()))
        lo, hi = draft.delay_hours
        qtime = _waking(latest + timedelta(minutes=int(rng.uniform(lo, hi) * 60)), rng)
        plain = _fill(hh, draft, rng.choice(draft.texts), qtime, rng, stories, n)
        text = plain
        if hh.realism == "realistic":  # eval.synth.paraphrase: asked in many ways
            names = frozenset(p.name for p in hh.people)
            text = vary(plain, random.Random(f"{hh.scenario_id}:{n}:paraphrase"), names)
        device = hh.phone(draft.asker) if draft.asker in {p.name for p in hh.people} else None
        device = (
            device
            or hh.shared("smart_speaker")
            or hh.shared("smart_display")
            or hh.devices[0].device_id
        )
        out.append(
            Question(
                qid=f"C{n:03d}",
                category=draft.category,
                question=text,
                plain=plain,
                answer=polish(draft.answer),
                evidence=evidence,
                checklist=checklist,
                anchors=anchors,
                asker=draft.asker,
                time=qtime,
                device=device,
                topic=draft.topic,
                subject=draft.subject,
                origin=draft.origin,
            )
        )
    return out


def _fill(
    hh: Household,
    draft: QuestionDraft,
    text: str,
    qtime: datetime,
    rng: random.Random,
    stories: dict[str, StoryEvent],
    n: int,
) -> str:
    """Question `n`'s text with its time placeholders worded for `qtime`; in realistic mode
    (`eval.synth.asking`) some are dropped or name another happening instead. The legacy
    wording is always drawn, so `rng` advances the same way in both modes."""
    legacy = _word_times(text, draft.moments, qtime, rng)
    if hh.realism != "realistic":
        return legacy
    asking = random.Random(f"{hh.scenario_id}:{n}:asking")
    realistic = realistic_placeholders(text, draft, stories, qtime, asking)
    return legacy if realistic == text else polish(realistic)


def _word_times(
    text: str, moments: dict[str, datetime], qtime: datetime, rng: random.Random
) -> str:
    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "{week}":
            return over_week(qtime, rng)
        kind, key = match.group(1), match.group(2)
        ts = moments[key]
        return when(ts, qtime, rng) if kind == "when" else on_day(ts, qtime, rng)

    filled = PLACEHOLDER.sub(sub, text)
    return polish(filled)


def check_questions(hh: Household, questions: list[Question], obs_by_key: dict[str, Obs]) -> None:
    """Stage-4 invariants: known category, resolvable evidence, no dangling placeholder, asked
    by a household member, asked after its latest evidence."""
    names = {p.name for p in hh.people}
    for q in questions:

        def fail(problem: str, q: Question = q) -> None:
            raise SynthesisError("questions", hh.scenario_id, f"{q.qid} ({q.origin}): {problem}")

        if q.category not in CATEGORIES:
            fail(f"unknown category {q.category}")
        if "{" in q.question or "}" in q.question:
            fail(f"unresolved placeholder in {q.question!r}")
        if q.asker not in names:
            fail(f"asked by {q.asker!r}, not a household member")
        for key in q.evidence:
            if key not in obs_by_key:
                fail(f"evidence {key} does not exist")
        if q.evidence and q.time < max(obs_by_key[k].ts for k in q.evidence):
            fail("question time precedes its evidence")
