"""The verification graph: the paper's final model-guided pass over a finished benchmark file.

    load → verify ─┬─ correct → verify (the corrected questions only; max_rounds)
                   └─ report → END

`builder` is exposed so tests compile their own copy; `graph` is what `langgraph.json` serves as
`verification`. Offline (no LLM) it runs the deterministic verifiers and the rule corrector.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from eval.verify.graph.context import VerificationContext
from eval.verify.graph.nodes import correct, load, report, verify
from eval.verify.graph.routers import after_verify
from eval.verify.graph.state import State, VerificationInput, VerificationOutput

builder = StateGraph(
    State,
    context_schema=VerificationContext,
    input_schema=VerificationInput,
    output_schema=VerificationOutput,
)
builder.add_node("load", load)
builder.add_node("verify", verify)
builder.add_node("correct", correct)
builder.add_node("report", report)

builder.add_edge(START, "load")
builder.add_edge("load", "verify")
builder.add_conditional_edges("verify", after_verify)
builder.add_edge("correct", "verify")
builder.add_edge("report", END)

graph = builder.compile(name="verification")
