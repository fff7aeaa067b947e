"""The README's Python example runs as written: extracted from README.md and executed in a
fresh interpreter with a fresh data dir, offline (what a new user does first)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def python_example() -> str:
    section = REPO.joinpath("README.md").read_text(encoding="utf-8").split("\n## Python\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "README's Python section has no ```python block"
    return match.group(1)


def test_the_readme_python_example_runs(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(python_example(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMFUSE_")}
    env.update({"MEMFUSE_DATA_DIR": str(tmp_path / "memory"), "HF_HUB_OFFLINE": "1"})
    done = subprocess.run(
        [sys.executable, str(script)],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("['note_") and "private:Anna" in lines
    assert (
        "['ingest', 'fusion_plan']" in lines
        and "{'text': 'Anna takes her coffee with oat milk'}" in lines
    )
    assert (tmp_path / "memory" / "default.sqlite").is_file()
