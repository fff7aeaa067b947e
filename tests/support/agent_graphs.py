"""Agent graphs as an agent builder would write them, over MemFuse, for the served tests.

- `memory_agent`: a tool-calling loop (model → tools → model) whose tools write and search the
  LangGraph store the server provides — MemFuse's store, so what one thread remembers another
  recalls. The model is scripted (no LLM here): "Remember that …" makes it call `remember`,
  any other question makes it call `recall`, and a tool's answer is what it then says.
- `recall_agent`: MemFuse's retrieval graph added as a node (a subgraph) of an agent's graph,
  followed by a node that answers from the first piece of evidence.

The user a thread speaks for comes from the run's `configurable.user_id`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.config import get_config, get_store
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from graphs.retrieval.graph import graph as retrieval_graph
from memory.records import ContextEntry

REMEMBER = "remember that "


class ScriptedChatModel(BaseChatModel):
    """A deterministic stand-in for a tool-calling chat model (see the module docstring)."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply: AIMessage = AIMessage(content=str(last.content))
        else:
            text = str(last.content)
            call_id = "call_" + hashlib.sha256(text.encode()).hexdigest()[:8]
            if text.lower().startswith(REMEMBER):
                call = {"name": "remember", "args": {"note": text[len(REMEMBER) :]}, "id": call_id}
            else:
                call = {"name": "recall", "args": {"query": text}, "id": call_id}
            reply = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _namespace() -> tuple[str, str]:
    """The user's memories, owned by them (the server runs with MEMFUSE_STORE_OWNERS=first)."""
    user = get_config()["configurable"].get("user_id", "anonymous")
    return (str(user), "memories")


@tool
def remember(note: str) -> str:
    """Store a note in the user's long-term memory."""
    key = hashlib.sha256(note.encode()).hexdigest()[:12]
    get_store().put(_namespace(), key, {"text": note})
    return f"remembered: {note}"


@tool
def recall(query: str) -> str:
    """Search the user's long-term memory."""
    found = get_store().search(_namespace(), query=query, limit=1)
    return str(found[0].value["text"]) if found else "I have no memory of that."


model = ScriptedChatModel()
tools = [remember, recall]


def call_model(state: MessagesState) -> dict[str, list[BaseMessage]]:
    return {"messages": [model.bind_tools(tools).invoke(state["messages"])]}


agent_builder = StateGraph(MessagesState)
agent_builder.add_node("model", call_model)
agent_builder.add_node("tools", ToolNode(tools))
agent_builder.add_edge(START, "model")
agent_builder.add_conditional_edges("model", tools_condition)
agent_builder.add_edge("tools", "model")
memory_agent = agent_builder.compile(name="memory_agent")


class RecallState(TypedDict, total=False):
    """The agent's state; `question`, `requester` and `context` are shared with the retrieval
    graph, which is what lets it run as a node of this one."""

    messages: Annotated[list[BaseMessage], add_messages]
    question: str
    requester: str
    question_time: str
    context: list[ContextEntry]


def ask(state: RecallState) -> dict[str, Any]:
    question = str(state["messages"][-1].content)
    user = get_config()["configurable"].get("user_id")
    return {"question": question, "requester": user}


def answer(state: RecallState) -> dict[str, list[BaseMessage]]:
    context = state.get("context") or []
    first = context[0] if context else None
    text = first.text if isinstance(first, ContextEntry) else (first or {}).get("text")  # type: ignore[union-attr]
    return {"messages": [AIMessage(content=text or "I have no memory of that.")]}


recall_builder = StateGraph(RecallState)
recall_builder.add_node("ask", ask)
recall_builder.add_node("retrieval", retrieval_graph)  # MemFuse's graph, as a subgraph
recall_builder.add_node("answer", answer)
recall_builder.add_edge(START, "ask")
recall_builder.add_edge("ask", "retrieval")
recall_builder.add_edge("retrieval", "answer")
recall_builder.add_edge("answer", END)
recall_agent = recall_builder.compile(name="recall_agent")

__all__ = ["HumanMessage", "memory_agent", "recall_agent"]
