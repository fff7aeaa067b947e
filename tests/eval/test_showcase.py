"""`memfuse show-question`: one question, picked by number in the first scenario or by id in
any scenario, with its context and the gold evidence marked."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memfuse import cli
from tests.memfuse.test_input_faults import one_line, run_main

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_small.json"


def test_a_question_of_another_scenario_is_picked_by_its_id(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    args = ["show-question", "--dataset", str(FIXTURE), "--system", "bm25"]
    monkeypatch.setattr(
        sys, "argv", ["memfuse", *args, "--question", "conv-30_q2", "--data-dir", str(tmp_path)]
    )
    cli.main()
    shown = capsys.readouterr().out
    assert "conv-30 · conv-30_q2" in shown  # the second scenario's, not the first's
    assert "When did Gina sign the lease for her store?" in shown
    assert "Reference answer: 29 January 2023" in shown


def test_an_unknown_question_id_is_one_line_and_builds_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    args = ["show-question", "--dataset", str(FIXTURE), "--question", "conv-99_q1"]
    code, err = run_main(monkeypatch, capsys, *args, "--data-dir", str(data))
    assert code == 1
    assert "--question 'conv-99_q1': no question with that id" in one_line(err)
    assert not data.exists()
