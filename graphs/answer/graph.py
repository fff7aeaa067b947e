"""The answer graph: begin → the retrieval controller (as a subgraph) → the reader.

`builder` is exposed so tests can compile fresh copies; `graph` is what `langgraph.json`
serves as `answer`.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from graphs.answer.context import AnswerContext
from graphs.answer.nodes import begin, read
from graphs.answer.state import AnswerInput, AnswerOutput, AnswerState
from graphs.retrieval.graph import graph as retrieval_graph

builder = StateGraph(
    AnswerState,
    context_schema=AnswerContext,
    input_schema=AnswerInput,
    output_schema=AnswerOutput,
)
builder.add_node("begin", begin)
builder.add_node("retrieve", retrieval_graph)
builder.add_node("read", read)
builder.add_edge(START, "begin")
builder.add_edge("begin", "retrieve")
builder.add_edge("retrieve", "read")
builder.add_edge("read", END)

graph = builder.compile(name="answer")
