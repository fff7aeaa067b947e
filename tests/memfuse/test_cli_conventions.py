"""The conventions every `memfuse` command keeps (issue 25, item 4): `--version`; exit 2 and
one line for every usage error; '-' for standard input where a file is read; help that lists
options without value types; a start-up that imports only what the command needs (the
testable form of "`memfuse --help` in under half a second": no timings are asserted, the
modules loaded are); and what the package ships (py.typed, the license, the sample's owners).
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
import typer

from memfuse import cli

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "memfuse" / "samples" / "household.jsonl"
LOCOMO = REPO / "tests" / "eval" / "fixtures" / "locomo_small.json"
PREFIX = "memfuse: error: "

cli.load_plugins(cli.app)  # the benchmark's commands too: every command `memfuse` offers
COMMANDS = [cli._command_name(c) for c in cli.app.registered_commands]
TAKES_DATA_DIR = {
    name
    for name, command in typer.main.get_group(cli.app).commands.items()
    if any("--data-dir" in getattr(param, "opts", ()) for param in command.params)
}

# What no command may pay for before it runs: the memory's machinery and the LLM stack.
HEAVY = ("torch", "sentence_transformers", "chromadb", "langgraph", "dspy", "langchain_core",
         "langchain_openai", "litellm", "optuna", "matplotlib")  # fmt: skip
# `--help` and `--version` load not even the memory's API, the data model, Rich or numpy
# (pydantic may come: typer parses a command's options through it).
NOT_FOR_HELP = (*HEAVY, "memfuse.api", "memory.models", "rich", "numpy")


def memfuse(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`memfuse ARGS` in a fresh process, as a user runs it (no LLM, the hashing embedder)."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200",
                "MEMFUSE_EMBEDDING_PROVIDER": "hashing", **(env or {})}  # fmt: skip
    for name in ("MEMFUSE_LLM_MODEL", "MEMFUSE_DATA_DIR", "MEMFUSE_USER", "MEMFUSE_DEBUG"):
        full_env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "memfuse.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=300,
        check=False,
    )


def run_main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `memfuse ARGS` run in this process."""
    monkeypatch.setattr(sys, "argv", ["memfuse", *args])
    try:
        cli.main()
        code = 0
    except SystemExit as exited:
        code = exited.code if isinstance(exited.code, int) else (0 if exited.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


def loaded_after(*args: str) -> list[str]:
    """The modules of `names` a fresh process holds after `memfuse ARGS` (or, with no args,
    after `import memfuse.cli` and loading the plugins, which is what every call does)."""
    script = textwrap.dedent("""
        import json, sys
        args = json.loads(sys.argv[1])
        from memfuse import cli
        if args:
            sys.argv = ["memfuse", *args]
            try:
                cli.main()
            except SystemExit:
                pass
        else:
            cli.load_plugins(cli.app)
        print(json.dumps(sorted(sys.modules)), file=sys.stderr)
    """)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MEMFUSE_EMBEDDING_PROVIDER": "hashing"}
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(list(args))],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    return json.loads(done.stderr.splitlines()[-1])


def _held(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted({m for m in modules for n in names if m == n or m.startswith(n + ".")})


# --- start-up -------------------------------------------------------------------------------


def test_importing_the_cli_loads_none_of_the_heavy_machinery() -> None:
    held = loaded_after()
    assert "eval.cli" in held  # the plugin's commands are listed…
    assert _held(held, NOT_FOR_HELP) == []  # …without loading what they run


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("stats", "--help")])
def test_help_and_version_load_only_the_command_line(args: tuple[str, ...]) -> None:
    assert _held(loaded_after(*args), NOT_FOR_HELP) == []


def test_stats_loads_the_store_but_no_vectors_llm_stack_or_model(tmp_path: Path) -> None:
    """`memfuse stats` opens the store for its counts: never Chroma (most of its start-up
    once was), DSPy, LangGraph or torch."""
    ingested = memfuse("ingest", str(SAMPLE), "--mode", "plain", "--data-dir", str(tmp_path))
    assert ingested.returncode == 0, ingested.stderr
    held = loaded_after("stats", "--data-dir", str(tmp_path))
    assert "memory.store" in held  # it did run
    assert _held(held, HEAVY) == []


def test_the_package_names_its_public_api_without_loading_it() -> None:
    script = textwrap.dedent("""
        import sys, memfuse
        assert "memfuse.api" not in sys.modules
        from memfuse import MemFuse, MemFuseSettings, load_settings
        from memfuse.api import MemFuse as Direct
        assert MemFuse is Direct and callable(load_settings) and MemFuseSettings
        assert {"MemFuse", "MemFuseSettings", "load_settings"} <= set(dir(memfuse))
        try:
            memfuse.NoSuchThing
        except AttributeError as exc:
            assert "NoSuchThing" in str(exc)
        else:
            raise AssertionError("no AttributeError")
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr


# --- --version ------------------------------------------------------------------------------


def test_version_prints_the_installed_version_and_exits_0() -> None:
    done = memfuse("--version")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout == f"memfuse {importlib.metadata.version('memfuse')}\n"


# --- usage errors: exit 2, one line ---------------------------------------------------------


def test_every_command_is_covered() -> None:
    assert {"ingest", "search", "stats", "export", "forget", "bench", "check-dataset"} <= set(
        COMMANDS
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_option_is_a_one_line_usage_error(
    command: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    data_dir = ("--data-dir", str(tmp_path / "x")) if command in TAKES_DATA_DIR else ()
    code, out, err = run_main(monkeypatch, capsys, command, "--no-such-option", *data_dir)
    assert code == 2 and out == ""
    assert err == f"{PREFIX}No such option: --no-such-option\n"
    assert not (tmp_path / "x").exists()  # refused before anything was opened


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("nosuchcommand",), "No such command 'nosuchcommand'"),
        (("search",), "Missing argument 'query'"),
        (("show",), "Missing argument 'node_id'"),
        (("visibility", "h_001"), "Missing option '--set'"),
        (("search", "x", "-k", "zero"), "'-k'"),
        (("search", "x", "--admin", "--system", "oracle"), "unknown system 'oracle'"),
        (("search", "x", "--admin", "--time", "someday"), "'--time'"),
        (("ask", "x", "--admin", "--time", "someday"), "'--time'"),
        (("events", "--admin", "--since", "someday"), "'--since'"),
        (("events", "--admin", "--visibility", "everyone"), "'--visibility'"),
        (("audit", "--admin", "--until", "someday"), "'--until'"),
        (("visibility", "h_001", "--set", "everyone", "--admin"), "'--set'"),
        (("forget", "--admin"), "forget needs a selector"),
        (("forget", "--since", "2026-05-14", "--until", "2026-05-12", "--admin"), "is after"),
        (("fuse",), "--pending"),
        (("ingest", "x.jsonl", "--mode", "fast"), "unknown mode 'fast'"),
        (("export", "out.jsonl", "--admin", "--since", "someday"), "'--since'"),
        (("bench",), "--dataset is required"),
        (("bench", "--suite", "--seeds", "7,x"), "'--seeds'"),
        (("bench", "--dataset", "d.json", "--systems", "bm25,oracle"), "unknown system"),
        (("bench-perf", "--embedder", "magic"), "unknown embedder 'magic'"),
        (("synth", "--realism", "surreal"), "unknown realism 'surreal'"),
        (("synth", "--scenarios", "0"), "'--scenarios'"),
        (("check-dataset", "-", "--format", "csv"), "unknown format 'csv'"),
    ],
)
def test_usage_errors_exit_2_with_one_line_before_anything_is_opened(
    args: tuple[str, ...],
    needle: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """Unknown command or option, missing argument, a value an option does not take (a word
    outside its choices, a time that is not one, a selector-less forget): exit 2."""
    monkeypatch.chdir(tmp_path)
    data_dir = ("--data-dir", str(tmp_path / "data")) if args[0] in TAKES_DATA_DIR else ()
    code, out, err = run_main(monkeypatch, capsys, *args, *data_dir)
    assert code == 2, err
    assert err.startswith(PREFIX) and err.count("\n") == 1 and needle in err, err
    assert "Traceback" not in err and out == ""
    assert not (tmp_path / "data").exists()


def test_a_usage_error_is_one_line_from_a_real_process_too() -> None:
    done = memfuse("stats", "--no-such-option")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"{PREFIX}No such option: --no-such-option\n"


# --- help without value types ---------------------------------------------------------------

TYPE_METAVAR = re.compile(
    r"<(?:str|int|float|bool|path|file|text|uuid|datetime|choice)\b[^>]*>"
    r"|\b(?:TEXT|INTEGER|FLOAT|PATH|BOOLEAN|FILENAME)\b"
)


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_lists_options_without_value_types(
    command: str | None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    code, out, err = run_main(monkeypatch, capsys, *([command] if command else []), "--help")
    assert code == 0 and err == ""
    assert "Options:" in out and "--help" in out
    assert TYPE_METAVAR.findall(out) == [], out
    if command in TAKES_DATA_DIR:
        assert "--data-dir  " in out  # options still listed, each with its help


def test_the_command_list_keeps_whole_first_sentences(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    _, out, _ = run_main(monkeypatch, capsys, "--help")
    commands = out.split("Commands:", 1)[1]
    assert "..." not in commands  # click would cut each at 45 characters
    assert "into the graph." in commands and "check-dataset" in commands


# --- '-' for standard input (and output) ----------------------------------------------------


def test_ingest_reads_standard_input_and_export_writes_standard_output(tmp_path: Path) -> None:
    first, second = str(tmp_path / "first"), str(tmp_path / "second")
    done = memfuse("ingest", "-", "--mode", "plain", "--data-dir", first, stdin=SAMPLE.read_text())
    assert done.returncode == 0, done.stderr
    assert "ingested 30 events from <stdin>" in done.stdout and "30 new" in done.stdout
    exported = memfuse("export", "-", "--admin", "--data-dir", first)
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout.splitlines()[0])["counts"]["events"] == 30
    imported = memfuse("ingest", "-", "--data-dir", second, stdin=exported.stdout)
    assert imported.returncode == 0, imported.stderr
    assert "imported <stdin>: 30 new events" in imported.stdout
    listed = [
        memfuse("events", "--admin", "--json", "--data-dir", d).stdout for d in (first, second)
    ]
    assert listed[0] == listed[1] and listed[0].count("\n") == 30


def test_one_event_or_a_json_array_on_standard_input(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    one = memfuse(
        "ingest", "-", "--mode", "plain", "--data-dir", str(tmp_path / "one"),
        stdin=json.dumps(rows[0]),
    )  # fmt: skip
    assert one.returncode == 0 and "ingested 1 events from <stdin>" in one.stdout, one.stderr
    array = memfuse(
        "ingest", "-", "--mode", "plain", "--data-dir", str(tmp_path / "array"),
        stdin=json.dumps(rows[:4], indent=2),
    )  # fmt: skip
    assert array.returncode == 0 and "ingested 4 events from <stdin>" in array.stdout, array.stderr


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ('{"event_id": "a"}\nnot json\n', "<stdin>: line 2: invalid JSON"),
        ("", "<stdin>: no events in it"),
    ],
)
def test_bad_standard_input_is_named_stdin_and_writes_nothing(
    tmp_path: Path, stdin: str, message: str
) -> None:
    done = memfuse("ingest", "-", "--data-dir", str(tmp_path / "data"), stdin=stdin)
    assert done.returncode == 1 and done.stderr.startswith(PREFIX + message), done.stderr
    assert done.stderr.count("\n") == 1 and "memfuse-stdin-" not in done.stderr
    assert not (tmp_path / "data").exists()


def test_check_dataset_reads_standard_input() -> None:
    done = memfuse("check-dataset", "-", "--json", stdin=LOCOMO.read_text())
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["file"] == "<stdin>" and report["format"] == "locomo"
    broken = memfuse("check-dataset", "-", stdin="{not json")
    assert broken.returncode == 1
    assert broken.stderr.startswith(f"{PREFIX}<stdin>: not valid JSON"), broken.stderr


# --- what the package ships -----------------------------------------------------------------


def test_the_package_is_typed_and_ships_its_marker() -> None:
    assert importlib.resources.files("memfuse").joinpath("py.typed").is_file()
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["memfuse"]


def test_the_license_is_apache_2_everywhere() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert pyproject["license"] == "Apache-2.0" and pyproject["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text  # the full text, not a stub


def test_the_sample_names_every_events_owner() -> None:
    """Personal devices are their owner's (private to them), the rest `shared` (household):
    the sample shows both kinds of event."""
    from memory.models import parse_event
    from memory.visibility import derive

    events = [parse_event(json.loads(line)) for line in SAMPLE.read_text().splitlines()]
    assert all(e.owner for e in events)
    seen = {derive(e) for e in events}
    assert {"household", "private:Tom", "private:Anna"} <= seen
    for e in events:
        personal = e.device.startswith(("watch_", "phone_"))
        assert (e.owner != "shared") == personal, e.event_id
