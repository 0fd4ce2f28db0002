"""SQL Server's ODBC drivers as pyodbc meets them: connection strings, which driver is at the
other end, and what the bulk path binds (transient errors: ``sqlserver_errors.py``).

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
# ODBC's own numbers, the same in every driver and Python binding (sqlucode.h, sql.h): SQL types
# for setinputsizes, and SQLGetInfo's SQL_DRIVER_NAME and SQL_DRIVER_VER.
SQL_WVARCHAR, SQL_WLONGVARCHAR = -9, -10
SQL_DRIVER_NAME, SQL_DRIVER_VER = 6, 7


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
            "or FreeTDS (Debian: apt-get install tdsodbc), or name one with ?driver=...; or, with no system "
            "ODBC at all (serverless), pip install 'sqlqueue[mssql]' for Microsoft's mssql-python driver"
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


def long_text_size(driver: Driver) -> tuple[int, int, int]:
    """How to bind a text parameter of any length so that the driver declares NVARCHAR(MAX).

    Seen on the wire (the recording TDS stub, tests/drivers): Microsoft's driver declares nvarchar(max)
    for SQL_WVARCHAR with column size 0, SQL_SS_LENGTH_UNLIMITED, the binding Microsoft documents
    ("SQLBindParameter", Native Client ODBC API: "Binding Parameters for SQL Character Types"); it
    refuses SQL_WLONGVARCHAR of size 0 (HY104), and for SQL_WLONGVARCHAR of 2^30 - 1 declares the
    deprecated ntext. FreeTDS 1.3 refuses SQL_WVARCHAR of size 0 past 4,000 characters (HY090) and
    declares NVARCHAR(MAX) for SQL_WLONGVARCHAR of size 0.
    mssql-python runs Microsoft's driver and binds as it does (tests/drivers): SQL_WVARCHAR of size 0.
    """
    if driver.freetds:
        return (SQL_WLONGVARCHAR, 0, 0)
    return (SQL_WVARCHAR, 0, 0)


def driver_of(conn: Any) -> Driver:
    """The ODBC driver a connection runs on (pyodbc's, or the one inside mssql-python): asked of the
    driver through SQLGetInfo, no round trip to the server."""
    return Driver(str(conn.getinfo(SQL_DRIVER_NAME)), str(conn.getinfo(SQL_DRIVER_VER)))
