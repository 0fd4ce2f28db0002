"""A throwaway PostgreSQL server for tests and benchmarks: its own data directory, a free port on
127.0.0.1, password authentication over TCP, and stop/start so tests can restart it under a query.

It needs the server's binaries (``initdb``, ``pg_ctl``; Debian's ``postgresql`` package puts them in
/usr/lib/postgresql/<version>/bin, and ``PATH`` is searched too). PostgreSQL refuses to run as root,
so when we are root the server runs as the 'postgres' user (created by that package).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

USER = "sqlqueue"
PASSWORD = "pg-test-Secret-7f3a"  # a throwaway server's password; tests check it never leaks
DATABASE = "sqlqueue"


def server_binaries() -> Path | None:
    """The folder of the newest PostgreSQL server's binaries, or None when none is installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    initdb = found[-1] if found else shutil.which("initdb")
    return Path(initdb).parent if initdb else None


NO_SERVER = (
    "PostgreSQL server binaries (initdb, pg_ctl) not found: install PostgreSQL's server package (Debian: postgresql)"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self) -> None:
        bindir = server_binaries()
        if bindir is None:
            raise RuntimeError(NO_SERVER)
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="sqlqueue-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as_user:
            shutil.chown(self.root, "postgres")
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD)
        if self._as_user:
            shutil.chown(pwfile, "postgres")
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            USER,
            "--pwfile",
            str(pwfile),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        )
        pwfile.unlink()

    @property
    def url(self) -> str:
        """The connection URL without the password (pass it as the 'password' option)."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{DATABASE}"

    @property
    def options(self) -> dict[str, str]:
        """The connector options that reach it: ``url`` and ``password``."""
        return {"url": self.url, "password": PASSWORD}

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run([*self._as_user, str(self.bindir / tool), *args], check=True, capture_output=True)

    def start(self) -> PgServer:
        # The port was free when chosen, before initdb; another process may have taken it since (parallel
        # test workers start servers at once). A first start then takes another port: a restart keeps its
        # own, which its clients' URLs name.
        first = not (self.root / "created").exists()
        attempts = 3 if first else 1
        for attempt in range(attempts):
            try:
                self._run(
                    "pg_ctl", "-D", str(self.data), "-o", self._options(), "-l", str(self.root / "log"), "-w", "start"
                )
                break
            except subprocess.CalledProcessError:
                if attempt == attempts - 1 or "Address already in use" not in (self.root / "log").read_text():
                    raise
                self.port = _free_port()
        if first:
            self._psql(f"CREATE DATABASE {DATABASE}")
            (self.root / "created").touch()
        return self

    def _options(self) -> str:
        return (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.root} "
            "-c fsync=off -c full_page_writes=off -c max_connections=200"
        )

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: ``fast`` ends its sessions cleanly (57P01 to each), ``immediate`` as a crash
        would (sessions cut, crash recovery at the next start)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self, down_seconds: float = 0.0, mode: str = "immediate") -> None:
        """A restart under whatever is connected: stop (``mode``), stay down ``down_seconds``, start."""
        self.stop(mode)
        time.sleep(down_seconds)
        self.start()

    def _psql(self, sql: str) -> None:
        subprocess.run(
            [
                str(self.bindir / "psql"),
                "-h",
                str(self.root),
                "-p",
                str(self.port),
                "-U",
                USER,
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ],
            check=True,
            capture_output=True,
        )

    def destroy(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
