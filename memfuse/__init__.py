"""MemFuse: multi-source long-term memory for AI agents.

`MemFuse` (memfuse.api) is the public face: open a data directory, ingest events,
search or ask with provenance. `memfuse` (memfuse.cli) is the command line.
"""

from memfuse.api import MemFuse
from memfuse.settings import MemFuseSettings, load_settings

__all__ = ["MemFuse", "MemFuseSettings", "load_settings"]
