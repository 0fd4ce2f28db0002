"""Which SQL Server errors are worth another try: one judgement for every driver.

Each driver reports an error differently, so each turns its exception into a ``Diagnosis`` (the
SQLSTATE and the native SQL Server error numbers it can tell) and ``is_transient`` judges that.
pyodbc writes both into its message: ``[40001] [Microsoft]...deadlock victim... (1205) (SQLExecDirectW)``.
mssql-python 1.16 keeps neither: its exception class and ``driver_error`` text come from its own
SQLSTATE table (``mssql_python.exceptions.sqlstate_to_exception``), and its ``ddbc_error`` is the
server's message without the number (microsoft/mssql-python#581, open, asks for both). So for
mssql-python the SQLSTATE is read back through that same table, and the numbers from the English
texts Microsoft documents for them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Microsoft.Data.SqlClient's baseline transient errors (SqlConfigurableRetryFactory's default
# list, dotnet/SqlClient src/Microsoft.Data.SqlClient/src/Microsoft/Data/SqlClient/Reliability/
# SqlConfigurableRetryFactory.cs), plus the two transport errors its connection-open retry says
# "might also deserve inclusion" (10053, 10054; SqlConnectionInternal.cs). Azure SQL and SQL Server
# send most of them with SQLSTATE HY000 or 42000 (FreeTDS even reports a deadlock as 42000): the
# number is only in the message text.
TRANSIENT_ERRORS = frozenset(
    {
        233,
        997,  # transport errors before or during login
        1204,  # cannot obtain a LOCK resource
        1205,  # deadlock victim
        1222,  # lock request time-out
        4060,  # cannot open database (a failover moves it; see FIRST_CONNECT_FATAL)
        4221,  # login to a read-secondary waiting for row versioning
        10053,
        10054,
        10060,  # transport errors: connection aborted, reset, timed out
        10928,
        10929,  # resource limit reached / server too busy
        40143,
        40197,
        40540,  # the service encountered an error processing the request (reconfiguration)
        40501,  # service busy (throttling)
        40613,  # database not currently available
        42108,
        42109,  # serverless database waking up
        49918,
        49919,
        49920,  # not enough resources / too many operations
    }
)
# On a first connection these are a wrong database name, not a failover: fail at once.
FIRST_CONNECT_FATAL = frozenset({4060})
# SQLSTATEs worth another try once connected: connection failures (08xxx), serialization failure
# (40001, which Microsoft's driver gives a deadlock victim), time-outs.
TRANSIENT_STATES = frozenset({"40001", "HYT00", "HYT01"})


@dataclass(frozen=True)
class Diagnosis:
    """What a driver's error says: its SQLSTATE ('' when unknown) and native error numbers."""

    state: str
    numbers: frozenset[int]


def is_transient(diagnosis: Diagnosis, first_connect: bool) -> bool:
    """Lost connections, failovers, throttling, deadlocks and lock time-outs: worth another try.

    SQLSTATE 08xxx (connection failure) counts only once a connection has worked: on a first
    connection it is a wrong address, which retrying would only delay.
    """
    if first_connect:
        return bool(diagnosis.numbers & (TRANSIENT_ERRORS - FIRST_CONNECT_FATAL))
    state = diagnosis.state
    return state.startswith("08") or state in TRANSIENT_STATES or bool(diagnosis.numbers & TRANSIENT_ERRORS)


# ---- pyodbc ------------------------------------------------------------------------------------------
# pyodbc's args are (SQLSTATE, message), and it ends each diagnostic record with its native error
# number in parentheses: "... (1205) (SQLExecDirectW)".
_NATIVE_NUMBER = re.compile(r"\((-?\d+)\)")


def from_pyodbc(exc: BaseException) -> Diagnosis:
    args = getattr(exc, "args", ())
    state = str(args[0]) if args else ""
    numbers = {int(n) for n in _NATIVE_NUMBER.findall(" ".join(str(a) for a in args))}
    return Diagnosis(state, frozenset(numbers))


# ---- mssql-python ------------------------------------------------------------------------------------
# The server's English texts of the transient errors that arrive without a telling SQLSTATE (HY000,
# 42000), as Microsoft documents them ("Database engine events and errors", MSSQLSERVER_1204/1205/1222;
# Azure SQL "Troubleshoot transient connection errors" for 4060, 4221, 40197, 40501, 40613, 49918-49920;
# 10928/10929 "Resource governance"; 42108/42109 serverless pools), and Windows' text of 10054, which
# Driver 18 passes on from the TCP provider. A server whose login language is
# not English sends other texts: there only the SQLSTATEs (08xxx, 40001, HYT00) classify its errors.
TRANSIENT_TEXTS = (
    (10054, re.compile(r"An existing connection was forcibly closed by the remote host", re.I)),
    (1204, re.compile(r"cannot obtain a LOCK resource", re.I)),
    (1205, re.compile(r"chosen as the deadlock victim", re.I)),
    (1222, re.compile(r"Lock request time out period exceeded", re.I)),
    (4060, re.compile(r"Cannot open database .* requested by the login", re.I)),
    (4221, re.compile(r"Login to read-secondary failed due to long wait", re.I)),
    (10928, re.compile(r"Resource ID ?: ?\d+\. The \w+ limit for the database is \d+ and has been reached", re.I)),
    (10929, re.compile(r"Resource ID ?: ?\d+\. The \w+ minimum guarantee is \d+", re.I)),
    (40197, re.compile(r"The service has encountered an error processing your request", re.I)),
    (40501, re.compile(r"The service is currently busy", re.I)),
    (40613, re.compile(r"Database '.*' on server '.*' is not currently available", re.I)),
    (42108, re.compile(r"Can not connect to the SQL pool since it is paused", re.I)),
    (42109, re.compile(r"The SQL pool is warming up", re.I)),
    (49918, re.compile(r"Not enough resources to process request", re.I)),
    (49919, re.compile(r"Too many create or update operations in progress", re.I)),
    (49920, re.compile(r"Too many operations in progress for subscription", re.I)),
)
# Driver 18 on Linux names a transport error by its Winsock number in hex ("TCP Provider: Error code
# 0x2746" is 10054), where pyodbc adds it in decimal too ("... 0x274C (10060)").
_TCP_PROVIDER_CODE = re.compile(r"TCP Provider: Error code 0x([0-9A-Fa-f]+)")
# What mssql-python writes as driver_error for an SQLSTATE its table lacks.
_UNKNOWN_STATE = re.compile(r"SQLSTATE code: ([0-9A-Z]{5})")


def numbers_in_text(text: str) -> frozenset[int]:
    """The transient error numbers whose documented English text ``text`` holds."""
    numbers = {number for number, pattern in TRANSIENT_TEXTS if pattern.search(text)}
    return frozenset(numbers | {int(code, 16) for code in _TCP_PROVIDER_CODE.findall(text)})


def from_mssql_python(exc: BaseException, state_of_text: dict[str, str]) -> Diagnosis:
    """``state_of_text``: mssql-python's driver_error text per SQLSTATE, read the other way."""
    driver_error = str(getattr(exc, "driver_error", ""))
    unknown = _UNKNOWN_STATE.search(driver_error)
    state = unknown.group(1) if unknown else state_of_text.get(driver_error, "")
    return Diagnosis(state, numbers_in_text(str(getattr(exc, "ddbc_error", "")) or str(exc)))
