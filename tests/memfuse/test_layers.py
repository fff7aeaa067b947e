"""The layering check: the repository passes it, and it catches each way an import can go
the wrong way (so a clean report means something)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from memfuse.layers import Unparsable, Violation, check_tree, main

REPO = Path(__file__).resolve().parents[2]
SUMMARY = re.compile(r"^(\d+) files checked, (\d+) imports against the layering \(eval → ")


def test_the_repository_imports_only_downward() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memfuse.layers"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout  # no violation lines, only the summary
    match = SUMMARY.match(lines[0])
    assert match is not None, lines[0]
    assert int(match.group(1)) > 100 and match.group(2) == "0"


def _tree(root: Path, files: dict[str, str]) -> Path:
    """A repository skeleton: every layer package, plus the given modules."""
    for layer in ("memory", "signatures", "graphs", "memfuse", "eval"):
        (root / layer).mkdir(parents=True, exist_ok=True)
        (root / layer / "__init__.py").write_text("")
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root


def _found(root: Path) -> set[tuple[str, str, str, str]]:
    """(path, importer, imported, module) of every violation; an unparsable file fails."""
    found = set()
    for problem in check_tree(root):
        assert isinstance(problem, Violation), str(problem)
        found.add((problem.path.as_posix(), problem.importer, problem.imported, problem.module))
    return found


@pytest.mark.parametrize(
    ("name", "source", "expected"),
    [
        (
            "memory/store.py",
            "from graphs.fusion import run\n",
            ("memory", "graphs", "graphs.fusion"),
        ),
        (
            "signatures/plan.py",
            "def plan():\n    from memfuse.api import MemFuse\n",
            ("signatures", "memfuse", "memfuse.api"),
        ),
        ("memory/search/engine.py", "from ... import graphs\n", ("memory", "graphs", "graphs")),
        (
            "memory/search/pool.py",
            "from ...signatures.lm import LM\n",
            ("memory", "signatures", "signatures.lm"),
        ),
        ("memfuse/cli.py", "import eval\n", ("memfuse", "eval", "eval")),
        ("graphs/run.py", "import eval.cli as plugin\n", ("graphs", "eval", "eval.cli")),
        ("memory/text.py", "import dspy\n", ("memory", "dspy", "dspy")),
        (
            "memory/lexical.py",
            "def f():\n    from langgraph.graph import StateGraph\n",
            ("memory", "langgraph", "langgraph.graph"),
        ),
        (
            "memfuse/plugins.py",
            "import importlib\nimportlib.import_module('eval.cli')\n",
            ("memfuse", "eval", "eval.cli"),
        ),
        (
            "signatures/lazy.py",
            "mod = __import__('graphs.answer')\n",
            ("signatures", "graphs", "graphs.answer"),
        ),
        (
            "memory/typing_only.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from graphs.state import S\n",
            ("memory", "graphs", "graphs.state"),
        ),
    ],
    ids=[
        "module-level",
        "inside-function",
        "relative-package",
        "relative-module",
        "import-eval",
        "import-eval-submodule",
        "memory-dspy",
        "memory-langgraph-lazy",
        "import_module",
        "__import__",
        "type-checking",
    ],
)
def test_flags_an_import_against_the_layering(
    tmp_path: Path, name: str, source: str, expected: tuple[str, str, str]
) -> None:
    root = _tree(tmp_path, {name: source})
    assert _found(root) == {(name, *expected)}


def test_accepts_downward_same_layer_and_third_party_imports(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "memory/store.py": "import json\nimport numpy\nfrom memory.models import Event\n",
        "memory/search/engine.py": "from . import pool\nfrom ..store import Store\n",
        "memory/search/pool.py": "from .engine import run\n",
        "signatures/plan.py": "import dspy\nfrom memory.store import Store\n",
        "graphs/run.py": "import langgraph\nimport signatures.plan\nfrom memory import store\n",
        "memfuse/api.py": "def open_():\n    from graphs.run import run\n    import memory\n",
        "eval/bench.py": "from memfuse.api import MemFuse\nfrom graphs import run\nimport eval.x\n",
        "eval/cli.py": "import importlib\nimportlib.import_module('memfuse.cli')\n",
        "tests/test_x.py": "import eval\n",  # not a layer: the check does not look at tests
    })  # fmt: skip
    assert _found(root) == set()


def test_main_lists_each_violation_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _tree(tmp_path, {"memory/a.py": "\n\nimport graphs\n", "memfuse/b.py": "import eval\n"})
    assert main([str(root)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[:2] == [
        "memory/a.py:3: memory → graphs (graphs)",
        "memfuse/b.py:1: memfuse → eval (eval)",
    ]
    match = SUMMARY.match(lines[2])
    assert match is not None and match.groups() == ("7", "2")


def test_clean_tree_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path, {"graphs/a.py": "import memory\n"})
    assert main([str(root)]) == 0
    match = SUMMARY.match(capsys.readouterr().out.strip())
    assert match is not None and match.groups() == ("6", "0")


def test_an_unparsable_file_fails_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _tree(tmp_path, {"memory/broken.py": "def f(:\n"})
    (problem,) = check_tree(root)
    assert isinstance(problem, Unparsable) and problem.path == Path("memory/broken.py")
    assert main([str(root)]) == 1
    assert "memory/broken.py:1: cannot parse (SyntaxError)" in capsys.readouterr().out


def test_a_root_without_layers_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 2
    assert "no layer package" in capsys.readouterr().err
