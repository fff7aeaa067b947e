"""Convert the final observations and questions of one scenario into file models."""

from __future__ import annotations

from collections import defaultdict

from eval.synth.personas import Household
from eval.synth.world import EpisodePlan, Obs
from eval.synth.world import Question as Draft
from memory.formats.memfusebench import BenchEvent, ChecklistItem, Episode, Question, Scenario


def background_id(scenario_id: str, obs: Obs) -> str:
    return f"{scenario_id}_bg_{obs.ts.date().isoformat()}"


def to_event(obs: Obs, episode_id: str) -> BenchEvent:
    fields = {
        "event_id": obs.key,
        "timestamp": obs.ts,
        "device": obs.device,
        "modality": obs.modality,
        "location": obs.location,
        "description": obs.description,
        "characters": obs.characters,
        "source": obs.source,
        "episode_id": episode_id,
        "storyline_event_id": obs.story_id,
    }
    if obs.source == "adversarial":
        fields["target_question"] = obs.target_question
    return BenchEvent(**fields)


def to_scenario(
    hh: Household, plans: list[EpisodePlan], stream: list[Obs], questions: list[Draft]
) -> Scenario:
    titles = {p.episode_id: p.title for p in plans}
    buckets: dict[str, list[BenchEvent]] = defaultdict(list)
    for obs in stream:
        episode_id = (
            obs.episode_id
            if obs.source == "storyline" and obs.episode_id
            else background_id(hh.scenario_id, obs)
        )
        buckets[episode_id].append(to_event(obs, episode_id))
    episodes = [
        Episode(
            episode_id=p.episode_id,
            title=p.title,
            kind="storyline",
            events=buckets.get(p.episode_id, []),
        )
        for p in plans
    ]
    for episode_id in sorted(k for k in buckets if k not in titles):
        episodes.append(
            Episode(
                episode_id=episode_id,
                kind="background",
                title=f"Everyday life, {episode_id.rsplit('_', 1)[-1]}",
                events=buckets[episode_id],
            )
        )
    return Scenario(
        scenario_id=hh.scenario_id,
        persona=hh.to_persona(),
        episodes=episodes,
        questions=[to_question(q) for q in questions],
    )


def to_question(q: Draft) -> Question:
    return Question(
        question_id=q.qid,
        category=q.category,
        question=q.question,
        answer=q.answer,
        evidence_event_ids=q.evidence,
        checklist=[ChecklistItem(item=item, evidence_event_ids=keys) for item, keys in q.checklist],
        question_user=q.asker,
        question_time=q.time,
        question_device=q.device,
    )
