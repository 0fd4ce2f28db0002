"""sql/<dialect>/queue.sql: the example queue's DDL as the dialect generates it, runnable by hand.

The files must equal the generator's output (regenerate them with
``SQLQUEUE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_ddl_scripts.py``), and the
PostgreSQL and SQLite files must run twice on a real engine: they promise to be re-runnable.
"""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

import pytest

from tests.support.golden import ROOT, check_golden
from tests.support.pgserver import PASSWORD
from tests.support.statements import DIALECTS, ddl_script

THIS = "tests/unit/test_ddl_scripts.py"
# Tables the script creates: the example queue, its staging and unpublished tables and the sink ledger.
CREATED = {"jobs", "jobs_staging", "jobs_unpublished", "sqlqueue_sink_ledger"}


def script_path(dialect: str) -> Path:
    return ROOT / "sql" / dialect / "queue.sql"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_script_file_equals_generated_ddl(dialect: str) -> None:
    check_golden(script_path(dialect), ddl_script(dialect), THIS)


def test_sqlite_script_runs_twice(tmp_path: Path) -> None:
    script = script_path("sqlite").read_text(encoding="utf-8")
    conn = sqlite3.connect(tmp_path / "queue.db")
    try:
        conn.executescript(script)
        conn.executescript(script)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()
    assert tables >= CREATED


def test_postgres_script_runs_twice(pg_server) -> None:
    import psycopg

    script = script_path("postgres").read_text(encoding="utf-8")
    # A schema of its own: other tests share this server and its public sqlqueue_sink_ledger.
    schema = f"ddl_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.url, password=PASSWORD, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        try:
            conn.execute(f"SET search_path TO {schema}")
            conn.execute(script)
            conn.execute(script)
            rows = conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
            ).fetchall()
        finally:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
    assert {r[0] for r in rows} >= CREATED
