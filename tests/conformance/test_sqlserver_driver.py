"""What each SQL Server driver does with the statements sqlqueue sends, against a live server.

These run only on SQL Server (``make test-sqlserver``, and ``make test-babelfish`` once per driver).
"""

from __future__ import annotations

import contextlib
import re

import pytest

from sqlqueue.errors import DatabaseError


@pytest.fixture
def sqlserver(engine):
    if engine.name != "sqlserver":
        pytest.skip("what SQL Server's drivers bind and report")
    return engine


@pytest.mark.parametrize("length", [1, 4000, 4001, 100_000])
def test_the_bulk_paths_parameter_reaches_the_server_whole(sqlserver, length):
    queue = sqlserver.new_queue()
    d = queue.engine
    text = "😀" + "é" * (length - 1)  # non-ASCII, and a character outside the BMP
    with queue.transaction() as cur, d.long_text_cursor(cur) as loader:
        loader.execute("SELECT DATALENGTH(CAST(? AS NVARCHAR(MAX)))", [text])
        assert loader.fetchall()[0][0] == len(text.encode("utf-16-le"))  # bytes of UTF-16, as NVARCHAR stores


def test_an_error_that_ends_the_transaction_is_the_error_raised_not_the_rollbacks(sqlserver):
    # XACT_ABORT ON dooms the transaction at the first error, as a deadlock victim's (1205) is: SQL
    # Server rolls it back itself, and the client's ROLLBACK then fails with 3903. On Babelfish every
    # error ends the transaction.
    queue = sqlserver.new_queue()
    with pytest.raises(DatabaseError) as raised, queue.transaction() as cur:
        cur.execute("SET XACT_ABORT ON")
        cur.execute("SELECT 1 / 0")
    # pyodbc's message carries the number; mssql-python's only the text (Babelfish says "division by zero")
    assert re.search(r"8134|divide by zero|division by zero", str(raised.value), re.I)
    assert "3903" not in str(raised.value)
    queue.enqueue([{"payload": "the connection is still usable"}])
    assert queue.inspection.count_ready() == 1


def test_a_connection_whose_transaction_an_error_ended_is_back_in_autocommit(sqlserver):
    # A connection pool (unixODBC's) hands the same connection out again: its autocommit must be on,
    # though the ROLLBACK that FreeTDS switches it on with fails with 3903.
    queue = sqlserver.new_queue()
    conn = queue.engine.connect(queue.spec)
    divided_by_zero = r"(?i)8134|divide by zero|division by zero"
    try:
        with pytest.raises(Exception, match=divided_by_zero), queue.engine.transaction(conn) as cur:
            cur.execute("SET XACT_ABORT ON")
            cur.execute("SELECT 1 / 0")
        assert conn.autocommit
        assert conn.cursor().execute("SELECT @@TRANCOUNT").fetchone()[0] == 0
    finally:
        with contextlib.suppress(Exception):  # the pool keeps the session's settings
            conn.cursor().execute("SET XACT_ABORT OFF")
        conn.close()
