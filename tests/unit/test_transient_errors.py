"""Which PostgreSQL and SQLite errors are worth another try (SQL Server's: test_sqlserver_errors.py).

The PostgreSQL texts are what psycopg 3.3 raised here around a real server's restart
(``pg_ctl stop -m immediate``, ``-m fast``, a start with crash recovery) and ``pg_terminate_backend``.
"""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from psycopg import errors

from sqlqueue.dialects.postgres import PostgresEngine
from sqlqueue.dialects.sqlite import SqliteEngine

PORT = 'connection to server at "127.0.0.1", port 54141 failed'
REFUSED = (
    f"connection failed: {PORT}: Connection refused\n\tIs the server running on that host and accepting TCP/IP "
    "connections?"
)
LOST = (
    "consuming input failed: server closed the connection unexpectedly\n\tThis probably means the server "
    "terminated abnormally\n\tbefore or while processing the request."
)
STARTING_UP = f"connection failed: {PORT}: FATAL:  the database system is starting up"
NOT_CONSISTENT = (
    f"connection failed: {PORT}: FATAL:  the database system is not yet accepting connections\n"
    "DETAIL:  Consistent recovery state has not been yet reached."
)
SHUTTING_DOWN = f"connection failed: {PORT}: FATAL:  the database system is shutting down"
TOO_MANY = f"connection failed: {PORT}: FATAL:  sorry, too many clients already"

# (label, the error) transient once the address is proven (a connection worked, or a Spark task's stream reached it)
ONCE_PROVEN = [
    ("connection refused", psycopg.OperationalError(REFUSED)),
    ("server closed the connection", psycopg.OperationalError(LOST)),
    ("SSL EOF", psycopg.OperationalError("consuming input failed: SSL SYSCALL error: EOF detected")),
    ("connection lost", psycopg.OperationalError("the connection is lost")),
    ("connection failure 08006", errors.ConnectionFailure("terminating connection")),
]
# transient on a first connection too: the server itself says it cannot take the connection now
ALWAYS = [
    ("starting up", psycopg.OperationalError(STARTING_UP)),
    ("recovery not consistent", psycopg.OperationalError(NOT_CONSISTENT)),
    ("shutting down", psycopg.OperationalError(SHUTTING_DOWN)),
    ("too many clients", psycopg.OperationalError(TOO_MANY)),
    ("admin shutdown 57P01", errors.AdminShutdown("terminating connection due to administrator command")),
    ("crash shutdown 57P02", errors.CrashShutdown("terminating connection because of crash of another server")),
    ("cannot connect now 57P03", errors.CannotConnectNow("the database system is starting up")),
    ("serialization failure", errors.SerializationFailure("could not serialize access")),
    ("deadlock", errors.DeadlockDetected("deadlock detected")),
    ("lock timeout", errors.LockNotAvailable("canceling statement due to lock timeout")),
]
NEVER = [
    ("wrong password", psycopg.OperationalError(f"connection failed: {PORT}: FATAL:  password authentication failed")),
    (
        "unknown database",
        psycopg.OperationalError(f'connection failed: {PORT}: FATAL:  database "nope" does not exist'),
    ),
    ("statement cancelled", errors.QueryCanceled("canceling statement due to statement timeout")),
    ("syntax", errors.SyntaxError('syntax error at or near "SELEC"')),
    ("unique key", errors.UniqueViolation("duplicate key value violates unique constraint")),
    ("interface", psycopg.InterfaceError("the cursor is closed")),
]


def labels(cases):
    return [label for label, _ in cases]


@pytest.mark.parametrize("exc", [e for _, e in ONCE_PROVEN + ALWAYS], ids=labels(ONCE_PROVEN + ALWAYS))
def test_a_postgres_error_worth_another_try_is_transient_once_the_address_is_proven(exc):
    assert PostgresEngine().is_transient(exc, first_connect=False)


@pytest.mark.parametrize("exc", [e for _, e in ALWAYS], ids=labels(ALWAYS))
def test_a_postgres_server_saying_it_cannot_take_the_connection_now_is_transient_on_a_first_connection(exc):
    assert PostgresEngine().is_transient(exc, first_connect=True)


@pytest.mark.parametrize("exc", [e for _, e in ONCE_PROVEN], ids=labels(ONCE_PROVEN))
def test_a_first_postgres_connection_refused_or_lost_fails_at_once(exc):
    assert not PostgresEngine().is_transient(exc, first_connect=True)


@pytest.mark.parametrize("exc", [e for _, e in NEVER], ids=labels(NEVER))
def test_a_postgres_error_another_try_cannot_mend_is_never_transient(exc):
    assert not PostgresEngine().is_transient(exc, first_connect=False)


def sqlite_error(run) -> sqlite3.Error:
    try:
        run()
    except sqlite3.Error as exc:
        return exc
    raise AssertionError("no error")


def test_a_busy_sqlite_database_is_transient_even_on_a_first_connection(tmp_path):
    path = str(tmp_path / "q.db")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (a INTEGER)")
    holder.execute("BEGIN IMMEDIATE")
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    busy = sqlite_error(lambda: other.execute("BEGIN IMMEDIATE"))
    assert busy.sqlite_errorname == "SQLITE_BUSY"
    assert SqliteEngine().is_transient(busy, first_connect=True)


def test_a_sqlite_error_another_try_cannot_mend_is_never_transient(tmp_path):
    conn = sqlite3.connect(str(tmp_path / "q.db"))
    missing = sqlite_error(lambda: conn.execute("SELECT * FROM nope"))
    unopenable = sqlite_error(lambda: sqlite3.connect(str(tmp_path / "no" / "such" / "q.db")))
    assert not SqliteEngine().is_transient(missing, first_connect=False)
    assert not SqliteEngine().is_transient(unopenable, first_connect=False)
