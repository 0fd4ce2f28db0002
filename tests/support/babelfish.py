"""Babelfish for PostgreSQL as a witness of SQL Server's drivers, and its known gaps.

Babelfish speaks TDS, so SQL Server's drivers meet it as they meet SQL Server: login, binding,
result sets and error numbers are real. It translates T-SQL onto PostgreSQL, so some correct T-SQL
fails there or behaves otherwise, and it never shows SQL Server's locking. A test that meets such a
gap carries ``@pytest.mark.babelfish_gap("<gap>")``: on Babelfish it is a strict expected failure
(a test that starts to pass fails the run, so a gap that closes is noticed), and everywhere else
an ordinary test. The T-SQL is never bent to suit Babelfish (../shared/babelfish/README.md).
"""

from __future__ import annotations

import pytest

from sqlqueue.dialects.odbc import is_freetds
from sqlqueue.dialects.sqlserver_drivers import MSSQL_PYTHON

# Each gap: what Babelfish does, against what SQL Server does (Microsoft's documentation).
GAPS = {
    "dmv": (
        "Babelfish has no sys.dm_exec_requests ('relation \"sys.dm_exec_requests\" does not exist'), where SQL "
        "Server lists each request's blocking_session_id (Microsoft's sys.dm_exec_requests reference)"
    ),
    "update_cte": (
        "Babelfish cannot UPDATE through a common table expression ('relation \"batch\" does not exist'; with "
        "OUTPUT ... INTO, or a DELETE, 'stack depth limit exceeded'); the ordered claims (fifo, lifo, priority, "
        "pending, an adopted table's order) do, as Microsoft's UPDATE and CREATE VIEW references (updatable "
        "CTEs) and NServiceBus's receive describe"
    ),
    "table_hints": (
        "Babelfish parses and ignores table hints (READPAST, UPDLOCK, ROWLOCK, READCOMMITTEDLOCK): concurrent "
        "claimers block and deadlock (1205) where SQL Server's READPAST skips locked rows"
    ),
    "index_names": (
        "sys.indexes.name holds Babelfish's internal index name, so a check by the name sqlqueue gave the index "
        "(create's IF NOT EXISTS guard, the doctor, migrate) misses it"
    ),
    "openjson_max": (
        "Babelfish's OPENJSON ... WITH (c NVARCHAR(MAX) '$.c') returns at most 4,000 characters; SQL Server "
        "returns the whole value (the documented way past JSON_VALUE's 4,000-character limit)"
    ),
    "json_escapes": (
        "Babelfish's OPENJSON ... WITH and JSON_VALUE return a JSON string's escapes as written (\\\" and \\n stay two "
        "characters each); SQL Server returns the characters they stand for, the inverse of STRING_ESCAPE's table "
        "(Microsoft's OPENJSON and STRING_ESCAPE references), so text with quotes or line breaks arrives whole"
    ),
    "convert_style": "Babelfish's CONVERT(VARBINARY(MAX), s, 2) ignores style 2: binary arrives as its hex text",
    "catalog": (
        "Babelfish's catalog differs from SQL Server's: compatibility level 120, lock escalation not recorded, "
        "READ_COMMITTED_SNAPSHOT on; the doctor reports what it reads"
    ),
    "datetime2_param": (
        "a DATETIME2 parameter that pyodbc sends through Microsoft's driver loses its fractional seconds on "
        "Babelfish (FreeTDS's and mssql-python's keep them)"
    ),
    "computed_output": (
        "Babelfish 4.2's server process crashes (signal 11, and every session with it) on UPDATE ... OUTPUT "
        "inserted.<computed column> INTO ...; SQL Server outputs computed columns (OUTPUT clause reference). "
        "No test meets this gap as an expected failure, since the crash fails the tests running beside it: "
        "tests/support/user_tables.claimer makes seed 003's table there without its computed duration"
    ),
    "type_clash": (
        "Babelfish compares a DATETIME2 column with an int (StartedAt = 1), which SQL Server refuses when it "
        "compiles the statement (error 206, operand type clash: int converts to no datetime2, Microsoft's "
        "'Data type conversion (Database Engine)' chart)"
    ),
    "nocheck": (
        "Babelfish refuses ALTER TABLE ... WITH NOCHECK ADD CONSTRAINT ('not currently supported in Babelfish'), "
        "which migrate's state-check step uses so as not to scan the table under a schema lock (Microsoft's "
        "ALTER TABLE reference, WITH CHECK | WITH NOCHECK)"
    ),
}


# Gaps that only some drivers meet, by the driver the options name (tests/support/engines.py).
# mssql-python binds a datetime as DATETIME2(6) whatever the server's type info says (tests/drivers).
DRIVER_GAPS = {"datetime2_param": lambda driver: not is_freetds(driver) and driver.lower() != MSSQL_PYTHON}


def mark_gaps(node: pytest.Node, driver: str) -> None:
    """Make ``node`` a strict expected failure on the Babelfish gaps it is marked with that ``driver`` meets."""
    gaps = [
        gap
        for marker in node.iter_markers("babelfish_gap")
        for gap in marker.args
        if DRIVER_GAPS.get(gap, lambda _: True)(driver)
    ]
    if gaps:
        reason = "; ".join(GAPS[gap] for gap in gaps)
        node.add_marker(pytest.mark.xfail(strict=True, reason=f"Babelfish gap: {reason}"))
