"""The synthesis graph: MemFuseBench's six Scene-to-Sensor stages with reviewer-corrector
validation of every draft.

    begin → generate → review ─┬─ accept ─┬─ generate (next stage)
                ▲      ▲       │          └─ finish → END
                │      └─ correct ◄┤
                └──── regenerate ◄─┤
                                   └─ give_up → END

`builder` is exposed so callers compile their own copy with a checkpointer (`run.py` does,
with SQLite on disk, to resume an interrupted run); `graph` is what `langgraph.json` serves as
`synthesis`, compiled without one (`langgraph dev` supplies its own).
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from eval.synth.graph.context import SynthesisContext
from eval.synth.graph.nodes import (
    accept,
    begin,
    correct,
    finish,
    generate,
    give_up,
    regenerate,
    review,
)
from eval.synth.graph.routers import after_accept, after_review
from eval.synth.graph.state import State, SynthesisInput, SynthesisOutput

builder = StateGraph(
    State,
    context_schema=SynthesisContext,
    input_schema=SynthesisInput,
    output_schema=SynthesisOutput,
)
builder.add_node("begin", begin)
builder.add_node("generate", generate)
builder.add_node("review", review)
builder.add_node("correct", correct)
builder.add_node("regenerate", regenerate)
builder.add_node("accept", accept)
builder.add_node("finish", finish)
builder.add_node("give_up", give_up)

builder.add_edge(START, "begin")
builder.add_edge("begin", "generate")
builder.add_edge("generate", "review")
builder.add_conditional_edges("review", after_review)
builder.add_edge("correct", "review")
builder.add_edge("regenerate", "generate")
builder.add_conditional_edges("accept", after_accept)
builder.add_edge("finish", END)
builder.add_edge("give_up", END)

graph = builder.compile(name="synthesis")
