from __future__ import annotations

import pytest

from memory.fusion.candidates import event_record
from memory.fusion.summaries import extractive_summary, key_terms, lead_description

from .scenario import E1, E2, E3, E4


def test_summary_names_people_place_span_sources_lead_and_shared_terms() -> None:
    expected = (
        "David at kitchen, 2024-05-01 morning (seen by cam_kitchen and watch_david): "
        "David spilled milk on the table. Shared details: spilled, milk, table."
    )
    assert extractive_summary([E2, E1]) == expected
    # the agent's records give the same summary as the events
    assert extractive_summary([event_record(E1), event_record(E2)]) == expected


def test_lead_is_the_most_central_description() -> None:
    # e4 shares "table" with e1 and e2; e1/e2 share david, spill, milk, table with each other
    assert lead_description([E4, E1, E2]) == E1.description


def test_key_terms_fall_back_to_single_mentions_without_overlap() -> None:
    assert key_terms([E3]) == ["watered", "garden", "plants"]


def test_summary_is_stable_when_the_same_scene_grows() -> None:
    # e4 adds Emma and "table" again: people change, the coarse span, lead and terms do not
    assert extractive_summary([E1, E2, E4]) == (
        "David and Emma at kitchen, 2024-05-01 morning (seen by cam_kitchen and watch_david): "
        "David spilled milk on the table. Shared details: spilled, milk, table."
    )


def test_span_is_date_and_part_of_day() -> None:
    late = E3.model_copy(update={"event_id": "late", "timestamp": E3.timestamp.replace(hour=18)})
    next_day = E3.model_copy(update={"event_id": "nd", "timestamp": E3.timestamp.replace(day=2)})
    assert ", 2024-05-01 morning to evening (" in extractive_summary([E3, late])
    assert ", 2024-05-01 morning to 2024-05-02 morning (" in extractive_summary([E3, next_day])
    assert extractive_summary([E3]).startswith(
        "Emma at garden, 2024-05-01 morning (seen by phone_emma)"
    )


def test_summary_needs_members() -> None:
    with pytest.raises(ValueError):
        extractive_summary([])
