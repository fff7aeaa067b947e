"""MemFuse for LangChain agents: a retriever and the two tools an agent's memory needs.

The retriever's documents are the reader context MemFuse would give its own reader: one line
per event (`[time] [device] [place] text`), with the provenance (id, device, place, time,
score, how it was found) in the metadata, so an agent can cite where a memory came from.
Every call reads as one person (`user`) or as an audited admin, like any MemFuse read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import ConfigDict

from memory.records import ContextEntry

if TYPE_CHECKING:
    from memfuse.api import MemFuse


def as_document(entry: ContextEntry) -> Document:
    return Document(
        page_content=entry.text,
        id=entry.node_id,
        metadata={
            "id": entry.node_id,
            "kind": entry.kind.value,
            "time": entry.timestamp.isoformat(),
            "device": entry.device,
            "location": entry.location,
            "score": entry.score,
            "provenance": entry.provenance,
        },
    )


class MemFuseRetriever(BaseRetriever):
    """`memory.search(query)` as LangChain documents (see the module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any  # MemFuse (Any: pydantic would try to validate the class)
    user: str | None = None
    admin: bool = False
    k: int = 10
    system: str = "memfuse"

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        found = self.memory.search(
            query, user=self.user, admin=self.admin, k=self.k, system=self.system
        )
        return [as_document(entry) for entry in found.context]


def memory_tool(
    memory: MemFuse,
    action: Literal["search", "add"] = "search",
    *,
    user: str | None = None,
    admin: bool = False,
    k: int = 10,
    name: str | None = None,
) -> BaseTool:
    """`search`: the memory's evidence for a query, one line per event (the tool's answer is
    what the agent reads). `add`: remember a note as `user` (their private memory, by the
    household's policy), answering with its id."""
    if action == "search":

        def search(query: str) -> str:
            found = memory.search(query, user=user, admin=admin, k=k)
            lines = [f"{e.node_id}: {e.text}" for e in found.context]
            return "\n".join(lines) if lines else "no memories found"

        return StructuredTool.from_function(
            search,
            name=name or "search_memory",
            description="Search long-term memory (every device of the household, with "
            "provenance) for evidence about a question. Input: the question.",
        )
    if action == "add":

        def add(text: str) -> str:
            result = memory.add(text, user=user)
            return f"remembered as {result.ids[0]}"

        return StructuredTool.from_function(
            add,
            name=name or "remember",
            description="Store a note in long-term memory so that it can be recalled later, "
            "in any conversation. Input: the note, as one self-contained sentence.",
        )
    raise ValueError(f"action: expected 'search' or 'add', got {action!r}")
