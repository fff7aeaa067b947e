"""Token counting with tiktoken's cl100k_base, offline when possible.

tiktoken downloads its BPE file on first use. LiteLLM ships a copy of cl100k_base under
the cache name tiktoken expects, so when it is installed the encoding loads without
network (tiktoken verifies the file's SHA-256). Without any copy and without network we
fall back to a character-based estimate and say so.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

CL100K_CACHE_NAME = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"  # sha1 of tiktoken's cl100k URL


def _bundled_cache_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return folder if (folder / CL100K_CACHE_NAME).is_file() else None


@lru_cache(maxsize=1)
def counter() -> tuple[Callable[[str], int], str]:
    """(count_tokens, description of the tokenizer actually used)."""
    try:
        import tiktoken
    except ImportError:
        return _estimate, "estimate (len/4): tiktoken is not installed"
    bundled = _bundled_cache_dir()
    if bundled is not None and "TIKTOKEN_CACHE_DIR" not in os.environ:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)
        try:
            enc = tiktoken.get_encoding("cl100k_base")
            return (
                lambda text: len(enc.encode(text, disallowed_special=()))
            ), "cl100k_base (tiktoken, offline copy bundled with litellm)"
        except Exception:  # noqa: BLE001 - a damaged copy falls through to the normal path
            bundled = None
        finally:
            del os.environ["TIKTOKEN_CACHE_DIR"]
    try:
        enc = tiktoken.get_encoding("cl100k_base")
        return (lambda text: len(enc.encode(text, disallowed_special=()))), "cl100k_base (tiktoken)"
    except Exception as exc:  # noqa: BLE001 - no cached file and no network
        return (
            _estimate,
            f"estimate (len/4): cl100k_base unavailable offline ({type(exc).__name__})",
        )


def _estimate(text: str) -> int:
    return max(1, round(len(text) / 4))
