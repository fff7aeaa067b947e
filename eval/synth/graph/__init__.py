"""MemFuseBench's Scene-to-Sensor synthesis (the paper's six stages with reviewer-corrector
validation) as a LangGraph. `graph` is the compiled graph served as `synthesis`; `synthesize`
drives one household-week, resumable from a SQLite checkpoint file; `StageGenerators` is what
writes the drafts offline (the procedural stages, `eval.synth.stages.ProceduralStages`, unless a
caller injects others). `checks`
(with `checks_answers`, `checks_questions`, `checks_stream`) holds the deterministic reviewers,
which `memfuse check-dataset` also applies to a finished file; the stage artifacts are
`eval.synth.artifacts`."""

from eval.synth.graph.context import StageGenerators, SynthesisContext
from eval.synth.graph.graph import builder, graph
from eval.synth.graph.run import SynthesisFailedError, SynthesisRun, synthesize, thread_id_for
from eval.synth.graph.state import ReviewRound, SynthesisInput, SynthesisOutput, SynthesisRequest

__all__ = [
    "ReviewRound",
    "StageGenerators",
    "SynthesisContext",
    "SynthesisFailedError",
    "SynthesisInput",
    "SynthesisOutput",
    "SynthesisRequest",
    "SynthesisRun",
    "builder",
    "graph",
    "synthesize",
    "thread_id_for",
]
