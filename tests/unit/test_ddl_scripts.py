"""sql/<dialect>/queue.sql and migrate_layout_1_to_3.sql: the example queue's DDL and its migration
from layout 1, as the dialect generates them, runnable by hand.

The files must equal the generator's output (regenerate them with
``SQLQUEUE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_ddl_scripts.py``), and the
PostgreSQL and SQLite files must run twice on a real engine: they promise to be re-runnable.
"""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

import pytest

from sqlqueue.identifiers import TableName
from sqlqueue.schema import LAYOUT
from sqlqueue.testing.pgserver import PASSWORD
from tests.support.engines import Engine
from tests.support.golden import ROOT, check_golden
from tests.support.layouts import OLDEST, fill_layout1, fixture_statements, rows_by_state, shape
from tests.support.statements import DIALECTS, ddl_script, migration_script

THIS = "tests/unit/test_ddl_scripts.py"
# Tables the script creates: the example queue, its staging, unpublished, layout and claims tables and the sink
# ledger.
CREATED = {"jobs", "jobs_staging", "jobs_unpublished", "jobs_layout", "jobs_claims", "sqlqueue_sink_ledger"}
MIGRATION = "migrate_layout_1_to_3.sql"


def script_path(dialect: str, name: str = "queue.sql") -> Path:
    return ROOT / "sql" / dialect / name


@pytest.mark.parametrize("dialect", DIALECTS)
def test_script_file_equals_generated_ddl(dialect: str) -> None:
    check_golden(script_path(dialect), ddl_script(dialect), THIS)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_migration_script_file_equals_generated_script(dialect: str) -> None:
    check_golden(script_path(dialect, MIGRATION), migration_script(dialect), THIS)


def test_sqlite_script_runs_twice(tmp_path: Path) -> None:
    script = script_path("sqlite").read_text(encoding="utf-8")
    conn = sqlite3.connect(tmp_path / "queue.db")
    try:
        conn.executescript(script)
        conn.executescript(script)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        layouts = conn.execute("SELECT layout FROM jobs_layout").fetchall()
    finally:
        conn.close()
    assert tables >= CREATED and layouts == [(LAYOUT,)]


def test_postgres_script_runs_twice(postgres_server) -> None:
    import psycopg

    script = script_path("postgres").read_text(encoding="utf-8")
    # A schema of its own: other tests share this server and its public sqlqueue_sink_ledger.
    schema = f"ddl_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server.url, password=PASSWORD, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        try:
            conn.execute(f"SET search_path TO {schema}")
            conn.execute(script)
            conn.execute(script)
            rows = conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
            ).fetchall()
            layouts = conn.execute("SELECT layout FROM jobs_layout").fetchall()
        finally:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
    assert {r[0] for r in rows} >= CREATED and layouts == [(LAYOUT,)]


def migrated_as_expected(old, fresh) -> None:
    """``old`` (filled by fill_layout1) is at the current layout, shaped as ``fresh``, its rows kept."""
    assert old.layout() == LAYOUT
    assert shape(old) == shape(fresh)
    assert rows_by_state(old) == {
        "ready": ["p1", "p2", "r1", "r2", "r3"],
        "claimed": ["c1", "c2"],
        "failed": ["f1"],
        "staging": ["k1", "k2", "k3", "s1", "s2"],
    }


def test_sqlite_migration_script_runs_twice_and_leaves_the_layout_create_makes(tmp_path: Path) -> None:
    engine = Engine("sqlite", {"url": f"sqlite:///{tmp_path}/queue.db"})
    old = engine.queue("jobs")
    with old.transaction() as cur:
        for sql in fixture_statements("sqlite", OLDEST, old.table):
            cur.execute(sql)
    fill_layout1(old)
    old.close()
    conn = sqlite3.connect(tmp_path / "queue.db")
    try:
        conn.executescript(script_path("sqlite", MIGRATION).read_text(encoding="utf-8"))
        conn.executescript(script_path("sqlite", MIGRATION).read_text(encoding="utf-8"))
    finally:
        conn.close()
    try:
        migrated_as_expected(old, engine.new_queue())
    finally:
        engine.close()


def test_postgres_migration_script_runs_twice_and_leaves_the_layout_create_makes(postgres_server) -> None:
    import psycopg

    # The script runs statement by statement, as psql sends it: CONCURRENTLY refuses a multi-statement string.
    statements = script_path("postgres", MIGRATION).read_text(encoding="utf-8").split(";\n\n")
    schema = f"mig_{uuid.uuid4().hex[:12]}"
    engine = Engine("postgres", {"url": postgres_server.url, "password": PASSWORD})
    old = engine.queue(f"{schema}.jobs")
    with psycopg.connect(postgres_server.url, password=PASSWORD, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        try:
            conn.execute(f"SET search_path TO {schema}")
            for sql in fixture_statements("postgres", OLDEST, TableName("jobs")):
                conn.execute(sql)
            fill_layout1(old)
            for _ in range(2):
                for sql in filter(str.strip, statements):
                    conn.execute(sql)
            fresh = engine.queue(f"{schema}.fresh")
            fresh.create()
            migrated_as_expected(old, fresh)
        finally:
            engine.close()
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
