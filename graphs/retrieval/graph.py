"""The retrieval controller graph: begin → plan → search → judge → (plan | assemble).

`builder` is exposed so tests can compile fresh copies (with their own checkpointer);
`graph` is what `langgraph.json` serves as `retrieval`.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from graphs.retrieval.context import RetrievalContext
from graphs.retrieval.nodes import assemble, begin, judge_round, plan_round, search_round
from graphs.retrieval.routers import (
    route_after_begin,
    route_after_judge,
    route_after_plan,
    route_after_search,
)
from graphs.retrieval.state import RetrievalInput, RetrievalOutput, State

builder = StateGraph(
    State,
    context_schema=RetrievalContext,
    input_schema=RetrievalInput,
    output_schema=RetrievalOutput,
)
builder.add_node("begin", begin)
builder.add_node("plan", plan_round)
builder.add_node("search", search_round)
builder.add_node("judge", judge_round)
builder.add_node("assemble", assemble)
builder.add_edge(START, "begin")
builder.add_conditional_edges("begin", route_after_begin)
builder.add_conditional_edges("plan", route_after_plan)
builder.add_conditional_edges("search", route_after_search)
builder.add_conditional_edges("judge", route_after_judge)
builder.add_edge("assemble", END)

graph = builder.compile(name="retrieval")
