"""`memfuse synth --llm` end to end: the real CLI in a subprocess, the synthesis graph with policy
llm, DSPy and LiteLLM talking to the fake OpenAI-compatible server (tests/support/fake_openai.py),
which answers every Generate signature with the procedural twins' artifact of its stage and
every Review signature with no issues. The file it writes must load, and a second call with
the same checkpoint file must read the finished scenario back without asking the model."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eval.synth.artifacts import STAGES, Artifacts
from eval.synth.graph.signatures import SPECS
from eval.synth.stages import ProceduralStages, request_for
from memory.formats.loader import load_dataset
from tests.support.fake_openai import start_fake_openai

MEMFUSE = Path(sys.executable).parent / "memfuse"
SEED = 4  # its S1 passes every deterministic check as generated (see test_synthesis_graph)
OUTPUT_FIELD = re.compile(r"Your output fields are:\s*1\. `(\w+)`")


@pytest.fixture(scope="module")
def replies() -> dict[str, str]:
    """Each Generate signature's output field -> the twin's artifact of that stage, as JSON."""
    twins = ProceduralStages()
    request = request_for(0, SEED)
    return {
        SPECS[stage].artifact: json.dumps(
            twins.generate(stage, request, Artifacts()).model_dump(mode="json", exclude_unset=True)
        )
        for stage in STAGES
    }


def answer(replies: dict[str, str]):
    def reply(body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        name = OUTPUT_FIELD.search(system).group(1)
        value = "[]" if name == "issues" else replies[name]
        return f"[[ ## {name} ## ]]\n{value}\n\n[[ ## completed ## ]]"

    return reply


def synth(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMFUSE_", "LANGSMITH_"))}
    return subprocess.run(
        [str(MEMFUSE), "synth", "--scenarios", "1", "--seed", str(SEED), *args],
        check=False,
        cwd=tmp_path,  # no .env of the repo
        env={**clean, "LANGSMITH_TRACING": "false", **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_synth_llm_writes_a_loadable_file_and_resumes_from_its_checkpoint(replies, tmp_path):
    out, checkpoint = tmp_path / "bench.json", tmp_path / "runs.sqlite"
    with start_fake_openai(answer(replies)) as fake:
        env = {"MEMFUSE_LLM_MODEL": "fake-model", "MEMFUSE_LLM_BASE_URL": fake.base_url}
        done = synth(tmp_path, "--llm", "--out", str(out), "--checkpoint", str(checkpoint), **env)
        assert done.returncode == 0, done.stderr[-3000:]
        asked = [
            OUTPUT_FIELD.search(b["messages"][0]["content"]).group(1) for b in fake.chat_requests
        ]
        assert asked == [x for stage in STAGES for x in (SPECS[stage].artifact, "issues")]
        assert set(fake.models) == {"fake-model"}

        again = synth(tmp_path, "--llm", "--out", str(out), "--checkpoint", str(checkpoint), **env)
        assert again.returncode == 0, again.stderr[-3000:]
        assert len(fake.chat_requests) == 12  # the finished scenario was read back
    accepted = [line for line in done.stderr.splitlines() if line.startswith("[synth] S1 ")]
    assert [line.split()[2] for line in accepted] == [f"{stage}:" for stage in STAGES]
    assert all("code+llm: 0 issue(s)" in line for line in accepted)
    dataset = load_dataset(out)
    assert [s.scenario_id for s in dataset.scenarios] == ["S1"]
    assert len(dataset.scenarios[0].questions) == len(json.loads(replies["sample"])["questions"])


def test_synth_llm_without_a_model_says_so_in_one_line(tmp_path):
    done = synth(tmp_path, "--llm", "--out", str(tmp_path / "x.json"))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        (
            "memfuse: error: memfuse synth --llm needs an LLM: set MEMFUSE_LLM_MODEL (and "
            "MEMFUSE_LLM_BASE_URL for a self-hosted endpoint), or drop --llm for the procedural "
            "generator"
        )
    ]
    assert not (tmp_path / "x.json").exists()
