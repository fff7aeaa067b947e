"""The procedural generator as the synthesis graph's offline twins, one per stage.

`ProceduralStages` implements `eval.synth.graph.StageGenerators`: each household-week is one
`eval.synth.pipeline.StagePipeline`, run a stage per call, so the scenario the graph accepts
offline equals `build_one(index, seed)[0]` — the procedural path is the graph's offline path.
The graph's context uses these twins whenever no LLM is in play and the caller injected none
(`memfuse synth`, `langgraph dev` with no LLM configured, a test).
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel

from eval.synth.artifacts import Artifacts, Stage
from eval.synth.graph.state import SynthesisRequest
from eval.synth.pipeline import QUESTIONS_PER_SCENARIO, StagePipeline
from eval.synth.realism import DEFAULT_REALISM, check_realism
from eval.synth.timewords import DAYS
from memory.errors import ConfigurationError


class ProceduralStages:
    """The offline twins of the six stages (a `eval.synth.graph.StageGenerators`)."""

    def __init__(self, realism: str = DEFAULT_REALISM) -> None:
        self.realism = check_realism(realism)
        self._pipelines: dict[str, StagePipeline] = {}
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

    def _pipeline(self, request: SynthesisRequest) -> StagePipeline:
        if request.start != DAYS[0] or request.days != len(DAYS):
            raise ConfigurationError(
                f"the procedural generator writes the {len(DAYS)} days from "
                f"{DAYS[0].isoformat()}, got {request.days} days from {request.start.isoformat()}"
            )
        key = request.model_dump_json()
        if key not in self._pipelines:
            self._pipelines[key] = StagePipeline(
                request.scenario_index,
                request.seed,
                household_type=request.household_type,
                questions=request.questions,
                realism=self.realism,
            )
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
