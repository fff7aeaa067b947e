"""The generator's wording, kept as data: JSON files under `eval/synth/data/`.

`load_table(name)` reads `data/<name>.json` once (through `importlib.resources`, so it
works from an installed wheel too). `Words(name)` fills the templates of one file: a
template is a string in Python `str.format` syntax whose `{slot}`, `{slot.attr}`,
`{slot[key]}` and `{slot:spec}` fields are looked up in the slots the code passes,
usually `locals()` of the function that words something plus a few computed values.
`{slot:clock}`, `:stamp`, `:day`, `:hm` and `:len` format through the named filter, and
`{rand:LO-HI}` / `{pick:a|b}` draw from the random stream the code passes (data/README.md
has the whole syntax). Which text is chosen, when, about whom and why stays in code.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from eval.synth.timewords import clock, day_label, hours_minutes, stamp

# `{slot:name}` applies a named filter instead of a format spec.
FILTERS: dict[str, Callable[[Any], str]] = {
    "clock": clock,  # 17:42
    "stamp": stamp,  # Tuesday 12 May at 17:42
    "day": day_label,  # Tuesday 12 May
    "hm": hours_minutes,  # 1 h 25 min
    "len": lambda items: str(len(items)),
}
_SPAN = re.compile(r"(-?\d+)-(-?\d+)(?:([*/])(\d+))?")


def draw_number(spec: str, rng: random.Random) -> str:
    """`LO-HI` a random integer, optionally `*K` or `/K`, then `:format-spec`."""
    span, _, fmt = spec.partition(":")
    match = _SPAN.fullmatch(span)
    if match is None:
        raise ValueError(f"bad number draw {spec!r}")
    lo, hi, op, k = match.groups()
    value: float = rng.randint(int(lo), int(hi))
    if op:
        value = value * int(k) if op == "*" else value / int(k)
    return format(value, fmt)


def draw_pick(options: Sequence[Any], rng: random.Random) -> str:
    return str(rng.choice(options))


class _Draw:
    def __init__(self, kind: str):
        self.kind = kind


class _Formatter(string.Formatter):
    def __init__(self, rng: random.Random | None = None):
        self.rng = rng

    def get_value(self, key: int | str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        if self.rng is not None and key in ("rand", "pick"):
            return _Draw(str(key))
        return super().get_value(key, args, kwargs)

    def format_field(self, value: Any, format_spec: str) -> Any:
        if isinstance(value, _Draw):
            assert self.rng is not None
            if value.kind == "rand":
                return draw_number(format_spec, self.rng)
            return draw_pick(format_spec.split("|"), self.rng)
        named = FILTERS.get(format_spec)
        return named(value) if named else format(value, format_spec)


_PLAIN = _Formatter()


@cache
def load_table(name: str) -> Any:
    """The parsed `data/<name>.json` (`name` may contain `/`); shared, so never mutate it."""
    path = resources.files("eval.synth").joinpath("data", *f"{name}.json".split("/"))
    return json.loads(path.read_text(encoding="utf-8"))


def fill(node: Any, slots: Mapping[str, Any], fmt: _Formatter = _PLAIN) -> Any:
    """Fill every template in `node` (a string, or lists and objects of them), in order."""
    if isinstance(node, str):
        return fmt.vformat(node, (), slots)
    if isinstance(node, list):
        return [fill(n, slots, fmt) for n in node]
    if isinstance(node, dict):
        return {k: fill(v, slots, fmt) for k, v in node.items()}
    return node


class Words:
    """The templates of one table, addressed by a dotted key (`"injury.w1"`).

    `W(key, locals(), n=...)` returns the filled entry: a string, a list of alternative
    wordings, or an object whose fields are a call's wording arguments (`clauses`, `gist`,
    `anchors`; `texts`, `answer`, `checklist`), meant to be passed as `**W(...)`. `draw`
    is the random stream `{rand:...}` and `{pick:...}` fields draw from, left to right. A
    `checklist` entry holds `[item, anchors]` pairs; `refs` gives each item the evidence
    it rests on, in order, making the `(item, refs, anchors)` triples the builders take.
    """

    def __init__(self, table: str, section: str = ""):
        self.table, self.section = table, section

    def at(self, section: str) -> Words:
        """The same table with keys relative to `section` (one builder's wording)."""
        return Words(self.table, f"{self.section}{section}.")

    def __call__(
        self,
        key: str,
        ns: Mapping[str, Any] | None = None,
        /,
        refs: Sequence[Any] | None = None,
        draw: random.Random | None = None,
        **slots: Any,
    ) -> Any:
        node = load_table(self.table)
        for part in f"{self.section}{key}".split("."):
            node = node[part]
        fmt = _PLAIN if draw is None else _Formatter(draw)
        out = fill(node, ChainMap(slots, ns) if ns is not None else slots, fmt)
        if refs is not None:
            items = out["checklist"]
            if len(items) != len(refs):
                raise ValueError(f"{self.table}:{key}: {len(items)} items, {len(refs)} refs")
            out["checklist"] = [(item, r, anchors) for (item, anchors), r in zip(items, refs)]
        return out
