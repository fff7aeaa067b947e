"""Shared wording of glimpses (storyline ambient views and the background alike) and varied
question texts: the two causes of wording leakage that issue 26 names."""

from __future__ import annotations

import random
import re
from datetime import datetime

from eval.synth.emit import Emitter
from eval.synth.episodes.ambient import ambient_options
from eval.synth.glimpses import KINDS, everyday_glimpse
from eval.synth.paraphrase import vary
from eval.synth.personas import HOUSEHOLD_TYPES, build_household
from eval.synth.tables import load_table
from eval.synth.world import StoryEvent


def _patterns(kinds: tuple[str, ...] = KINDS) -> dict[str, list[re.Pattern[str]]]:
    """Per kind, each clause template as a pattern whose slots match anything."""
    table = load_table("glimpses")

    def pattern(clause: str) -> re.Pattern[str]:
        parts = re.split(r"\{[^}]*\}", clause.removeprefix("a "))  # 'a' may read 'an'
        return re.compile(".*".join(re.escape(part) for part in parts), re.IGNORECASE)

    return {kind: [pattern(c) for c in table[kind]["clauses"]] for kind in kinds}


def _kind(text: str, patterns: dict[str, list[re.Pattern[str]]]) -> str | None:
    return next((k for k, ps in patterns.items() if any(p.search(text) for p in ps)), None)


def _household():  # type: ignore[no-untyped-def]
    return build_household("S1", HOUSEHOLD_TYPES[0], random.Random(7))


def test_storyline_glimpses_are_worded_from_the_shared_pool() -> None:
    hh = _household()
    names = [p.name for p in hh.residents]
    patterns = _patterns()
    for place in ("kitchen", "living_room", "hallway", "home"):
        ev = StoryEvent("S1_L001", "S1_EP01", datetime(2026, 5, 12, 20, 5), names[:2], place, "x")
        for _, _, words, _ in ambient_options(hh, random.Random(1), ev):
            for clause in words["clauses"]:
                assert _kind(clause, patterns), clause


def test_background_emits_every_kind_storylines_notice_in_passing() -> None:
    hh = _household()
    em = Emitter(hh, random.Random(5), "noise", "S1_N")
    for n in range(700):
        day = n // 100
        ts = datetime(2026, 5, 11 + day, 6 + (n % 100) // 6, n % 60)
        everyday_glimpse(em, hh, ts, day)
    patterns = _patterns()
    seen = {_kind(o.description, patterns) for o in em.items}
    assert None not in seen  # every everyday glimpse reads like a storyline one could
    assert {"pulse", "phone_home", "hallway", "speech", "fridge_door"} <= seen


def test_vary_is_deterministic_keeps_the_question_and_spreads_wording() -> None:
    text = "How was the grocery drop-off registered across the house's devices?"
    first = vary(text, random.Random("S1:4:paraphrase"))
    assert first == vary(text, random.Random("S1:4:paraphrase"))
    assert "grocery drop-off registered" in first
    assert len({vary(text, random.Random(f"S1:{n}:paraphrase")) for n in range(40)}) >= 30
    assert vary("I lost my wallet, where was it?", random.Random(2)).count("I lost") == 1


def test_a_swap_replaces_whole_words_only() -> None:
    """ "disagree" is swapped where it is a word, never inside "disagreement"."""
    import random

    from eval.synth.paraphrase import vary

    for seed in range(40):
        varied = vary("Who won the disagreement over the heating?", random.Random(seed))
        assert "disagreement over the heating" in varied
        swapped = vary(
            "The thermostat and the radiator disagree: which is right?", random.Random(seed)
        )
        assert "ment" not in swapped and swapped.count("?") == 1
