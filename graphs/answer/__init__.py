"""The answer graph: the retrieval controller (as a subgraph) followed by a reader.

`graph` is served as `answer` (langgraph.json); `answer_question` drives it in-process.
"""

from graphs.answer.context import AnswerContext
from graphs.answer.graph import builder, graph
from graphs.answer.nodes import NO_LLM_NOTE, answer_problem
from graphs.answer.run import answer_question
from graphs.answer.state import AnswerInput, AnswerOutput

__all__ = [
    "NO_LLM_NOTE",
    "AnswerContext",
    "AnswerInput",
    "AnswerOutput",
    "answer_problem",
    "answer_question",
    "builder",
    "graph",
]
