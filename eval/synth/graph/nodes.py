"""The synthesis graph's nodes: begin → generate → review → (correct → review)… → accept → … →
finish, with regenerate and give_up for a stage whose draft keeps failing its review.

Nodes are `(state, runtime) -> partial state` functions wrapped by `graphs.state.node`
(JSON-plain updates). Drafts travel as their model's JSON record with only the fields that were
set (`record`), so the accepted scenario is written exactly as the generator made it.

When the LLM fails (the rule of every graph, `graphs/__init__.py`): an unusable reply never
costs what the run already has and is noted. An unusable draft is a failed draft (regenerated,
then reported), an unusable correction leaves the draft as it was (one correction spent), an
unusable review leaves the code's verdict standing ('offline fallback: <why>' in the log).
An endpoint that keeps failing raises (`LLMProviderError`): the run stops, and with a
checkpointer it resumes from the node that failed (`eval.synth.graph.run`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

import dspy
from langgraph.runtime import Runtime
from pydantic import BaseModel, ValidationError

from eval.synth.artifacts import STAGES, Issue, Stage
from eval.synth.graph.context import SynthesisContext, context_of, synthesis_lm
from eval.synth.graph.repair import repair
from eval.synth.graph.review import code_review, parse_draft
from eval.synth.graph.signatures import SPECS, SynthesisBrief, SynthesisProgram
from eval.synth.graph.state import PastScenario, ReviewRound, State, SynthesisRequest
from graphs.state import fresh_run, node
from memory.errors import ConfigurationError
from signatures.lm import DECIDED_BY_LLM, describe_failure, offline_fallback
from signatures.retry import LLMProviderError

T = TypeVar("T")


@cache
def program() -> SynthesisProgram:
    """The 18 synthesis predictors, built once per process."""
    return SynthesisProgram()


def record(model: BaseModel) -> dict[str, Any]:
    """A draft as JSON, only the fields that were set (what the file writer writes too)."""
    return model.model_dump(mode="json", exclude_unset=True)


def brief_of(request: SynthesisRequest) -> SynthesisBrief:
    return SynthesisBrief(
        scenario_id=request.scenario_id,
        household_type=request.household_type,
        week=[f"{day.isoformat()} ({day.strftime('%A')})" for day in request.week()],
        questions=request.questions,
    )


def upstream_of(state: State) -> dict[str, BaseModel]:
    """The accepted artifacts the current stage reads."""
    stage = current_stage(state)
    found = {name: getattr(state.artifacts, name) for name in SPECS[stage].upstream}
    missing = [name for name, value in found.items() if value is None]
    if missing:  # pragma: no cover - accept fills them in stage order
        raise RuntimeError(f"stage {stage} reached before {', '.join(missing)} was accepted")
    return found


def current_stage(state: State) -> Stage:
    if state.stage is None:  # pragma: no cover - the routers end the run first
        raise RuntimeError("the synthesis graph has no stage at work")
    return state.stage


def request_of(state: State) -> SynthesisRequest:
    if state.request is None:  # pragma: no cover - begin always sets it
        raise RuntimeError("the synthesis graph reached a node before `begin`")
    return state.request


def ask_llm(lm: Any, call: Callable[[], T]) -> tuple[T | None, str]:
    """One LLM call: (its result, "") or (None, why it could not be used). A failing endpoint
    raises: nothing can be decided without it, and the run can resume later."""
    try:
        with dspy.context(lm=lm):
            return call(), ""
    except LLMProviderError:
        raise
    except Exception as exc:  # noqa: BLE001 — malformed reply, schema violation
        return None, describe_failure(exc)


def fresh_draft(candidate: dict[str, Any] | None, **more: Any) -> dict[str, Any]:
    return {"candidate": candidate, "corrections": 0, "rounds": 0, "issues": [], **more}


@node
def begin(state: State, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Start from this run's input alone (see `graphs.state`) and read the request."""
    synthesis_lm(context_of(runtime))  # policy llm without a model fails here, naming it
    try:
        request = SynthesisRequest.model_validate(
            {
                "scenario_index": state.scenario_index,
                "scenario_id": f"S{state.scenario_index + 1}",
                "household_type": (state.household_type or "").strip() or None,
                "seed": state.seed,
                "start": state.start,
                "days": state.days,
                "questions": state.questions,
            }
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise ConfigurationError(f"synthesis input {where}: {problem['msg']}") from None
    return {**fresh_run(State), "request": request, "stage": STAGES[0], "status": "running"}


@node
def generate(state: State, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """A fresh draft of the current stage: the injected generators', else the LLM's."""
    context = context_of(runtime)
    stage, request = current_stage(state), request_of(state)
    generators = context.stage_generators()
    if generators is not None:
        return fresh_draft(record(generators.generate(stage, request, state.artifacts)))
    brief, upstream = brief_of(request), upstream_of(state)
    draft, failure = ask_llm(
        synthesis_lm(context), lambda: program().generate(stage, brief, upstream)
    )
    if draft is None:
        return fresh_draft(None, notes=[f"{stage}: the LLM's draft could not be used: {failure}"])
    return fresh_draft(record(draft))


@node
def review(state: State, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """The deterministic checks first; the LLM reviewer only when an LM is in play and the
    code found nothing. Every round is logged with who reviewed and what they found."""
    stage, request = current_stage(state), request_of(state)
    rounds = state.rounds + 1

    def logged(issues: list[Issue], reviewers: list[str], by: str = "code") -> ReviewRound:
        return ReviewRound(
            stage=stage,
            attempt=state.regenerations + 1,
            round=rounds,
            reviewers=reviewers,  # type: ignore[arg-type]
            issues=len(issues),
            codes=[issue.code for issue in issues],
            decided_by=by,
        )

    if state.candidate is None:
        issues = [Issue(stage=stage, code="no_draft", message="no usable draft was written")]
        return {"rounds": rounds, "issues": issues, "review_log": [logged(issues, ["code"])]}
    draft = parse_draft(stage, state.candidate)
    if isinstance(draft, Issue):  # not even the stage's model: nothing a corrector could read
        issues = [draft]
        return {
            "rounds": rounds,
            "issues": issues,
            "candidate": None,
            "review_log": [logged(issues, ["code"])],
        }
    issues = code_review(stage, state.artifacts, draft, request)
    lm = synthesis_lm(context_of(runtime))
    if issues or lm is None:
        return {"rounds": rounds, "issues": issues, "review_log": [logged(issues, ["code"])]}
    brief, upstream = brief_of(request), upstream_of(state)
    found, failure = ask_llm(lm, lambda: program().review(stage, brief, upstream, draft))
    if found is None:
        note = f"{stage}: the LLM review could not be used ({failure}); the code's review stands"
        return {
            "rounds": rounds,
            "issues": [],
            "review_log": [logged([], ["code", "llm"], offline_fallback(failure))],
            "notes": [note],
        }
    return {
        "rounds": rounds,
        "issues": found,
        "review_log": [logged(found, ["code", "llm"], DECIDED_BY_LLM)],
    }


@node
def correct(state: State, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """The corrector repairs the draft against the issues (the LLM's, else the offline rule of
    `eval.synth.graph.repair`); the review runs again."""
    stage, request = current_stage(state), request_of(state)
    draft = parse_draft(stage, state.candidate or {})
    if isinstance(draft, Issue):  # pragma: no cover - review cleared such a candidate
        raise TypeError(f"{stage}: correct reached with an unreadable draft")
    spent = {"corrections": state.corrections + 1}
    lm = synthesis_lm(context_of(runtime))
    if lm is None:
        return {**spent, **offline_repair(stage, draft, state.issues, request.questions)}
    brief, upstream = brief_of(request), upstream_of(state)
    fixed, failure = ask_llm(
        lm, lambda: program().correct(stage, brief, upstream, draft, state.issues)
    )
    if fixed is None:
        note = f"{stage}: correction {spent['corrections']} could not be used: {failure}"
        return {**spent, "notes": [note]}
    return {**spent, "candidate": record(fixed)}


def offline_repair(
    stage: Stage, draft: BaseModel, issues: list[Issue], budget: int
) -> dict[str, Any]:
    """The rule's repair as a state update: the smaller draft and a note naming what went."""
    fixed = repair(stage, draft, issues, budget)
    if fixed is None:
        return {"notes": [f"{stage}: the offline corrector could not repair the draft"]}
    ids = Counter(q.question_id for q in getattr(draft, "questions", []))
    gone = sorted(
        (ids - Counter(q.question_id for q in getattr(fixed, "questions", []))).elements()
    )
    codes = ", ".join(sorted({issue.code for issue in issues}))
    note = (
        f"{stage}: the offline corrector dropped {len(gone)} question(s) ({codes}): "
        f"{', '.join(gone)}"
    )
    return {"candidate": record(fixed), "notes": [note]}


@node
def regenerate(state: State, runtime: Runtime[SynthesisContext]) -> dict[str, Any]:
    """Give the draft up and ask for a fresh one (the issues it kept are noted)."""
    stage = current_stage(state)
    codes = ", ".join(sorted({issue.code for issue in state.issues}))
    note = (
        f"{stage}: draft {state.regenerations + 1} given up with {len(state.issues)} issue(s) "
        f"({codes}) after {state.corrections} correction(s); regenerating"
    )
    return fresh_draft(None, regenerations=state.regenerations + 1, notes=[note])


@node
def accept(state: State) -> dict[str, Any]:
    """The reviewed draft becomes the stage's artifact; the next stage begins."""
    stage = current_stage(state)
    artifacts = record(state.artifacts)
    artifacts[SPECS[stage].artifact] = state.candidate
    position = STAGES.index(stage)
    following = STAGES[position + 1] if position + 1 < len(STAGES) else None
    return fresh_draft(
        None,
        artifacts=artifacts,
        accepted=[*state.accepted, stage],
        stage=following,
        regenerations=0,
    )


@node
def finish(state: State) -> dict[str, Any]:
    """Every stage accepted: the last artifact is the scenario."""
    request = request_of(state)
    past = PastScenario(scenario_id=request.scenario_id, status="accepted")
    return {
        "status": "accepted",
        "scenario": record(state.artifacts)["sample"],
        "history": [past],
    }


@node
def give_up(state: State) -> dict[str, Any]:
    """A stage failed its review after every correction and regeneration: the run stops with
    the stage and its remaining issues, and nothing of that stage is accepted."""
    stage, request = current_stage(state), request_of(state)
    listed = "; ".join(f"[{issue.by}] {issue.code}: {issue.message}" for issue in state.issues)
    note = (
        f"stage {stage} not accepted: {len(state.issues)} issue(s) remain after "
        f"{state.regenerations} regeneration(s): {listed}"
    )
    past = PastScenario(scenario_id=request.scenario_id, status="failed", failed_stage=stage)
    return {
        "status": "failed",
        "failed_stage": stage,
        "candidate": None,
        "notes": [note],
        "history": [past],
    }
