"""How the realistic generator words time in questions (eval.synth.asking)."""

from __future__ import annotations

import random
import re
from datetime import datetime
from difflib import SequenceMatcher

import pytest

from eval.synth import generate, stats
from eval.synth.asking import PLACEHOLDER, realistic_placeholders
from eval.synth.timewords import at
from eval.synth.world import CheckDraft, QuestionDraft, StoryEvent, View
from tests.support.synth_pairs import paired_questions


def _story(sid: str, episode: str, ts: datetime, fact: str) -> StoryEvent:
    return StoryEvent(sid, episode, ts, ["Ana"], "home", fact)


STORIES = {
    "own": _story("own", "EP1", at(2, 9), "Ana hurt her ankle playing football in the park"),
    "before": _story("before", "EP2", at(1, 18), "the washing machine failed: a sock in the pump"),
    "same": _story("same", "EP3", at(2, 7), "Ben ordered a cordless drill for the shed"),
    "figures": _story("figures", "EP4", at(2, 8), "Ana slept 4 h 50 min"),
    "later": _story("later", "EP5", at(3, 12), "Cleo arrived at the house with her luggage"),
}
QTIME = at(2, 20)


def _draft(origin: str, text: str, key: str = "hurt") -> QuestionDraft:
    view = View("watch_ana", "motion", ["clause"], story_id="own")
    return QuestionDraft(
        category="causal",
        asker="Ana",
        texts=[text],
        answer="",
        checklist=[CheckDraft("item", [view])],
        topic="injury",
        origin=origin,
        moments={key: at(2, 9)},
    )


def _outcomes(origin: str, text: str, runs: int = 300) -> list[str]:
    draft = _draft(origin, text)
    return [
        realistic_placeholders(text, draft, STORIES, QTIME, random.Random(seed))
        for seed in range(runs)
    ]


def test_a_storyline_question_keeps_drops_or_refers_and_stays_well_formed():
    text = "Why did Ana limp home {when:hurt}?"
    outcomes = _outcomes("injury", text)
    kept = [o for o in outcomes if o == text]
    dropped = [o for o in outcomes if o == "Why did Ana limp home?"]
    referred = [o for o in outcomes if o not in (text, "Why did Ana limp home?")]
    assert kept and dropped and referred
    assert 0.2 < len(kept) / len(outcomes) < 0.5  # KEEP = 0.35
    assert len(kept) + len(dropped) + len(referred) == len(outcomes)
    allowed = {
        "Why did Ana limp home the day after the washing machine failed?",
        "Why did Ana limp home on the day Ben ordered a cordless drill for the shed?",
    }
    assert set(referred) == allowed  # not its own episode, not later than the question,
    # no figures of another happening, and a cause after the colon is left out


def test_questions_whose_subject_recurs_keep_their_time_phrase():
    for origin in ("conflict", "fp_day", "fp_workout"):
        text = "What time did Ana get home {when:hurt}?"
        assert set(_outcomes(origin, text, 60)) == {text}
    week = _outcomes("agg_steps", "How many steps did Ana walk {week}?", 200)
    assert set(week) == {"How many steps did Ana walk {week}?", "How many steps did Ana walk?"}
    day = "Which of Ana's days {day:hurt} was busiest?"
    assert set(_outcomes("agg_steps", day, 60)) == {day}  # a day inside the week is needed


def test_dropping_leaves_no_stray_space_or_punctuation():
    outcomes = _outcomes("injury", "What did the devices register {when:hurt}, and why?")
    assert "What did the devices register, and why?" in outcomes
    dash = _outcomes("injury", "I lost my wallet {when:hurt} — where was it?")
    assert "I lost my wallet — where was it?" in dash
    for text in outcomes + dash:
        assert not re.search(r"\s[?,.]|\s{2}", text)


@pytest.fixture(scope="module")
def both():
    return generate(1, seed=7, realism="legacy"), generate(1, seed=7)


def test_realistic_questions_often_carry_no_time_phrase(both):
    legacy, real = (stats(b) for b in both)
    assert legacy.questions_with_time_phrase > 0.85
    assert real.questions_with_time_phrase < 0.75
    assert real.questions_with_window < legacy.questions_with_window - 0.15


def test_the_time_mix_changes_wording_only(both):
    """The questions both realisms keep are asked by the same people about the same things:
    the asking and paraphrase streams are separate from the generator's. (Realistic evidence
    leaves out passing traces, which often came last, so about half the questions are asked a
    little earlier; none before its evidence.)"""
    pairs = paired_questions(*(b.scenario_data[0] for b in both))
    assert len(pairs) >= 40
    real_events = both[1].scenario_data[0].event_index()
    for _, new in pairs:
        assert new.question_time >= max(real_events[i].timestamp for i in new.evidence_event_ids)
    reworded = 0
    for old, new in pairs:
        assert PLACEHOLDER.search(new.question) is None
        reworded += new.question != old.question
    assert reworded >= 10
    # a conflict question names no time phrase: its wording is one of its draft's texts, varied
    # only by eval.synth.paraphrase (which text is drawn may differ between the realisms)
    similar = [
        SequenceMatcher(None, old.question, new.question).ratio() > 0.6
        for old, new in pairs
        if new.category == "conflict"
    ]
    assert sum(similar) >= len(similar) / 2
