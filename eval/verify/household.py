"""Does a question's story fit the household it is told about? (b) members' ages, occupations,
number and residence; (c) self-reference and roles (someone telling themselves something, a
one-person home where a resident tells another).

Keyed on the persona's structured fields (name, age, role) and on general English; a file
without a household (LoCoMo) gets (c)'s self-reference rule only, since it needs no persona.
"""

from __future__ import annotations

import re

from eval.verify.findings import Finding, finding_for
from eval.verify.view import Member, VerifyScenario
from eval.verify.words import has_phrase, mentions, sentences, table, words
from memory.formats.memfusebench import Question

_CAPITALISED = r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?"


def household_inconsistent(scenario: VerifyScenario, question: Question) -> list[Finding]:
    """(b) The question or its answer contradicts who lives in the household."""
    members = scenario.members
    if not members:
        return []
    reasons: list[str] = []
    names = {m.name for m in members}
    if question.question_user and question.question_user not in names | {"shared"}:
        reasons.append(f"asked by {question.question_user!r}, who does not live in the household")
    text = f"{question.question} {question.answer}"
    for sentence in sentences(text):
        reasons += _age_and_role(sentence, members)
        reasons += _not_resident(sentence, names)
    reasons += _household_size(text, len(members))
    return [
        finding_for(scenario.scenario_id, question.question_id, "household_inconsistent", r)
        for r in dict.fromkeys(reasons)
    ]


def role_error(scenario: VerifyScenario, question: Question) -> list[Finding]:
    """(c) Someone tells themselves something, or a one-person home has a second resident."""
    reasons: list[str] = []
    verbs = "|".join(re.escape(v) for v in words("speech_verbs"))
    for field, text in (("question", question.question), ("answer", question.answer)):
        for match in re.finditer(rf"\b({_CAPITALISED})\s+(?:{verbs})\s+\1\b", text):
            reasons.append(
                f"the {field} has {match.group(1)} addressing themselves: {match.group()!r}"
            )
        if scenario.members is not None and len(scenario.members) == 1:
            relatives = "|".join(re.escape(r) for r in words("relatives"))
            pattern = rf"\b(?:{verbs})\s+(?:(?:her|his|their|my|your|the|an?)\s+)?(?:{relatives})\b"
            if found := re.search(pattern, text, re.IGNORECASE):
                only = scenario.members[0].name
                reasons.append(
                    f"the {field} has a resident addressed ({found.group()!r}) in a one-person "
                    f"home ({only} lives alone)"
                )
    return [
        finding_for(scenario.scenario_id, question.question_id, "role_error", r)
        for r in dict.fromkeys(reasons)
    ]


def _age_and_role(sentence: str, members: list[Member]) -> list[str]:
    reasons = []
    named = [m for m in members if mentions(sentence, m.name)]
    retired_age: int = table()["retired_age"]
    adult_age: int = table()["adult_age"]
    for member in named:
        retired = has_phrase(member.role, words("retired_roles")) is not None or (
            member.age is not None and member.age >= retired_age
        )
        others_working = [m for m in named if m is not member and not _is_retired(m, retired_age)]
        commute = has_phrase(sentence, words("commute_words"))
        if retired and commute and not others_working:
            who = f"{member.name} ({_describe(member)})"
            reasons.append(f"{who} is tied to a work or school departure ({commute!r})")
        if member.age is not None and member.age < adult_age:
            adult = "|".join(re.escape(w) for w in words("adult_only_words"))
            pattern = rf"\b{re.escape(member.name)}\b(?:\s+\w+){{0,2}}\s+(?:{adult})\b"
            if found := re.search(pattern, sentence):
                reasons.append(
                    f"{member.name} ({_describe(member)}) is said to do what an adult does: "
                    f"{found.group()!r}"
                )
    return reasons


def _is_retired(member: Member, retired_age: int) -> bool:
    if has_phrase(member.role, words("retired_roles")):
        return True
    return member.age is not None and member.age >= retired_age


def _not_resident(sentence: str, names: set[str]) -> list[str]:
    """A capitalised subject who is not a member, said to be at home or living there."""
    present = "|".join(re.escape(w) for w in words("present_words"))
    pattern = (
        rf"\b({_CAPITALISED})\s+(?:(?:was|were|is|had been|stayed|remained)\s+)?(?:{present})\b"
    )
    reasons = []
    for match in re.finditer(pattern, sentence):
        name = match.group(1)
        start = match.start(1)
        opens_sentence = not sentence[:start].strip()
        if name in names or (opens_sentence and name.lower() in _COMMON_OPENERS):
            continue
        if name.lower() in _COMMON_OPENERS:
            continue
        reasons.append(f"{name} is named as present ({match.group()!r}) but does not live here")
    return reasons


_COMMON_OPENERS = frozenset(
    [
        "the",
        "a",
        "an",
        "it",
        "he",
        "she",
        "they",
        "we",
        "you",
        "i",
        "nobody",
        "everyone",
        "someone",
        "one",
        "who",
        "which",
        "that",
        "this",
        "there",
        "then",
        "and",
        "but",
        "so",
        "yes",
        "no",
    ]
)


def _household_size(text: str, size: int) -> list[str]:
    numbers: dict[str, int] = table()["number_words"]
    spelled = "|".join(numbers)
    patterns = [
        rf"\b(?:all|the)\s+({spelled}|\d+)\s+of\s+(?:us|them)\b",
        rf"\b(?:family|household|home)\s+of\s+({spelled}|\d+)\b",
        rf"\b({spelled}|\d+)[- ](?:person|people|member)\s+(?:household|home|family)\b",
    ]
    reasons = []
    for pattern in patterns:
        for match in re.finditer(pattern, text, re.IGNORECASE):
            token = match.group(1).lower()
            said = numbers.get(token) if not token.isdigit() else int(token)
            if said is not None and said != size:
                reasons.append(f"says {match.group()!r}, but the household has {size} member(s)")
    if size > 1 and (
        alone := has_phrase(
            text, ["lives alone", "living alone", "lives on her own", "lives on his own"]
        )
    ):
        reasons.append(f"says {alone!r}, but the household has {size} members")
    return reasons


def _describe(member: Member) -> str:
    parts = [f"{member.age}" if member.age is not None else "", member.role]
    return ", ".join(p for p in parts if p) or "no details"
