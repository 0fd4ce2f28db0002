"""Microsoft's mssql-python as sqlqueue meets it: its connection string, and its SQLSTATE table read
the other way (``sqlserver_errors.from_mssql_python``).

mssql-python 1.16 parses its connection string itself, against an allow-list of Driver 18's keywords
(``mssql_python.constants._ALLOWED_CONNECTION_STRING_PARAMS``: Server, Database, UID, PWD, Encrypt,
TrustServerCertificate, HostnameInCertificate, ServerCertificate, ApplicationIntent, ...), refuses
any other key, and sets DRIVER itself: the ODBC Driver 18 inside its wheel. That driver's TLS defaults
hold: ``Encrypt=yes`` and the server's certificate checked, unless the URL says
``?TrustServerCertificate=yes`` or ``?Encrypt=no``, which pass through as they do for Driver 18.
"""

from __future__ import annotations

import functools
from typing import Any

from ..connection import ConnectionSpec, redact
from ..errors import ConfigError
from . import odbc

# The SQLSTATEs sqlserver_errors.is_transient reads: connection failures, serialization failure, time-outs.
CLASSIFIED_STATES = ("08001", "08002", "08003", "08004", "08007", "08S01", "40001", "HYT00", "HYT01")


def connection_string(spec: ConnectionSpec) -> str:
    """``Server=host,port;Database=…``, the URL's other keys as they are, then ``UID={…};PWD={…}``:
    mssql-python reads braces as ODBC does ("}}" is a literal "}"), so any password travels."""
    params = dict(spec.params)
    params.pop("driver", None)
    host, port, database = params.pop("host"), params.pop("port", None), params.pop("database")
    parts = {"Server": host + (f",{port}" if port else ""), "Database": database, **params}
    return ";".join(f"{k}={v}" for k, v in parts.items()) + odbc.credentials(spec, "mssql-python")


def connect(mssql_python: Any, spec: ConnectionSpec) -> Any:
    try:
        return mssql_python.connect(connection_string(spec), autocommit=True)
    except mssql_python.exceptions.ConnectionStringParseError as exc:
        raise ConfigError(
            f"mssql-python refused the connection options of {spec.display}: {redact(str(exc), spec.password)}"
        ) from None


@functools.cache
def state_of_text(mssql_python: Any) -> dict[str, str]:
    """The driver_error text mssql-python gives each SQLSTATE that classifies an error, to the SQLSTATE."""
    table = mssql_python.exceptions.sqlstate_to_exception
    return {table(state, "").driver_error: state for state in CLASSIFIED_STATES}
