"""Rewriting a pack's summary from the members it has left (after a forget).

A fused node that loses members must stop quoting them: its summary is written again from
the remaining members alone. `SummarizePack` is the LLM decision; its offline twin is the
extractive summary the offline fusion policy writes for new packs. Both read the same
member records and return one summary, so the caller does not care which one wrote it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dspy

from memory.fusion.candidates import CandidateRecord, event_record
from memory.fusion.summaries import extractive_summary
from memory.models import Event
from signatures.untrusted import DATA_NOTICE

_SUMMARIZE = """Write the summary of one fused memory (a pack of household observations that
belong to one concrete event segment) from its member observations: one or two English
sentences saying who, when, where, what happened and how it ended, using only what the
members say. Mention nothing that is not in a member."""


class SummarizePack(dspy.Signature):
    __doc__ = _SUMMARIZE + "\n" + DATA_NOTICE

    members: list[CandidateRecord] = dspy.InputField(
        desc="The pack's member events, in time order."
    )
    summary: str = dspy.OutputField(desc="One or two sentences, English.")


def offline_pack_summary(members: Sequence[Event]) -> str:
    """The deterministic twin: the extractive summary of the members."""
    return extractive_summary(list(members))


def pack_summary(members: Sequence[Event], lm: Any | None) -> tuple[str, str]:
    """(summary, who wrote it): the LM's when one is given and answers with text, else the
    offline twin's ('offline', or 'offline fallback: <why>')."""
    if lm is None:
        return offline_pack_summary(members), "offline"
    records = [event_record(e) for e in members]
    try:
        with dspy.context(lm=lm):
            written = str(dspy.Predict(SummarizePack)(members=records).summary or "").strip()
    except Exception as exc:  # noqa: BLE001 — endpoint down or an unusable reply
        why = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        return offline_pack_summary(members), f"offline fallback: {why}"
    if not written:
        return offline_pack_summary(members), "offline fallback: empty summary"
    return " ".join(written.split()), "llm"
