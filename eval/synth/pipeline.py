"""The procedural generator's six stages for one household-week, one stage at a time.

This is the only place that knows the order of the procedural stages and which named random
stream each draws from. `eval.synth.build_one` runs it to the end in one go (the library path
the tests use); the synthesis graph runs it a stage per node through `eval.synth.stages.
ProceduralStages`, its offline twins, with the graph's review after every stage (what
`memfuse synth` runs). Each stage's intermediate is converted into its artifact the moment it
is made, since later stages rename ids in place:

    personas -> Persona          scenario -> Timeline       streams -> Stream
    questions -> QuestionPool    filtering -> QuestionPool  adversarial -> Scenario

A stage asked for again (a graph's regeneration) gets the same artifact: the stages are
deterministic per (seed, index). A pipeline asked for a later stage first (a run resumed in a
new process) replays the earlier ones, which costs a fraction of a second.

The stage-4 pool lists only the questions the file format can hold (an answer and at least one
evidence event); the filtering stage still sees every draft.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

from pydantic import BaseModel

from eval.synth.adversarial import finalize_ids, inject
from eval.synth.aggregation import aggregation_drafts
from eval.synth.artifacts import STAGES, PlannedEpisode, QuestionPool, Stage, Stream
from eval.synth.artifacts import Timeline as TimelineArtifact
from eval.synth.assemble import to_scenario
from eval.synth.background import incidental_noise, periodic_readings
from eval.synth.conflicts import paired_conflicts
from eval.synth.episodes import WorldState
from eval.synth.filtering import filter_questions
from eval.synth.first_person import first_person_drafts
from eval.synth.household import Household
from eval.synth.pedometer import settle_step_counts
from eval.synth.personas import HOUSEHOLD_TYPES, build_household
from eval.synth.questions import check_questions, resolve
from eval.synth.realism import DEFAULT_REALISM, check_realism, finish
from eval.synth.rng import substream
from eval.synth.routine import simulate_routines
from eval.synth.scenario import build_scenario
from eval.synth.streams import check_stream, merge_streams, project_storyline
from eval.synth.timewords import DAYS
from eval.synth.world import EpisodePlan, Obs, Question
from memory.formats.memfusebench import Scenario

QUESTIONS_PER_SCENARIO = 60


def household_type_for(index: int, chosen: str | None = None) -> str:
    """The chosen type, else the one the benchmark gives the household at `index`."""
    return chosen or HOUSEHOLD_TYPES[index % len(HOUSEHOLD_TYPES)]


def timeline_of(hh: Household, plans: list[EpisodePlan]) -> TimelineArtifact:
    """The scenario stage's plans as a Timeline: per episode its first day, the household's
    people in it (guests appear in the beats only), the story events' facts as beats, and the
    other episodes its events follow from."""
    household = {p.name for p in hh.people}
    episode_of = {ev.story_id: plan.episode_id for plan in plans for ev in plan.events}
    episodes = []
    for plan in plans:
        people = [p for ev in plan.events for p in ev.people if p in household]
        causes = [
            episode_of[c]
            for ev in plan.events
            for c in ev.causes
            if c in episode_of and episode_of[c] != plan.episode_id
        ]
        episodes.append(
            PlannedEpisode(
                episode_id=plan.episode_id,
                title=plan.title,
                day=min(ev.ts for ev in plan.events).date(),
                people=list(dict.fromkeys(people)),
                beats=[ev.fact for ev in plan.events],
                causes=list(dict.fromkeys(causes)),
            )
        )
    return TimelineArtifact(start=DAYS[0], days=len(DAYS), episodes=episodes)


def pool_of(hh: Household, questions: list[Question]) -> QuestionPool:
    """Questions as the file format writes them (those it can hold: see the module docstring)."""
    representable = [q for q in questions if q.evidence and q.answer]
    return QuestionPool(questions=to_scenario(hh, [], [], representable).questions)


class StagePipeline:
    """One household-week through the six stages, one stage per call, in their order."""

    def __init__(
        self,
        index: int,
        seed: int,
        *,
        household_type: str | None = None,
        questions: int = QUESTIONS_PER_SCENARIO,
        realism: str = DEFAULT_REALISM,
    ):
        self.index, self.seed, self.sid = index, seed, f"S{index + 1}"
        self.household_type = household_type_for(index, household_type)
        self.questions_kept = questions
        self.realism = check_realism(realism)
        self.artifacts: dict[Stage, BaseModel] = {}
        self.tally: Counter[str] = Counter()
        self._steps: dict[Stage, Callable[[], BaseModel]] = {
            "persona": self._persona,
            "scenario": self._scenario,
            "stream": self._stream,
            "questions": self._questions,
            "filtering": self._filtering,
            "adversarial": self._adversarial,
        }

    def artifact(self, stage: Stage) -> BaseModel:
        """`stage`'s artifact, running the stages before it first when they have not run.
        The artifact is the pipeline's own: read it, do not change it."""
        for step in STAGES[: STAGES.index(stage) + 1]:
            if step not in self.artifacts:
                self.artifacts[step] = self._steps[step]()
        return self.artifacts[stage]

    def scenario(self) -> Scenario:
        """The finished household-week (every stage run)."""
        sample = self.artifact("adversarial")
        assert isinstance(sample, Scenario)
        return sample

    def _rng(self, name: str) -> random.Random:
        return substream(self.seed, self.sid, name)

    def _persona(self) -> BaseModel:
        self.hh = build_household(self.sid, self.household_type, self._rng("personas"))
        self.hh.realism = self.realism
        return self.hh.to_persona()

    def _scenario(self) -> BaseModel:
        self.world = WorldState()
        self.plans = build_scenario(self.hh, self._rng("scenario"), self.world)
        return timeline_of(self.hh, self.plans)

    def _stream(self) -> BaseModel:
        hh, world = self.hh, self.world
        story = project_storyline(hh, self.plans, self._rng("projection"))
        conflict_obs, self.conflict_drafts = paired_conflicts(hh, world, self._rng("conflicts"))
        routine = simulate_routines(hh, world, self._rng("routine"))
        periodic = periodic_readings(hh, self._rng("periodic"))
        noise = incidental_noise(hh, self._rng("noise"))
        self.stream: list[Obs] = merge_streams(hh, story, conflict_obs, routine, periodic, noise)
        settle_step_counts(hh, self.stream)
        check_stream(hh, self.stream)
        self.obs = {o.key: o for o in self.stream}
        return Stream(episodes=to_scenario(hh, self.plans, self.stream, []).episodes)

    def _questions(self) -> BaseModel:
        hh, world, stream = self.hh, self.world, self.stream
        q_rng = self._rng("questions")
        drafts = [q for plan in self.plans for q in plan.questions] + self.conflict_drafts
        drafts += aggregation_drafts(hh, stream, world, q_rng) + first_person_drafts(
            hh, stream, world, q_rng
        )
        stories = {ev.story_id: ev for plan in self.plans for ev in plan.events}
        self.questions = resolve(hh, drafts, self.obs, q_rng, stories)
        check_questions(hh, self.questions, self.obs)
        return pool_of(hh, self.questions)

    def _filtering(self) -> BaseModel:
        names = {p.name for p in self.hh.people}
        self.report = filter_questions(
            self.questions, self.obs, names, self._rng("filtering"), self.sid, self.questions_kept
        )
        self.tally = self.report.reasons()
        return pool_of(self.hh, self.report.kept)

    def _adversarial(self) -> BaseModel:
        kept = self.report.kept
        distractors = inject(self.hh, kept, self.obs, self._rng("adversarial"))
        stream = settle_step_counts(self.hh, self.stream + distractors)
        check_stream(self.hh, stream)
        finalize_ids(self.sid, stream, kept)
        return finish(to_scenario(self.hh, self.plans, stream, kept), self.realism)
