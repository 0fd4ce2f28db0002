"""The databases the fault matrix runs on, reached through their plain drivers: a throwaway PostgreSQL
server, a SQLite file, and Babelfish (a live TDS server) when ../shared/babelfish is beside the clone.

Nothing here imports sqlqueue's queue code: the harness and its verifier see the tables the way a
DBA's client would. Jobs get a ``[connection]`` section; the harness's own sessions go straight to the
server, never through the fault proxy.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlqueue.testing.pgserver import PgServer

PASSWORD_ENV = "SQLQUEUE_CHAOS_PASSWORD"
BABELFISH = Path(__file__).resolve().parents[2].parent / "shared" / "babelfish"
BABELFISH_LOGIN = ("babelfish_user", "12345678")  # the prebuilt test server's login (its README)


@dataclass
class Database:
    """One engine: how jobs reach it, how the harness reaches it, and how it restarts."""

    name: str  # postgres, sqlite, babelfish
    host: str = "127.0.0.1"
    port: int = 0
    password: str | None = None
    pg: PgServer | None = None
    path: Path | None = None
    made: list[str] = field(default_factory=list)  # tables to drop when the run ends

    @property
    def marker(self) -> str:
        return "%s" if self.name == "postgres" else "?"

    def connection(self, port: int | None = None) -> dict[str, str]:
        """The jobs' [connection] section, through ``port`` (the fault proxy) when given."""
        port = port or self.port
        if self.name == "sqlite":
            return {"url": f"sqlite:///{self.path}"}
        if self.name == "postgres":
            return {"url": f"postgresql://sqlqueue@{self.host}:{port}/sqlqueue", "passwordEnv": PASSWORD_ENV}
        user = BABELFISH_LOGIN[0]
        return {
            "url": f"sqlserver://{user}@{self.host}:{port}/babelfish_db?TrustServerCertificate=yes"
            "&driver=ODBC Driver 18 for SQL Server",
            "passwordEnv": PASSWORD_ENV,
        }

    def connect(self) -> Any:
        """A DB-API connection in autocommit mode, straight to the server."""
        if self.name == "sqlite":
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 60000")
            return conn
        if self.name == "postgres":
            import psycopg

            return psycopg.connect(
                host=self.host, port=self.port, dbname="sqlqueue", user="sqlqueue", password=self.password,
                autocommit=True,
            )  # fmt: skip
        import pyodbc

        return pyodbc.connect(
            f"DRIVER={{ODBC Driver 18 for SQL Server}};SERVER={self.host},{self.port};DATABASE=babelfish_db;"
            f"TrustServerCertificate=yes;UID={BABELFISH_LOGIN[0]};PWD={self.password}",
            autocommit=True,
        )

    def run(self, *statements: str) -> None:
        conn = self.connect()
        try:
            for sql in statements:
                conn.cursor().execute(sql)
        finally:
            conn.close()

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Rows of a query, with a few tries: a restart the harness made may still be under way."""
        for attempt in range(30):
            try:
                conn = self.connect()
                try:
                    cur = conn.cursor()
                    cur.execute(sql, params)
                    return [tuple(r) for r in cur.fetchall()]
                finally:
                    conn.close()
            except Exception:
                if attempt == 29:
                    raise
                time.sleep(1)
        raise AssertionError("unreachable")

    def restart(self, down_seconds: float) -> None:
        """Stop the server at once (PostgreSQL: -m immediate, as a crash) and start it again."""
        if self.pg is None:
            raise ValueError(f"{self.name}: the matrix restarts PostgreSQL only")
        self.pg._run("pg_ctl", "-D", str(self.pg.data), "-m", "immediate", "-w", "stop")
        time.sleep(down_seconds)
        self.pg.start()

    def drop_made(self) -> None:
        for table in reversed(self.made):
            try:
                self.run(f"DROP TABLE IF EXISTS {table}")
            except Exception as exc:  # a later run drops what is left; say so and go on
                print(f"chaos: could not drop {table}: {exc}")
        self.made.clear()

    def close(self) -> None:
        if self.name == "babelfish":
            self.drop_made()
        if self.pg is not None:
            self.pg.destroy()


def open_database(name: str, workdir: Path) -> Database | None:
    """The engine ``name``, started (PostgreSQL) or found (Babelfish); None when it cannot run here."""
    if name == "sqlite":
        return Database("sqlite", path=workdir / "queue.db")
    if name == "postgres":
        pg = PgServer().start()
        return Database("postgres", port=pg.port, password=pg.options["password"], pg=pg)
    script = BABELFISH / "babelfish.sh"
    if not script.exists():
        return None
    if subprocess.run([str(script), "status"], capture_output=True).returncode != 0:
        subprocess.run([str(script), "start"], check=True, capture_output=True)
    subprocess.run(["bash", str(BABELFISH / "msodbc18.sh")], check=True, capture_output=True)
    return Database("babelfish", port=int(os.environ.get("BABELFISH_TDS_PORT", "1433")), password=BABELFISH_LOGIN[1])
