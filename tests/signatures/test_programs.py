"""Loading compiled programs and tuned policies at run time (signatures.programs)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import dspy
import pytest

from graphs.retrieval import nodes as retrieval_nodes
from memory.errors import ConfigurationError, ProgramVersionError
from memory.search.config import SearchConfig
from memory.search.plan import RoundPlan
from signatures import programs
from signatures.evidence import EvidenceJudge
from signatures.planning import PlanRetrievalRound, RoundPlanner
from signatures.planning_offline import OfflinePlannerConfig
from signatures.programs import (
    PlannerPolicy,
    ProgramPaths,
    load_program,
    manifest_path,
    program_for,
    program_path,
    signature_version,
    target_version,
    using_policies,
    using_programs,
)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No MEMFUSE_* program settings leak in; the cached environment read is reset."""
    for name in (
        "PROGRAMS_DIR",
        "PLANNER_PROGRAM",
        "JUDGE_PROGRAM",
        "FUSION_PROGRAM",
        "PLANNER_POLICY",
        "FUSION_POLICY",
    ):
        monkeypatch.delenv(f"MEMFUSE_{name}", raising=False)
    programs.environment_paths.cache_clear()
    with dspy.context(lm=None):
        yield
    programs.environment_paths.cache_clear()


def trained_planner(question: str = "Where was Tom on Tuesday?") -> dspy.Module:
    module = RoundPlanner()
    module.plan_round.demos = [
        dspy.Example(question=question, plan=RoundPlan(focus="Tom Tuesday")).with_inputs("question")
    ]
    return module


def save_with_manifest(module: dspy.Module, path: Path, version: str) -> Path:
    module.save(str(path))
    manifest_path(path).write_text(json.dumps({"signature_version": version}))
    return path


# --- versions ----------------------------------------------------------------------------


def test_version_names_the_fields_and_hashes_the_instructions() -> None:
    version = signature_version(PlanRetrievalRound)
    assert version.startswith(
        "PlanRetrievalRound:question,question_time,calendar,requester,known_people,"
        "known_devices,previous_plans,searched_queries->plan@"
    )
    assert len(version.rsplit("@", 1)[1]) == 12
    assert signature_version(PlanRetrievalRound) == version  # stable
    reworded = PlanRetrievalRound.with_instructions("Plan differently.")
    assert signature_version(reworded) != version


def test_a_renamed_field_changes_the_version() -> None:
    class Plain(dspy.Signature):
        """Answer."""

        question: str = dspy.InputField()
        answer: str = dspy.OutputField()

    class Renamed(dspy.Signature):
        """Answer."""

        query: str = dspy.InputField()
        answer: str = dspy.OutputField()

    assert (
        signature_version(Plain).split(":")[1]
        == "question->answer@" + (signature_version(Plain).rsplit("@", 1)[1])
    )
    assert signature_version(Plain) != signature_version(Renamed)


# --- loading ------------------------------------------------------------------------------


def test_a_program_loads_with_its_demos(tmp_path: Path) -> None:
    path = save_with_manifest(trained_planner(), tmp_path / "p.json", target_version("planner"))
    loaded = load_program("planner", path)
    assert [d["question"] for d in loaded.plan_round.demos] == ["Where was Tom on Tuesday?"]


def test_a_program_for_another_signature_version_is_refused(tmp_path: Path) -> None:
    path = save_with_manifest(trained_planner(), tmp_path / "p.json", "plan_round=Old@123")
    with pytest.raises(ProgramVersionError) as caught:
        load_program("planner", path)
    message = str(caught.value)
    assert "\n" not in message
    assert "plan_round=Old@123" in message and "re-run `memfuse optimize`" in message
    assert target_version("planner") in message


def test_a_bare_state_of_another_decision_is_refused(tmp_path: Path) -> None:
    """A judge's state saved without a manifest cannot be read into the planner."""
    path = tmp_path / "plan_retrieval_round.json"
    EvidenceJudge().save(str(path))
    with pytest.raises(ProgramVersionError, match="plan_round: no such predictor"):
        load_program("planner", path)


def test_a_bare_state_with_the_same_fields_loads(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    trained_planner().save(str(path))  # plain DSPy save, no manifest
    assert len(load_program("planner", path).plan_round.demos) == 1


def test_a_missing_program_file_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no compiled planner program at"):
        load_program("planner", tmp_path / "absent.json")


def test_where_programs_are_found(tmp_path: Path) -> None:
    folder = tmp_path / "programs"
    folder.mkdir()
    assert program_path("planner", folder, ProgramPaths()) is None  # nothing saved yet
    standard = folder / "plan_retrieval_round.json"
    save_with_manifest(trained_planner(), standard, target_version("planner"))
    assert program_path("planner", folder, ProgramPaths()) == standard
    explicit = tmp_path / "mine.json"
    assert program_path("planner", folder, ProgramPaths(planner_program=explicit)) == explicit
    assert program_path("judge", folder, ProgramPaths()) is None


def test_the_programs_dir_setting_is_read_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_with_manifest(
        trained_planner(), tmp_path / "plan_retrieval_round.json", target_version("planner")
    )
    monkeypatch.setenv("MEMFUSE_PROGRAMS_DIR", str(tmp_path))
    programs.environment_paths.cache_clear()
    assert len(program_for("planner").plan_round.demos) == 1
    assert program_for("judge").judge.demos == []


def test_an_override_wins_and_is_scoped(tmp_path: Path) -> None:
    save_with_manifest(
        trained_planner(), tmp_path / "plan_retrieval_round.json", target_version("planner")
    )
    mine = RoundPlanner()
    with using_programs(planner=mine):
        assert program_for("planner", tmp_path) is mine
    assert program_for("planner", tmp_path) is not mine
    with (
        pytest.raises(ConfigurationError, match="unknown program target 'reader'"),
        using_programs(reader=mine),
    ):
        pass


def test_the_retrieval_graph_asks_for_the_compiled_program(tmp_path: Path) -> None:
    save_with_manifest(
        trained_planner("q?"),
        tmp_path / retrieval_nodes.PROGRAM_FILES["plan"],
        target_version("planner"),
    )
    assert len(retrieval_nodes.llm_module("plan", str(tmp_path)).plan_round.demos) == 1
    refused = tmp_path / "refused"
    refused.mkdir()
    save_with_manifest(trained_planner(), refused / "plan_retrieval_round.json", "x@0")
    with pytest.raises(ProgramVersionError):
        retrieval_nodes.llm_module("plan", str(refused))


# --- tuned policies -----------------------------------------------------------------------------


def test_a_planner_policy_overrides_search_and_planner_fields() -> None:
    policy = PlannerPolicy(search={"seed_pool": 17}, planner={"quota_default": 9})
    assert policy.apply(SearchConfig()).seed_pool == 17
    assert policy.apply(SearchConfig()).dense_per_query == SearchConfig().dense_per_query
    assert policy.planner_config() == OfflinePlannerConfig(quota_default=9)
    assert PlannerPolicy.from_key(policy.key()) == policy
    config = retrieval_nodes.search_config("memfuse", 20, True, policy.key())
    assert (config.seed_pool, config.top_k) == (17, 20)


def test_a_policy_with_an_unknown_field_is_refused() -> None:
    unknown = r"unknown field\(s\) seeds \(not in SearchConfig\)"
    with pytest.raises(ConfigurationError, match=unknown):
        PlannerPolicy(search={"seeds": 3})
    with pytest.raises(ConfigurationError, match="seed_pool"):
        PlannerPolicy(search={"seed_pool": 0})


def test_policies_load_from_the_programs_dir_and_overrides_win(tmp_path: Path) -> None:
    (tmp_path / "planner_policy.json").write_text(json.dumps({"search": {"seed_pool": 21}}))
    assert programs.planner_policy(tmp_path).search == {"seed_pool": 21}
    assert programs.planner_policy(None) == PlannerPolicy()
    with using_policies(planner=PlannerPolicy(search={"seed_pool": 40})):
        assert programs.planner_policy(tmp_path).search == {"seed_pool": 40}
    (tmp_path / "fusion_policy.json").write_text(json.dumps({"policy": {"bogus": 1}}))
    with pytest.raises(ConfigurationError, match="unknown field"):
        programs.fusion_policy(tmp_path)
