"""Varied wording for generated questions: an opener, a closer and synonym swaps.

Question templates are few per kind, so the same masked text would recur across households
and teach a system the template instead of the memory. Each question's text is varied the way
people vary how they ask the same thing: a lead-in ("Quick question: "), a sign-off
(" Thanks."), and interchangeable phrasings ("don't match" / "disagree"), from
`data/paraphrase.json`. None of them names a fact, a time or a person, so the question asks
the same and its answer and evidence stay as they are.
"""

from __future__ import annotations

import random
import re

from eval.synth.tables import load_table

TABLE = load_table("paraphrase")
OPENERS: list[str] = TABLE["OPENERS"]
CLOSERS: list[str] = TABLE["CLOSERS"]
SWAPS: list[list[str]] = TABLE["SWAPS"]
_FIRST_WORD = re.compile(r"[A-Za-z']+")
_SENTENCE_END = (".", ":", "?", "!")
_WEEKDAYS = frozenset(
    ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
)


def vary(text: str, rng: random.Random, names: frozenset[str] = frozenset()) -> str:
    """`text` with its interchangeable phrasings swapped, an opener and a closer, drawn from
    `rng` (the same number of draws whatever the text); `names` (the household's people) keep
    their capital after an opener that does not end a sentence."""
    for group in SWAPS:
        pick = rng.choice(group)
        for phrase in group:
            if phrase != pick and _whole(phrase).search(text):
                text = _replace(text, phrase, pick)
                break
    opener, closer = rng.choice(OPENERS), rng.choice(CLOSERS)
    if opener:
        text = opener + _after(opener, text, names)
    return text + closer if closer else text


def _whole(phrase: str) -> re.Pattern[str]:
    """`phrase` as whole words, any case: "agree" is not found inside "disagreement"."""
    return re.compile(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", re.IGNORECASE)


def _replace(text: str, phrase: str, by: str) -> str:
    """`phrase` (whole words, any case) replaced by `by`, a capital kept where the text had
    one."""
    match = _whole(phrase).search(text)
    assert match is not None  # vary() replaces only what it found
    at = match.start()
    found = text[at : at + len(phrase)]
    by = by[:1].upper() + by[1:] if found[:1].isupper() else by
    return text[:at] + by + text[at + len(phrase) :]


def _after(opener: str, text: str, names: frozenset[str] = frozenset()) -> str:
    """`text` as it continues `opener`: unless the opener ends a sentence ("Quick question:"),
    its first word loses the capital it had only for starting the question ("Okay, so how…",
    "Hmm, putting…"), never a name, a weekday or 'I'."""
    if opener.rstrip().endswith(_SENTENCE_END):
        return text
    word = _FIRST_WORD.match(text)
    if word is None:
        return text
    first = word.group(0)
    stem = first.split("'")[0]  # Mei's -> Mei
    if stem in names or stem in _WEEKDAYS or stem == "I":
        return text
    return text[:1].lower() + text[1:]
