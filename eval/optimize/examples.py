"""DSPy examples from a benchmark file, labels kept apart from inputs.

Planner/judge examples are questions: the inputs are what a user gives (question, time,
requester) plus the scenario whose memory is searched; the gold evidence ids and the
category travel on the example for the metric only.

Fusion examples are slices of a scenario's stream around one storyline episode: the
inputs are the events with the generator's labels stripped (what a deployed system
ingests) and the questions whose evidence lies inside the slice (text, time, requester);
the episode / storyline-event labels and the gold evidence are for the metric only.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import dspy

from memory.errors import ConfigurationError
from memory.formats.memfusebench import MemFuseBench
from memory.formats.memfusebench import Scenario as FileScenario
from memory.formats.models import BenchDataset, BenchQuestion, BenchScenario
from memory.models import Event

QUESTION_INPUTS = ("scenario_id", "question", "question_time", "requester")
FUSION_INPUTS = ("scenario_id", "events", "questions")
SLICE_MARGIN = timedelta(minutes=30)
SLICE_MAX_EVENTS = 60


def scenarios_by_id(dataset: BenchDataset, ids: Sequence[str]) -> list[BenchScenario]:
    known = {s.scenario_id: s for s in dataset.scenarios}
    missing = [i for i in ids if i not in known]
    if missing:
        raise ConfigurationError(f"unknown scenario(s): {', '.join(missing)}")
    return [known[i] for i in ids]


def question_example(scenario_id: str, question: BenchQuestion) -> dspy.Example:
    """One question: inputs as a user asks it; gold evidence and category for the metric."""
    return dspy.Example(
        scenario_id=scenario_id,
        question=question.question,
        question_time=question.time.isoformat(timespec="seconds"),
        requester=question.user or "",
        question_id=question.question_id,
        category=question.category,
        gold_ids=list(question.evidence_ids),
    ).with_inputs(*QUESTION_INPUTS)


def spread_questions(questions: Sequence[BenchQuestion], limit: int | None) -> list[BenchQuestion]:
    """Up to `limit` questions with gold evidence, taken round-robin over the categories.

    Benchmark files list questions category by category, so "the first N" would test a
    few categories only; round-robin keeps every category in a limited run. File order is
    kept within a category and in the result.
    """
    usable = [q for q in questions if q.evidence_ids]
    if limit is None or limit >= len(usable):
        return usable
    queues: dict[str, list[BenchQuestion]] = {}
    for q in usable:
        queues.setdefault(q.category, []).append(q)
    chosen: set[str] = set()
    while len(chosen) < limit:
        for queue in queues.values():
            if queue and len(chosen) < limit:
                chosen.add(queue.pop(0).question_id)
    return [q for q in usable if q.question_id in chosen]


def question_examples(
    dataset: BenchDataset, scenario_ids: Sequence[str], limit: int | None = None
) -> list[dspy.Example]:
    """Questions with gold evidence of each scenario (`limit` per scenario, spread over the
    categories; all when None)."""
    examples = []
    for scenario in scenarios_by_id(dataset, scenario_ids):
        questions = spread_questions(scenario.questions, limit)
        examples += [question_example(scenario.scenario_id, q) for q in questions]
    return examples


def labels_of(event: Event) -> tuple[str | None, str | None]:
    """(storyline episode, storyline event) of a labelled event; (None, None) for background."""
    from eval.fusion_metrics import storyline_episode, storyline_event

    return storyline_episode(event), storyline_event(event)


def episode_slices(
    scenario: FileScenario, margin: timedelta = SLICE_MARGIN, max_events: int = SLICE_MAX_EVENTS
) -> list[tuple[str, list[Event]]]:
    """Per storyline episode: the labelled events of the stream around it, in time order.

    The slice holds every event within `margin` of the episode's span (so background
    events compete, as in a real stream), trimmed to `max_events` by distance to the
    episode while keeping all of the episode's own events.
    """
    labelled = scenario.memory_events(labels=True)
    slices = []
    for episode in scenario.episodes:
        if episode.kind != "storyline" or not episode.events:
            continue
        own = {e.event_id for e in episode.events}
        start = min(e.timestamp for e in episode.events) - margin
        end = max(e.timestamp for e in episode.events) + margin
        around = [e for e in labelled if start <= e.timestamp <= end]
        if len(around) > max_events:
            mid = start + (end - start) / 2
            others = sorted(
                (e for e in around if e.event_id not in own),
                key=lambda e: (abs(e.timestamp - mid), e.event_id),
            )
            keep = own | {e.event_id for e in others[: max(0, max_events - len(own))]}
            around = [e for e in around if e.event_id in keep]
        slices.append((episode.episode_id, around))
    return slices


def fusion_examples(
    bench: MemFuseBench,
    dataset: BenchDataset,
    scenario_ids: Sequence[str],
    limit: int | None = None,
) -> list[dspy.Example]:
    """One example per storyline episode slice (the first `limit` slices of each scenario)."""
    examples = []
    for scenario in scenarios_by_id(dataset, scenario_ids):
        file_scenario = bench.scenario(scenario.scenario_id)
        unlabelled = {e.event_id: e for e in scenario.events}  # what a system may ingest
        for episode_id, events in episode_slices(file_scenario)[:limit]:
            ids = {e.event_id for e in events}
            inside = [
                q for q in scenario.questions if q.evidence_ids and set(q.evidence_ids) <= ids
            ]
            examples.append(
                dspy.Example(
                    scenario_id=scenario.scenario_id,
                    events=[unlabelled[e.event_id] for e in events],
                    questions=[
                        {
                            "question_id": q.question_id,
                            "question": q.question,
                            "question_time": q.time.isoformat(timespec="seconds"),
                            "requester": q.user or "",
                        }
                        for q in inside
                    ],
                    episode_id=episode_id,
                    category="fusion",
                    event_labels={e.event_id: labels_of(e) for e in events},
                    gold={q.question_id: list(q.evidence_ids) for q in inside},
                    question_categories={q.question_id: q.category for q in inside},
                ).with_inputs(*FUSION_INPUTS)
            )
    return examples
