"""What every `memfuse` command shares, built in or mounted from a plugin: common options,
the error contract and the help's look.

A plugin's commands (the benchmark's, from `eval.cli`) import these rather than copy them,
so `memfuse bench` fails exactly like `memfuse ingest`: one `memfuse: error: …` line on
stderr, exit 2 for a usage error (an unknown option or command, a missing argument, a value
an option does not take), 1 for bad input, a rejected operation or a data-dir fault (with
--debug: the traceback first), 130 when interrupted; never a bare traceback.

Every `memfuse` call imports this module, `--help` and `--version` too, so it imports only
typer and the light `memory.errors`; the data model, pydantic, Rich and the memory itself
(torch, Chroma, LangGraph, DSPy behind `memfuse.api`) are imported by the code that uses them.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperArgument, TyperOption

from memory.errors import MemFuseError, storage_fault

if TYPE_CHECKING:
    from typer._click import Command

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
    """An ISO time option; anything else is a usage error (exit 2) naming the flag, so parse
    it before the command opens anything."""
    from memory.models import parse_timestamp

    if value is None:
        return None
    try:
        return parse_timestamp(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=f"'{flag}'") from None


def usage_error(message: str) -> Exception:
    """A usage error no single option's value explains (a missing selector, an option that
    another one needs): `raise usage_error(…)` exits 2 with `memfuse: error: <message>`."""
    try:  # the click typer's parser raises: its own copy (typer >= 0.16), else click itself
        from typer._click.exceptions import UsageError
    except ImportError:
        from click.exceptions import UsageError
    return UsageError(message)


def choice(flag: str, value: str, allowed: Sequence[str], noun: str = "value") -> str:
    """The value of an option that takes one of a few words; anything else is a usage error
    (exit 2, like an unknown option), raised before the command reads or opens anything."""
    if value not in allowed:
        raise typer.BadParameter(
            f"unknown {noun} {value!r} (expected one of: {', '.join(allowed)})",
            param_hint=f"'{flag}'",
        )
    return value


STDIN = "-"  # a file argument that means standard input (or, for a file written, stdout)
STDIN_NAME = "<stdin>"  # what messages call it


@contextmanager
def input_path(file: Path) -> Iterator[tuple[Path, str]]:
    """(a path to read, what to call it) for a file argument; '-' is standard input, read
    whole into a temporary file (the readers detect formats and number lines from a file),
    named `<stdin>` in messages, errors included. A JSON document that is an array or a
    benchmark (`scenario_data`) gets a .json name, anything else .jsonl, so `--format auto`
    reads what it would read from a file of that name."""
    if str(file) != STDIN:
        yield file, str(file)
        return
    import tempfile

    data = sys.stdin.buffer.read()
    with tempfile.TemporaryDirectory(prefix="memfuse-stdin-") as folder:
        path = Path(folder) / f"stdin{_json_suffix(data)}"
        path.write_bytes(data)
        try:
            yield path, STDIN_NAME
        except MemFuseError as exc:
            message = str(exc).replace(str(path), STDIN_NAME).replace(path.name, STDIN_NAME)
            if message == str(exc):
                raise
            raise MemFuseError(message) from exc


def _json_suffix(data: bytes) -> str:
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # JSONL (or not JSON at all: the reader says so)
        return ".jsonl"
    if isinstance(document, list) or (isinstance(document, dict) and "scenario_data" in document):
        return ".json"
    return ".jsonl"  # one event object: a JSONL file of one line


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
    from memfuse.api import MemFuse
    from memfuse.settings import load_settings

    settings = load_settings(data_dir=data_dir)
    state.data_dir = data_dir if data_dir is not None else settings.data_dir
    return MemFuse.open(
        data_dir, namespace, settings=settings, writer=writer, must_exist=must_exist
    )


def _click_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(usage/click errors, aborts) of the copy of click typer ships inside it (`typer._click`,
    typer >= 0.16), which typer raises, and of click itself, whose `click.*` classes never
    catch the copy's. Click is only looked at once something has imported it (a plugin, an
    older typer): until then nothing can have raised its errors, and `memfuse` starts faster."""
    errors: list[type[BaseException]] = []
    aborts: list[type[BaseException]] = [typer.Abort]
    try:
        from typer._click import exceptions as vendored  # private, so looked up defensively
    except ImportError:
        pass
    else:
        errors.append(vendored.ClickException)
    click = sys.modules.get("click")
    if click is not None:
        errors.append(click.exceptions.ClickException)
        aborts.append(click.exceptions.Abort)
    return tuple(errors), tuple(aborts)


def error_message(exc: BaseException) -> str:
    """The one line a failed command prints after `memfuse: error: `.

    MemFuse's own errors already say what and where; low-level ones that got this far
    (a full disk during a Chroma flush, a file the store could not name) are mapped by
    `storage_fault`; anything else is named by its type, with the way to see more.
    """
    from pydantic import ValidationError  # imported already by whatever raised one

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


class _UntypedOption(TyperOption):
    """An option whose help shows no value type: `--time`, not `--time <str>` (the help text
    says what the value is)."""

    def display_type_rich(self, ctx: Any) -> str:
        return ""

    def get_help_record(self, ctx: Any) -> tuple[str, str] | None:
        record = super().get_help_record(ctx)
        return None if record is None else (" ".join(record[0].split()), record[1])


class _UntypedArgument(TyperArgument):
    """An argument whose help shows its name and no value type: `query`, not `query <str>`."""

    def display_type_rich(self, ctx: Any) -> str:
        return ""


def plain_help(command: Command) -> Command:
    """`command` and its subcommands with the help `memfuse` prints: options and arguments
    without value types (<str>, <int>, <path>), and each command listed with its docstring's
    whole first sentence, wrapped (click cuts it at 45 characters). Parsing, errors and
    completion are unchanged."""
    for param in command.params:
        if type(param) is TyperOption:
            param.__class__ = _UntypedOption
        elif type(param) is TyperArgument:
            param.__class__ = _UntypedArgument
    for sub in getattr(command, "commands", {}).values():
        if not sub.short_help and sub.help:
            sub.short_help = first_sentence(sub.help)
        plain_help(sub)
    return command


def first_sentence(text: str) -> str:
    """The first sentence of a docstring's first paragraph (all of it if no word ends one)."""
    words = inspect.cleandoc(text).split("\n\n", 1)[0].split()
    end = next((i for i, word in enumerate(words) if word.endswith(".")), len(words) - 1)
    return " ".join(words[: end + 1])


def run(app: typer.Typer) -> None:
    """Run `app` under the error contract (see the module docstring); exits the process."""
    state.debug, state.data_dir = False, None  # may run more than once in one process
    try:
        plain_help(typer.main.get_command(app))(standalone_mode=False)
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 — every failure is one line
        sys.exit(_report(exc))


def _report(exc: BaseException) -> int:
    """Print what `exc` says about the failed command; the exit status it calls for."""
    click_errors, aborts = _click_errors()
    if isinstance(exc, (KeyboardInterrupt, *aborts)):
        print("interrupted", file=sys.stderr)
        return 130
    if isinstance(exc, click_errors):
        message = str(exc.format_message())  # type: ignore[attr-defined]
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `memfuse`: the help is the message
            print(message, file=sys.stderr)
        else:
            print(f"memfuse: error: {' '.join(message.split())}", file=sys.stderr)
        return int(exc.exit_code)  # type: ignore[attr-defined]
    if _debugging():
        traceback.print_exception(exc, file=sys.stderr)
    print(f"memfuse: error: {error_message(exc)}", file=sys.stderr)
    return 1
