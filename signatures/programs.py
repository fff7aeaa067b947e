"""Optimised decisions at run time: compiled DSPy programs and tuned offline policies.

`memfuse optimize` writes two kinds of files, each with a `<name>.manifest.json` next to it:

- a compiled DSPy program (state-only JSON, `module.save(path)`) for one decision target —
  `planner` (`PlanRetrievalRound`), `judge` (`JudgeEvidence`) or `fusion` (the fusion agent's
  `ChooseFusionAction` + `ProposeFusionPlan`);
- a tuned policy (a JSON of config overrides) for an offline twin — `planner` (search config
  and offline planner overrides) or `fusion` (`FusionPolicyConfig` overrides).

The graphs ask this module for a decision instead of building the plain one. Where a file is
found: an explicit per-target path (`MEMFUSE_PLANNER_PROGRAM`, `MEMFUSE_JUDGE_PROGRAM`,
`MEMFUSE_FUSION_PROGRAM`, `MEMFUSE_PLANNER_POLICY`, `MEMFUSE_FUSION_POLICY`), else the file
under its standard name in `MEMFUSE_PROGRAMS_DIR`, else nothing (the plain decision).
In-process callers (the optimizer's students and grid points) override both with
`using_programs(...)` / `using_policies(...)`, which are context-local.

A program is tied to the signature it was compiled for: its manifest records a version made of
the signature's field names and a hash of its code instructions. Optimizers rewrite
instructions and demos, never field names, so a program whose version differs from the code's
would be read into the wrong fields; it is refused with a `ProgramVersionError`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import dspy
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memory.errors import ConfigurationError, ProgramVersionError
from memory.search.config import SearchConfig
from memory.settings import MemFuseSettings, load_settings
from signatures.planning_offline import OfflinePlannerConfig

ProgramTarget = Literal["planner", "judge", "fusion"]
PolicyTarget = Literal["planner", "fusion"]
PROGRAM_TARGETS: tuple[str, ...] = ("planner", "judge", "fusion")
POLICY_TARGETS: tuple[str, ...] = ("planner", "fusion")
MANIFEST_SUFFIX = ".manifest.json"


def _round_planner() -> dspy.Module:
    from signatures.planning import RoundPlanner

    return RoundPlanner()


def _evidence_judge() -> dspy.Module:
    from signatures.evidence import EvidenceJudge

    return EvidenceJudge()


def _fusion_agent() -> dspy.Module:
    from signatures.fusion import FusionAgentProgram  # pulls in memory.fusion: only when asked

    return FusionAgentProgram()


@dataclass(frozen=True)
class ProgramSpec:
    """One optimisable LLM decision: its standard file name and how to build the plain module."""

    target: str
    filename: str
    build: Callable[[], dspy.Module]


PROGRAMS: dict[str, ProgramSpec] = {
    "planner": ProgramSpec("planner", "plan_retrieval_round.json", _round_planner),
    "judge": ProgramSpec("judge", "judge_evidence.json", _evidence_judge),
    "fusion": ProgramSpec("fusion", "fusion_agent.json", _fusion_agent),
}
POLICY_FILES: dict[str, str] = {"planner": "planner_policy.json", "fusion": "fusion_policy.json"}


# Where compiled programs and tuned policies are read from: the `programs_dir`,
# `*_program` and `*_policy` fields of the one settings class.
ProgramPaths = MemFuseSettings


@lru_cache(maxsize=1)
def environment_paths() -> MemFuseSettings:
    """The `MEMFUSE_*` program settings, read once per process."""
    return load_settings()


def _check_target(target: str, known: tuple[str, ...], what: str) -> None:
    if target not in known:
        raise ConfigurationError(
            f"unknown {what} target {target!r} (expected one of: {', '.join(known)})"
        )


# --- signature versions ---------------------------------------------------------------------


def signature_version(signature: type[dspy.Signature]) -> str:
    """`Name:field,field->field@hash12`: field names (with their role) and the code's
    instructions. Two signatures share a version only when a saved state maps field for field."""
    inputs = ",".join(signature.input_fields)
    outputs = ",".join(signature.output_fields)
    digest = hashlib.sha256(
        json.dumps(
            [list(signature.input_fields), list(signature.output_fields), signature.instructions]
        ).encode()
    ).hexdigest()[:12]
    return f"{signature.__name__}:{inputs}->{outputs}@{digest}"


def predictor_versions(module: dspy.Module) -> dict[str, str]:
    """Predictor name → signature version of each predictor of a (plain) module."""
    return {name: signature_version(p.signature) for name, p in module.named_predictors()}


def program_version(module: dspy.Module) -> str:
    """One version string for a whole module (its predictors' versions, in order)."""
    return " + ".join(f"{name}={v}" for name, v in predictor_versions(module).items())


def target_version(target: str) -> str:
    """The version a program for `target` must have been compiled for (from the plain code)."""
    _check_target(target, PROGRAM_TARGETS, "program")
    return program_version(PROGRAMS[target].build())


def manifest_path(path: str | Path) -> Path:
    """`programs/x.json` → `programs/x.manifest.json`."""
    path = Path(path)
    return path.with_name(path.stem + MANIFEST_SUFFIX)


# --- loading programs -----------------------------------------------------------------------


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        problem = exc.strerror or exc
        raise ConfigurationError(f"cannot read {what} {str(path)!r}: {problem}") from None
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{what} {str(path)!r} is not valid JSON: {exc}") from None


def check_compatible(target: str, path: Path, plain: dspy.Module) -> None:
    """Refuse a program compiled for another signature version.

    With a manifest, its recorded version must equal the code's. A bare DSPy state (saved
    without `memfuse optimize`) carries no field names, only field prefixes in order; it must
    name the same predictors with the same prefixes.
    """
    expected = program_version(plain)
    manifest = manifest_path(path)
    if manifest.is_file():
        saved = _read_json(manifest, "program manifest").get("signature_version")
        if saved != expected:
            raise ProgramVersionError(str(path), str(saved), expected)
        return
    state = _read_json(path, "program")
    for name, predictor in plain.named_predictors():
        fields = (state.get(name) or {}).get("signature", {}).get("fields")
        prefixes = [f.get("prefix") for f in fields] if isinstance(fields, list) else None
        wanted = [f.json_schema_extra["prefix"] for f in predictor.signature.fields.values()]
        if prefixes != wanted:
            found = f"fields {prefixes}" if prefixes is not None else "no such predictor"
            raise ProgramVersionError(
                str(path), f"{name}: {found}", f"{name}: fields {wanted} (no manifest found)"
            )


def load_program(target: str, path: str | Path) -> dspy.Module:
    """The plain module of `target` with the saved state at `path`, after the version check."""
    _check_target(target, PROGRAM_TARGETS, "program")
    path = Path(path)
    if not path.is_file():
        raise ConfigurationError(f"no compiled {target} program at {str(path)!r}")
    module = PROGRAMS[target].build()
    check_compatible(target, path, module)
    module.load(str(path))
    return module


@lru_cache(maxsize=32)
def _load_cached(target: str, path: str, mtime_ns: int) -> dspy.Module:
    return load_program(target, path)


def program_path(
    target: str, programs_dir: str | Path | None = None, paths: ProgramPaths | None = None
) -> Path | None:
    """The compiled program file for `target`: explicit path, else the programs dir's file."""
    _check_target(target, PROGRAM_TARGETS, "program")
    paths = paths or environment_paths()
    explicit = getattr(paths, f"{target}_program")
    if explicit is not None:
        return Path(explicit)
    folder = programs_dir or paths.programs_dir
    if folder:
        candidate = Path(folder) / PROGRAMS[target].filename
        if candidate.is_file():
            return candidate
    return None


_ACTIVE_PROGRAMS: ContextVar[Mapping[str, dspy.Module]] = ContextVar(
    "memfuse_active_programs", default=MappingProxyType({})
)


@contextmanager
def using_programs(**modules: dspy.Module) -> Iterator[None]:
    """Use these modules for their targets in this context (thread- and task-local)."""
    for target in modules:
        _check_target(target, PROGRAM_TARGETS, "program")
    token = _ACTIVE_PROGRAMS.set({**_ACTIVE_PROGRAMS.get(), **modules})
    try:
        yield
    finally:
        _ACTIVE_PROGRAMS.reset(token)


def program_for(target: str, programs_dir: str | Path | None = None) -> dspy.Module:
    """The module deciding `target` now: an active override, a saved program, or the plain one.

    Saved programs are cached per (path, modification time), so an optimisation that writes
    a new file is picked up without a restart; the plain module is built fresh each call.
    """
    active = _ACTIVE_PROGRAMS.get().get(target)
    if active is not None:
        return active
    path = program_path(target, programs_dir)
    if path is None:
        return PROGRAMS[target].build()
    if not path.is_file():
        raise ConfigurationError(f"no compiled {target} program at {str(path)!r}")
    return _load_cached(target, str(path.resolve()), path.stat().st_mtime_ns)


# --- tuned offline policies -----------------------------------------------------------------


def _validated(overrides: Mapping[str, Any], model: type[BaseModel], what: str) -> dict[str, Any]:
    """Overrides whose names are fields of `model` and whose values it accepts."""
    unknown = sorted(set(overrides) - set(model.model_fields))
    if unknown:
        raise ConfigurationError(
            f"{what}: unknown field(s) {', '.join(unknown)} (not in {model.__name__})"
        )
    try:
        model(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigurationError(f"{what}: {where}: {first['msg']}") from None
    return dict(overrides)


class PlannerPolicy(BaseModel):
    """Overrides found by the planner grid: search-config fields and offline-planner fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    search: dict[str, Any] = Field(default_factory=dict, description="SearchConfig overrides.")
    planner: dict[str, Any] = Field(
        default_factory=dict, description="OfflinePlannerConfig overrides."
    )

    def model_post_init(self, _: Any) -> None:
        _validated(self.search, SearchConfig, "planner policy 'search'")
        _validated(self.planner, OfflinePlannerConfig, "planner policy 'planner'")

    def apply(self, config: SearchConfig) -> SearchConfig:
        return config.with_(**self.search) if self.search else config

    def planner_config(self) -> OfflinePlannerConfig:
        return OfflinePlannerConfig(**self.planner)

    def key(self) -> str:
        """A hashable canonical form (caches keyed by policy)."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True)

    @classmethod
    def from_key(cls, key: str) -> PlannerPolicy:
        return cls(**json.loads(key)) if key else cls()


class FusionPolicy(BaseModel):
    """Overrides found by the fusion grid: `FusionPolicyConfig` fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: dict[str, Any] = Field(
        default_factory=dict, description="FusionPolicyConfig overrides."
    )

    def model_post_init(self, _: Any) -> None:
        from signatures.fusion_offline import FusionPolicyConfig

        _validated(self.policy, FusionPolicyConfig, "fusion policy")

    def key(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True)


POLICY_MODELS: dict[str, type[BaseModel]] = {"planner": PlannerPolicy, "fusion": FusionPolicy}


def load_policy(target: str, path: str | Path) -> BaseModel:
    """A tuned policy file (`{"search": {...}, "planner": {...}}` or `{"policy": {...}}`)."""
    _check_target(target, POLICY_TARGETS, "policy")
    raw = _read_json(Path(path), f"{target} policy")
    if not isinstance(raw, dict):
        raise ConfigurationError(f"{target} policy {str(path)!r}: expected a JSON object")
    try:
        return POLICY_MODELS[target](**raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        problem = f"{where}: {first['msg']}"
        raise ConfigurationError(f"{target} policy {str(path)!r}: {problem}") from None


@lru_cache(maxsize=len(POLICY_MODELS))
def _default_policy(target: str) -> BaseModel:
    """The shipped defaults, built once and shared (policies are frozen, as a loaded one is
    shared by `_policy_cached`): fusion asks for its policy on every event."""
    return POLICY_MODELS[target]()


@lru_cache(maxsize=32)
def _policy_cached(target: str, path: str, mtime_ns: int) -> BaseModel:
    return load_policy(target, path)


def policy_path(
    target: str, programs_dir: str | Path | None = None, paths: ProgramPaths | None = None
) -> Path | None:
    _check_target(target, POLICY_TARGETS, "policy")
    paths = paths or environment_paths()
    explicit = getattr(paths, f"{target}_policy")
    if explicit is not None:
        return Path(explicit)
    folder = programs_dir or paths.programs_dir
    if folder:
        candidate = Path(folder) / POLICY_FILES[target]
        if candidate.is_file():
            return candidate
    return None


_ACTIVE_POLICIES: ContextVar[Mapping[str, BaseModel]] = ContextVar(
    "memfuse_active_policies", default=MappingProxyType({})
)


@contextmanager
def using_policies(
    planner: PlannerPolicy | None = None, fusion: FusionPolicy | None = None
) -> Iterator[None]:
    """Use these tuned policies in this context (grid points are evaluated this way)."""
    chosen = {k: v for k, v in {"planner": planner, "fusion": fusion}.items() if v is not None}
    token = _ACTIVE_POLICIES.set({**_ACTIVE_POLICIES.get(), **chosen})
    try:
        yield
    finally:
        _ACTIVE_POLICIES.reset(token)


def _policy_for(target: str, programs_dir: str | Path | None) -> BaseModel:
    active = _ACTIVE_POLICIES.get().get(target)
    if active is not None:
        return active
    path = policy_path(target, programs_dir)
    if path is None:
        return _default_policy(target)
    if not path.is_file():
        raise ConfigurationError(f"no {target} policy at {str(path)!r}")
    return _policy_cached(target, str(path.resolve()), path.stat().st_mtime_ns)


def planner_policy(programs_dir: str | Path | None = None) -> PlannerPolicy:
    """The planner policy in force (empty overrides = the shipped defaults)."""
    policy = _policy_for("planner", programs_dir)
    assert isinstance(policy, PlannerPolicy)
    return policy


def fusion_policy(programs_dir: str | Path | None = None) -> FusionPolicy:
    """The fusion policy in force (empty overrides = the shipped defaults)."""
    policy = _policy_for("fusion", programs_dir)
    assert isinstance(policy, FusionPolicy)
    return policy
