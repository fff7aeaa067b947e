"""How long a failing LLM call may keep trying, shared by the DSPy decisions and the reader.

Each attempt may take `llm_timeout_seconds`; a transient failure (connection, timeout, 429,
5xx) is retried at most `llm_retries` times with waits of 1, 2, 4… s, and never once the time
since the first attempt plus the next wait would pass `llm_retry_seconds`. A call that gives up
marks its endpoint down for that many seconds, and at least `MIN_OUTAGE_S`: calls to it then
fail at once, so one outage costs one budget per question, not one per decision. Each retry and
each give-up is one warning line on the `memfuse.llm` logger (stderr when logging is not
configured), never a traceback.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from memory.errors import MemFuseError
from memory.settings import MemFuseSettings
from memory.text import single_line

# The interactive defaults: the settings' own, so there is one place to change them.
DEFAULT_RETRIES = int(MemFuseSettings.model_fields["llm_retries"].default)
DEFAULT_RETRY_SECONDS = float(MemFuseSettings.model_fields["llm_retry_seconds"].default)
MIN_OUTAGE_S = 60.0  # an outage outlives a small budget long enough to cover one question
LOG = logging.getLogger("memfuse.llm")
T = TypeVar("T")


def one_line(text: object, limit: int = 200) -> str:
    """Provider and model text (untrusted) as one short displayable line."""
    flat = single_line(str(text))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class LLMProviderError(MemFuseError):
    """The endpoint kept failing (or refused the request) after the allowed retries."""

    def __init__(self, role: str, attempts: int, cause: Exception, seconds: float | None = None):
        self.role, self.attempts, self.cause = role, attempts, cause
        spent = f" in {seconds:.1f}s" if seconds is not None else ""
        super().__init__(
            f"{role}: provider error after {attempts} attempt(s){spent}: "
            f"{type(cause).__name__}: {one_line(str(cause))}"
        )


class LLMUnavailableError(LLMProviderError):
    """Not sent: a call to the same endpoint gave up moments ago (see the module docstring)."""

    def __init__(self, role: str, outage: Outage):
        self.role, self.attempts, self.cause = role, 0, outage.cause
        MemFuseError.__init__(
            self,
            f"{role}: not sent: the endpoint failed {outage.age():.0f}s ago "
            f"({type(outage.cause).__name__}: {one_line(str(outage.cause), 80)})",
        )


@dataclass(frozen=True)
class RetryPolicy:
    """Transient-error retries: wait base_delay · 2^attempt (≤ max_delay) between attempts, at
    most `retries` of them, and none past `budget_s` seconds after the first attempt.

    The class defaults are the paper's benchmark policy (8 retries, no time limit);
    `from_settings` gives the interactive one (`llm_retries`, `llm_retry_seconds`). Only a
    budgeted policy marks an endpoint down or honours such a mark.
    """

    retries: int = 8
    base_delay: float = 1.0
    max_delay: float = 60.0
    budget_s: float | None = None
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def delay(self, attempt: int) -> float:
        return float(min(self.base_delay * (2**attempt), self.max_delay))

    @classmethod
    def from_settings(cls, settings: Any) -> RetryPolicy:
        return cls(
            retries=int(getattr(settings, "llm_retries", DEFAULT_RETRIES)),
            budget_s=float(getattr(settings, "llm_retry_seconds", DEFAULT_RETRY_SECONDS)),
        )


@dataclass(frozen=True)
class Outage:
    """A call to an endpoint gave up at `since`; calls fail fast until `until`."""

    cause: Exception
    since: float
    until: float

    def age(self) -> float:
        return time.monotonic() - self.since


_OUTAGES: dict[str, Outage] = {}
_OUTAGE_LOCK = threading.Lock()


def endpoint_key(base_url: str | None, endpoint_model: str) -> str:
    """One endpoint as both clients reach it (same server, same model string)."""
    return f"{(base_url or 'default').rstrip('/')}#{endpoint_model}"


def current_outage(endpoint: str) -> Outage | None:
    with _OUTAGE_LOCK:
        outage = _OUTAGES.get(endpoint)
        if outage is not None and time.monotonic() >= outage.until:
            del _OUTAGES[endpoint]
            return None
        return outage


def forget_outages() -> None:
    """Treat every endpoint as up again (tests; a caller that knows the endpoint is back)."""
    with _OUTAGE_LOCK:
        _OUTAGES.clear()


def _mark_down(endpoint: str, cause: Exception, seconds: float) -> None:
    now = time.monotonic()
    with _OUTAGE_LOCK:
        _OUTAGES[endpoint] = Outage(cause, now, now + max(seconds, MIN_OUTAGE_S))


def call_with_retries(
    role: str,
    call: Callable[[], T],
    policy: RetryPolicy,
    *,
    errors: tuple[type[Exception], ...],
    transient: Callable[[Exception], bool],
    endpoint: str | None = None,
) -> T:
    """Run `call` under `policy`. Exceptions of `errors` are provider errors: transient ones
    are retried, the last one raises `LLMProviderError`; anything else propagates as is."""
    budgeted = policy.budget_s is not None and endpoint is not None
    if budgeted:
        outage = current_outage(endpoint)  # type: ignore[arg-type]
        if outage is not None:
            LOG.info("%s: skipped, the endpoint is down", role)
            raise LLMUnavailableError(role, outage)
    started = time.monotonic()
    for attempt in range(policy.retries + 1):
        try:
            return call()
        except errors as exc:
            if not transient(exc):
                raise LLMProviderError(role, attempt + 1, exc) from exc
            elapsed = time.monotonic() - started
            wait = policy.delay(attempt)
            over = policy.budget_s is not None and elapsed + wait > policy.budget_s
            if attempt == policy.retries or over:
                why = "retry budget spent" if over else "retries spent"
                LOG.warning(
                    "%s: giving up after %d attempt(s) in %.1fs (%s): %s",
                    role,
                    attempt + 1,
                    elapsed,
                    why,
                    one_line(f"{type(exc).__name__}: {exc}"),
                )
                if budgeted:
                    _mark_down(endpoint, exc, policy.budget_s)  # type: ignore[arg-type]
                raise LLMProviderError(role, attempt + 1, exc, elapsed) from exc
            LOG.warning(
                "%s: %s; retry %d of %d in %.0fs",
                role,
                one_line(f"{type(exc).__name__}: {exc}", 120),
                attempt + 1,
                policy.retries,
                wait,
            )
            policy.sleep(wait)
    raise AssertionError("unreachable")  # the loop always returns or raises
