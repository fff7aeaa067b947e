"""The DSPy programs an optimiser compiles: the real read or write path around one decision.

A metric on a single plan or judgement would have to guess what makes a good plan; these
students instead run the whole retrieval controller (or a fusion ingest) with the decision
being optimised injected through `signatures.programs.using_programs`, so the metric scores
what the decision is for: the evidence that ends up in the reader's context. The decision
that is not being optimised is frozen (`_compiled`), so optimisers leave it alone; only the
target module is saved.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import dspy

from eval.optimize.stores import ScenarioStores
from graphs.retrieval.run import ControllerOptions, retrieve
from signatures.programs import program_for, using_programs


def _frozen(module: dspy.Module) -> dspy.Module:
    module._compiled = True
    return module


class RetrievalStudent(dspy.Module):
    """Question → the controller's final context, with `planner` and `judge` injected."""

    def __init__(
        self,
        target: str,
        stores: ScenarioStores,
        options: ControllerOptions,
        k: int = 20,
        programs_dir: str | None = None,
    ) -> None:
        super().__init__()
        if target not in ("planner", "judge"):
            raise ValueError(f"RetrievalStudent optimises planner or judge, not {target!r}")
        self.target = target
        self.stores = stores
        self.options = replace(options, lm=None)  # the LM comes from dspy.settings per call
        self.default_lm = options.lm
        self.k = k
        self.planner = program_for("planner", programs_dir).deepcopy()
        self.judge = program_for("judge", programs_dir).deepcopy()
        _frozen(self.judge if target == "planner" else self.planner)

    def target_module(self) -> dspy.Module:
        return self.planner if self.target == "planner" else self.judge

    def forward(
        self, scenario_id: str, question: str, question_time: str, requester: str = ""
    ) -> dspy.Prediction:
        store = self.stores.get(scenario_id)
        lm = dspy.settings.lm or self.default_lm
        with using_programs(planner=self.planner, judge=self.judge):
            result = retrieve(
                store,
                question,
                question_time=question_time,
                requester=requester or None,
                admin=True,  # the whole memory, as `bench` reads by default
                k=self.k,
                options=replace(self.options, lm=lm),
            )

        def describe(ids: list[str]) -> list[str]:
            return [e.serialize() for e in store.get_events(ids)]

        return dspy.Prediction(
            event_ids=result.event_ids[: self.k],
            rounds=result.round,
            queries=[q for plan in result.plans for q in [plan.focus, *plan.semantic_queries]],
            notes=result.notes,
            describe=describe,
        )


class FusionStudent(dspy.Module):
    """A stream slice → a fresh store fused by the `agent` program, then the slice's questions
    answered by the offline controller (downstream recall)."""

    def __init__(
        self,
        embedder: Any,
        work_dir: Path,
        k: int = 20,
        programs_dir: str | None = None,
        context: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.embedder = embedder
        self.work_dir = Path(work_dir)
        self.k = k
        self.context = dict(context or {})
        self.agent = program_for("fusion", programs_dir).deepcopy()

    def target_module(self) -> dspy.Module:
        return self.agent

    def forward(
        self, scenario_id: str, events: list[Any], questions: list[dict[str, str]]
    ) -> dspy.Prediction:
        from graphs.fusion.context import FusionContext
        from graphs.fusion.ingest import ingest_events
        from memory.opener import open_store

        self.work_dir.mkdir(parents=True, exist_ok=True)
        lm = dspy.settings.lm
        with tempfile.TemporaryDirectory(dir=self.work_dir, prefix=f"{scenario_id}-") as folder:
            # a scratch store: every default (embedded Chroma, SQLite), not the environment's
            store = open_store(
                None, data_dir=Path(folder) / "store", namespace="slice", embedder=self.embedder
            )
            try:
                context = FusionContext(
                    policy="llm",
                    program=self.agent,
                    lm=lm,
                    data_dir=folder,
                    namespace="slice",
                    llm_model="injected",
                    llm_base_url="",
                    llm_temperature=1.0,
                    llm_max_tokens=4096,
                    **self.context,
                )
                report = ingest_events(store, events, config=context, progress=False)
                fused = [list(node.members) for node in store.all_fused()]
                offline = ControllerOptions(policy="offline")
                retrieved = {
                    q["question_id"]: retrieve(
                        store,
                        q["question"],
                        question_time=q["question_time"],
                        requester=q["requester"] or None,
                        admin=True,  # the whole memory, as `bench` reads by default
                        k=self.k,
                        options=offline,
                    ).event_ids[: self.k]
                    for q in questions
                }
            finally:
                store.close()
        return dspy.Prediction(
            fused_members=fused,
            retrieved=retrieved,
            rejected=report.rejected,
            accepted=report.accepted,
        )
