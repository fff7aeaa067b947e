"""`synthesize()`: one household-week through the synthesis graph, resumable from a file.

Without a checkpoint file the served `graph` runs as is. With one, `builder` is compiled with a
`SqliteSaver` on that file and the run goes on a thread of its own (`thread_id_for`: the
scenario, the seed, who drafts and a digest of the whole request), so calling `synthesize`
again with the same request, drafter and file:

- continues an interrupted run (an exception, a failing endpoint, a killed process) from the
  node that did not finish: the stages accepted before it are not generated again;
- returns a finished scenario without running anything;
- starts afresh after a failed run (a failed stage is reported, never resumed).

A failed stage raises `SynthesisFailedError`, naming the stage and its remaining issues.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from eval.synth.graph.context import SynthesisContext
from eval.synth.graph.graph import builder, graph
from eval.synth.graph.state import ReviewRound, SynthesisInput, SynthesisOutput
from memory.errors import MemFuseError
from memory.formats.memfusebench import Scenario

Progress = Callable[[str], None]


class SynthesisFailedError(MemFuseError):
    """A stage kept failing its review: names the scenario, the stage and what remained."""

    def __init__(self, output: SynthesisOutput):
        self.output = output
        scenario = output.request.scenario_id if output.request else "?"
        issues = "; ".join(f"[{i.by}] {i.code}: {i.message}" for i in output.issues[:5])
        more = f" (and {len(output.issues) - 5} more)" if len(output.issues) > 5 else ""
        super().__init__(
            f"synthesis of {scenario} stopped at stage {output.failed_stage!r}: "
            f"{len(output.issues)} issue(s) remain: {issues}{more}"
        )


@dataclass
class SynthesisRun:
    """One call's outcome: the accepted scenario and how the run got there."""

    output: SynthesisOutput
    thread_id: str | None = None
    resumed: bool = False  # an interrupted run was continued
    reused: bool = False  # the checkpoint already held the finished scenario
    lines: list[str] = field(default_factory=list)

    @property
    def scenario(self) -> Scenario:
        if self.output.scenario is None:  # pragma: no cover - synthesize raises first
            raise SynthesisFailedError(self.output)
        return self.output.scenario

    @property
    def review_log(self) -> list[ReviewRound]:
        return self.output.review_log


def thread_id_for(request: SynthesisInput, context: SynthesisContext | None = None) -> str:
    """One thread per household-week and drafter (the injected generators' class, or the LLM):
    a changed request, or an LLM run after a procedural one, never reuses another's run."""
    generators = context.stage_generators() if context is not None else None
    drafter = type(generators).__name__ if generators is not None else "llm"
    digest = hashlib.sha256(request.model_dump_json().encode()).hexdigest()[:12]
    return f"synthesis-S{request.scenario_index + 1}-seed{request.seed}-{drafter}-{digest}"


@contextmanager
def checkpointed(path: str | Path) -> Iterator[Any]:
    """The synthesis graph compiled with a SQLite checkpointer on `path` (created if missing)."""
    Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
    with SqliteSaver.from_conn_string(str(Path(path).expanduser())) as saver:
        yield builder.compile(checkpointer=saver, name="synthesis")


def _stage_line(scenario: str, update: dict[str, Any], rounds: list[ReviewRound]) -> str:
    summary = ", ".join(f"{'+'.join(r.reviewers)}: {r.issues} issue(s)" for r in rounds)
    stage = update["accepted"][-1]
    return f"[synth] {scenario} {stage}: accepted after {len(rounds)} review(s) ({summary})"


def _drive(
    compiled: Any,
    payload: dict[str, Any] | None,
    config: dict[str, Any],
    context: SynthesisContext,
    progress: Progress | None,
    scenario: str,
) -> tuple[dict[str, Any], list[str]]:
    """Run the graph, reporting a line per accepted, regenerated or failed stage."""
    values: dict[str, Any] = {}
    lines: list[str] = []
    rounds: list[ReviewRound] = []
    for mode, chunk in compiled.stream(
        payload, config, context=context, stream_mode=["updates", "values"]
    ):
        if mode == "values":
            values = chunk
            continue
        for name, update in chunk.items():
            update = update or {}
            line = None
            if name == "review":
                rounds += [ReviewRound.model_validate(r) for r in update["review_log"]]
            elif name == "accept":
                line = _stage_line(scenario, update, rounds)
                rounds = []
            elif name in ("regenerate", "give_up"):
                line = f"[synth] {scenario} {update['notes'][-1]}"
            if line:
                lines.append(line)
                if progress is not None:
                    progress(line)
    return values, lines


def synthesize(
    request: SynthesisInput | dict[str, Any],
    context: SynthesisContext,
    *,
    checkpoint: str | Path | None = None,
    thread_id: str | None = None,
    progress: Progress | None = None,
) -> SynthesisRun:
    """Build one household-week (see the module docstring); raise when a stage failed."""
    request = SynthesisInput.model_validate(request)
    payload: dict[str, Any] | None = request.model_dump(mode="json")
    scenario = f"S{request.scenario_index + 1}"
    if checkpoint is None:
        values, lines = _drive(graph, payload, {}, context, progress, scenario)
        return _finished(SynthesisRun(SynthesisOutput.model_validate(values), lines=lines))
    thread = thread_id or thread_id_for(request, context)
    config = {"configurable": {"thread_id": thread}}
    with checkpointed(checkpoint) as compiled:
        snapshot = compiled.get_state(config)
        stored = SynthesisOutput.model_validate(snapshot.values or {})
        if not snapshot.next and stored.status == "accepted":
            return SynthesisRun(stored, thread_id=thread, reused=True)
        resumed = bool(snapshot.next)
        if resumed:
            payload = None  # continue from the node that did not finish
            if progress is not None:
                progress(f"[synth] {scenario}: resuming after {', '.join(stored.accepted) or '-'}")
        _, lines = _drive(compiled, payload, config, context, progress, scenario)
        output = SynthesisOutput.model_validate(compiled.get_state(config).values)
    return _finished(SynthesisRun(output, thread_id=thread, resumed=resumed, lines=lines))


def _finished(run: SynthesisRun) -> SynthesisRun:
    if run.output.status != "accepted" or run.output.scenario is None:
        raise SynthesisFailedError(run.output)
    return run
