"""JSON input read as given or refused in one line: a byte-order mark is accepted, an empty
file and nesting past 64 levels are refused naming the file (never a RecursionError)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.errors import InputFormatError
from memory.jsontext import MAX_JSON_DEPTH, decode_utf8, json_problem, load_json


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_a_byte_order_mark_is_accepted_at_the_start_only() -> None:
    assert decode_utf8(b"\xef\xbb\xbf{}", "f.json") == "{}"
    assert decode_utf8(b"\xef\xbb\xbf{}", "f.jsonl", first_line=2) == "\ufeff{}"  # not the start
    assert load_json(decode_utf8(b'\xef\xbb\xbf{"a": 1}', "f.json"), "f.json") == {"a": 1}


def test_bad_utf8_names_line_and_column() -> None:
    with pytest.raises(
        InputFormatError, match=r"f\.json: line 2: not valid UTF-8 \(byte 0xff at column 3\)"
    ):
        decode_utf8(b"{}\nab\xff", "f.json")


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 500, 100_000])
def test_deep_nesting_is_one_line_naming_the_file(depth: int) -> None:
    with pytest.raises(InputFormatError) as info:
        load_json(nested(depth), "deep.json")
    assert str(info.value) == "deep.json: JSON nested deeper than 64 levels; refusing to read it"
    with pytest.raises(InputFormatError, match=r"deep\.jsonl: line 7: JSON nested deeper"):
        load_json(nested(depth), "deep.jsonl", line=7)


def test_nesting_up_to_the_bound_is_read() -> None:
    assert load_json(nested(MAX_JSON_DEPTH), "ok.json") is not None


@pytest.mark.parametrize("text", ["", "  \n\t"])
def test_an_empty_file_is_refused(text: str) -> None:
    with pytest.raises(InputFormatError, match="empty.json: empty file"):
        load_json(text, "empty.json")


def test_bad_json_names_file_line_and_column() -> None:
    with pytest.raises(InputFormatError, match=r"x\.json: line 2: invalid JSON \(.* at column"):
        load_json('{\n"a": }', "x.json")


@given(st.recursive(st.integers() | st.text(max_size=3), lambda c: st.lists(c, max_size=3)))
def test_json_problem_agrees_with_depth(value: object) -> None:
    def depth(item: object) -> int:
        return 1 + max(map(depth, item), default=0) if isinstance(item, list) else 0

    assert (json_problem(value) is not None) == (depth(value) > MAX_JSON_DEPTH)
    assert load_json(json.dumps(value), "v.json") == value
