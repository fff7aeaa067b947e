"""Run-time knobs of the synthesis graph, and who writes a stage's drafts.

The shared fields (policy, LLM) and the rules for live objects are
`graphs.context.RunContext`'s; this adds the review loop's bounds, the procedural stages'
`realism`, and one live object, the injected `generators` (`StageGenerators`): who writes each
stage's first draft when the LLM does not (a test's scripted drafts, `memfuse synth`'s own
procedural stages so it can read their filtering tally). Injected like stores and programs, as
a constructor argument that is not a form field.

Who does what in a run:

- draft: the injected generators when there are some; else, with an LLM in play, its
  `Generate*` programs (`eval.synth.graph.signatures`); else the procedural stages
  (`eval.synth.stages.ProceduralStages`, at `realism`), so the graph runs with no LLM at all
  (`langgraph dev` offline, `memfuse synth`);
- review: the deterministic checks always, then the LLM reviewer when an LM is in play and
  the code found nothing;
- correct: the LLM corrector; with no LM the deterministic repairs (`eval.synth.graph.repair`:
  a question stage drops the questions its review named), else the draft is regenerated
  (`max_regenerations`) and then reported.

The synthesis graph opens no memory store: it asks `graphs.resources` for the settings and the
decision LM only (`synthesis_lm`), so `data_dir` and `namespace` play no part in it.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field
from typing import Any, Protocol, runtime_checkable

from langgraph.runtime import Runtime
from pydantic import BaseModel

from eval.synth.artifacts import Artifacts, Stage
from eval.synth.graph.state import SynthesisRequest
from eval.synth.realism import DEFAULT_REALISM, check_realism
from graphs.context import Hidden, RunContext, about, run_context
from graphs.resources import decision_lm, run_settings
from memory.errors import ConfigurationError


@runtime_checkable
class StageGenerators(Protocol):
    """Writes the first draft of a stage from the request and what the stages before accepted.

    Returns that stage's artifact model (`eval.synth.artifacts`: Persona, Timeline, Stream,
    QuestionPool, QuestionPool, Scenario). Called again for a regeneration."""

    def generate(self, stage: Stage, request: SynthesisRequest, artifacts: Artifacts) -> BaseModel:
        """The draft of `stage`."""
        ...


_NO_LM = object()


@dataclass(kw_only=True)
class SynthesisContext(RunContext):
    """How one synthesis run reviews and repairs its drafts."""

    max_corrections: int = field(
        default=3,
        metadata=about(
            "Corrections of one draft before it is given up (its stage is then regenerated)."
        ),
    )
    max_regenerations: int = field(
        default=1,
        metadata=about(
            "Fresh drafts of a stage whose corrections ran out; when those fail too, the run "
            "stops and reports the stage and its remaining issues."
        ),
    )
    realism: str = field(
        default=DEFAULT_REALISM,
        metadata=about(
            "How the procedural stages write when they draft (no LLM and no injected "
            "generators): realistic, or legacy for comparing with older numbers."
        ),
    )
    generators: InitVar[Hidden] = None

    def __post_init__(self, store: Any, settings: Any, lm: Any, generators: Any) -> None:
        super().__post_init__(store, settings, lm)
        if generators is not None and not isinstance(generators, StageGenerators):
            raise ConfigurationError(
                f"generators must have a generate(stage, request, artifacts) method, got "
                f"{type(generators).__name__}"
            )
        self._generators = generators

    def check(self) -> None:
        super().check()
        check_realism(self.realism)
        for name in ("max_corrections", "max_regenerations"):
            if getattr(self, name) < 0:
                raise ConfigurationError(f"{name} must be >= 0, got {getattr(self, name)}")

    def stage_generators(self) -> StageGenerators | None:
        """Who drafts offline: the injected generators, else the procedural stages when no LLM
        is in play (None: the LLM drafts)."""
        generators: StageGenerators | None = self.__dict__.get("_generators")
        if generators is None and synthesis_lm(self) is None:
            from eval.synth.stages import ProceduralStages  # it imports this graph's state

            generators = self._generators = ProceduralStages(self.realism)
        return generators


def context_of(runtime: Runtime[SynthesisContext] | None) -> SynthesisContext:
    """The run's context; a default one when the caller gave none."""
    return run_context(runtime, SynthesisContext)


def synthesis_lm(context: SynthesisContext) -> Any | None:
    """The decision LM the policy calls for (None: no LLM in play), resolved once per context."""
    cached = context.__dict__.get("_synthesis_lm", _NO_LM)
    if cached is _NO_LM:
        cached = decision_lm(context, run_settings(context))
        context.__dict__["_synthesis_lm"] = cached
    return cached
