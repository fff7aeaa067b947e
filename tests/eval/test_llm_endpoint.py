"""One fake OpenAI-compatible endpoint on 127.0.0.1 serves every LLM client MemFuse has: the
DSPy LM of the decisions, ChatOpenAI of the reader and judge; then a MemFuse bench run with
it produces checklist scores. Nothing leaves the machine."""

from __future__ import annotations

import json
import re
from datetime import datetime

from eval.bench import run_bench
from graphs.llm import RetryPolicy
from graphs.reader import read_answer
from memfuse.settings import MemFuseSettings
from signatures.lm import make_lm
from tests.support.bench import BagOfWordsEmbedder, write_tiny_bench
from tests.support.fake_openai import start_fake_openai


def scripted(request: dict) -> str:
    system = request["messages"][0]["content"]
    if "grader" in system:  # the checklist judge: cover every item
        user = request["messages"][1]["content"]
        items = re.findall(r"^(\d+)\. ", user.split("Key points:")[1], flags=re.MULTILINE)
        return json.dumps(
            [{"index": int(i), "point": "p", "covered": True, "reason": "r"} for i in items]
        )
    return "pong"


def test_dspy_lm_and_chat_openai_share_the_endpoint_then_bench_scores(tmp_path) -> None:
    with start_fake_openai(scripted) as fake:
        lm = make_lm("fake-model", base_url=fake.base_url)
        assert lm("ping")[0] == "pong"
        dspy_request = fake.chat_requests[-1]
        assert dspy_request["model"] == "fake-model"

        settings = MemFuseSettings(llm_model="fake-model", llm_base_url=fake.base_url)
        answer = read_answer(
            ["[2024-03-04 07:00:00] [watch] [home] ok"],
            question="ping?",
            questioner="Lucy",
            question_time=datetime(2024, 3, 5),
            settings=settings,
        )
        assert answer == "pong"
        assert len(fake.chat_requests) == 2 and fake.chat_requests[-1]["temperature"] == 1

        bench = run_bench(
            write_tiny_bench(tmp_path / "tiny.json"),
            systems=["memfuse"],
            k=5,
            limit=3,
            out_dir=tmp_path / "out",
            data_dir=tmp_path / "stores",
            progress=False,
            llm=settings,
            settings=MemFuseSettings(),
            embedder=BagOfWordsEmbedder(),
            retry=RetryPolicy(base_delay=0.0),
        )
    overall = bench.results["systems"]["memfuse"]["overall"]
    assert overall["n_questions"] == 3
    assert overall["checklist_score"] == 1.0 and overall["unscorable"] == 0
    assert len(fake.chat_requests) == 2 + 2 * 3  # then one reader + one judge call per question
