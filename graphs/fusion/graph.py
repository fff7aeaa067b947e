"""The fusion graph: fuse one incoming event into the dual-layer memory graph.

begin → store_event → retrieve → agent ⇄ tools (bounded) → validate → commit | reject
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from graphs.fusion.context import FusionContext
from graphs.fusion.nodes import (
    agent_step,
    begin,
    commit,
    reject,
    retrieve,
    store_event,
    tools,
    validate,
)
from graphs.fusion.routers import after_agent, after_validate
from graphs.fusion.state import FusionInput, FusionOutput, State

builder = StateGraph(
    State, context_schema=FusionContext, input_schema=FusionInput, output_schema=FusionOutput
)
builder.add_node("begin", begin)
builder.add_node("store_event", store_event)
builder.add_node("retrieve", retrieve)
builder.add_node("agent", agent_step)
builder.add_node("tools", tools)
builder.add_node("validate", validate)
builder.add_node("commit", commit)
builder.add_node("reject", reject)

builder.add_edge(START, "begin")
builder.add_edge("begin", "store_event")
builder.add_edge("store_event", "retrieve")
builder.add_edge("retrieve", "agent")
builder.add_conditional_edges("agent", after_agent)
builder.add_edge("tools", "agent")
builder.add_conditional_edges("validate", after_validate)
builder.add_edge("commit", END)
builder.add_edge("reject", END)

graph = builder.compile(name="fusion")
