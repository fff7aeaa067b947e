"""The one error a synthesis stage raises when its own deterministic check fails."""

from __future__ import annotations

from memory.errors import MemFuseError


class SynthesisError(MemFuseError):
    """A generated artifact broke a stage invariant; names the stage, scenario and item."""

    def __init__(self, stage: str, scenario_id: str, problem: str):
        self.stage, self.scenario_id, self.problem = stage, scenario_id, problem
        super().__init__(f"synthesis stage {stage!r}, scenario {scenario_id!r}: {problem}")
