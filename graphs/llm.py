"""The fixed-prompt LLM plumbing shared by the reader (graphs) and the judge (eval).

Both are fixed prompts (not DSPy programs: the metric must not be optimised), sent
through langchain-openai to any OpenAI-compatible endpoint. The client's own
retries are switched off so that one policy (`signatures.retry.RetryPolicy`: the settings'
retry budget by default, the paper's 8 retries when a benchmark passes it) governs them,
shared with the DSPy decisions, testable with a fast, injectable delay. The model name is
the endpoint name of `signatures.lm.model_names`, the one DSPy sends too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import openai
from langchain_core.messages import BaseMessage
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from memory.errors import ConfigurationError
from signatures.lm import DEFAULT_PROVIDER, DEFAULT_TIMEOUT_S, model_names
from signatures.retry import (
    LLMProviderError,  # noqa: F401 — re-exported: the reader's and eval's error type
    RetryPolicy,
    call_with_retries,
    endpoint_key,
)

PROMPTS_DIR = Path(__file__).parent / "prompts"
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
T = TypeVar("T")


@dataclass(frozen=True)
class LLMRole:
    """One fixed-prompt caller: which model, with what sampling, under which retry policy."""

    name: str
    model: str
    base_url: str | None
    api_key: str
    temperature: float
    max_tokens: int
    timeout_s: float = DEFAULT_TIMEOUT_S
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    @property
    def endpoint(self) -> str:
        return endpoint_key(self.base_url, self.model)

    def chat_model(self) -> ChatOpenAI:
        return ChatOpenAI(
            model=self.model,
            base_url=self.base_url,
            api_key=SecretStr(self.api_key),
            temperature=self.temperature,
            max_tokens=self.max_tokens,  # type: ignore[call-arg]  # pydantic alias of max_completion_tokens
            timeout=self.timeout_s,
            max_retries=0,
            use_responses_api=False,
        )


def reader_role(settings: Any, retry: RetryPolicy | None = None) -> LLMRole:
    """Answer generation: temperature 1, 2,048 output tokens (paper, Appendix D); `retry`
    defaults to the settings' retry budget."""
    return llm_role("reader", settings, temperature=1.0, max_tokens=2048, retry=retry)


def llm_role(
    name: str,
    settings: Any,
    temperature: float,
    max_tokens: int,
    retry: RetryPolicy | None,
) -> LLMRole:
    if not settings.llm_model:
        raise ConfigurationError(
            f"the {name} needs an LLM: set MEMFUSE_LLM_MODEL (and MEMFUSE_LLM_BASE_URL)"
        )
    names = model_names(settings.llm_model, getattr(settings, "llm_provider", DEFAULT_PROVIDER))
    return LLMRole(
        name=name,
        model=names.endpoint,
        base_url=settings.llm_base_url,
        api_key=settings.llm_key(),
        temperature=temperature,
        max_tokens=max_tokens,
        timeout_s=float(getattr(settings, "llm_timeout_seconds", DEFAULT_TIMEOUT_S)),
        retry=retry or RetryPolicy.from_settings(settings),
    )


def is_retryable(exc: Exception) -> bool:
    """Connection problems, timeouts, rate limits and 5xx are transient; other 4xx are not."""
    if isinstance(exc, openai.APIConnectionError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, openai.APIError)


def with_retries(role: LLMRole, call: Callable[[], T]) -> T:
    """Run `call` under the role's retry policy (see `signatures.retry.call_with_retries`)."""
    return call_with_retries(
        role.name,
        call,
        role.retry,
        errors=(openai.APIError,),
        transient=is_retryable,
        endpoint=role.endpoint,
    )


def complete(role: LLMRole, messages: list[BaseMessage], model: ChatOpenAI | None = None) -> str:
    """One chat completion under the role's retry policy; returns the text content."""
    chat = model or role.chat_model()
    reply = with_retries(role, lambda: chat.invoke(messages))
    content = reply.content
    if isinstance(content, list):  # content blocks: keep the text parts
        content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def load_prompt(name: str, directory: Path = PROMPTS_DIR) -> str:
    """A prompt template file (kept as files so they can be read and diffed)."""
    path = directory / name
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        raise ConfigurationError(f"prompt template {name!r} is missing from {directory}") from None


def render(template: str, **values: object) -> str:
    """Fill `{name}` placeholders. Only lowercase identifiers are placeholders, so JSON
    examples in a template need no escaping; a placeholder without a value is an error."""
    missing = sorted(set(_PLACEHOLDER.findall(template)) - set(values))
    if missing:
        raise ConfigurationError(f"prompt placeholder(s) without a value: {', '.join(missing)}")
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)
