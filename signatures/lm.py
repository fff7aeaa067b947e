"""The one place that turns settings into a DSPy language model, and the rules every LLM call
of MemFuse shares: how a model name reaches the server, how long a failing call may retry,
and how a decision says who made it.

Decisions run on the configured OpenAI-compatible endpoint when there is one and on their
offline twins when there is none; graphs ask `decision_lm()` which it is.

**Model names.** `MEMFUSE_LLM_MODEL` is the name the *server* knows (`gpt-4o-mini`,
`Qwen/Qwen2.5-7B-Instruct`). LiteLLM (under DSPy) reads the text before the first `/` as a
provider, so DSPy is given `<provider>/<name>` (`MEMFUSE_LLM_PROVIDER`, default `openai`: any
OpenAI-compatible endpoint) and sends `<name>`; the reader (langchain-openai) sends `<name>`
itself. A name that already starts with `<provider>/` has that prefix taken off first, so
`openai/gpt-4o-mini` and `gpt-4o-mini` are the same model; a served name that itself starts
with `openai/` (`openai/gpt-oss-20b` on vLLM) is written with the prefix twice.

**Retries.** The DSPy LM retries under the same budgeted policy as the reader
(`signatures.retry`), not under DSPy's own unbounded loop.

**Who decided.** Every decision records `llm`, `offline` (no LLM in play) or
`offline fallback: <why>` (the LLM's decision could not be used and the twin's was taken).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import dspy
from dspy.utils.exceptions import AdapterParseError, LMError, is_retryable_lm_error

from memory.errors import ConfigurationError
from memory.settings import MemFuseSettings
from signatures.retry import (
    LLMProviderError,
    RetryPolicy,
    call_with_retries,
    endpoint_key,
    one_line,
)

# LiteLLM (under DSPy) otherwise downloads a model-cost map on the first call; every decision
# LM is built here, so setting the default on import keeps MemFuse offline.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

DEFAULT_PROVIDER = str(MemFuseSettings.model_fields["llm_provider"].default)
DEFAULT_TIMEOUT_S = float(
    MemFuseSettings.model_fields["llm_timeout_seconds"].default
)  # one attempt

# --- who decided -------------------------------------------------------------------------

DECIDED_BY_LLM = "llm"
DECIDED_OFFLINE = "offline"  # no LLM in play: the offline twin is the configured policy


def offline_fallback(reason: str) -> str:
    """The provenance of a decision the offline twin made because the LLM's could not be used."""
    return f"offline fallback: {reason}"


def describe_failure(exc: BaseException) -> str:
    """Why an LLM decision could not be used, in one line a user can act on."""
    if isinstance(exc, LLMProviderError):
        return one_line(str(exc))
    if isinstance(exc, AdapterParseError):
        expected = ", ".join(getattr(exc.signature, "output_fields", {}) or ()) or "?"
        parsed = exc.parsed_result
        got = ", ".join(parsed) if isinstance(parsed, dict) and parsed else "none"
        reply = one_line(str(exc.lm_response or ""), 80) or "(empty)"
        return f"LLM output unusable (expected fields {expected}; parsed {got}; reply: {reply!r})"
    return one_line(f"{type(exc).__name__}: {exc}")


# --- model names ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelNames:
    """One configured model, as each client must be given it (see the module docstring)."""

    endpoint: str
    """What the server receives, and what langchain-openai is given."""
    litellm: str
    """What DSPy/LiteLLM is given: `<provider>/<endpoint>`; LiteLLM sends `endpoint`."""


def model_names(model: str, provider: str | None = DEFAULT_PROVIDER) -> ModelNames:
    """Both clients' names for one configured model, so that they send the same string."""
    route = (provider or DEFAULT_PROVIDER).strip()
    if not route or "/" in route:
        raise ConfigurationError(
            f"MEMFUSE_LLM_PROVIDER: expected a LiteLLM provider such as 'openai', got {provider!r}"
        )
    name = (model or "").strip()
    if name.startswith(f"{route}/"):
        name = name[len(route) + 1 :]
    if not name:
        raise ConfigurationError(
            f"an LLM model name is required for the LLM path (set MEMFUSE_LLM_MODEL), got {model!r}"
        )
    return ModelNames(endpoint=name, litellm=f"{route}/{name}")


# --- the DSPy LM ------------------------------------------------------------------------------


class BudgetedLM(dspy.LM):
    """A dspy.LM that retries under a `RetryPolicy` instead of DSPy's own loop (which waits
    1, 2, 4… s with no time limit), so decisions and the reader share one budget rule.
    MemFuse calls it synchronously; `acall` (unused here) makes one attempt."""

    def __init__(self, model: str, *, retry: RetryPolicy, endpoint: str, **kwargs: Any):
        super().__init__(model, num_retries=0, **kwargs)
        self.retry = retry
        self.endpoint = endpoint

    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        parent = super().__call__
        return call_with_retries(
            "decision LM",
            lambda: parent(prompt, messages=messages, **kwargs),
            self.retry,
            errors=(LMError,),
            transient=is_retryable_lm_error,
            endpoint=self.endpoint,
        )


def make_lm(
    model: str,
    base_url: str | None = None,
    api_key: str | None = None,
    temperature: float = 1.0,
    max_tokens: int = 4096,
    cache: bool = False,
    *,
    provider: str | None = DEFAULT_PROVIDER,
    retry: RetryPolicy | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> dspy.LM:
    """A DSPy LM on an OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, a local fake server).

    The name goes through `model_names` so that DSPy sends what the reader sends; DSPy's
    cache is off by default so that benchmark runs at temperature 1 are not silently replayed.
    """
    names = model_names(model, provider)
    kwargs: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens, "cache": cache}
    if base_url:
        kwargs["api_base"] = base_url
    kwargs["api_key"] = api_key or "not-needed"
    return BudgetedLM(
        names.litellm,
        retry=retry or RetryPolicy.from_settings(None),
        endpoint=endpoint_key(base_url, names.endpoint),
        timeout=timeout_s,
        **kwargs,
    )


def lm_from_settings(settings: Any) -> dspy.LM | None:
    """The decision LM for a MemFuseSettings-like object, or None in offline mode."""
    if not getattr(settings, "llm_model", None):
        return None
    return make_lm(
        settings.llm_model,
        base_url=settings.llm_base_url,
        api_key=settings.llm_key(),
        temperature=settings.llm_temperature,
        max_tokens=settings.llm_max_tokens,
        provider=getattr(settings, "llm_provider", DEFAULT_PROVIDER),
        retry=RetryPolicy.from_settings(settings),
        timeout_s=float(getattr(settings, "llm_timeout_seconds", DEFAULT_TIMEOUT_S)),
    )


def lm_settings_key(settings: Any) -> tuple[Any, ...]:
    """What makes two settings objects build the same decision LM (for per-process caches)."""
    names = (
        "llm_model",
        "llm_provider",
        "llm_base_url",
        "llm_temperature",
        "llm_max_tokens",
        "llm_retries",
        "llm_retry_seconds",
        "llm_timeout_seconds",
    )
    return (*(getattr(settings, n, None) for n in names), settings.llm_key())
