"""MemFuseBench's Scene-to-Sensor synthesis as DSPy signatures: per stage a Generate, a Review and
a Correct signature (18 in all), and `SynthesisProgram`, which the synthesis graph calls.

Each stage writes one artifact of `eval.synth.artifacts` (Persona, Timeline, Stream,
QuestionPool, filtered QuestionPool, Scenario) from the brief and the artifacts accepted before
it (`SPECS[stage].upstream`). Its reviewer returns `list[Issue]` against the stage's criteria
(`CRITERIA`, restated from the paper in our own words); its corrector returns the repaired
artifact. The deterministic checks (`eval.synth.graph.checks`) review every draft first; the LLM
reviewer looks for what code cannot see. The offline twins are the procedural generator's
stages (`eval.synth.stages`), the graph's drafters whenever no LLM is in play.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dspy
from pydantic import BaseModel, Field

from eval.synth.artifacts import Issue, QuestionPool, Stage, Stream, Timeline
from memory.formats.memfusebench import DEVICE_CAPABILITIES, Persona, Scenario
from signatures.untrusted import DATA_NOTICE


class SynthesisBrief(BaseModel):
    """What the household-week must be: its id, type, days and question budget."""

    scenario_id: str = Field(description="The scenario's id; event and question ids start with it.")
    household_type: str | None = Field(
        default=None, description="The household's type (young_family, elderly_couple, ...)."
    )
    week: list[str] = Field(description="Every day covered, 'YYYY-MM-DD (Weekday)', in order.")
    questions: int = Field(description="Questions the filtered pool may keep at most.")


MODALITIES = """The nine modalities (an event has exactly one, and its device must produce it):
health (body readings: heart rate, blood oxygen, sleep stages, weight, temperature);
motion (how a body moves: steps, workouts, falls, presence picked up by a motion sensor);
vision (what a camera saw: faces, people, parcels, movement in view);
audio (what a microphone heard: speech as sound, doorbells, alarms, ambient noise);
environment (physical conditions: room temperature, humidity, PM2.5, CO2);
location (where someone or something is: GPS, arrivals, departures, who unlocked a door);
app_usage (what happened on a screen: apps, pages, shows, messages, screen time);
dialogue (what someone said they want, plan or prefer: the meaning taken from a conversation);
device_status (a device's own state: on/off, mode, cycle finished, fault, battery).
Audio is the sound, dialogue its meaning; health is the body's readings, motion its movement;
vision is what was seen, location where someone is; environment is the room, device_status
the machine."""

DEVICE_TABLE = "What each device type can produce (its modalities, exactly):\n" + "\n".join(
    f"- {kind}: {', '.join(modalities)}" for kind, modalities in DEVICE_CAPABILITIES.items()
)

CATEGORIES = """The six question categories:
causal (why something happened or what it led to: cause and effect across events);
fusion (one happening pieced together from several devices, none of which tells it whole);
user_aggregation (a count, total, trend or pattern of one person over days);
user_query (the asker's own life: 'when did I...', 'what did I say I would...');
conflict (two sources disagree; the answer says which to trust and why);
perspective (what one person or device could know, versus what another saw)."""

CRITERIA: dict[Stage, str] = {
    "persona": f"""Persona-source graph criteria:
- Devices: every device of all_devices is listed once, by its owner's `devices` or by
  `shared_devices`, and nothing listed is missing from all_devices. Device types come from the
  table; each device declares exactly its type's modalities, all among the nine.
- Owners and places: a personal device is owned by its character (owner = the name) and named
  <type>_<owner, lower case> (watch_anna); a shared device is owned by "shared" and sits in a room
  that suits it (living_room, kitchen, front_door...). Phones are carried, watches wearable, car
  systems in the car; no 'kitchen speaker' in the bedroom.
- Routines align across people: a shared meal, school run or pick-up has the same time in
  every routine that mentions it. Nobody is in two places at once; commuting, cooking and
  bathing get realistic time; nobody teleports; children and elders move slower.
- People fit their lives: age, role, health and interests match the routine (a five-year-old
  neither drives nor owns a phone or laptop; no teenager owns a car system); 2-4 interests
  each; names unique. A routine that needs a device (video games, a robot vacuum, a voice
  assistant) has that device.
{MODALITIES}
{DEVICE_TABLE}""",
    "scenario": """Scenario timeline criteria:
- 8-12 episodes, each a concrete storyline (a fever, a lost key, a visit, an appliance fault)
  with people, a day inside the brief's week, and beats in time order; not routine life.
- Causes are episode ids that exist and start no later than the episode they cause.
- People are household members or clearly introduced guests; every beat is something a
  device of the persona could observe; the people's routines, ages and health are respected.
- Activities fit the weekday: school and office on weekdays, outings and lie-ins at weekends.""",
    "stream": f"""Event stream criteria:
- Every event names a device of the persona, a modality that device produces, and a location
  that matches it (the room of a fixed device; the owner's whereabouts for a carried one).
- Atomic: one observation at one timestamp; no spans, no several activities in one event.
- Seen from the device: what it measured, saw, heard or logged, never an omniscient narrator
  (no feelings, decisions or causes it could not sense); people named, never 'the user'; a
  personal device reports about its owner; readings physically plausible.
- Each storyline beat is observed by 1-4 different devices, each carrying only its part;
  routine records, periodic readings, incidental noise and conflicting readings interleave,
  so that no single source tells the whole story.
- Timestamps inside the week, plausible for the weekday and the hour; no two events share a
  device and a minute; event ids unique; the storyline episodes match the timeline.
{MODALITIES}""",
    "questions": f"""Question pool criteria:
- Each question has a reference answer that its evidence events (ids of the stream) fully
  support, and a checklist of the answer's key points, each with the events that support it.
- Asked by a household member (question_user) on a device they use (question_device), at a
  question_time after its latest evidence; relative time words are read from that time.
- The question does not contain its answer, and it needs the stream: no commonsense shortcut.
- Questions span the categories and the devices; no two questions ask the same thing.
{CATEGORIES}""",
    "filtering": """QA filtering criteria (the filtered pool keeps questions, never rewrites them):
- Keep only answerable questions: every evidence id resolves, and the evidence supports
  every checklist point and the whole answer.
- Drop commonsense shortcuts (answerable without the stream, or the answer's words already in
  the question), near duplicates (same question, or largely the same evidence in the same
  category), and questions with too few sources for their category.
- Keep the categories balanced, at most the brief's number of questions in all.""",
    "adversarial": """Adversarial sample criteria (answer preservation):
- Distractors are events with source 'adversarial' and a target_question; they are topical
  for their target (same people, devices or subject) and specific, yet carry no part of its
  answer, complete none of its causal chains, and contradict none of its evidence.
- A distractor leaks nothing to any other question of the sample either.
- The gold evidence and answers do not change: every question keeps its answer, checklist
  and evidence events (only their ids are renumbered), and no distractor is cited as evidence.
- Distractors obey the stream criteria: an existing device, a modality it produces, its
  location, a free minute on that device, a plausible weekday and hour, atomic and seen from
  the device.""",
}


@dataclass(frozen=True)
class StageSpec:
    """One stage's artifact (its `Artifacts` field and model), what it reads and its task."""

    name: str  # the signatures' noun: GeneratePersona, ReviewPersona, CorrectPersona
    artifact: str
    model: type[BaseModel]
    upstream: tuple[str, ...]
    task: str


ARTIFACT_MODELS: dict[str, type[BaseModel]] = {
    "persona": Persona,
    "timeline": Timeline,
    "stream": Stream,
    "questions": QuestionPool,
    "filtered": QuestionPool,
    "sample": Scenario,
}
ARTIFACT_DESCRIPTIONS = {
    "persona": "The accepted persona-source graph: people, routines, devices.",
    "timeline": "The accepted scenario timeline: storyline episodes of the week.",
    "stream": "The accepted event stream: every device observation, grouped in episodes.",
    "questions": "The accepted question pool (before filtering).",
    "filtered": "The accepted filtered question pool (gold answers and evidence).",
    "sample": "The finished scenario: persona, episodes with distractors, questions.",
}

SPECS: dict[Stage, StageSpec] = {
    "persona": StageSpec(
        "Persona", "persona", Persona, (),
        "Write the household's persona-source graph: characters with ages, roles, interests, "
        "health and weekday/weekend routines, and every personal and shared device.",
    ),
    "scenario": StageSpec(
        "Timeline", "timeline", Timeline, ("persona",),
        "Write the week's storyline: causally linked episodes, each with its day, people and "
        "beats, that the household's devices could observe.",
    ),
    "stream": StageSpec(
        "EventStream", "stream", Stream, ("persona", "timeline"),
        "Render the timeline into atomic, source-tagged device events, storyline episodes "
        "first, interleaved with per-day background episodes of routine, periodic, incidental "
        "and conflicting observations.",
    ),
    "questions": StageSpec(
        "QuestionPool", "questions", QuestionPool, ("persona", "stream"),
        "Write questions across the six categories from the stream, each with its answer, "
        "evidence event ids, checklist, asker, device and question time.",
    ),
    "filtering": StageSpec(
        "FilteredQuestions", "filtered", QuestionPool, ("persona", "stream", "questions"),
        "Filter the question pool: keep the answerable, evidence-supported, non-duplicate "
        "questions without shortcuts, unchanged, ids renumbered <scenario_id>_Q001...",
    ),
    "adversarial": StageSpec(
        "AdversarialSample", "sample", Scenario, ("persona", "stream", "filtered"),
        "Add 1-3 distractor events per question, then give the finished scenario: every event "
        "renumbered <scenario_id>_E0001... in time order, evidence and checklist ids remapped.",
    ),
}  # fmt: skip

BRIEF_DESC = "What the household-week must be (id, type, days, question budget)."


def _inputs(spec: StageSpec) -> dict[str, tuple[type, Any]]:
    fields: dict[str, tuple[type, Any]] = {
        "brief": (SynthesisBrief, dspy.InputField(desc=BRIEF_DESC))
    }
    for name in spec.upstream:
        fields[name] = (ARTIFACT_MODELS[name], dspy.InputField(desc=ARTIFACT_DESCRIPTIONS[name]))
    return fields


def _signature(name: str, doc: str, fields: dict[str, tuple[type, Any]]) -> type[dspy.Signature]:
    signature: type[dspy.Signature] = dspy.make_signature(
        fields, instructions=doc, signature_name=name
    )
    return signature


def _generate(stage: Stage, spec: StageSpec) -> type[dspy.Signature]:
    fields = _inputs(spec)
    fields[spec.artifact] = (spec.model, dspy.OutputField(desc="The stage's artifact."))
    # every signature that reads a drafted artifact is told its text is data, not orders
    doc = f"{spec.task}\n\n{CRITERIA[stage]}" + ("\n" + DATA_NOTICE if spec.upstream else "")
    return _signature(f"Generate{spec.name}", doc, fields)


def _review(stage: Stage, spec: StageSpec) -> type[dspy.Signature]:
    fields = _inputs(spec)
    fields[spec.artifact] = (spec.model, dspy.InputField(desc="The draft under review."))
    fields["issues"] = (
        list[Issue],
        dspy.OutputField(
            desc=f"Every criterion the draft breaks, one issue each (stage '{stage}', a short "
            "snake_case code, one sentence naming the items, their ids); [] when none."
        ),
    )
    doc = (
        f"Review the draft of the '{stage}' stage against its criteria and the accepted "
        f"artifacts it builds on. Flag structural, semantic and consistency problems that are "
        f"really there; do not flag matters of taste.\n\n{CRITERIA[stage]}\n{DATA_NOTICE}"
    )
    return _signature(f"Review{spec.name}", doc, fields)


def _correct(stage: Stage, spec: StageSpec) -> type[dspy.Signature]:
    fields = _inputs(spec)
    fields[spec.artifact] = (spec.model, dspy.InputField(desc="The draft with issues."))
    fields["issues"] = (list[Issue], dspy.InputField(desc="What the reviewer found."))
    fields["corrected"] = (spec.model, dspy.OutputField(desc="The whole repaired artifact."))
    doc = (
        f"Repair the draft of the '{stage}' stage: verify each issue against the draft (a "
        "reviewer can be wrong), fix the real ones with the smallest change that meets the "
        "criteria, keep everything else exactly as it was, and never break a criterion that "
        f"held before.\n\n{CRITERIA[stage]}\n{DATA_NOTICE}"
    )
    return _signature(f"Correct{spec.name}", doc, fields)


GENERATE = {stage: _generate(stage, spec) for stage, spec in SPECS.items()}
REVIEW = {stage: _review(stage, spec) for stage, spec in SPECS.items()}
CORRECT = {stage: _correct(stage, spec) for stage, spec in SPECS.items()}


def _model(spec: StageSpec, value: Any) -> BaseModel:
    return value if isinstance(value, spec.model) else spec.model.model_validate(value)


class SynthesisProgram(dspy.Module):
    """The LLM side of every stage: draft, review, correct (one predictor per signature)."""

    def __init__(self) -> None:
        super().__init__()
        self.drafters = {stage: dspy.Predict(sig) for stage, sig in GENERATE.items()}
        self.reviewers = {stage: dspy.Predict(sig) for stage, sig in REVIEW.items()}
        self.correctors = {stage: dspy.Predict(sig) for stage, sig in CORRECT.items()}

    def generate(
        self, stage: Stage, brief: SynthesisBrief, upstream: dict[str, BaseModel]
    ) -> BaseModel:
        spec = SPECS[stage]
        out = self.drafters[stage](brief=brief, **upstream)
        return _model(spec, getattr(out, spec.artifact))

    def review(
        self, stage: Stage, brief: SynthesisBrief, upstream: dict[str, BaseModel], draft: BaseModel
    ) -> list[Issue]:
        spec = SPECS[stage]
        out = self.reviewers[stage](brief=brief, **upstream, **{spec.artifact: draft})
        found = [i if isinstance(i, Issue) else Issue.model_validate(i) for i in out.issues or []]
        return [i.model_copy(update={"stage": stage, "by": "llm"}) for i in found]

    def correct(
        self,
        stage: Stage,
        brief: SynthesisBrief,
        upstream: dict[str, BaseModel],
        draft: BaseModel,
        issues: list[Issue],
    ) -> BaseModel:
        spec = SPECS[stage]
        out = self.correctors[stage](
            brief=brief, **upstream, **{spec.artifact: draft}, issues=issues
        )
        return _model(spec, out.corrected)
