"""The plugin's fixtures. Nothing starts until a test asks for it: Spark with the first test that
uses ``spark``, PostgreSQL with the first queue made on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .pgserver import NO_SERVER, PgServer, server_binaries
from .queues import POSTGRES, SQLITE, Database, QueueFactory, sqlite_database
from .sessions import start_session
from .settings import DATABASE, JARS


@pytest.fixture(scope="session")
def spark(pytestconfig: pytest.Config) -> Iterator[Any]:
    """One local SparkSession for the run (local[2]), with Delta and the micro-batch tuning, quiet;
    a Spark Connect one when ``SPARK_REMOTE`` is set."""
    try:
        session = start_session(JARS.value(pytestconfig))
    except RuntimeError as exc:
        pytest.fail(f"sqlqueue.testing: {exc}", pytrace=False)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PgServer]:
    """A throwaway PostgreSQL server for the run (skips the test where its binaries are missing)."""
    if server_binaries() is None:
        pytest.skip(NO_SERVER)
    server = PgServer().start()
    yield server
    server.destroy()


@pytest.fixture
def sqlqueue_database(request: pytest.FixtureRequest, tmp_path: Path) -> Database:
    """Where ``make_queue`` makes its queues (the ``--sqlqueue-db`` setting)."""
    chosen = DATABASE.value(request.config) or SQLITE
    if chosen == SQLITE:
        return sqlite_database(tmp_path)
    if chosen == POSTGRES:
        return Database(request.getfixturevalue("postgres_server").options)
    if "://" not in chosen:
        pytest.fail(
            f"sqlqueue.testing: {DATABASE.option} {chosen!r} is not allowed: use {SQLITE}, {POSTGRES} or a URL "
            "(postgresql://user:password@host:5432/db, sqlserver://user:password@host:1433/db)",
            pytrace=False,
        )
    return Database.from_url(chosen)


@pytest.fixture
def make_queue(sqlqueue_database: Database) -> Iterator[QueueFactory]:
    """``make_queue(columns="payload text", order="fifo", rows=())``: a new queue table for this test,
    pre-filled with ``rows``; ``queue.source_options(**extra)`` and ``queue.sink_options(**extra)`` are
    the Spark options that reach it."""
    factory = QueueFactory(sqlqueue_database)
    yield factory
    factory.close()


@pytest.fixture
def delta_path(tmp_path: Path) -> str:
    """A path for a Delta table, not created yet."""
    return str(tmp_path / "delta")


@pytest.fixture
def checkpoint_path(tmp_path: Path) -> str:
    """A checkpoint location of this test's own."""
    return str(tmp_path / "checkpoint")
