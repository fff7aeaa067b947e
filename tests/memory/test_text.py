"""`single_line`: untrusted event text made safe to show in a terminal or a prompt."""

from __future__ import annotations

import json
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from memory.text import _UNSAFE, escape_invisible_json, single_line, tokenize

BIDI = {
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
}


@given(st.text())
def test_single_line_has_no_breaks_controls_or_bidi_and_is_idempotent(text: str) -> None:
    line = single_line(text)
    assert not any(unicodedata.category(ch) == "Cc" for ch in line)
    assert not set(line) & (BIDI | {"\u2028", "\u2029"})
    assert line == line.strip() and "  " not in line
    assert single_line(line) == line


_SPACES_AND_MARKS = st.sampled_from([" ", "  ", "\t", "\u00a0", "\u3000", *BIDI, "\u2028", "\x85"])


@given(st.lists(st.text(max_size=6) | _SPACES_AND_MARKS, max_size=8).map("".join))
def test_a_text_returned_as_it_is_is_the_one_the_full_rewrite_gives(text: str) -> None:
    """The printable shortcut changes nothing: every text gets what the control, separator
    and bidi rewrite with the white-space collapse gives it."""
    assert single_line(text) == " ".join(_UNSAFE.sub(" ", text).split())


def test_ordinary_text_is_unchanged_and_words_survive() -> None:
    assert single_line("Tom weighed 82.4 kg at 07:10 — ok") == "Tom weighed 82.4 kg at 07:10 — ok"
    assert single_line("a\nQuestion: b\x1b[31m c\u202e") == "a Question: b [31m c"


BIDI_TEXT = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


def test_json_output_escapes_bidi_controls() -> None:
    text = escape_invisible_json(
        json.dumps({"d": f"pay \u202eevil\u202c {BIDI_TEXT}"}, ensure_ascii=False)
    )
    assert "\\u202e" in text and not any(c in text for c in BIDI_TEXT)
    assert json.loads(text) == {"d": f"pay \u202eevil\u202c {BIDI_TEXT}"}


@given(
    st.text(
        alphabet=st.sampled_from([*BIDI_TEXT, "\x7f", "\x85", "\u2028", "\n", "\\", '"', "a", "é"])
    )
)
def test_escaped_json_round_trips_and_hides_nothing(text: str) -> None:
    for dumped in (json.dumps([text], ensure_ascii=False), json.dumps({text: text}, indent=1)):
        escaped = escape_invisible_json(dumped)
        assert json.loads(escaped) == json.loads(dumped)
        assert not any(c in escaped for c in [*BIDI_TEXT, "\x7f", "\x85", "\u2028"])


def test_tokenize_hands_out_a_new_list_each_time() -> None:
    """Tokens are cached by text; a caller that changes its list changes only its own."""
    first = tokenize("Kettle boiled twice in the kitchen")
    first.append("poison")
    assert tokenize("Kettle boiled twice in the kitchen") == ["kettl", "boil", "twic", "kitchen"]
    long = "kettle boiled " * 400  # past the cached length: tokenized afresh, the same way
    assert tokenize(long) == ["kettl", "boil"] * 400
