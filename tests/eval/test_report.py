"""report.md's fusion section: one row per store with packs, named by the systems reading it."""

from __future__ import annotations

from eval.report import FUSION_COLUMNS, fusion_section, fusion_table, markdown_report


def _system(fused_nodes: float, purity: float) -> dict:
    overall = {"n_questions": 2, "evidence_recall": 0.5}
    if fused_nodes:
        overall |= {
            "fused_nodes": fused_nodes,
            "mean_members": 2.5,
            "fusion_purity": purity,
            "segment_purity": purity / 2,
            "unlabelled_share": 0.25,
            "labelled_purity": purity / 0.75,
        }
    return {"overall": overall, "by_category": {"causal": {"evidence_recall": 0.5}}}


RESULTS = {
    "dataset": "tiny.json",
    "k": 5,
    "systems": {
        "bm25": _system(0, 0.0),
        "memfuse": _system(4, 0.3),
        "memfuse_no_ar": _system(4, 0.3),
        "memfuse_variant": _system(3, 0.6),
    },
}


def test_systems_reading_one_store_share_a_row_and_plain_stores_have_none():
    table = fusion_table(RESULTS)
    assert list(table) == ["memfuse, memfuse_no_ar", "memfuse_variant"]
    assert table["memfuse_variant"]["fusion_purity"] == 0.6
    assert set(table["memfuse, memfuse_no_ar"]) == {key for key, _, _ in FUSION_COLUMNS}


def test_the_section_shows_every_column_and_is_left_out_without_packs():
    lines = fusion_section(fusion_table(RESULTS), level="##")
    assert lines[1] == "## Fusion" and "packs without a storyline member" in lines[5]
    assert "| memfuse, memfuse_no_ar | 4.00 | 2.50 | 0.300 | 0.150 | 0.250 | 0.400 |" in lines
    assert "## Fusion" in markdown_report(RESULTS)
    plain = {**RESULTS, "systems": {"bm25": RESULTS["systems"]["bm25"]}}
    assert fusion_table(plain) == {} and "## Fusion" not in markdown_report(plain)
