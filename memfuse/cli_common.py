"""What every `memfuse` command shares, built in or mounted from a plugin: common options
and the error contract.

A plugin's commands (the benchmark's, from `eval.cli`) import these rather than copy them,
so `memfuse bench` fails exactly like `memfuse ingest`: one `memfuse: error: …` line on
stderr, exit 2 for a usage error, 1 for bad input, a rejected operation or a data-dir fault
(with --debug: the traceback first), 130 when interrupted; never a bare traceback.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click
import typer
from pydantic import ValidationError

from memfuse.render import console
from memory.errors import MemFuseError, ReadOnlyDataDirError, storage_fault
from memory.models import parse_timestamp

if TYPE_CHECKING:
    from memfuse.api import MemFuse

DEBUG_ENV = "MEMFUSE_DEBUG"

DataDir = typer.Option(
    None, "--data-dir", help="Data directory (default: MEMFUSE_DATA_DIR or ./.memfuse)."
)
Namespace = typer.Option(None, "--namespace", help="Store namespace inside the data dir.")
User = typer.Option(
    None,
    "--user",
    help="Who asks (default: MEMFUSE_USER): only the events this person may see are read, "
    "and 'I/me/my' mean them.",
)
Admin = typer.Option(
    False,
    "--admin",
    help="An administrative read of every event, whoever may see it (recorded in the audit log).",
)


@dataclass
class RunState:
    """What a failing command leaves for `run` to report: set while the command runs, read
    only once it has failed (the exception alone does not carry it)."""

    debug: bool = False  # --debug was given
    data_dir: Path | None = None  # named by a storage fault that reaches `run` unnamed


state = RunState()


def parse_time(value: str | None, flag: str = "--time") -> datetime | None:
    """An ISO time option, or a one-line error naming the flag."""
    if value is None:
        return None
    try:
        return parse_timestamp(value)
    except ValueError as exc:
        raise MemFuseError(f"{flag}: {exc}") from None


def choice(flag: str, value: str, allowed: Sequence[str], noun: str = "value") -> str:
    """The value of an option that takes one of a few words; anything else is a usage error
    (exit 2, like an unknown option), raised before the command reads or opens anything."""
    if value not in allowed:
        raise typer.BadParameter(
            f"unknown {noun} {value!r} (expected one of: {', '.join(allowed)})",
            param_hint=f"'{flag}'",
        )
    return value


def open_memory(
    data_dir: Path | None,
    namespace: str | None,
    *,
    writer: bool = False,
    must_exist: bool = False,
) -> MemFuse:
    """The memory a command works on: with `writer`, holding the writer lock; a read
    (`must_exist`) of a data dir or store that is not there is a one-line error.

    The data dir is checked first, so a file in its place or a read-only dir asked to take a
    write is one line before any lock or store file is touched (readers of a read-only dir
    go on: the store opens it read-only)."""
    from memfuse.api import MemFuse, require_store
    from memfuse.settings import load_settings
    from memory.edge_store import sqlite_writable
    from memory.store import prepare_data_dir

    settings = load_settings(data_dir=data_dir)
    root = state.data_dir = data_dir if data_dir is not None else settings.data_dir
    if must_exist:
        require_store(Path(root), namespace or settings.namespace)
    if not prepare_data_dir(root) and writer:
        raise ReadOnlyDataDirError(f"data dir {root}")
    store_file = Path(root).expanduser() / f"{namespace or settings.namespace}.sqlite"
    if writer and not settings.database_url and not sqlite_writable(store_file):
        raise ReadOnlyDataDirError(store_file)  # readers go on: the store opens it read-only
    return MemFuse.open(data_dir, namespace, settings=settings, writer=writer)


def _click_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(usage/click errors, aborts) of click itself and of the copy typer ships inside it
    (`typer._click`, typer >= 0.16): typer raises the latter, which `click.*` never catches."""
    errors: list[type[BaseException]] = [click.exceptions.ClickException]
    aborts: list[type[BaseException]] = [click.exceptions.Abort, typer.Abort]
    try:
        from typer._click import exceptions as vendored  # private, so looked up defensively
    except ImportError:
        pass
    else:
        errors.append(vendored.ClickException)
    return tuple(errors), tuple(aborts)


def error_message(exc: BaseException) -> str:
    """The one line a failed command prints after `memfuse: error: `.

    MemFuse's own errors already say what and where; low-level ones that got this far
    (a full disk during a Chroma flush, a file the store could not name) are mapped by
    `storage_fault`; anything else is named by its type, with the way to see more.
    """
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = f"{where}: {first['msg']}"
    elif isinstance(exc, MemFuseError):
        message = str(exc)
    elif isinstance(exc, json.JSONDecodeError):
        message = f"invalid JSON: {exc}"
    elif isinstance(exc, UnicodeDecodeError):
        message = f"not valid UTF-8 text ({exc.reason} at byte {exc.start})"
    elif (fault := storage_fault(exc, state.data_dir)) is not None:
        message = str(fault)
    elif isinstance(exc, OSError) and exc.strerror:  # a refused connection, a timeout…
        message = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    else:
        message = f"unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)"
    return " ".join(message.split())  # one line, whatever the message held


def _debugging() -> bool:
    return state.debug or os.environ.get(DEBUG_ENV, "").strip().lower() in (
        "1", "true", "yes", "on",
    )  # fmt: skip


def run(app: typer.Typer) -> None:
    """Run `app` under the error contract (see the module docstring); exits the process."""
    state.debug, state.data_dir = False, None  # may run more than once in one process
    click_errors, aborts = _click_errors()
    try:
        app(standalone_mode=False)
    except aborts:
        console().print("interrupted", style="red")
        sys.exit(130)
    except click_errors as exc:
        message = str(exc.format_message())  # type: ignore[attr-defined]
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `memfuse`: the help is the message
            print(message, file=sys.stderr)
        else:
            print(f"memfuse: error: {' '.join(message.split())}", file=sys.stderr)
        sys.exit(exc.exit_code)  # type: ignore[attr-defined]
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 — every failure ends as one line (or --debug)
        if _debugging():
            traceback.print_exception(exc, file=sys.stderr)
        print(f"memfuse: error: {error_message(exc)}", file=sys.stderr)
        sys.exit(1)
