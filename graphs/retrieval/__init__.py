"""Multi-round, evidence-aware retrieval (the paper's agentic retrieval loop) as a LangGraph.

`retrieve()` is the programmatic entry point; `graphs.retrieval.graph.graph` is the
compiled state machine served to LangGraph Studio.
"""

from graphs.retrieval.run import (
    ABLATIONS,
    MEMFUSE,
    MEMFUSE_NO_AR,
    MEMFUSE_NO_FUSION,
    MEMFUSE_NO_GRAPH,
    MEMFUSE_NO_RC,
    ControllerOptions,
    retrieve,
)

__all__ = [
    "ABLATIONS",
    "MEMFUSE",
    "MEMFUSE_NO_AR",
    "MEMFUSE_NO_FUSION",
    "MEMFUSE_NO_GRAPH",
    "MEMFUSE_NO_RC",
    "ControllerOptions",
    "retrieve",
]
