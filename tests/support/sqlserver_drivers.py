"""The SQL Server drivers the driver tests run, each where this machine has it, and how each reaches
the recording TDS stub (tests/support/tds_server.py), which speaks no TLS."""

from __future__ import annotations

import importlib.util
from typing import Any
from urllib.parse import quote_plus

import pytest

from tests.support.tds_server import TdsServer

FREETDS = "FreeTDS"
MICROSOFT = "ODBC Driver 18 for SQL Server"
MSSQL_PYTHON = "mssql-python"


def _odbc_registered(name: str) -> bool:
    try:
        import pyodbc
    except ImportError:
        return False
    return name in pyodbc.drivers()


def available(name: str) -> bool:
    return importlib.util.find_spec("mssql_python") is not None if name == MSSQL_PYTHON else _odbc_registered(name)


_WHY_MISSING = {
    FREETDS: "no ODBC driver registered as 'FreeTDS' (Debian: apt-get install tdsodbc)",
    MICROSOFT: f"{MICROSOFT} is not registered (../shared/babelfish/msodbc18.sh, run by make test-babelfish)",
    MSSQL_PYTHON: "mssql-python is not installed (pip install 'sqlqueue[mssql]')",
}


def driver_param(name: str) -> Any:
    """``name`` as a test parameter, skipped where this machine lacks it."""
    return pytest.param(name, id=name, marks=pytest.mark.skipif(not available(name), reason=_WHY_MISSING[name]))


DRIVERS = [driver_param(name) for name in (FREETDS, MICROSOFT, MSSQL_PYTHON)]


def stub_url(server: TdsServer, driver: str, user: str = "app", database: str = "queues") -> str:
    """Our sqlserver:// URL for the stub; Microsoft's drivers, which encrypt by default, are told not to."""
    tls = "" if driver == FREETDS else "&Encrypt=no"
    return f"sqlserver://{user}@127.0.0.1:{server.port}/{database}?driver={quote_plus(driver)}{tls}"


def raw_connect(server: TdsServer, driver: str, password: str = "p") -> Any:
    """A DB-API connection to the stub through ``driver`` alone, without sqlqueue (user u, database db)."""
    if driver == MSSQL_PYTHON:
        import mssql_python

        return mssql_python.connect(f"Server=127.0.0.1,{server.port};Database=db;UID=u;PWD={password};Encrypt=no")
    import pyodbc

    where = (
        f"Server=127.0.0.1;Port={server.port};TDS_Version=7.4"
        if driver == FREETDS
        else f"SERVER=127.0.0.1,{server.port};Encrypt=no"
    )
    return pyodbc.connect(f"DRIVER={{{driver}}};{where};Database=db;UID=u;PWD={password}", timeout=5)
