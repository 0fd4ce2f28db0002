"""Which SQL Server errors are worth another try, judged from messages drivers really sent.

Each message is a pyodbc error as recorded in a public report (the source is named beside it):
pyodbc formats a diagnostic as ``[SQLSTATE] <driver text> (<native error>) (<ODBC function>)``.
Failovers, throttling and deadlocks arrive with SQLSTATE HY000 or 42000, so only the number tells.

mssql-python meets the same diagnostic record through the same Driver 18 and keeps less of it: the
exception its own SQLSTATE table picks, and the text without the SQLSTATE, the native number or the
ODBC function (microsoft/mssql-python#581). Every case runs once per driver, the record rebuilt the
way each reports it; one judgement (``sqlserver_errors``) must classify both alike.
"""

from __future__ import annotations

import re

import pyodbc
import pytest

from sqlqueue.dialects.sqlserver import SqlServerEngine
from tests.support.sqlserver_drivers import MSSQL_PYTHON, driver_param

MS17 = "[Microsoft][ODBC Driver 17 for SQL Server]"
MS18 = "[Microsoft][ODBC Driver 18 for SQL Server]"

# (label, SQLSTATE, message)
RETRIED = [
    # apache/airflow#19856
    (
        "deadlock, Microsoft driver",
        "40001",
        f"[40001] {MS17}[SQL Server]Transaction (Process ID 55) was deadlocked on lock resources with another process "
        "and has been chosen as the deadlock victim. Rerun the transaction. (1205) (SQLExecDirectW)",
    ),
    # home-assistant/core#34438: FreeTDS reports the deadlock as 42000
    (
        "deadlock, FreeTDS",
        "42000",
        "[42000] [FreeTDS][SQL Server]Transaction (Process ID 58) was deadlocked on lock | communication buffer "
        "resources with another process and has been chosen as the deadlock victim. Rerun the transaction. "
        "(1205) (SQLExecDirectW)",
    ),
    # Azure SQL failover, ODBC Driver 18 (as reported in Azure/GPT-RAG's troubleshooting notes)
    (
        "database not available",
        "HY000",
        f"[HY000] {MS18}[SQL Server]Database 'databasename' on server 'servername.database.windows.net' is not "
        "currently available.  Please retry the connection later.  If the problem persists, contact customer "
        "support, and provide them the session tracing ID of '{3B6C6E7D-744D-49D5-B152-8418ADA28174}'. "
        "(40613) (SQLDriverConnect)",
    ),
    # jdglaser/fast-to-sql#14
    (
        "connection reset",
        "08S01",
        f"[08S01] {MS17}TCP Provider: An existing connection was forcibly closed by the remote host.\r\n (10054) "
        f"(SQLExecute); [08S01] {MS17}Communication link failure (10054)",
    ),
    # sqlalchemy/sqlalchemy#5629
    ("connection timed out", "08S01", f"[08S01] {MS17}TCP Provider: Error code 0x274C (10060) (SQLExecDirectW)"),
    # the throttling text of error 40501 (Microsoft Learn, "Troubleshoot common connection issues")
    (
        "service busy",
        "HY000",
        f"[HY000] {MS18}[SQL Server]The service is currently busy. Retry the request after 10 seconds. "
        "Incident ID: {A1B2}. Code: 4849664. (40501) (SQLExecDirectW)",
    ),
    # the text of error 1222 (Microsoft Learn, MSSQLSERVER_1222)
    (
        "lock time-out",
        "HY000",
        f"[HY000] {MS18}[SQL Server]Lock request time out period exceeded. (1222) (SQLExecDirectW)",
    ),
    # The next four were raised here, the server (Babelfish) going away behind a Toxiproxy proxy
    # (tests/conformance/test_outages.py): a session's connection closed, then new connections refused.
    (
        "connection closed, Driver 18",
        "08S01",
        f"[08S01] {MS18}TCP Provider: Error code 0x2746 (10054) (SQLSetConnectAttr)",
    ),
    ("refused, Driver 18 (its login timeout)", "HYT00", f"[HYT00] {MS18}Login timeout expired (0) (SQLDriverConnect)"),
    (
        "connection closed, FreeTDS",
        "08S01",
        "[08S01] [FreeTDS][SQL Server]Communication link failure (0) (SQLExecDirectW)",
    ),
    (
        "refused, FreeTDS",
        "08S01",
        "[08S01] [FreeTDS][SQL Server]Unable to connect: Adaptive Server is unavailable or does not exist (20009) "
        "(SQLDriverConnect)",
    ),
]
# Recorded at a first connection: a failover is retried there too, a wrong address or login is not.
FIRST_CONNECT_RETRIED = [r for r in RETRIED if r[0] in ("database not available", "service busy", "connection reset")]
FAILS_AT_ONCE = [r for r in RETRIED if r[0].startswith("refused")] + [
    # davidcomerford/pyodbc-mssql-lambda-layer#4
    ("wrong password", "28000", f"[28000] {MS18}[SQL Server]Login failed for user 'admin'. (18456) (SQLDriverConnect)"),
    # yehoshuadimarsky/bcpandas#28 (the English text of 4060)
    (
        "unknown database",
        "42000",
        f'[42000] {MS17}[SQL Server]Cannot open database "qq" requested by the login. The login failed. (4060) '
        "(SQLDriverConnect)",
    ),
    # datalens-tech/datalens#386
    (
        "unreachable address, FreeTDS",
        "08001",
        "[08001] [FreeTDS][SQL Server]Unable to connect to data source (0) (SQLDriverConnect)",
    ),
]
NEVER_RETRIED = [
    ("unknown column", "42S22", f"[42S22] {MS18}[SQL Server]Invalid column name 'x'. (207) (SQLExecDirectW)"),
    (
        "truncation",
        "22001",
        f"[22001] {MS18}[SQL Server]String or binary data would be truncated. (2628) (SQLExecDirectW)",
    ),
]


def as_mssql_python(state: str, message: str) -> BaseException:
    """The same diagnostic record as mssql-python raises it: its SQLSTATE table picks the class and
    driver_error, and the text loses the SQLSTATE prefix, the native number and the ODBC function
    (and, cut by mssql-python itself, the driver's name after "[Microsoft]")."""
    import mssql_python

    text = re.sub(r"^\[\w+\] | \(-?\d+\)| \(SQL\w+\)", "", message)
    return mssql_python.exceptions.sqlstate_to_exception(state, text)


RAISED_BY = {"pyodbc": pyodbc.Error, MSSQL_PYTHON: as_mssql_python}
# pyodbc's errors are built without an ODBC driver; mssql-python's need it installed.
RAISERS = ["pyodbc", driver_param(MSSQL_PYTHON)]


@pytest.fixture(params=RAISERS)
def transient(request):
    raise_as = RAISED_BY[request.param]

    def judge(state: str, message: str, first_connect: bool) -> bool:
        return SqlServerEngine().is_transient(raise_as(state, message), first_connect)

    return judge


@pytest.mark.parametrize(("label", "state", "message"), RETRIED, ids=[r[0] for r in RETRIED])
def test_an_error_worth_another_try_is_transient_once_connected(transient, label: str, state: str, message: str):
    assert transient(state, message, first_connect=False)


@pytest.mark.parametrize(
    ("label", "state", "message"), FIRST_CONNECT_RETRIED, ids=[r[0] for r in FIRST_CONNECT_RETRIED]
)
def test_a_failover_met_by_the_first_connection_is_retried(transient, label: str, state: str, message: str):
    assert transient(state, message, first_connect=True)


@pytest.mark.parametrize(("label", "state", "message"), FAILS_AT_ONCE, ids=[r[0] for r in FAILS_AT_ONCE])
def test_a_wrong_login_database_or_address_fails_the_first_connection_at_once(
    transient, label: str, state: str, message: str
):
    assert not transient(state, message, first_connect=True)


@pytest.mark.parametrize(("label", "state", "message"), NEVER_RETRIED, ids=[r[0] for r in NEVER_RETRIED])
def test_a_wrong_statement_is_never_retried(transient, label: str, state: str, message: str):
    assert not transient(state, message, first_connect=False)


def test_mssql_python_keeps_no_native_number_so_its_record_is_read_by_its_text():
    pytest.importorskip("mssql_python", reason="mssql-python is not installed")
    (lock_timeout,) = [r for r in RETRIED if r[0] == "lock time-out"]
    exc = as_mssql_python(*lock_timeout[1:])
    assert str(exc) == (
        "Driver Error: General error; DDBC Error: [Microsoft][SQL Server]Lock request time out period exceeded."
    )


def test_an_sqlstate_missing_from_mssql_pythons_table_is_read_from_its_driver_error():
    mssql_python = pytest.importorskip("mssql_python", reason="mssql-python is not installed")
    exc = mssql_python.exceptions.sqlstate_to_exception("08S02", "gone") or mssql_python.exceptions.DatabaseError(
        driver_error="An error occurred with SQLSTATE code: 08S02", ddbc_error="gone"
    )
    assert SqlServerEngine().is_transient(exc, first_connect=False)


@pytest.mark.parametrize("driver", RAISERS)
def test_a_mapped_error_keeps_no_password(driver: str):
    exc = RAISED_BY[driver]("28000", f"[28000] {MS18}Login failed; PWD={{hunter2}} (18456) (SQLDriverConnect)")
    mapped = SqlServerEngine().map_error(exc, None, proven=False)
    assert "hunter2" not in str(mapped) and not mapped.transient


# ---- through the real Queue and RetryPolicy ---------------------------------------------------------
class Connection:
    """What pyodbc.connect returns, recording what sqlqueue runs on it."""

    def __init__(self) -> None:
        self.executed: list[str] = []

    def execute(self, sql: str) -> None:
        self.executed.append(sql)

    def close(self) -> None:
        pass


def queue_meeting(monkeypatch, *failures: tuple[str, str]):
    """A SQL Server queue whose first connection attempts fail with ``failures``, then succeed."""
    from sqlqueue.connection import parse_connection
    from sqlqueue.identifiers import TableName
    from sqlqueue.queue import Queue

    attempts: list[str] = []
    pending = list(failures)

    def connect(text: str, autocommit: bool) -> Connection:
        attempts.append(text)
        if pending:
            raise pyodbc.Error(*pending.pop(0))
        return Connection()

    monkeypatch.setattr(pyodbc, "connect", connect)
    monkeypatch.setattr(pyodbc, "drivers", lambda: ["ODBC Driver 18 for SQL Server"])
    spec = parse_connection("sqlserver://db.example:1433/queues", user="app", password="hunter2")
    return Queue(spec, TableName("jobs", "dbo")), attempts


def test_a_first_connection_meeting_a_failover_is_retried_and_then_works(monkeypatch):
    from sqlqueue.retry import RetryPolicy

    failover = [r for r in RETRIED if r[0] == "database not available"][0][1:]
    queue, attempts = queue_meeting(monkeypatch, failover)
    conn = RetryPolicy(timeout_ms=1000, backoff_ms=1).run(lambda: queue.conn, "connecting")
    assert len(attempts) == 2
    assert conn.executed == ["SET TRANSACTION ISOLATION LEVEL READ COMMITTED"]


@pytest.mark.parametrize("label", ["wrong password", "unknown database"])
def test_a_first_connection_with_a_wrong_login_or_database_fails_after_one_attempt(monkeypatch, label):
    from sqlqueue.errors import DatabaseError
    from sqlqueue.retry import RetryPolicy

    failure = [r for r in FAILS_AT_ONCE if r[0] == label][0][1:]
    queue, attempts = queue_meeting(monkeypatch, failure)
    with pytest.raises(DatabaseError) as caught:
        RetryPolicy(timeout_ms=1000, backoff_ms=1).run(lambda: queue.conn, "connecting")
    assert len(attempts) == 1 and "hunter2" not in str(caught.value)
