"""The before/after table of an optimisation: rich for the terminal, markdown for reports.

Rows are the question categories, the metric's parts (purity and recall for fusion) and
the overall score; columns are train and dev, each before (shipped defaults / plain
program) and after (the optimised result). Scores come from manifest dicts, so a saved
manifest can be re-rendered later.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

SIDES = ("train", "dev")
STAGES = ("before", "after")


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _rows(scores: dict[str, dict[str, dict[str, Any]]]) -> list[tuple[str, list[float | None]]]:
    cards = [scores.get(side, {}).get(stage) or {} for side in SIDES for stage in STAGES]
    categories = sorted({c for card in cards for c in (card.get("by_category") or {})})
    parts = list(dict.fromkeys(p for card in cards for p in (card.get("parts") or {})))
    rows = [(c, [(card.get("by_category") or {}).get(c) for card in cards]) for c in categories]
    rows += [(f"part: {p}", [(card.get("parts") or {}).get(p) for card in cards]) for p in parts]
    rows.append(("overall", [card.get("score") for card in cards]))
    return rows


def _header() -> list[str]:
    return ["category"] + [f"{side} {stage}" for side in SIDES for stage in STAGES]


def score_table(manifest: dict[str, Any]) -> Table:
    """A rich table of the manifest's before/after scores, train and dev, per category."""
    title = f"{manifest['target']} · {manifest['optimizer']} · recall@{manifest['k']}"
    table = Table(title=title)
    for i, name in enumerate(_header()):
        table.add_column(name, justify="left" if i == 0 else "right")
    rows = _rows(manifest["scores"])
    for name, values in rows:
        style = "bold" if name == "overall" else None
        table.add_row(name, *[_cell(v) for v in values], style=style)
    return table


def markdown_table(manifest: dict[str, Any], sides: tuple[str, ...] = SIDES) -> str:
    """The same table as markdown (optionally only some sides, e.g. dev)."""
    header = ["category"] + [f"{side} {stage}" for side in sides for stage in STAGES]
    keep = [i for i, (side, _) in enumerate((s, t) for s in SIDES for t in STAGES) if side in sides]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, values in _rows(manifest["scores"]):
        cells = [_cell(values[i]) for i in keep]
        label = f"**{name}**" if name == "overall" else name
        lines.append("| " + " | ".join([label, *cells]) + " |")
    return "\n".join(lines)
