"""MemFuse settings: `MEMFUSE_*` environment variables and an optional `.env` file.

The one settings class of the project, in the bottom layer so that every layer (the store,
the decision programs, the graphs, the API and the CLI) reads the same values the same way.

Every field has a default that works on a fresh machine with no network: an
embedded Chroma under the data directory, the bundled MiniLM embedding model, and
no LLM (offline mode: every decision runs its deterministic twin).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class MemFuseSettings(BaseSettings):
    """Process-wide configuration; CLI flags override it, it overrides the defaults."""

    model_config = SettingsConfigDict(env_prefix="MEMFUSE_", env_file=".env", extra="ignore")

    data_dir: Path = Field(
        default=Path(".memfuse"), description="Where stores, caches and logs live."
    )
    namespace: str = Field(default="default", description="Store namespace inside the data dir.")
    user: str | None = Field(
        default=None,
        description="Who asks when a read names nobody (`--user`): reads see only the events "
        "this person may see. Unset: every read must name a user or be an explicit admin read.",
    )
    store_owners: Literal["last", "first", "none"] = Field(
        default="last",
        description="Which label of a LangGraph store namespace names the person who owns the "
        "items written there (`memfuse.langgraph_store`): the last, as in ('memories', 'Anna'), "
        "the first, as in ('Anna', 'memories'), or none (every item is the household's).",
    )
    served_write_wait_seconds: float = Field(
        default=10.0,
        ge=0,
        description="How long a write through a served graph (`langgraph dev`) waits for the "
        "data dir's writer lock while another writer (a CLI ingest) holds it, before failing "
        "with a one-line 'busy' error.",
    )
    visibility_policy: Path | None = Field(
        default=None,
        description="JSON rules deriving each new event's visibility (see memory.visibility); "
        "unset: <data dir>/visibility.json when it exists, else the built-in defaults.",
    )

    chroma_host: str | None = Field(
        default=None, description="Chroma server host; unset = embedded Chroma."
    )
    chroma_port: int = Field(default=8000, description="Chroma server port.")
    database_url: str | None = Field(
        default=None,
        description="PostgreSQL server for events, fused nodes, edges, plan log, audit log and "
        "writer lock (`postgresql://user:password@host:5432/db`; one schema per namespace, so "
        "many households share one server); unset = the SQLite file in the data dir.",
    )

    embedding_provider: str = Field(
        default="sentence-transformers",
        description="`sentence-transformers`, `openai` (any compatible endpoint), or `hashing` "
        "(no model: hashed words, for measuring the store at scale; see "
        "memory.embeddings.HashingEmbedder).",
    )
    embedding_model: str = Field(
        default="all-MiniLM-L6-v2",
        description="Bundled offline default; any sentence-transformers name (e.g. BAAI/bge-m3) "
        "or endpoint model.",
    )
    embedding_base_url: str | None = Field(
        default=None, description="Embedding endpoint (openai provider)."
    )
    embedding_api_key: SecretStr | None = Field(default=None, description="Embedding endpoint key.")
    embedding_precision: Literal["auto", "float32", "bfloat16"] = Field(
        default="auto",
        description="Arithmetic of a local model on the CPU: `auto` = bfloat16 where the CPU "
        "does it natively (2.6x faster MiniLM, vectors within cosine 0.9999 of float32), "
        "float32 elsewhere; see memory.embeddings.EmbeddingConfig.precision.",
    )
    embedding_runtime: Literal["auto", "torch", "onnx"] = Field(
        default="auto",
        description="What runs a local model's small calls (a question, a plan's rewrites): "
        "`auto` = onnxruntime on the model exported once where that works, else torch; see "
        "memory.embeddings.EmbeddingConfig.runtime.",
    )

    llm_model: str | None = Field(
        default=None, description="Chat model name; unset = offline mode."
    )
    llm_base_url: str | None = Field(
        default=None, description="OpenAI-compatible base URL (vLLM, Ollama…)."
    )
    llm_api_key: SecretStr | None = Field(default=None, description="Key for the LLM endpoint.")
    llm_temperature: float = Field(
        default=1.0, description="Temperature of MemFuse's own decisions (paper: 1)."
    )
    llm_max_tokens: int = Field(default=4096, description="Token limit of MemFuse's own decisions.")
    llm_provider: str = Field(
        default="openai",
        description="LiteLLM provider DSPy routes through; `openai` = any OpenAI-compatible "
        "endpoint. MEMFUSE_LLM_MODEL is the name the server knows (a leading `<provider>/` is "
        "dropped), so the reader and the decisions send the same model (see signatures/lm.py).",
    )
    llm_retries: int = Field(
        default=3, ge=0, description="Retries of one LLM call on transient errors (5xx, 429…)."
    )
    llm_retry_seconds: float = Field(
        default=30.0,
        gt=0,
        description="Retry budget of one LLM call: no retry starts later than this after the "
        "first attempt; an endpoint that gave up is then skipped for as long (at least 60 s). "
        "Raise it for long benchmark runs on rate-limited providers.",
    )
    llm_timeout_seconds: float = Field(
        default=120.0, gt=0, description="Timeout of one LLM request (one attempt)."
    )

    programs_dir: Path | None = Field(
        default=None,
        description="Folder holding compiled programs and policies under standard names.",
    )
    planner_program: Path | None = Field(default=None, description="Compiled planner program.")
    judge_program: Path | None = Field(default=None, description="Compiled evidence judge.")
    fusion_program: Path | None = Field(default=None, description="Compiled fusion agent.")
    planner_policy: Path | None = Field(default=None, description="Planner grid overrides.")
    fusion_policy: Path | None = Field(default=None, description="Fusion policy overrides.")

    @property
    def llm_enabled(self) -> bool:
        """True when an LLM is configured; otherwise every decision runs its offline twin."""
        return bool(self.llm_model)

    def llm_key(self) -> str:
        # OpenAI-compatible local servers accept any key; the client library insists on one.
        return self.llm_api_key.get_secret_value() if self.llm_api_key else "not-needed"

    def embedding_key(self) -> str | None:
        return self.embedding_api_key.get_secret_value() if self.embedding_api_key else None


def load_settings(**overrides: object) -> MemFuseSettings:
    """Settings from the environment, with explicit (non-None) overrides from the caller."""
    return MemFuseSettings.model_validate({k: v for k, v in overrides.items() if v is not None})
