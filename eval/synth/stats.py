"""Benchmark statistics in the shape of the paper's dataset analysis."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, time
from statistics import mean

from pydantic import BaseModel, Field

from eval.categories import CATEGORIES
from eval.synth.tokens import counter
from memory.formats.memfusebench import MemFuseBench


class SynthStats(BaseModel):
    """Sizes of a MemFuseBench file: events, tokens, questions and evidence."""

    scenarios: int
    events_total: int
    events_per_scenario: list[int]
    events_by_source: dict[str, int]
    events_by_modality: dict[str, int]
    questions_total: int
    questions_by_category: dict[str, int]
    mean_evidence_per_question: float
    mean_evidence_by_category: dict[str, float]
    mean_checklist_items: float
    mean_devices_per_question: float
    distractors_per_question: float
    description_tokens_per_scenario: list[int]
    serialized_tokens_per_scenario: list[int]
    tokenizer: str
    filtering: dict[str, int] = Field(
        default_factory=dict, description="Rejected drafts by reason."
    )
    questions_with_time_phrase: float = Field(
        default=0.0, description="Share of questions whose text holds a time phrase."
    )
    questions_with_window: float = Field(
        default=0.0,
        description="Share of questions whose time phrase resolves to a window (offline "
        "time resolution, as MemFuse reads it).",
    )
    window_holds_all_evidence: float = Field(
        default=0.0,
        description="Among questions with a window: the share whose gold evidence lies "
        "entirely inside it (a high share means the phrase all but names the evidence).",
    )
    people_tagged_by_class: dict[str, float] = Field(
        default_factory=dict,
        description="Share of events naming a person, by device class (personal: owned by "
        "someone; fixed: shared) and by source (storyline or not).",
    )
    person_blind_stripped: int | None = Field(
        default=None,
        description="Events whose people tags were removed (person-blind devices); "
        "None when the transform was not applied.",
    )

    def render(self) -> str:
        n = max(1, self.scenarios)
        lines = [
            f"MemFuseBench statistics — {self.scenarios} scenario(s); tokenizer: {self.tokenizer}",
            "",
        ]
        lines.append(f"{'events, total':<38}{self.events_total:>10,}")
        lines.append(
            f"{'events per scenario (mean)':<38}{self.events_total / n:>10,.1f}"
            f"   [{', '.join(f'{e:,}' for e in self.events_per_scenario)}]"
        )
        ser, desc = self.serialized_tokens_per_scenario, self.description_tokens_per_scenario
        lines.append(
            f"{'tokens per scenario, reader lines':<38}{mean(ser or [0]):>10,.0f}"
            f"   total {sum(ser):,}"
        )
        lines.append(
            f"{'tokens per scenario, descriptions':<38}{mean(desc or [0]):>10,.0f}"
            f"   {sum(desc) / max(1, self.events_total):.1f} per event"
        )
        lines.append(f"{'questions, total':<38}{self.questions_total:>10,}")
        lines.append(
            f"{'evidence events per question (mean)':<38}{self.mean_evidence_per_question:>10.2f}"
        )
        lines.append(
            f"{'checklist items per question (mean)':<38}{self.mean_checklist_items:>10.2f}"
        )
        lines.append(f"{'devices per question (mean)':<38}{self.mean_devices_per_question:>10.2f}")
        lines.append(
            f"{'distractors per question (mean)':<38}{self.distractors_per_question:>10.2f}"
        )
        lines += ["", f"{'events by source':<24}{'count':>8}{'share':>9}"]
        for key, value in sorted(self.events_by_source.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {key:<22}{value:>8,}{value / max(1, self.events_total):>9.1%}")
        lines += ["", f"{'events by modality':<24}{'count':>8}{'share':>9}"]
        for key, value in sorted(self.events_by_modality.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {key:<22}{value:>8,}{value / max(1, self.events_total):>9.1%}")
        lines += ["", f"{'questions by category':<24}{'count':>8}{'evidence':>10}"]
        for key in CATEGORIES:
            lines.append(
                f"  {key:<22}{self.questions_by_category.get(key, 0):>8}"
                f"{self.mean_evidence_by_category.get(key, 0.0):>10.2f}"
            )
        lines += [
            "",
            f"{'questions with a time phrase':<38}{self.questions_with_time_phrase:>10.1%}",
            f"{'  ... resolving to a window':<38}{self.questions_with_window:>10.1%}",
            f"{'  ... window holding all evidence':<38}{self.window_holds_all_evidence:>10.1%}",
            "",
            "events naming a person, by device class and source",
        ]
        for key, value in self.people_tagged_by_class.items():
            lines.append(f"  {key:<36}{value:>10.1%}")
        if self.person_blind_stripped is not None:
            lines += [
                "",
                f"{'person-blind: events untagged':<38}{self.person_blind_stripped:>10,}",
            ]
        if self.filtering:
            lines += ["", "drafts rejected in filtering"]
            for key, value in sorted(self.filtering.items(), key=lambda kv: -kv[1]):
                lines.append(f"  {key:<40}{value:>6}")
        return "\n".join(lines)


def stats(bench: MemFuseBench, filtering: dict[str, int] | None = None) -> SynthStats:
    count, tokenizer = counter()
    sources: Counter[str] = Counter()
    modalities: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    evidence: list[int] = []
    by_cat: dict[str, list[int]] = {c: [] for c in CATEGORIES}
    checklist: list[int] = []
    devices: list[int] = []
    per_scenario, desc_tokens, line_tokens = [], [], []
    distractors = 0
    for scenario in bench.scenario_data:
        events = scenario.all_events()
        index = {e.event_id: e for e in events}
        per_scenario.append(len(events))
        desc_tokens.append(sum(count(e.description) for e in events))
        line_tokens.append(sum(count(e.serialize()) for e in scenario.memory_events(labels=False)))
        for e in events:
            sources[e.source.value if e.source else "unlabelled"] += 1
            modalities[e.modality.value] += 1
            distractors += bool(e.target_question)
        for q in scenario.questions:
            categories[q.category] += 1
            evidence.append(len(set(q.evidence_event_ids)))
            by_cat[q.category].append(len(set(q.evidence_event_ids)))
            checklist.append(len(q.checklist))
            devices.append(len({index[i].device for i in q.evidence_event_ids}))
    n_q = len(evidence)
    timing = _time_phrases(bench)
    return SynthStats(
        scenarios=len(bench.scenario_data),
        events_total=sum(per_scenario),
        events_per_scenario=per_scenario,
        events_by_source=dict(sorted(sources.items())),
        events_by_modality=dict(sorted(modalities.items())),
        questions_total=n_q,
        questions_by_category={c: categories.get(c, 0) for c in CATEGORIES},
        mean_evidence_per_question=mean(evidence) if evidence else 0.0,
        mean_evidence_by_category={c: (mean(v) if v else 0.0) for c, v in by_cat.items()},
        mean_checklist_items=mean(checklist) if checklist else 0.0,
        mean_devices_per_question=mean(devices) if devices else 0.0,
        distractors_per_question=distractors / n_q if n_q else 0.0,
        description_tokens_per_scenario=desc_tokens,
        serialized_tokens_per_scenario=line_tokens,
        tokenizer=tokenizer,
        filtering=dict(filtering or {}),
        questions_with_time_phrase=timing[0],
        questions_with_window=timing[1],
        window_holds_all_evidence=timing[2],
        people_tagged_by_class=_people_tagged(bench),
    )


def _time_phrases(bench: MemFuseBench) -> tuple[float, float, float]:
    """(share with a time phrase, share resolving to a window, share of windowed questions
    whose gold evidence lies inside the window)."""
    from signatures.time_resolution.resolve import resolve_time, strip_time_expressions

    phrased = windowed = inside = total = 0
    for scenario in bench.scenario_data:
        index = {e.event_id: e for e in scenario.all_events()}
        for q in scenario.questions:
            total += 1
            text = " ".join(q.question.split())
            phrased += strip_time_expressions(text) != text
            asked = q.question_time or max(index[i].timestamp for i in q.evidence_event_ids)
            window = resolve_time(q.question, asked).window
            if not window.enabled or window.date is None:
                continue
            windowed += 1
            start = datetime.combine(window.date, window.start_time or time.min)
            end = datetime.combine(window.end_date or window.date, window.end_time or time.max)
            inside += all(start <= index[i].timestamp <= end for i in q.evidence_event_ids)
    return (
        phrased / total if total else 0.0,
        windowed / total if total else 0.0,
        inside / windowed if windowed else 0.0,
    )


def _people_tagged(bench: MemFuseBench) -> dict[str, float]:
    """Share of events with people, by (personal | fixed device) x (storyline | other)."""
    tagged: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for scenario in bench.scenario_data:
        owners = {d.device_id: d.owner for d in scenario.persona.all_devices}
        for e in scenario.all_events():
            fixed = owners.get(e.device, "shared") in ("shared", "", None)
            source = (
                "storyline" if e.source is not None and e.source.value == "storyline" else "other"
            )
            key = f"{'fixed' if fixed else 'personal'} device, {source}"
            seen[key] += 1
            tagged[key] += bool(e.characters)
    return {k: tagged[k] / seen[k] for k in sorted(seen)}
