"""What a question names, read without an LLM: people, devices, keywords and other names.

The offline planner's reading of a question (`planning_offline.read_question`) takes its
entities and evidence keywords from here. Names and device ids come from what the store knows
(a family word such as "mum" is never guessed to be someone), "I/me/my" are the requester, and
question and time words are never evidence keywords.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from importlib import resources
from typing import Any

from memory.text import tokenize

MAX_KEYWORDS = 8
MAX_DEVICE_MATCHES = 3

# The word tables live in `signatures/data/planning_words.json` (packaged with `signatures`):
# - device_words: words that name a kind of device, mapped to the fragment device ids use for it;
# - non_keywords: question words and time words, not evidence keywords (time is the window's
#   job). Meal words stay keywords: records say "at dinner" as often as they carry a dinner-time
#   stamp;
# - family_words: family words and titles name a role, not a person: they only match a known
#   person whose name carries them ("Grandpa Joe"), and only when exactly one such person is
#   known;
# - word_names: first names that are also common English words, matched only when capitalised.
_WORDS: dict[str, Any] = json.loads(
    resources.files("signatures").joinpath("data/planning_words.json").read_text(encoding="utf-8")
)
DEVICE_WORDS: dict[str, str] = dict(_WORDS["device_words"])
NON_KEYWORDS = frozenset(_WORDS["non_keywords"])
FAMILY_WORDS = frozenset(_WORDS["family_words"])
_WORD_NAMES = frozenset(_WORDS["word_names"])
_NON_KEYWORD_STEMS = frozenset(t for w in NON_KEYWORDS for t in tokenize(w))

_FIRST_PERSON = re.compile(r"\b(i|me|my|mine|myself|i'm|i've|i'd|i'll)\b", re.IGNORECASE)
_PRONOUN_SWAPS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bI'm\b", re.IGNORECASE), "{name} is"),
    (re.compile(r"\bI've\b", re.IGNORECASE), "{name} has"),
    (re.compile(r"\bI'd\b", re.IGNORECASE), "{name} would"),
    (re.compile(r"\bI'll\b", re.IGNORECASE), "{name} will"),
    (re.compile(r"\b(my|mine)\b", re.IGNORECASE), "{name}'s"),
    (re.compile(r"\b(me|myself)\b", re.IGNORECASE), "{name}"),
    (re.compile(r"\bI\b"), "{name}"),
    (re.compile(r"(?<=\s)i(?=\s)"), "{name}"),
]
_WORD = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_'\-.:]|(?<=\d),(?=\d))*[A-Za-z0-9]|[A-Za-z0-9]")


def _straight_quotes(text: str) -> str:
    """Curly apostrophes as typed on phones become plain ones ("I’m" → "I'm")."""
    return text.replace("\u2019", "'").replace("\u2018", "'")


def resolve_pronouns(question: str, requester: str | None) -> str:
    """ "How did I sleep?" → "How did David sleep?": the index text names people, not 'I'."""
    if not requester:
        return question
    text = _straight_quotes(question)
    for pattern, template in _PRONOUN_SWAPS:
        text = pattern.sub(template.format(name=requester), text)
    return text


def find_people(question: str, known_people: Iterable[str], requester: str | None) -> list[str]:
    """Known people in the question by full name, first name or possessive ("Ana's").

    The first person (I, me, my, mine, myself, I'm…) is the requester. A family word
    ("mum", "grandpa") is never guessed to be someone; it matches only a known name that
    contains it ("Grandpa Joe"), and only when that name is the one such name known.
    """
    question = _straight_quotes(question)
    people = sorted({p.strip() for p in known_people if p.strip()}, key=lambda p: (-len(p), p))
    found: list[str] = []
    if requester and _FIRST_PERSON.search(question):
        found.append(requester)
    family = _family_names(people)
    for person in people:
        if any(_mentions(question, name) for name in _name_forms(person, family)):
            found.append(person)
    return list(dict.fromkeys(found))


def _family_names(people: list[str]) -> dict[str, str]:
    """Family words carried by exactly one known name ("grandpa" → "Grandpa Joe")."""
    owners: dict[str, list[str]] = {}
    for person in people:
        for word in person.lower().split():
            if word.strip(".") in FAMILY_WORDS:
                owners.setdefault(word.strip("."), []).append(person)
    return {word: names[0] for word, names in owners.items() if len(names) == 1}


def _name_forms(person: str, family: dict[str, str]) -> set[str]:
    """The full name, its first personal name, and the family words that point only to it."""
    words = person.split()
    personal = [w for w in words if w.lower().strip(".") not in FAMILY_WORDS]
    forms = {person}
    if personal:
        forms.add(personal[0])
    forms |= {word for word, owner in family.items() if owner == person}
    return {f for f in forms if len(f) > 1}


def _mentions(question: str, name: str) -> bool:
    """A case-insensitive whole-word match; names that are also words must be capitalised."""
    if name.lower() in _WORD_NAMES:
        return re.search(rf"\b{re.escape(name.capitalize())}\b", question) is not None
    return re.search(rf"\b{re.escape(name)}\b", question, re.IGNORECASE) is not None


def find_devices(question: str, known_devices: Iterable[str], people: list[str]) -> list[str]:
    """Device ids named outright, or by a device-type word ("watch" → `watch_david`).

    When several devices share the type, the ones carrying a named person's name win
    ("my watch" asked by David is `watch_david`); otherwise up to three are kept.
    """
    lowered = question.lower()
    devices = sorted(set(known_devices))
    found: list[str] = []
    for device in devices:
        spaced = re.escape(device.lower()).replace("_", "[_ ]").replace(r"\-", "[- ]")
        if re.search(rf"\b{spaced}\b", lowered):
            found.append(device)
    words = set(re.findall(r"[a-z]+", lowered))
    singular = words | {w[:-1] for w in words if w.endswith("s")}
    singular |= {w[:-2] for w in words if w.endswith("es")}
    fragments = {DEVICE_WORDS[w] for w in singular if w in DEVICE_WORDS}
    owners = [p.split()[0].lower() for p in people]
    for fragment in sorted(fragments):
        matching = [
            d
            for d in devices
            if fragment in re.split(r"[_\-\s]+", d.lower()) or d.lower().startswith(fragment)
        ]
        owned = [d for d in matching if any(o in d.lower() for o in owners)]
        if not owned:
            # "Ana's watch" is `kidswatch_ana`, not another person's `watch_ben`.
            owned = [
                d for d in devices if fragment in d.lower() and any(o in d.lower() for o in owners)
            ]
        found.extend((owned or matching)[:MAX_DEVICE_MATCHES])
    return list(dict.fromkeys(found))


def find_keywords(question: str, exclude: Iterable[str] = ()) -> list[str]:
    """Short literal terms of the question that carry evidence (no pronouns, no time words)."""
    excluded = {t for e in exclude for t in tokenize(e)} | _NON_KEYWORD_STEMS
    keywords: list[str] = []
    seen: set[str] = set()
    for word in _WORD.findall(question):
        tokens = [t for t in tokenize(word) if t not in excluded]
        if not tokens or word.lower() in NON_KEYWORDS:
            continue
        key = tokens[0]
        if key not in seen:
            seen.add(key)
            keywords.append(word.lower().strip("'"))
    return keywords[:MAX_KEYWORDS]


def find_named(question: str, skip: Iterable[str]) -> list[str]:
    """Capitalised words inside the sentence that are not known names: places, brands."""
    skipped = {s.lower() for s in skip} | NON_KEYWORDS | {"i"}
    named: list[str] = []
    words = _WORD.findall(question)
    for position, word in enumerate(words):
        if position == 0 or not word[0].isupper() or word.lower() in skipped:
            continue
        if not tokenize(word):
            continue
        named.append(word.rstrip("'s") if word.endswith("'s") else word)
    return list(dict.fromkeys(named))
