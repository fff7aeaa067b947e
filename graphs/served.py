"""What the LangGraph API server adds to the served graphs: MemFuse's own errors reach the API
client with their message.

The server turns the exception that ended a run into `{"error": <type name>, "message": …}`
(the run's error, the thread's error, `/runs/wait`'s `__error__`, a stream's `error` event),
but it shows the message only for a short list of builtin types: every other one reads "An
internal error occurred", since an unknown exception's text may hold what a client must not
see. A `MemFuseError`'s message is written for the person who asked (one line naming what is
wrong: the empty question, the event field, the unknown recipe), so a client that gets only
"InvalidQueryError: An internal error occurred" cannot fix its request. The server loads
`app` below as its custom HTTP app (`langgraph.json`: `"http": {"app": "graphs.served:app"}`),
which is how its serializer learns to show a MemFuse error's message; every other exception
keeps the server's own treatment. No route is added.

The hook wraps `langgraph_api.serde.default` (the `default` of the server's JSON encoder, looked
up at each call) in the process that loads the app, where `langgraph dev` also runs the graphs;
in-process callers (`memfuse.api`, the CLI) get the exceptions themselves. A server version
without that function serves the graphs as before, with a warning in its log, and
tests/graphs/test_served_errors.py fails.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette

from memory.errors import MemFuseError

_log = logging.getLogger(__name__)


def error_payload(error: MemFuseError) -> dict[str, str]:
    """What a client receives for a MemFuse error: the server's own shape, with the message."""
    return {"error": type(error).__name__, "message": str(error)}


def _show_memfuse_errors(default: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The server's JSON `default`, but a MemFuse error keeps its message."""
    if getattr(default, "memfuse_errors", False):  # loaded twice: wrap once
        return default

    def with_memfuse_errors(obj: Any) -> Any:
        if isinstance(obj, MemFuseError):
            return error_payload(obj)
        return default(obj)

    with_memfuse_errors.memfuse_errors = True  # type: ignore[attr-defined]
    return with_memfuse_errors


def install() -> bool:
    """Make the running server show MemFuse errors' messages; False (and a warning) where its
    serializer is not the one this was written for."""
    try:
        from langgraph_api import serde  # only present where the graphs are served
    except ImportError:
        return False
    default = getattr(serde, "default", None)
    if not callable(default):
        _log.warning(
            "langgraph_api.serde has no `default` encoder: MemFuse errors reach API clients "
            "as 'An internal error occurred'"
        )
        return False
    serde.default = _show_memfuse_errors(default)
    return True


install()

#: The custom HTTP app `langgraph.json` names: no routes of its own.
app = Starlette()
