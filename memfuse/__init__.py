"""MemFuse: multi-source long-term memory for AI agents.

`MemFuse` (memfuse.api) is the public face: open a data directory, ingest events,
search or ask with provenance. `memfuse` (memfuse.cli) is the command line.

The names below are loaded on first use (PEP 562), so `import memfuse.cli` does not pay for
`memfuse.api` (torch, chromadb, langgraph, dspy) before a command needs it; `from memfuse
import MemFuse` works as before.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memfuse.api import MemFuse
    from memfuse.langgraph_store import MemFuseStore
    from memfuse.results import AddResult, AskResult, IngestSummary, SearchResult
    from memfuse.settings import MemFuseSettings, load_settings
    from memory.selection import EventFilter

__all__ = [
    "AddResult",
    "AskResult",
    "EventFilter",
    "IngestSummary",
    "MemFuse",
    "MemFuseSettings",
    "MemFuseStore",
    "SearchResult",
    "load_settings",
]

_LAZY = {
    "MemFuse": "memfuse.api",
    "MemFuseSettings": "memfuse.settings",
    "load_settings": "memfuse.settings",
    "EventFilter": "memory.selection",  # the selector of delete / forget / get_all
    "MemFuseStore": "memfuse.langgraph_store",
    "AddResult": "memfuse.results",
    "AskResult": "memfuse.results",
    "IngestSummary": "memfuse.results",
    "SearchResult": "memfuse.results",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
