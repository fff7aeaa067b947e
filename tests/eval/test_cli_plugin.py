"""The benchmark commands reach `memfuse` as a plugin (the `memfuse.commands` entry point),
since memfuse may not import eval: they must behave as if built in, and `memfuse` must keep
working when the plugin is gone or broken."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest
import typer

from memfuse import cli

GROUP = cli.PLUGIN_GROUP
BENCH_COMMANDS = [
    "synth",
    "bench",
    "bench-perf",
    "optimize",
    "show-question",
    "check-dataset",
    "verify",
]


def _names(app: typer.Typer) -> list[str]:
    return [cli._command_name(c) for c in app.registered_commands]


def _host() -> typer.Typer:
    host = typer.Typer()

    @host.command()
    def ingest() -> None:
        """The host's own command."""

    @host.command()
    def stats() -> None:
        """Another, so the host stays a group."""

    return host


def test_eval_is_registered_as_a_plugin() -> None:
    (entry,) = [e for e in entry_points(group=GROUP) if e.name == "eval"]
    assert entry.value == "eval.cli:app"  # `pip install -e .` after editing pyproject.toml


def test_the_plugin_commands_follow_the_builtin_ones_once() -> None:
    from eval.cli import app as plugin

    assert _names(plugin) == BENCH_COMMANDS
    host = _host()
    entry = EntryPoint(name="eval", value="eval.cli:app", group=GROUP)
    assert cli.load_plugins(host, [entry]) == BENCH_COMMANDS
    assert cli.load_plugins(host, [entry]) == []  # main() may run twice in one process
    assert _names(host) == ["ingest", "stats", *BENCH_COMMANDS]


def test_a_missing_plugin_is_skipped_silently(capsys: pytest.CaptureFixture[str]) -> None:
    host = _host()
    gone = EntryPoint(name="gone", value="no_such_memfuse_plugin.cli:app", group=GROUP)
    assert cli.load_plugins(host, [gone]) == []
    assert _names(host) == ["ingest", "stats"] and capsys.readouterr().err == ""


def test_a_broken_or_clashing_plugin_is_a_warning_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken_plugin.py").write_text("import no_such_dependency_of_it\n")
    (tmp_path / "clashing_plugin.py").write_text(
        textwrap.dedent('''
        import typer
        app = typer.Typer()

        @app.command()
        def ingest() -> None:
            """Would shadow the built-in."""

        @app.command("extra-thing")
        def extra() -> None:
            """A new command."""
    ''')
    )
    (tmp_path / "not_an_app.py").write_text("app = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    host = _host()
    entries = [
        EntryPoint(name="broken", value="broken_plugin:app", group=GROUP),
        EntryPoint(name="clash", value="clashing_plugin:app", group=GROUP),
        EntryPoint(name="odd", value="not_an_app:app", group=GROUP),
    ]
    assert cli.load_plugins(host, entries) == ["extra-thing"]
    assert _names(host) == ["ingest", "stats", "extra-thing"]
    assert host.registered_commands[0].callback.__doc__ == "The host's own command."
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("memfuse: warning: plugin 'broken' (broken_plugin:app) not loaded")
    assert "no_such_dependency_of_it" in err[0]
    assert err[1] == "memfuse: warning: plugin 'clash': command 'ingest' already exists; ignored"
    assert err[2] == "memfuse: warning: plugin 'odd' (not_an_app:app) is a int, not a Typer app"


def _run_main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["memfuse", *args])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    return int(exited.value.code or 0)


def test_plugin_commands_keep_the_error_contract(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run_main(monkeypatch, "bench", "--systems", "bm25") == 2  # a usage error
    assert capsys.readouterr().err == (
        "memfuse: error: --dataset is required (or run several sources with --suite)\n"
    )
    assert _run_main(monkeypatch, "bench", "--nope") == 2
    assert capsys.readouterr().err == "memfuse: error: No such option: --nope\n"
    assert _run_main(monkeypatch, "synth", "--scenarios", "0") == 2
    assert "--scenarios" in capsys.readouterr().err


def test_memfuse_without_the_eval_package_keeps_its_own_commands() -> None:
    script = textwrap.dedent("""
        import sys
        sys.modules["eval"] = None  # as if installed without the eval package
        sys.argv = ["memfuse", *sys.argv[1:]]
        from memfuse.cli import main
        main()
    """)

    def memfuse(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", script, *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    helped = memfuse("--help")
    assert helped.returncode == 0 and helped.stderr == "", helped.stderr
    assert "ingest" in helped.stdout
    assert "synth" not in helped.stdout and "show-question" not in helped.stdout
    bench = memfuse("bench", "--help")
    assert bench.returncode == 2
    assert bench.stderr.startswith("memfuse: error: No such command 'bench'")
