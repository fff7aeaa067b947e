"""The procedural generator as the synthesis graph's offline twins, one per stage.

`ProceduralStages` implements `eval.synth.graph.StageGenerators`: the caller (`memfuse synth`,
a test) injects it into the graph's context, because `graphs` may not import `eval`. Each
household-week is one `_Pipeline` that calls the procedural stages in exactly the order
`eval.synth.build_one` does, from the same named random streams, and converts each stage's
intermediate into its artifact the moment it is made (later stages rename ids in place):

    personas -> Persona          scenario -> Timeline       streams -> Stream
    questions -> QuestionPool    filtering -> QuestionPool  adversarial -> Scenario

so the accepted Scenario equals `build_one(index, seed)[0]`. A stage asked for again (a
regeneration) gets the same artifact: the twins are deterministic per (seed, index). A
pipeline asked for a later stage first (a run resumed in a new process) replays the earlier
ones, which costs a fraction of a second.

The stage-4 pool lists only the questions the file format can hold (an answer and at least one
evidence event); the filtering stage still sees every draft, as `build_one`'s does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from eval.person_blind import strip_person_blind_counted
from eval.synth import QUESTIONS_PER_SCENARIO, SynthesisError, SynthStats, stats
from eval.synth.adversarial import finalize_ids, inject
from eval.synth.artifacts import (
    STAGES,
    Artifacts,
    PlannedEpisode,
    QuestionPool,
    Stage,
    Stream,
)
from eval.synth.artifacts import Timeline as TimelineArtifact
from eval.synth.assemble import to_scenario
from eval.synth.conflicts import paired_conflicts
from eval.synth.episodes import WorldState
from eval.synth.filtering import filter_questions
from eval.synth.graph import SynthesisContext, SynthesisInput, SynthesisRequest, synthesize
from eval.synth.pedometer import settle_step_counts
from eval.synth.personas import HOUSEHOLD_TYPES, Household, build_household
from eval.synth.questions import aggregation_drafts, check_questions, first_person_drafts, resolve
from eval.synth.realism import DEFAULT_REALISM, check_realism, finish
from eval.synth.rng import substream
from eval.synth.routine import incidental_noise, periodic_readings, simulate_routines
from eval.synth.scenario import build_scenario
from eval.synth.streams import check_stream, merge_streams, project_storyline
from eval.synth.timewords import DAYS
from eval.synth.world import EpisodePlan, Obs, Question
from memory.errors import ConfigurationError
from memory.formats.memfusebench import VERSION, MemFuseBench, Scenario
from memory.formats.memfusebench_io import dump, load, to_json, validate
from memory.settings import load_settings


def household_type(request: SynthesisRequest) -> str:
    """The request's type, else the one `build_one` gives its index."""
    return request.household_type or HOUSEHOLD_TYPES[request.scenario_index % len(HOUSEHOLD_TYPES)]


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


class _Pipeline:
    """One household-week through `build_one`'s stages, one stage per call, in its order."""

    def __init__(self, request: SynthesisRequest, realism: str = DEFAULT_REALISM):
        self.request, self.realism = request, realism
        self.seed, self.sid = request.seed, request.scenario_id
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
        for step in STAGES[: STAGES.index(stage) + 1]:
            if step not in self.artifacts:
                self.artifacts[step] = self._steps[step]()
        return self.artifacts[stage]  # the graph only reads it (copying would double the cost)

    def _rng(self, name: str):  # type: ignore[no-untyped-def]
        return substream(self.seed, self.sid, name)

    def _persona(self) -> BaseModel:
        self.hh = build_household(self.sid, household_type(self.request), self._rng("personas"))
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
        target = self.request.questions
        self.report = filter_questions(
            self.questions, self.obs, names, self._rng("filtering"), self.sid, target
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


class ProceduralStages:
    """The offline twins of the six stages (a `eval.synth.graph.StageGenerators`)."""

    def __init__(self, realism: str = DEFAULT_REALISM) -> None:
        self.realism = check_realism(realism)
        self._pipelines: dict[str, _Pipeline] = {}
        self.calls: Counter[Stage] = Counter()

    def generate(self, stage: Stage, request: SynthesisRequest, artifacts: Artifacts) -> BaseModel:
        """`stage`'s artifact for this household-week (`artifacts` is not read: the twins
        build on their own earlier stages, which are what an offline run accepts). The artifact
        is the pipeline's own: read it, do not change it."""
        self.calls[stage] += 1
        return self._pipeline(request).artifact(stage)

    def tally(self, request: SynthesisRequest) -> Counter[str]:
        """The filtering stage's rejected drafts by reason (that stage is run if it was not:
        a scenario read back from a checkpoint still reports its filtering)."""
        pipeline = self._pipeline(request)
        pipeline.artifact("filtering")
        return Counter(pipeline.tally)

    def _pipeline(self, request: SynthesisRequest) -> _Pipeline:
        if request.start != DAYS[0] or request.days != len(DAYS):
            raise ConfigurationError(
                f"the procedural generator writes the {len(DAYS)} days from "
                f"{DAYS[0].isoformat()}, got {request.days} days from {request.start.isoformat()}"
            )
        key = request.model_dump_json()
        if key not in self._pipelines:
            self._pipelines[key] = _Pipeline(request, self.realism)
        return self._pipelines[key]


def request_for(index: int, seed: int, questions: int = QUESTIONS_PER_SCENARIO) -> SynthesisRequest:
    """The request `build_one(index, seed)` answers."""
    return SynthesisRequest(
        scenario_index=index,
        scenario_id=f"S{index + 1}",
        seed=seed,
        start=DAYS[0],
        days=len(DAYS),
        questions=questions,
    )


def graph_synth_command(
    scenarios: int,
    seed: int,
    out: Path,
    *,
    llm: bool = False,
    checkpoint: Path | None = None,
    person_blind: bool = False,
    progress: Callable[[str], None] | None = None,
    realism: str = DEFAULT_REALISM,
) -> SynthStats:
    """`memfuse synth --llm | --checkpoint`: every household-week through the synthesis graph.

    With `llm` the LLM drafts, reviews and corrects every stage (policy llm; MEMFUSE_LLM_MODEL
    must name a model); without it the procedural twins draft and the deterministic checks
    review (what an accepted run writes is then byte for byte `synth_command`'s file). With a
    `checkpoint` file an interrupted call continues where it stopped (`eval.synth.graph.run`).
    """
    settings = load_settings()
    if llm and not settings.llm_model:
        raise ConfigurationError(
            "memfuse synth --llm needs an LLM: set MEMFUSE_LLM_MODEL (and MEMFUSE_LLM_BASE_URL "
            "for a self-hosted endpoint), or drop --llm for the procedural generator"
        )
    check_realism(realism)
    twins = None if llm else ProceduralStages(realism)
    tally: Counter[str] = Counter()
    made: list[Scenario] = []
    for index in range(scenarios):
        request = SynthesisInput(scenario_index=index, seed=seed)
        context = SynthesisContext(
            policy="llm" if llm else "offline", settings=settings, generators=twins
        )
        run = synthesize(request, context, checkpoint=checkpoint, progress=progress)
        made.append(run.scenario)
        if twins is not None:
            tally.update(twins.tally(request_for(index, seed)))
    if llm:  # the LLM's drafts: only the tags can be made realistic after the fact
        made = [finish(s.model_copy(deep=True), realism) for s in made]
    bench = validate(MemFuseBench(version=VERSION, scenario_data=made))
    stripped: int | None = None
    if person_blind:
        bench, stripped = strip_person_blind_counted(bench)
    dump(bench, out)
    reread = load(out)
    if to_json(reread) != to_json(bench):
        raise SynthesisError("output", "*", f"{out} does not survive a load/dump round trip")
    result = stats(reread, dict(tally))
    if stripped is not None:
        result.person_blind_stripped = stripped
    return result
