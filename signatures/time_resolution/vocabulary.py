"""The words time resolution reads: tables, compiled patterns and confidence levels.

Confidences follow the rules in the package docstring; the search applies a window at
≥ 0.6, so UNSURE is carried in the plan but never applied.
"""

from __future__ import annotations

import re
from datetime import time, timedelta

WHOLE_DAY: tuple[time, time] = (time(0, 0), time(23, 59, 59))

EXPLICIT_DATE = 0.9  # a calendar date or an explicit relative day ("yesterday")
CONFIDENT = 0.85  # a weekday
RANGE = 0.8  # "from Thursday to Saturday", "since Tuesday"
PERIOD = 0.7  # "this week", "last weekend", several dates
UNSURE = 0.45  # a guess: carried in the plan, never applied (threshold 0.6)

LOOK_BACK = timedelta(days=3)
LOOK_FORWARD = timedelta(days=2)
CLOCK_MARGIN = timedelta(hours=1)
_DAY = timedelta(days=1)
_LAST_SECOND = timedelta(hours=23, minutes=59, seconds=59)


def _at(hour: int, minute: int = 0, second: int = 0) -> timedelta:
    """An offset from a day's midnight (hours past 24 reach into the next day)."""
    return timedelta(hours=hour, minutes=minute, seconds=second)


# Offsets from the named day's midnight; the night runs into the next morning.
PARTS_OF_DAY: dict[str, tuple[timedelta, timedelta]] = {
    "early hours": (_at(0), _at(5, 59, 59)),
    "morning": (_at(5), _at(11, 59, 59)),
    "noon": (_at(11), _at(13, 59, 59)),
    "afternoon": (_at(12), _at(17, 59, 59)),
    "evening": (_at(17), _at(23, 59, 59)),
    "night": (_at(18), _at(33, 59, 59)),
    "midnight": (_at(23), _at(24, 59, 59)),
}
MEALS: dict[str, tuple[timedelta, timedelta]] = {
    "breakfast": (_at(5), _at(10, 59, 59)),
    "lunch": (_at(11), _at(14, 59, 59)),
    "dinner": (_at(17), _at(22, 59, 59)),
}
_PM_PARTS = {"afternoon", "evening", "night", "dinner"}

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_ALIASES = {"tues": 1, "weds": 2, "thurs": 3} | {w: i for i, w in enumerate(WEEKDAYS)}
MONTHS = {
    "jan": 1,
    "january": 1,
    "feb": 2,
    "february": 2,
    "mar": 3,
    "march": 3,
    "apr": 4,
    "april": 4,
    "may": 5,
    "jun": 6,
    "june": 6,
    "jul": 7,
    "july": 7,
    "aug": 8,
    "august": 8,
    "sep": 9,
    "sept": 9,
    "september": 9,
    "oct": 10,
    "october": 10,
    "nov": 11,
    "november": 11,
    "dec": 12,
    "december": 12,
}
_FULL_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "couple": 2,
    "couple of": 2,
    "few": 3,
    "several": 5,
}

_MONTH_RE = "|".join(sorted(MONTHS, key=len, reverse=True))
_WEEKDAY_RE = "|".join(sorted(_WEEKDAY_ALIASES, key=len, reverse=True))
_NUMBER_RE = r"\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten"
_ORD = r"(?:st|nd|rd|th)"
_AMPM = r"a\.?m\.?|p\.?m\.?"

# --- Patterns, in the order they claim text (an earlier claim wins an overlap) -------------

_ISO_DATE = re.compile(r"(?<![\d-])(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
_ISO_T = re.compile(r"(\d{4}-\d{1,2}-\d{1,2})T(\d)")
_MONTH_DAY = re.compile(
    rf"\b({_MONTH_RE})\.?\s+(?:the\s+)?(\d{{1,2}}){_ORD}?\b(?:,?\s+(\d{{4}})\b)?"
)
_DAY_MONTH = re.compile(
    rf"\b(?:the\s+)?(\d{{1,2}}){_ORD}?\s+(?:of\s+)?({_MONTH_RE})\b\.?(?:,?\s+(\d{{4}})\b)?"
)
_DAY_OF_MONTH = re.compile(rf"\b(?:the\s+)?(\d{{1,2}}){_ORD}\b")
# "May 14-16", "14th to 16th May": two dates of one month, joined as a range later.
_RANGE_JOIN = r"\s*(?:-|–|to|until|till|through)\s*(?:the\s+)?"
_MONTH_DAYS = re.compile(
    rf"\b({_MONTH_RE})\.?\s+(?:the\s+)?(\d{{1,2}}{_ORD}?){_RANGE_JOIN}(\d{{1,2}}{_ORD}?)\b"
)
_DAYS_MONTH = re.compile(
    rf"\b(?:the\s+)?(\d{{1,2}}{_ORD}?){_RANGE_JOIN}(\d{{1,2}}{_ORD}?)\s+(?:of\s+)?"
    rf"({_MONTH_RE})\b"
)
# "the 3rd time" counts, it does not date.
_COUNTED = re.compile(
    r"\s+(?:time|round|floor|place|attempt|try|tries|game|match|grade|year|lap|set|episode"
    r"|day|week|month|step|level|question|row|page|chapter|lesson|session|birthday"
    r"|anniversary|century|person|one|kid|child|item|goal|point|minute|hour|mile|km|call"
    r"|visit|night|morning|evening)s?\b"
)
_DATE_CONTEXT = re.compile(
    rf"(?:\b(?:on|by|until|till|from|since|between|and|to|through|before|after|for|or|of)"
    rf"|\b(?:{_WEEKDAY_RE})(?:'s)?|,)\s*$"
)

_PERIODS: list[tuple[str, re.Pattern[str]]] = [
    (
        "past n",
        re.compile(
            rf"\b(?:the\s+)?(?:past|last|previous)\s+({_NUMBER_RE}|few|couple(?:\s+of)?|several)"
            r"\s+(days?|nights?|hours?|weeks?)\b"
        ),
    ),
    (
        "next n",
        re.compile(
            rf"\b(?:the\s+)?(?:next|coming|following)\s+(?:{_NUMBER_RE}|few|couple(?:\s+of)?)"
            r"\s+(?:days?|nights?|hours?|weeks?)\b"
            rf"|\bin\s+(?:{_NUMBER_RE}|a\s+few|a\s+couple\s+of)\s+(?:days?|weeks?|hours?)\b"
            rf"|\b(?:{_NUMBER_RE})\s+(?:days?|weeks?)\s+from\s+now\b"
        ),
    ),
    ("past week", re.compile(r"\b(?:the|this)\s+(?:past|last)\s+week\b(?!end)")),
    ("this week", re.compile(r"\b(?:this|the\s+current)\s+week\b(?!end)|\ball\s+week\b")),
    (
        "last week",
        re.compile(r"\b(?:last|previous)\s+week\b(?!end)|\bthe\s+week\s+before\s+last\b"),
    ),
    ("next week", re.compile(r"\bnext\s+(?:week|weekend|month|year)\b")),
    (
        "weekend",
        re.compile(r"\b(this\s+past|this\s+coming|this|last|past|previous|coming|the)\s+weekend\b"),
    ),
    ("weeks ago", re.compile(rf"\b({_NUMBER_RE})\s+weeks?\s+ago\b")),
    (
        "week of",
        re.compile(
            rf"\b(?:the\s+)?week\s+(of|starting|beginning|commencing)\s+(?:on\s+)?"
            rf"(?:(?:{_WEEKDAY_RE})\w*,?\s+)?(?:the\s+)?"
            rf"(?:(\d{{1,2}}){_ORD}?\s+(?:of\s+)?({_MONTH_RE})\b|({_MONTH_RE})\.?\s+(\d{{1,2}}){_ORD}?\b)"
        ),
    ),
    ("this month", re.compile(r"\b(?:this|the\s+current)\s+month\b")),
    ("last month", re.compile(r"\b(?:last|previous)\s+month\b")),
    (
        "in month",
        re.compile(
            rf"\b(in|during|throughout|over|since|for)\s+(?:early\s+|late\s+|mid-?)?"
            rf"({'|'.join(_FULL_MONTHS)})\b(?:\s+(\d{{4}})\b)?"
        ),
    ),
]

_VAGUE = re.compile(
    r"\b(?:lately|recently|of\s+late|these\s+days|nowadays|the\s+other\s+day"
    r"|a\s+(?:few|couple(?:\s+of)?)\s+(?:days|weeks|nights)\s+ago|a\s+while\s+(?:ago|back)"
    r"|some\s+time\s+ago|in\s+the\s+past|so\s+far|over\s+time|eventually"
    r"|(?:every|each|per)\s+(?:single\s+)?(?:day|morning|afternoon|evening|night|week|weekend"
    rf"|time|meal|breakfast|lunch|dinner|supper|{_WEEKDAY_RE})"
    r"|daily|nightly|weekly|(?:on\s+)?weekdays|mornings|afternoons|evenings|nights|weekends"
    r"|(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s"
    r"|usually|typically|normally|generally|always"
    r"|most\s+(?:days|nights|mornings|evenings))\b"
)
_NOISE = re.compile(r"\bgood\s+(?:morning|afternoon|evening|night)\b")

_RELATIVE_DAYS: list[tuple[int, str | None, re.Pattern[str]]] = [
    (-2, None, re.compile(r"\bthe\s+day\s+before\s+yesterday\b")),
    (2, None, re.compile(r"\bthe\s+day\s+after\s+tomorrow\b")),
    (-1, "night", re.compile(r"\blast\s+night\b")),
    (-1, "evening", re.compile(r"\blast\s+evening\b")),
    (0, "night", re.compile(r"\btonight\b")),
    (0, "morning", re.compile(r"\bthis\s+morning\b")),
    (0, "afternoon", re.compile(r"\bthis\s+afternoon\b")),
    (0, "evening", re.compile(r"\bthis\s+evening\b")),
    (0, None, re.compile(r"\b(?:earlier\s+|later\s+)?today\b")),
    (-1, None, re.compile(r"\byesterday\b")),
    (1, None, re.compile(r"\btomorrow\b")),
]
_DAYS_AGO = re.compile(rf"\b({_NUMBER_RE})\s+days?\s+ago\b")

_WEEKDAY = re.compile(
    r"\b(?:(last|this\s+past|past|this\s+coming|coming|next|this)\s+)?"
    rf"({_WEEKDAY_RE})\b('s)?"
)
# "the day before <a day>" shifts that day; "the day before <an event>" cannot be dated.
_SHIFT = re.compile(r"\bthe\s+(day|morning|afternoon|evening|night)\s+(before|after)\b")
_NEXT_DAY = re.compile(
    r"\b(?:the\s+)?(next|following|previous|prior)\s+(day|morning|afternoon|evening|night)\b"
)

_CLOCK_RANGE = re.compile(
    r"(?:\b(?:between|from)\s+)?(?<![\w:.,])(\d{1,2})(?::([0-5]\d))?\s*"
    rf"({_AMPM})?\s*(?:and|to|till|until|-|–)\s*(\d{{1,2}})(?::([0-5]\d))?\s*({_AMPM})?"
    r"(?![a-z\d])"
)
_CLOCK = re.compile(
    r"(?:\b(at|around|about|near|by|before|after|since|until|till|from|approximately"
    r"|roughly)\s+)?(?<![\w:.,])(\d{1,2})(?::([0-5]\d))?(?![\d:])\s*"
    rf"({_AMPM})?(?![a-z])"
)
_PART_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("early hours", re.compile(r"\b(?:early|small|wee)\s+hours\b|\bpre-?dawn\b")),
    ("midnight", re.compile(r"\bmidnight\b")),
    ("noon", re.compile(r"\b(?:noon|midday|mid-day)\b")),
    ("morning", re.compile(r"\bmorning\b|\bdawn\b|\bsunrise\b|\bdaybreak\b")),
    ("afternoon", re.compile(r"\bafternoon\b")),
    ("evening", re.compile(r"\bevening\b|\bdusk\b|\bsunset\b|\btwilight\b")),
    ("night", re.compile(r"\bnight(?:time|-time)?\b|\bovernight\b")),
    ("breakfast", re.compile(r"\bbreakfast(?:time)?\b")),
    ("lunch", re.compile(r"\blunch(?:time)?\b")),
    ("dinner", re.compile(r"\b(?:dinner|supper)(?:time)?\b")),
]
# Compound nouns that use a part or meal word without meaning its time ("lunch box").
_NOT_A_TIME = re.compile(
    r"\s+(?:box|boxes|bag|bags|money|menu|plate|plates|table|tray|recipe|recipes|kit|voucher"
    r"|order|leftovers|light|lights|mode|vision|stand|owl|cream|person)\b"
)
_MODIFIER = re.compile(
    r"\b(after|before|since|until|till|by|from)\s+(?:(?:the|my|our|his|her|their|its|[a-z]+'s)"
    r"\s+)?$"
)

_FUTURE_TENSE = re.compile(
    r"\b(?:will|won't|shall|going\s+to|gonna|planned|planning|scheduled|supposed\s+to"
    r"|upcoming)\b|'ll\b"
)
_CAUSAL = re.compile(
    r"\bwhy\b|\bhow\s+come\b|\breasons?\b|\bbecause\s+of\s+what\b"
    r"|\bwhat\s+(?:caused|causes|made|makes|led\s+to|leads\s+to|triggered|set\s+off"
    r"|was\s+behind|was\s+the\s+cause)\b|\bcaused\s+by\s+what\b"
)
_CONSEQUENCE = re.compile(
    r"\bwhat\s+(?:happened|came|followed)\s+(?:after|afterwards?|next|then)\b|\bafterwards?\b"
    r"|\bas\s+a\s+(?:result|consequence)\b|\bsince\s+then\b|\bin\s+the\s+aftermath\b"
    r"|\bwhat\s+were\s+the\s+consequences\b|\bwhat\s+followed\b"
)

# Gaps between two mentions that join them into one span.
_FILLER = r"(?:(?:the|of|on|in|at)\s+)*"
_RANGE_GAP = re.compile(
    rf"^[\s,]*{_FILLER}(?:(?:to|till|til|until|through|thru|and|up)\s+|[-–—]\s*)+{_FILLER}$"
)
_BETWEEN_BEFORE = re.compile(r"\b(?:between|from)\s+(?:the\s+)?$")
_SINCE_BEFORE = re.compile(r"\bsince\b(?!\s+then\b)[^,.;?!]*$")
_OPEN_BEFORE = re.compile(r"\b(?:before|after|until|till|by)\s+$")
_LABEL_GAP = re.compile(r"^[\s,(]*(?:the\s+)?$")
_UNTIL_NOW = re.compile(r"^\s*(?:until|till|to|up\s+to|through)\s+now\b")


def _number(word: str) -> int:
    word = " ".join(word.split())
    return int(word) if word.isdigit() else _NUMBERS[word]
