"""Reading JSON input as given, or refusing it in one line.

Every reader of user files (`memfuse ingest`'s JSONL and JSON, the benchmark formats, the
export) decodes through here, so a file is read the same way wherever it enters: a leading
UTF-8 byte-order mark (what some editors save) is accepted, a bad byte names its line and
column, and nesting is bounded, because Python's decoder, pydantic and `json.dumps` all
recurse, and a hostile file 10,000 brackets deep would otherwise end in a RecursionError
rather than a message. `json_problem` is the same bound, plus finite numbers, for values
that arrive without a file (an Event built in Python).
"""

from __future__ import annotations

import json
import math
from typing import Any

from memory.errors import InputFormatError

MAX_JSON_DEPTH = 64
"""Nesting levels a JSON value may have; events are flat records, benchmark files ~8 deep."""
BOM = "\ufeff"


def decode_utf8(raw: bytes, origin: object, first_line: int = 1) -> str:
    """`raw` as text without a leading BOM; bad UTF-8 is one line naming the line and column
    (`first_line`: the line number of `raw`'s first line, for a file read line by line)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line = first_line + raw.count(b"\n", 0, exc.start)
        bad = raw[exc.start : exc.start + 1].hex()
        raise InputFormatError(
            f"{origin}: line {line}: not valid UTF-8 (byte 0x{bad} at column "
            f"{exc.start - line_start + 1}); save the file as UTF-8"
        ) from None
    return text.removeprefix(BOM) if first_line == 1 else text


def json_problem(value: Any, where: str = "", *, finite: bool = True) -> str | None:
    """What makes `value` unfit to store as JSON as given, or None: nesting deeper than
    MAX_JSON_DEPTH, or (with `finite`) a float that is not finite (NaN, Infinity, or a
    literal like 1e400 that overflowed to it: JSON cannot write it back, `json.dumps` would
    print a non-standard token and other readers a null). Walked with a stack, so a deep
    value cannot exhaust the recursion limit."""
    stack: list[tuple[str, Any, int]] = [(where, value, 0)]
    while stack:
        path, item, depth = stack.pop()
        name = f"key {path!r}" if path else "the value"
        if finite and isinstance(item, float) and not math.isfinite(item):
            return f"{name} is {item!r}, not a finite number (JSON has no NaN or Infinity)"
        if isinstance(item, dict | list | tuple):
            if depth >= MAX_JSON_DEPTH:
                return f"{name} nests deeper than {MAX_JSON_DEPTH} levels"
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                inner = f"{path}[{key}]" if not isinstance(item, dict) else f"{path}.{key}"
                stack.append((inner.removeprefix("."), child, depth + 1))
    return None


def load_json(text: str, origin: object, line: int | None = None) -> Any:
    """Parse one JSON text (a whole file, or one line of a JSONL file when `line` is given);
    an empty file, bad JSON and too-deep nesting are one InputFormatError naming the file
    (and line)."""
    where = f"{origin}: line {line}" if line is not None else f"{origin}"
    deep = f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels; refusing to read it"
    if line is None and not text.strip():
        raise InputFormatError(f"{origin}: empty file, nothing to read")
    try:
        value = json.loads(text)
    except RecursionError:
        raise InputFormatError(deep) from None
    except json.JSONDecodeError as exc:
        at = f"line {line}" if line is not None else f"line {exc.lineno}"
        column = "" if line is not None else f" at column {exc.colno}"
        raise InputFormatError(f"{origin}: {at}: invalid JSON ({exc.msg}{column})") from None
    if json_problem(value, finite=False) is not None:
        raise InputFormatError(deep)
    return value
