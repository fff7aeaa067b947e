"""The one tokenizer shared by the BM25L index and the offline (LLM-free) twins.

BM25 only matches what the tokenizer makes equal, so index and query must go through
the same function. It keeps what household evidence is keyed on: device ids
(``watch_david`` stays whole and also yields ``watch`` and ``david``), numbers with
their decimals or clock separators (``6.1``, ``10:30``), and folds common English
inflections so that "limping" meets "limp" and "batteries" meets "battery".
"""

from __future__ import annotations

import functools
import re

# A run of letters/digits, optionally joined to more runs by `_ . : -` (device ids,
# decimals, clock times, dates). A trailing separator (end of sentence) is not included.
_RUN = re.compile(r"[a-z0-9]+(?:[_.:\-][a-z0-9]+)*")
_SEPARATOR = re.compile(r"[_.:\-]")
_POSSESSIVE = re.compile(r"['\u2019]s\b")
_NUMBER_LIKE = re.compile(r"[0-9]+(?:[_.:\-][0-9]+)*")

# Function words that carry no evidence; kept small on purpose (no "not", no numbers).
STOPWORDS: frozenset[str] = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "for",
        "from",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "my",
        "myself",
        "of",
        "on",
        "or",
        "our",
        "ours",
        "ourselves",
        "over",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
    }
)

_VOWELS = frozenset("aeiouy")


def _has_vowel(text: str) -> bool:
    return any(ch in _VOWELS for ch in text)


def stem(token: str) -> str:
    """A light suffix stemmer: plural -s/-es/-ies, then -ing/-ed, then a final silent -e.

    Deliberately weaker than Porter: it only folds inflections (never derivations such as
    -ness or -ation), so unrelated words rarely collide. Both "living" and "live" become
    "liv", and "running"/"runs" both become "run".
    """
    if len(token) <= 3 or not token.isalpha():
        return token
    if token.endswith("ies") and len(token) > 4:
        token = token[:-3] + "y"
    elif token.endswith(("sses", "ches", "shes", "xes", "zes")):
        token = token[:-2]
    elif token.endswith("s") and not token.endswith(("ss", "us", "is")):
        token = token[:-1]
    for suffix in ("ing", "ed"):
        if token.endswith(suffix) and not token.endswith("eed"):
            base = token[: -len(suffix)]
            if len(base) >= 3 and _has_vowel(base):
                if base[-1] == base[-2] and base[-1] not in _VOWELS and base[-1] not in "lsz":
                    base = base[:-1]  # stopped -> stopp -> stop
                token = base
            break
    if len(token) > 3 and token.endswith("e") and not token.endswith("ee"):
        token = token[:-1]
    return token


@functools.lru_cache(maxsize=1 << 16)
def _word(token: str) -> str | None:
    """Normalise one plain word: drop stopwords and lone letters, stem the rest (cached: a
    household's vocabulary is small and every index, summary and rarity count tokenizes)."""
    if token in STOPWORDS or (len(token) == 1 and token.isalpha()):
        return None
    return stem(token)


def tokenize(text: str) -> list[str]:
    """Lowercase, split on non-alphanumerics, drop stopwords, stem; compounds also yield parts.

    >>> tokenize("watch_david logged 6.1 km; David's knee was limping")
    ['watch_david', 'watch', 'david', 'log', '6.1', 'km', 'david', 'knee', 'limp']
    """
    return list(_cached_tokens(text) if len(text) <= _CACHED_TEXT else _tokens(text))


_CACHED_TEXT = 2048
"""Texts up to this many characters are cached (4,096 of them: a few MiB at most)."""


@functools.lru_cache(maxsize=4096)
def _cached_tokens(text: str) -> tuple[str, ...]:
    """`tokenize`, cached by text: a fused event's description is tokenized by the embedder
    (hashing), the lexical index, the rarity counts and the pack summaries within a few events
    of each other (tokenize was ~3.8 % of a fused ingest at 100k events, py-spy; the cache
    answers ~77 % of the calls)."""
    return _tokens(text)


def _tokens(text: str) -> tuple[str, ...]:
    tokens: list[str] = []
    for run in _RUN.findall(_POSSESSIVE.sub("", text.lower())):
        if _SEPARATOR.search(run) is None:
            word = _word(run)
            if word:
                tokens.append(word)
            continue
        tokens.append(run)  # the compound itself, unstemmed: exact ids and numbers match
        if _NUMBER_LIKE.fullmatch(run):
            continue  # 6.1 or 10:30 or 2024-03-01: the parts alone would only add noise
        for part in _SEPARATOR.split(run):
            word = _word(part)
            if word:
                tokens.append(word)
    return tuple(tokens)


# Characters that must not reach a terminal or a prompt from event text: C0/C1 controls
# (escape sequences, carriage returns), line and paragraph separators, and the bidi controls
# that reorder what a reader sees (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C).
_UNSAFE = re.compile(
    "[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]"
)


def single_line(text: str) -> str:
    """Untrusted text made displayable as one line: control, separator and bidi characters
    become spaces and runs of white space collapse, so a description can neither inject lines
    into a prompt nor escape sequences into a terminal. The stored text is never changed.

    A printable text holds none of those characters (controls, separators and bidi marks are
    not printable) and no white space but the plain space, so when it has no doubled, leading
    or trailing space it is already its own line: returned as it is, without the regular
    expression and the split (a search's context writes three such fields per event).
    """
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(_UNSAFE.sub(" ", text).split())


# What JSON may carry raw but a terminal, an editor or a diff shows misleadingly: DEL and C1
# controls, line/paragraph separators and bidi controls. JSON writers already escape C0, and
# these can only occur inside strings, so escaping them in the written text keeps it valid.
_INVISIBLE_IN_JSON = re.compile(
    "[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]"
)


def escape_invisible_json(text: str) -> str:
    """JSON text with every bidi control (U+202E…), DEL/C1 control and line separator written
    as a `\\uXXXX` escape: still valid JSON that parses to the same value, but a reader of the
    output (`events --json`, an export) can no longer be shown reordered or hidden text."""
    return _INVISIBLE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
