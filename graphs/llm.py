"""The fixed-prompt LLM plumbing shared by the reader (graphs) and the judge (eval).

Both are fixed prompts (not DSPy programs: the metric must not be optimised), sent
through langchain-openai to any OpenAI-compatible endpoint. The client's own
retries are switched off so that the paper's policy (up to 8 retries on provider
errors, exponential backoff) lives in one place and can be tested with a fast,
injectable delay.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import openai
from langchain_core.messages import BaseMessage
from langchain_openai import ChatOpenAI

from memory.errors import ConfigurationError, MemFuseError

PROMPTS_DIR = Path(__file__).parent / "prompts"
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
T = TypeVar("T")


class LLMProviderError(MemFuseError):
    """The endpoint kept failing (or refused the request) after the allowed retries."""

    def __init__(self, role: str, attempts: int, cause: Exception):
        self.role, self.attempts, self.cause = role, attempts, cause
        detail = " ".join(str(cause).split())[:200]
        super().__init__(
            f"{role}: provider error after {attempts} attempt(s): {type(cause).__name__}: {detail}"
        )




@dataclass(frozen=True)
class RetryPolicy:
    """Provider-error retries: delay = base_delay · 2^attempt, capped at max_delay."""

    retries: int = 8
    base_delay: float = 1.0
    max_delay: float = 60.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def delay(self, attempt: int) -> float:
        return min(self.base_delay * (2**attempt), self.max_delay)


@dataclass(frozen=True)
class LLMRole:
    """One fixed-prompt caller: which model, with what sampling, under which retry policy."""

    name: str
    model: str
    base_url: str | None
    api_key: str
    temperature: float
    max_tokens: int
    timeout_s: float = 120.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def chat_model(self) -> ChatOpenAI:
        return ChatOpenAI(
            model=self.model,
            base_url=self.base_url,
            api_key=self.api_key,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            timeout=self.timeout_s,
            max_retries=0,
            use_responses_api=False,
        )


def reader_role(settings: Any, retry: RetryPolicy | None = None) -> LLMRole:
    """Answer generation: temperature 1, 2,048 output tokens (paper, Appendix D)."""
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
    return LLMRole(
        name=name,
        model=settings.llm_model,
        base_url=settings.llm_base_url,
        api_key=settings.llm_key(),
        temperature=temperature,
        max_tokens=max_tokens,
        retry=retry or RetryPolicy(),
    )


def is_retryable(exc: Exception) -> bool:
    """Connection problems, timeouts, rate limits and 5xx are transient; other 4xx are not."""
    if isinstance(exc, openai.APIConnectionError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, openai.APIError)


def with_retries(role: LLMRole, call: Callable[[], T]) -> T:
    """Run `call`, retrying transient provider errors up to `role.retry.retries` times."""
    policy = role.retry
    for attempt in range(policy.retries + 1):
        try:
            return call()
        except openai.APIError as exc:
            if not is_retryable(exc) or attempt == policy.retries:
                raise LLMProviderError(role.name, attempt + 1, exc) from exc
            policy.sleep(policy.delay(attempt))
    raise AssertionError("unreachable")  # the loop always returns or raises


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
        raise ConfigurationError(
            f"prompt template {name!r} is missing from {directory}"
        ) from None


def render(template: str, **values: object) -> str:
    """Fill `{name}` placeholders. Only lowercase identifiers are placeholders, so JSON
    examples in a template need no escaping; a placeholder without a value is an error."""
    missing = sorted(set(_PLACEHOLDER.findall(template)) - set(values))
    if missing:
        raise ConfigurationError(f"prompt placeholder(s) without a value: {', '.join(missing)}")
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)
