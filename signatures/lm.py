"""The one place that turns settings into a DSPy language model.

Decisions run on the configured OpenAI-compatible endpoint when there is one and
on their offline twins when there is none; graphs ask `decision_lm()` which it is.
"""

from __future__ import annotations

import os
from typing import Any

import dspy

from memory.errors import ConfigurationError

# LiteLLM (under DSPy) otherwise downloads a model-cost map on the first call; every decision
# LM is built here, so setting the default on import keeps MemFuse offline.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def make_lm(
    model: str,
    base_url: str | None = None,
    api_key: str | None = None,
    temperature: float = 1.0,
    max_tokens: int = 4096,
    cache: bool = False,
) -> dspy.LM:
    """A DSPy LM on an OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, a local fake server).

    A bare model name is routed through LiteLLM's `openai/` provider so that any
    compatible base URL works; DSPy's cache is off by default so that benchmark
    runs at temperature 1 are not silently replayed.
    """
    if not model:
        raise ConfigurationError("an LLM model name is required for the LLM path (set MEMFUSE_LLM_MODEL)")
    name = model if "/" in model else f"openai/{model}"
    kwargs: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens, "cache": cache}
    if base_url:
        kwargs["api_base"] = base_url
    kwargs["api_key"] = api_key or "not-needed"
    return dspy.LM(name, **kwargs)


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
    )
