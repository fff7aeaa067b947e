"""Where the fusion graph goes next: the agent's turn budget is enforced here, not trusted."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime

from graphs.fusion.context import FusionContext
from graphs.fusion.nodes import context_of
from graphs.fusion.state import Turn


def after_agent(state: Turn, runtime: Runtime[FusionContext]) -> Literal["tools", "validate"]:
    """A pending tool call within the turn budget runs; anything else goes to validation."""
    if state.pending is not None and state.turns < context_of(runtime).max_tool_turns:
        return "tools"
    return "validate"


def after_validate(state: Turn) -> Literal["commit", "reject"]:
    return "reject" if state.violations else "commit"
