"""Human-readable outputs of a bench run: report.md, a recall-by-category chart, a console table.

They read only the results.json shape, so a report can be regenerated from a saved
run without re-running anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from eval.baseline import (
    ablation_margins,
    best_baseline,
    gaps_to_best_baseline,
    is_baseline,
    recall_table,
)
from eval.baseline import categories_of as categories

# (key, report title, console title, kind) in display order; kind picks the number format.
METRIC_COLUMNS: tuple[tuple[str, str, str, str], ...] = (
    ("n_questions", "questions", "n", "int"),
    ("evidence_recall", "recall@k", "recall", "share"),
    ("full_evidence_rate", "full evidence", "full", "share"),
    ("checklist_coverage", "checklist cov.", "cl.cov", "share"),
    ("checklist_score", "checklist score", "score", "share"),
    ("context_tokens", "ctx tokens", "tokens", "int"),
    ("search_p50_ms", "p50 ms", "p50ms", "ms"),
    ("search_p95_ms", "p95 ms", "p95ms", "ms"),
    # the search plus the question's own encoding, what a user waits for (eval.bench_queries)
    ("from_text_p95_ms", "p95 from text ms", "p95 text", "ms"),
    ("ingest_cold_seconds", "ingest cold s", "ingest cold", "s"),
    ("ingest_warm_seconds", "ingest warm s", "ingest warm", "s"),
)
NA = "–"
NO_LLM_BANNER = (
    "> **No LLM configured: only retrieval metrics are reported** "
    "(no reader answers, no checklist score)."
)


def fmt(value: Any, kind: str) -> str:
    if value is None:
        return NA
    if kind == "share":
        return f"{value:.3f}"
    if kind == "int":
        return f"{value:,.0f}"
    if kind == "ms":
        return f"{value:.1f}"
    return f"{value:.2f}"


def _columns(results: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """Metric columns present for at least one system (checklist score only with an LLM)."""
    blocks = [s["overall"] for s in results["systems"].values()]
    return [c for c in METRIC_COLUMNS if any(c[0] in b for b in blocks)]


def render_console_table(results: Mapping[str, Any] | Any) -> Table:
    """Systems × Overall metrics, for the terminal (a results dict or a BenchResults)."""
    results = getattr(results, "results", results)
    name = Path(str(results["dataset"])).name
    table = Table(title=f"bench {name}, k={results['k']}, Overall")
    table.add_column("system", style="bold", no_wrap=True)
    columns = _columns(results)
    for _, _, title, _ in columns:
        table.add_column(title, justify="right", no_wrap=True)
    for system_name, system in results["systems"].items():
        overall = system["overall"]
        table.add_row(system_name, *(fmt(overall.get(key), kind) for key, _, _, kind in columns))
    return table


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub markdown table as lines (shared by report.md and suite.md)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def markdown_report(
    results: Mapping[str, Any], notes: Sequence[str] = (), llm_model: str | None = None
) -> str:
    """report.md: Overall table, recall by category, then what was measured and how."""
    columns = _columns(results)
    cats = categories(results)
    lines = [f"# Benchmark report: {results['dataset']}", ""]
    if llm_model is None:
        lines += [NO_LLM_BANNER, ""]
    lines += ["## Overall", ""]
    rows = [
        [name, *(fmt(s["overall"].get(key), kind) for key, _, _, kind in columns)]
        for name, s in results["systems"].items()
    ]
    lines += md_table(["system", *(title for _, title, _, _ in columns)], rows)
    lines += ["", f"## Evidence recall@{results['k']} by category", ""]
    rows = [
        [name, *(fmt(s["by_category"].get(c, {}).get("evidence_recall"), "share") for c in cats)]
        for name, s in results["systems"].items()
    ]
    lines += md_table(["system", *cats], rows)
    counts = {c: _first(results, c, "n_questions") for c in cats}
    lines += ["", "Questions per category: " + ", ".join(f"{c} {n}" for c, n in counts.items())]
    if llm_model is not None:
        lines += ["", "## Checklist score by category", ""]
        rows = [
            [
                name,
                *(fmt(s["by_category"].get(c, {}).get("checklist_score"), "share") for c in cats),
            ]
            for name, s in results["systems"].items()
        ]
        lines += md_table(["system", *cats], rows)
    table = recall_table(results)
    lines += ["", *baseline_section(table, level="##"), *ablation_section(table, level="##")]
    lines += change_section(results.get("context_changes", {}), level="##")
    lines += later_finds_section(results.get("later_finds", {}), level="##")
    lines += missing_evidence_section(results.get("missing_evidence", {}), level="##")
    lines += _distractor_section(results)
    lines += fusion_section(fusion_table(results), level="##")
    lines += ["", "## What was measured", "", *_method_notes(results["k"], llm_model)]
    if notes:
        lines += ["", "## Notes", "", *(f"- {note}" for note in notes)]
    return "\n".join(lines) + "\n"


def baseline_section(table: Mapping[str, Any], level: str = "###") -> list[str]:
    """Every other system minus the best baseline: Overall against the best overall, each
    category against the best baseline in that category (named in the header row)."""
    best = best_baseline(table)
    others = [s for s in table["systems"] if not is_baseline(s)]
    if best["overall"] is None or not others:
        return []
    cats = [c for c in table["categories"] if c not in table["apart"]]
    header = ["system", f"overall (vs {best['overall']['system']} {best['overall']['recall']:.3f})"]
    for cat in cats:
        ref = best["by_category"].get(cat)
        header.append(f"{cat} (vs {ref['system']} {ref['recall']:.3f})" if ref else cat)
    rows = []
    for system in others:
        gaps = gaps_to_best_baseline(table, system)
        rows.append(
            [system, signed(gaps["overall"]), *(signed(gaps["by_category"].get(c)) for c in cats)]
        )
    intro = (
        "Recall@k minus the best of naive_rag, bm25 and hybrid on this source: the best overall "
        "for Overall, the best in each category for that category. Negative is below the bar."
    )
    return [f"{level} Against the best baseline", "", intro, "", *md_table(header, rows), ""]


def ablation_section(table: Mapping[str, Any], level: str = "###") -> list[str]:
    """memfuse minus each ablation that ran: what the switched-off part adds."""
    margins = ablation_margins(table)
    if not margins:
        return []
    cats = [c for c in table["categories"] if c not in table["apart"]]
    rows = [
        [
            f"memfuse − {ablation}",
            signed(m["overall"]),
            *(signed(m["by_category"].get(c)) for c in cats),
        ]
        for ablation, m in margins.items()
    ]
    intro = (
        "What each part adds: memfuse's recall@k minus the ablation's (positive: the part helps)."
    )
    return [
        f"{level} What each part adds",
        "",
        intro,
        "",
        *md_table(["part", "overall", *cats], rows),
        "",
    ]


def change_section(changes: Mapping[str, Mapping[str, Any]], level: str = "###") -> list[str]:
    """memfuse against each ablation question by question (eval.context_changes): how often
    the part changes the context and recall, and whether what it lets in is gold more often
    than what that displaces."""
    if not changes:
        return []

    def counted(n: int, share: float | None) -> str:
        return f"{n:,} ({fmt_percent(share)})"

    rows = [
        [
            f"memfuse − {ablation}",
            f"{c['questions']:,}",
            counted(c["changed"], c["changed_share"]),
            counted(c["recall_higher"], c["higher_share"]),
            counted(c["recall_lower"], c["lower_share"]),
            f"{c['let_in']:,}, {fmt_percent(c['let_in_gold_share'])} gold",
            f"{c['displaced']:,}, {fmt_percent(c['displaced_gold_share'])} gold",
        ]
        for ablation, c in changes.items()
    ]
    header = [
        "part",
        "questions",
        "context changed",
        "recall higher",
        "recall lower",
        "events it let in",
        "events those displaced",
    ]
    intro = (
        "What each part changes, question by question: on how many questions memfuse's context "
        "differs from the ablation's and its recall is higher or lower, and the events in one "
        "context only (summed over questions) with the share of them that is gold evidence."
    )
    return [f"{level} What each part changes", "", intro, "", *md_table(header, rows), ""]


def later_finds_section(finds: Mapping[str, Mapping[str, Any]], level: str = "###") -> list[str]:
    """What found the events memfuse's later rounds put in its contexts
    (eval.context_changes.later_finds): which of them earns the rounds' margin."""
    if not finds:
        return []
    rows = [
        [
            f"`{finder}`",
            f"{row['questions']:,}",
            f"{row['events']:,}",
            f"{row['gold']:,}",
            fmt_percent(row["gold_share"]),
        ]
        for finder, row in finds.items()
    ]
    intro = (
        "What found the events memfuse's later rounds put in its contexts: a pivot on the "
        "evidence of round 1 (`pivot:colocated`: other devices at its place and minutes, "
        "`pivot:series`: its record on other days, `pivot:feedback`: its distinctive words) or "
        "a later round's own search (`search`); the events summed over questions, and the "
        "share of them that is gold evidence (compare with the events those displaced, above)."
    )
    header = ["found by", "questions", "events", "gold", "gold share"]
    return [
        f"{level} What the later rounds let in, by what found it",
        "",
        intro,
        "",
        *md_table(header, rows),
        "",
    ]


def missing_evidence_section(
    missing: Mapping[str, Mapping[str, Any]], level: str = "###"
) -> list[str]:
    """Where each multi-round system's missing gold is (eval.missing_evidence): never found,
    or found and ranked out — which says whether the contest or the search is short."""
    if not missing:
        return []

    def counted(row: Mapping[str, Any], key: str) -> str:
        return f"{row[key]:,} ({fmt_percent(row[f'{key}_share'])})"

    rows = [
        [
            system,
            f"{row['gold']:,}",
            counted(row, "in_context"),
            counted(row, "ranked_out_round_one"),
            counted(row, "ranked_out_later"),
            counted(row, "never_found"),
            fmt_percent(row["pool_recall"]),
        ]
        for system, row in missing.items()
    ]
    header = [
        "system",
        "gold events",
        "in the context",
        "found by round 1, ranked out",
        "found later, ranked out",
        "never found",
        "found at all",
    ]
    intro = (
        "Where the gold evidence of each multi-round system's questions ended up (summed over "
        "questions, share of the gold events): in the context, found by a round and ranked out "
        "of it, or never found by any round. What is ranked out a better selection could still "
        "reach; what was never found only a round that searches elsewhere can."
    )
    return [
        f"{level} Where the missing evidence is",
        "",
        intro,
        "",
        *md_table(header, rows),
        "",
    ]


def fmt_percent(value: float | None) -> str:
    return NA if value is None else f"{100 * value:.1f} %"


def _distractor_section(results: Mapping[str, Any]) -> list[str]:
    """How often each system's context held events written to mislead the question
    (MemFuseBench's adversarial distractors); empty for a file without them."""
    systems = results["systems"]
    if not any(s["overall"].get("distractor_questions") for s in systems.values()):
        return []
    header = [
        "system",
        "questions with distractors",
        "fooled (≥1 in context)",
        "in context per question",
        "share of distractors retrieved",
    ]
    rows = [
        [
            name,
            str(s["overall"].get("distractor_questions", 0)),
            fmt(s["overall"].get("fooled_rate"), "share"),
            fmt(s["overall"].get("distractors_retrieved"), "share"),
            fmt(s["overall"].get("distractor_recall"), "share"),
        ]
        for name, s in systems.items()
    ]
    intro = (
        "Distractors are events written to look relevant to one question while holding none "
        "of its answer; a context that holds one can mislead a reader."
    )
    return ["", "## Distractors in the context", "", intro, "", *md_table(header, rows)]


# (key, column title, kind) of the fused store's quality against the generator's labels
FUSION_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("fused_nodes", "packs per scenario", "float"),
    ("mean_members", "members per pack", "float"),
    ("fusion_purity", "purity", "share"),
    ("segment_purity", "segment purity", "share"),
    ("unlabelled_share", "packs without a storyline member", "share"),
    ("labelled_purity", "purity of the others", "share"),
)
FUSION_INTRO = (
    "Fused packs against the dataset's storyline labels (`eval/fusion_metrics.py`; a diagnostic, "
    "never an input). Purity is the share of a pack's members from its most common storyline "
    "episode, averaged over packs; a member without a storyline label counts as impure, so a "
    "pack of one everyday happening (a commute seen by the door, the lock and the car) scores 0 "
    "like a pack of unrelated noise. The last two columns split it: the share of packs with no "
    "storyline member at all, and the purity of the rest."
)


def fusion_table(results: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The fusion figures (means over scenarios) of each store that holds packs, keyed by the
    systems that read it: the ablations share memfuse's store (memfuse_no_fusion reads it
    without its packs), so one row stands for all of them."""
    by_figures: dict[tuple[Any, ...], tuple[list[str], dict[str, Any]]] = {}
    for name, block in results["systems"].items():
        if not block["overall"].get("fused_nodes"):
            continue
        figures = {key: block["overall"].get(key) for key, _, _ in FUSION_COLUMNS}
        by_figures.setdefault(tuple(figures.values()), ([], figures))[0].append(name)
    return {", ".join(names): figures for names, figures in by_figures.values()}


def fusion_section(table: Mapping[str, Mapping[str, Any]], level: str = "###") -> list[str]:
    """The fusion figures per store; empty when no store holds packs."""
    if not table:
        return []
    rows = [
        [names, *(fmt(figures.get(key), kind) for key, _, kind in FUSION_COLUMNS)]
        for names, figures in table.items()
    ]
    header = ["systems", *(title for _, title, _ in FUSION_COLUMNS)]
    return ["", f"{level} Fusion", "", FUSION_INTRO, "", *md_table(header, rows)]


def _first(results: Mapping[str, Any], category: str, key: str) -> Any:
    for system in results["systems"].values():
        if category in system["by_category"]:
            return system["by_category"][category].get(key)
    return None


METHOD_NOTES = """\
- **recall@k**: share of a question's gold evidence events present in the context of at
  most k events; questions without gold evidence are skipped (counted as `recall_skipped`).
- **full evidence**: share of questions whose gold evidence is entirely in the context.
- **checklist cov.**: share of checklist items with at least one of their evidence events
  in the context (– when the dataset has no checklists).
- **ctx tokens**: mean cl100k_base tokens of the serialized context
  (`[time] [device] [location] description` lines, in time order).
- **p50/p95 ms**: nearest-rank percentiles of per-question retrieval wall time
  (search + context assembly). Question texts are embedded before timing starts, so the
  numbers compare searches; texts a system writes itself (rewrites) are encoded on its clock.
- **ingest cold / warm s**: seconds to build the system's stores over all scenarios,
  measured by the run that built them (stores are cached); a build is *cold* when it had to
  embed at least half of its texts (empty embedding cache), *warm* when it found them in the
  cache, so the column no longer depends on which system's ingest ran first; – when no build
  of that kind happened. Overall only.
- All means are question-macro: Overall is not the mean of the category means.
  Categories reported apart (LoCoMo adversarial) are left out of Overall.
- long_context gets every event up to the question time, so its recall is 1 by
  construction; its token count is the point of comparison."""

JUDGE_NOTE = """\
- **checklist score**: the reader ({model}, temperature 1) answers from the context; the
  judge (temperature 0) marks each checklist item covered or not; the score is the covered
  share, averaged over questions. Questions without a checklist are judged against their
  reference answer as a one-item checklist. If any question is unscorable, the aggregate is
  withheld (–), never counted as zero."""


def _method_notes(k: int, llm_model: str | None) -> list[str]:
    notes = METHOD_NOTES.splitlines()
    if llm_model is not None:
        notes += JUDGE_NOTE.replace("{model}", llm_model).splitlines()
    return notes


def plot_recall_by_category(results: Mapping[str, Any], path: Path) -> Path:
    """Grouped bars: an Overall group, then one group per category (with its n), one bar per
    system in each group, each bar labelled with its value."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cats = categories(results)
    systems = list(results["systems"])
    groups = ["overall", *cats]

    def block(name: str, group: str) -> Mapping[str, Any]:
        system = results["systems"][name]
        return system["overall"] if group == "overall" else system["by_category"].get(group, {})

    def label(group: str) -> str:
        n = max((block(s, group).get("n_questions") or 0) for s in systems)
        return f"{'Overall' if group == 'overall' else group}\n(n={n})"

    width = 0.8 / max(len(systems), 1)
    fig, ax = plt.subplots(figsize=(max(8.0, 1.5 * len(groups) + 3), 5.0))
    for i, name in enumerate(systems):
        values = [block(name, g).get("evidence_recall") or 0.0 for g in groups]
        positions = [x + (i - (len(systems) - 1) / 2) * width for x in range(len(groups))]
        bars = ax.bar(positions, values, width, label=name)
        ax.bar_label(bars, labels=[f"{v:.2f}" for v in values], fontsize=6, rotation=90, padding=2)
    ax.axvline(0.5, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([label(g) for g in groups], rotation=20, ha="right")
    ax.set_xlabel("question category")
    ax.set_ylabel(f"evidence recall@{results['k']}")
    ax.set_ylim(0, 1.15)
    ax.set_title(f"Evidence recall by category: {Path(str(results['dataset'])).name}")
    ax.legend(title="system", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# --- suite (suite.json shape, written by eval.suite) ------------------------------------

SUITE_NOTES = """\
- **gap**: the system's evidence recall@k minus the best baseline's (the best of naive_rag,
  bm25 and hybrid: overall for Overall, per category for each category), on the same
  questions of the same source; negative means below the bar.
- **worst**: the lowest gap over the source's categories (the category in brackets);
  categories a dataset reports apart (LoCoMo adversarial) are shown but left out of gaps,
  as they are left out of Overall. **overall**: the gap of the Overall recall.
- Seed {held_out} is held out: it is never used for tuning, so a gain there is not fitted."""


def signed(value: float | None) -> str:
    """A gap with its sign (+0.000 for a tie), or – when not measurable."""
    return NA if value is None else f"{value:+.3f}"


def _worst_cell(gaps: Mapping[str, Any]) -> str:
    if gaps["worst"] is None:
        return NA
    return f"{signed(gaps['worst'])} ({gaps['worst_category']})"


def suite_gap_rows(summary: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the worst-case gap table: per source, worst category and overall."""
    names = [s["name"] for s in summary["sources"]]
    header = ["system"] + [f"{n} {part}" for n in names for part in ("worst", "overall")]
    rows = []
    for system, by_source in summary["gaps"].items():
        cells = [system]
        for name in names:
            cells += [_worst_cell(by_source[name]), signed(by_source[name]["overall"])]
        rows.append(cells)
    return header, rows


def render_suite_table(summary: Mapping[str, Any]) -> Table:
    """The worst-case gap table for the terminal."""
    header, rows = suite_gap_rows(summary)
    table = Table(title=f"suite: gap to the {summary['reference']}, recall@{summary['k']}")
    table.add_column(header[0], style="bold", no_wrap=True)
    for title in header[1:]:
        table.add_column(title, justify="right", no_wrap=True)
    for row in rows:
        table.add_row(row[0], *(_colour(c) for c in row[1:]))
    return table


def _colour(cell: str) -> str:
    """Losses in red, so the terminal table reads at a glance."""
    return f"[red]{cell}[/red]" if cell.startswith("-") else cell


def _source_section(source: Mapping[str, Any]) -> list[str]:
    """One source's systems × (overall, categories) recall table, apart categories marked."""
    apart = set(source["apart"])
    cats = source["categories"]
    titles = [f"{c} (apart)" if c in apart else c for c in cats]
    rows = [
        [
            name,
            fmt(block["overall"], "share"),
            *(fmt(block["by_category"][c], "share") for c in cats),
        ]
        for name, block in source["systems"].items()
    ]
    return [
        f"### {source['name']}",
        "",
        (
            f"`{source['path']}`: {source['n_questions']} questions in Overall; "
            f"full report in `{source['out_dir']}/report.md`."
        ),
        "",
        *md_table(["system", "overall", *titles], rows),
        "",
        *baseline_section(source),
        *ablation_section(source),
        *change_section(source.get("context_changes", {})),
        *later_finds_section(source.get("later_finds", {})),
        *missing_evidence_section(source.get("missing_evidence", {})),
        *fusion_section(source.get("fusion", {})),
    ]


LATENCY_MEASURES = (
    ("search", "Search, the question's vector given"),
    ("from_text", "From text: the search plus the question's own encoding"),
)


def suite_latency_section(summary: Mapping[str, Any]) -> list[str]:
    """Every system's p50 / p95 ms per source, searched and from text, each p95 also as a
    multiple of hybrid's on that source (issue 21's bars: memfuse ≤ 10×, memfuse_no_ar ≤ 4×,
    asked of the search alone)."""
    sources = [s for s in summary["sources"] if s.get("latency")]
    if not sources:
        return []
    intro = (
        "p50 / p95 ms over each source's questions, and the p95 as a multiple of hybrid's on the "
        "same source. Every text a system embeds besides the question is encoded as for a new "
        "question; from text adds the question's own encoding to the systems that read its "
        "vector (`eval/bench_queries.py`)."
    )
    lines = ["## Latency", "", intro]
    for measure, title in LATENCY_MEASURES:
        refs = [(s["latency"].get("hybrid") or {}).get(f"{measure}_p95_ms") for s in sources]
        rows = []
        for system in summary["systems"]:
            cells = []
            for source, ref in zip(sources, refs, strict=True):
                block = source["latency"].get(system) or {}
                p50, p95 = block.get(f"{measure}_p50_ms"), block.get(f"{measure}_p95_ms")
                cell = f"{fmt(p50, 'ms')} / {fmt(p95, 'ms')}"
                if system != "hybrid" and p95 is not None and ref:
                    cell += f" ({p95 / ref:.1f}×)"
                cells.append(cell)
            rows.append([system, *cells])
        lines += [
            "",
            f"### {title}",
            "",
            *md_table(["system", *(s["name"] for s in sources)], rows),
        ]
    return [*lines, ""]


def suite_markdown(summary: Mapping[str, Any]) -> str:
    """suite.md: the worst-case gap table, one verdict per system, then every source's table."""
    reference, k = summary["reference"], summary["k"]
    lines = [f"# Benchmark suite: gap to the {reference}", ""]
    lines += [f"Evidence recall@{k}; systems: {', '.join(summary['systems'])}."]
    if summary.get("limit"):
        lines += [f"Only the first {summary['limit']} question(s) of every scenario."]
    lines += ["", f"## Worst-case gap to the {reference}", ""]
    if summary["sources"] and summary["gaps"]:
        lines += md_table(*suite_gap_rows(summary))
        lines += ["", "## Verdicts", ""]
        lines += [f"- **{system}**: {line}" for system, line in summary["verdicts"].items()]
    else:
        lines += ["Nothing to compare (no source ran, or no system besides the baselines)."]
    lines += ["", f"## Recall@{k} per source", ""]
    for source in summary["sources"]:
        lines += _source_section(source)
    lines += suite_latency_section(summary)
    notes = SUITE_NOTES.format(reference=reference, held_out=summary["held_out_seed"])
    lines += ["## How to read it", "", *notes.splitlines()]
    if summary["notes"]:
        lines += ["", "## Notes", "", *(f"- {note}" for note in summary["notes"])]
    return "\n".join(lines) + "\n"
