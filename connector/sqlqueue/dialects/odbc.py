"""SQL Server's ODBC drivers as pyodbc meets them: connection strings, which driver is at the
other end, what the bulk path binds, and which errors are worth another try.

Two drivers matter: Microsoft's "ODBC Driver 18 for SQL Server" (17 works the same) and FreeTDS
(Debian's ``tdsodbc``). They differ in what a connection string may say and in how they bind
parameters, so every choice here is made per driver.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..connection import ConnectionSpec
from ..errors import ConfigError

FREETDS = "FreeTDS"
# Drivers in order of preference when the URL does not name one.
PREFERRED_DRIVERS = ("ODBC Driver 18 for SQL Server", "ODBC Driver 17 for SQL Server", FREETDS)
# FreeTDS implements SQLDescribeParam from 1.5 on; before that a driver-chosen type is bound.
FREETDS_DESCRIBES_PARAMS = (1, 5)


def is_freetds(driver: str) -> bool:
    """``driver`` as a connection string names it, or as SQL_DRIVER_NAME reports it (libtdsodbc.so)."""
    return "tds" in driver.lower()


# ---- connection strings ---------------------------------------------------------------------------
def connection_string(spec: ConnectionSpec, available: Sequence[str]) -> str:
    """The ODBC connection string for ``spec``: a sqlserver:// URL, or a verbatim string plus credentials."""
    if spec.raw is not None:
        return spec.raw + credentials(spec, named_driver(spec.raw) or "")
    params = dict(spec.params)
    driver = params.pop("driver", None) or next((d for d in PREFERRED_DRIVERS if d in available), None)
    if driver is None:
        raise ConfigError(
            "no SQL Server ODBC driver is installed: install Microsoft's 'ODBC Driver 18 for SQL Server' "
            "or FreeTDS (Debian: apt-get install tdsodbc), or name one with ?driver=..."
        )
    host, port, database = params.pop("host"), params.pop("port", None), params.pop("database")
    parts = {"DRIVER": f"{{{driver}}}"}
    if is_freetds(driver):
        # FreeTDS 1.3 does not read Microsoft's "host,port" form: it takes the port as its own key.
        parts |= {"Server": host, **({"Port": port} if port else {}), "Database": database}
        parts.setdefault("TDS_Version", "7.4")  # DATETIME2 and NVARCHAR(MAX) need TDS 7.3 or later
        parts |= {"ClientCharset": "UTF-8"}
    else:
        parts |= {"SERVER": host + (f",{port}" if port else ""), "DATABASE": database}
    parts.update(params)
    return ";".join(f"{k}={v}" for k, v in parts.items()) + credentials(spec, driver)


_DRIVER_KEY = re.compile(r"(?i)(?:^|;)\s*driver\s*=\s*\{?([^;}]*)")


def named_driver(text: str) -> str | None:
    """The driver an ODBC connection string names (its DRIVER= key), if any."""
    named = _DRIVER_KEY.search(text)
    return named.group(1).strip() if named else None


def credentials(spec: ConnectionSpec, driver: str) -> str:
    """``;UID=…;PWD=…`` escaped the way ``driver`` parses its connection string."""
    creds = ""
    if spec.user:
        creds += f";UID={_value(spec.user, driver, 'user')}"
    if spec.password:
        creds += f";PWD={_value(spec.password, driver, 'password')}"
    return creds


def _value(value: str, driver: str, what: str) -> str:
    if not is_freetds(driver):
        # ODBC's rule, which Microsoft's driver follows: braces quote a value, "}}" is a literal "}".
        return "{" + value.replace("}", "}}") + "}"
    # FreeTDS 1.3.17 (src/odbc/connectparams.c, odbc_parse_connect_string): a bare value runs to the
    # first ";", spaces and "}" included; a value opening with "{" runs to the first "};", with no
    # escape for "}" ("{secret}" as the string's last item keeps its "}", the login failure seen).
    # From 1.3.21 braces are stripped and "}}" means "}". So: bare when it can be, "{…};" for a ";"
    # or a leading "{" (read alike by both), and a value needing both braces and "}" is refused.
    if ";" not in value and not value.startswith("{"):
        return value
    if "}" not in value:
        return "{" + value + "};"
    raise ConfigError(
        f"the {what} cannot be passed to the FreeTDS ODBC driver: FreeTDS 1.3 has no way to write a value "
        "holding ';' (or starting with '{') together with '}'; use Microsoft's ODBC Driver 18 "
        f"(?driver=ODBC Driver 18 for SQL Server) or another {what}"
    )


# ---- which driver, and what it binds ---------------------------------------------------------------
@dataclass(frozen=True)
class Driver:
    """The ODBC driver behind a connection, as it reports itself (SQL_DRIVER_NAME, SQL_DRIVER_VER)."""

    name: str
    version: str

    @property
    def freetds(self) -> bool:
        return is_freetds(self.name)

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return tuple(int(p) for p in re.findall(r"\d+", self.version)[:3])

    @property
    def describes_params(self) -> bool:
        """Whether pyodbc can ask the driver for parameter types (SQLDescribeParam)."""
        return not self.freetds or self.version_tuple[:2] >= FREETDS_DESCRIBES_PARAMS


def long_text_size(driver: Driver, pyodbc: Any) -> tuple[int, int, int]:
    """How to bind a text parameter of any length so that the driver declares NVARCHAR(MAX).

    Seen on the wire (the recording TDS stub, tests/drivers): Microsoft's driver declares nvarchar(max)
    for SQL_WVARCHAR with column size 0, SQL_SS_LENGTH_UNLIMITED, the binding Microsoft documents
    ("SQLBindParameter", Native Client ODBC API: "Binding Parameters for SQL Character Types"); it
    refuses SQL_WLONGVARCHAR of size 0 (HY104), and for SQL_WLONGVARCHAR of 2^30 - 1 declares the
    deprecated ntext. FreeTDS 1.3 refuses SQL_WVARCHAR of size 0 past 4,000 characters (HY090) and
    declares NVARCHAR(MAX) for SQL_WLONGVARCHAR of size 0.
    """
    if driver.freetds:
        return (pyodbc.SQL_WLONGVARCHAR, 0, 0)
    return (pyodbc.SQL_WVARCHAR, 0, 0)


def driver_of(conn: Any, pyodbc: Any) -> Driver:
    """The driver a pyodbc connection runs on: asked of the driver, no round trip to the server."""
    return Driver(str(conn.getinfo(pyodbc.SQL_DRIVER_NAME)), str(conn.getinfo(pyodbc.SQL_DRIVER_VER)))


# ---- transient errors -------------------------------------------------------------------------------
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
# pyodbc ends each diagnostic record with its native error number in parentheses: "... (1205) (SQLExecDirectW)".
_NATIVE_NUMBER = re.compile(r"\((-?\d+)\)")


def error_numbers(exc: BaseException) -> set[int]:
    """The native SQL Server error numbers in a pyodbc error's message."""
    return {int(n) for n in _NATIVE_NUMBER.findall(" ".join(str(a) for a in getattr(exc, "args", ())))}


def is_transient(exc: BaseException, first_connect: bool) -> bool:
    """Lost connections, failovers, throttling, deadlocks and lock time-outs: worth another try.

    SQLSTATE 08xxx (connection failure) counts only once a connection has worked: on a first
    connection it is a wrong address, which retrying would only delay.
    """
    state = str(exc.args[0]) if getattr(exc, "args", None) else ""
    numbers = error_numbers(exc)
    if first_connect:
        return bool(numbers & (TRANSIENT_ERRORS - FIRST_CONNECT_FATAL))
    return state.startswith("08") or state in ("40001", "HYT00", "HYT01") or bool(numbers & TRANSIENT_ERRORS)
