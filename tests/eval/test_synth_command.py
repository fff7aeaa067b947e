"""`memfuse synth` is the synthesis graph: the procedural stages draft, the graph's review and
offline corrector act on what they draft, and the published file is what the graph accepted,
then verified; the output path never holds a draft."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from eval.synth import build_one
from eval.synth.artifacts import Artifacts, QuestionPool, Stage
from eval.synth.command import synth_command
from eval.synth.graph import SynthesisRequest
from eval.synth.stages import ProceduralStages
from memory.formats.memfusebench_io import load


class FlawedFiltering(ProceduralStages):
    """The procedural stages, with a stranger's question slipped into the filtering draft."""

    def generate(self, stage: Stage, request: SynthesisRequest, artifacts: Artifacts) -> BaseModel:
        draft = super().generate(stage, request, artifacts)
        if stage != "filtering":
            return draft
        assert isinstance(draft, QuestionPool)
        flawed = draft.model_copy(deep=True)
        stranger = flawed.questions[0].model_copy(
            update={"question_id": "Q-stranger", "question_user": "Zed"}
        )
        flawed.questions.append(stranger)
        return flawed


def test_synth_publishes_what_the_graph_reviewed_and_repaired(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("eval.synth.command.ProceduralStages", FlawedFiltering)
    lines: list[str] = []
    made = synth_command(1, 4, tmp_path / "bench.json", verify=False, progress=lines.append)
    published = load(tmp_path / "bench.json").scenario_data[0]
    direct, tally = build_one(0, 4)
    assert published.model_dump(mode="json") == direct.model_dump(mode="json")
    assert "Q-stranger" not in {q.question_id for q in published.questions}
    assert made.verification is None and made.stats.filtering == dict(tally)
    assert len(lines) == 1 and lines[0].startswith("[synth] 1/1 S1 ")
    assert "7 review(s)" in lines[0] and "0 issue(s)" not in lines[0]  # one repaired draft


def test_synth_verifies_by_default_and_publishes_only_the_verified_file(
    tmp_path: Path, monkeypatch
) -> None:
    out = tmp_path / "bench.json"
    made = synth_command(1, 4, out)
    report = made.verification
    assert report is not None and report["output"] == str(out)
    assert (tmp_path / "bench.verify-report.json").is_file()
    listed = ["bench.json", "bench.verify-report.json", "bench.verify-report.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == listed
    assert len(load(out).scenario_data[0].questions) == report["questions"] - report["dropped"]

    def broken(*_: object, **__: object) -> dict:
        raise RuntimeError("verifier crashed")

    monkeypatch.setattr("eval.verify.publish.publish_verified", broken)
    before = out.read_bytes()
    with pytest.raises(RuntimeError, match="verifier crashed"):
        synth_command(1, 5, out)
    assert out.read_bytes() == before  # the unverified draft never reached the output
    assert sorted(p.name for p in tmp_path.iterdir()) == listed  # and no scratch folder left
