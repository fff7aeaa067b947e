"""The pack summary written after a forget: the LLM's through `SummarizePack` (a scripted
DummyLM here), the extractive twin offline or when the LLM fails."""

from __future__ import annotations

from dspy.utils.dummies import DummyLM

from memory.models import Event, parse_event
from signatures.pack_summary import offline_pack_summary, pack_summary


def _members() -> list[Event]:
    return [
        parse_event(
            {
                "event_id": f"m{i}",
                "timestamp": f"2026-05-0{i + 1}T09:00:00",
                "device": device,
                "modality": "vision",
                "location": "garden",
                "description": text,
                "characters": ["Rex"],
            }
        )
        for i, (device, text) in enumerate(
            [
                ("cam_garden", "Rex digs a hole under the garden fence"),
                ("cam_garden", "Rex comes back muddy from the hole under the fence"),
            ]
        )
    ]


def test_offline_the_summary_is_the_extractive_one_of_the_members() -> None:
    summary, by = pack_summary(_members(), None)
    assert by == "offline"
    assert summary == offline_pack_summary(_members())
    assert "Rex" in summary and "fence" in summary


def test_with_an_lm_its_summary_is_used_one_line() -> None:
    lm = DummyLM([{"summary": "Rex dug under the\n garden fence and came back muddy."}])
    summary, by = pack_summary(_members(), lm)
    assert by == "llm"
    assert summary == "Rex dug under the garden fence and came back muddy."


def test_an_empty_or_failing_lm_falls_back_to_the_twin() -> None:
    summary, by = pack_summary(_members(), DummyLM([{"summary": "  "}]))
    assert by == "offline fallback: empty summary"
    assert summary == offline_pack_summary(_members())

    class Down:
        def __call__(self, *args: object, **kwargs: object) -> object:
            raise ConnectionError("endpoint down")

    summary, by = pack_summary(_members(), Down())
    assert by.startswith("offline fallback: ")
    assert summary == offline_pack_summary(_members())
