"""A real PostgreSQL server for the store tests: `initdb` + `pg_ctl` into a temp dir, on
127.0.0.1 at a free port, started once per session and stopped at its end.

The server binaries come from Debian's `postgresql` package (in /usr/lib/postgresql/<n>/bin,
not on PATH) or from PATH. PostgreSQL refuses to run as root, so as root (CI here) the server
runs as the package's `postgres` user (`runuser`). Without the binaries the tests are skipped
with the reason, except in CI (CI=true), where `.ci/run` installs them: there a missing server
fails, so CI never skips them silently.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.chroma_server import free_port

INSTALL_HINT = (
    "PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's `postgresql` "
    "package (`apt-get install postgresql`; .ci/run does) to run the PostgreSQL store tests"
)


def server_bin_dir() -> Path | None:
    """The folder holding initdb and pg_ctl: PATH first, then the newest Debian install."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    for initdb in reversed(candidates):
        if (initdb.parent / "pg_ctl").exists():
            return initdb.parent
    return None


def _run_as() -> list[str]:
    """The command prefix that runs the server unprivileged: [] unless we are root."""
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise RuntimeError("running as root, and no `postgres` user to run the server as")
    if runuser is None:
        raise RuntimeError("running as root, and no `runuser` to run the server unprivileged")
    return [runuser, "-u", "postgres", "--"]


@dataclass
class PostgresServer:
    """One throwaway cluster: `url()` connects as the `postgres` superuser, trusted on
    127.0.0.1 (nothing else can reach it)."""

    bin_dir: Path
    root: Path
    port: int
    options: tuple[str, ...] = ()

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str, timeout: float = 120) -> None:
        result = subprocess.run(
            [*_run_as(), *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.root,
        )
        if result.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"{Path(args[0]).name} failed ({result.returncode}): {result.stderr.strip()}\n"
                f"{tail}"
            )

    def start(self) -> PostgresServer:
        self._run(
            str(self.bin_dir / "initdb"),
            "-D",
            str(self.data),
            "--auth=trust",
            "-U",
            "postgres",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        settings = [
            f"-p {self.port}",
            f"-k {self.root}",  # the Unix socket here, not in /var/run/postgresql
            "-c listen_addresses=127.0.0.1",
            *self.options,
        ]
        self._run(
            str(self.bin_dir / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.root / "server.log"),
            "-o",
            " ".join(settings),
            "-w",
            "-t",
            "60",
            "start",
        )
        return self

    def stop(self) -> None:
        try:
            self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def start_server(options: tuple[str, ...] = ()) -> PostgresServer:
    """A started server in a new temp dir (owned by the user the server runs as)."""
    bin_dir = server_bin_dir()
    if bin_dir is None:
        raise FileNotFoundError(INSTALL_HINT)
    root = Path(tempfile.mkdtemp(prefix="memfuse-pg-"))
    if os.geteuid() == 0:
        _run_as()  # says why not, before anything is made
        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
    server = PostgresServer(bin_dir, root, free_port(), options)
    try:
        return server.start()
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole session (fsync off: the tests need no durability)."""
    if server_bin_dir() is None:
        if os.environ.get("CI"):
            pytest.fail(f"{INSTALL_HINT} (CI must not skip them)")
        pytest.skip(INSTALL_HINT)
    server = start_server(("-c fsync=off", "-c full_page_writes=off"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> str:
    return postgres_server.url()
