"""The Python drivers SQL Server is reached through, behind one small contract.

- **pyodbc** over an ODBC driver registered with unixODBC: Microsoft's "ODBC Driver 18 for SQL
  Server" (or 17) or FreeTDS (``odbc.py``). Needs the system's unixODBC and the driver installed.
- **mssql-python**, Microsoft's DB-API driver (``mssql_python_driver.py``): pip only. Its wheels
  carry Microsoft's ODBC Driver 18 and their own ODBC libraries, so it runs where nothing can be
  installed with apt (Databricks serverless).

Both hand back DB-API connections that SqlServerEngine drives the same way (autocommit,
cursors, ``setinputsizes``, ``getinfo``); only connecting and reading errors differ, and that is all
this contract holds. Which one a URL gets is ``driver_for``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from abc import ABC, abstractmethod
from typing import Any

from ..connection import ConnectionSpec
from ..errors import missing_driver
from . import mssql_python_driver, odbc, sqlserver_errors
from .sqlserver_errors import Diagnosis

MSSQL_PYTHON = "mssql-python"


class SqlServerDriver(ABC):
    """One Python driver: how it connects, and how its errors read."""

    name: str
    module: str  # the Python module its connections and errors come from
    extra: str  # the sqlqueue extra that installs it

    def load(self) -> Any:
        try:
            return importlib.import_module(self.module)
        except ImportError as exc:
            raise missing_driver(self.module, self.extra) from exc

    def installed(self) -> bool:
        """Whether the module can be imported, without importing it."""
        return importlib.util.find_spec(self.module) is not None

    def is_error(self, exc: BaseException) -> bool:
        """Whether ``exc`` is this driver's error (a driver never imported raised none)."""
        module = sys.modules.get(self.module)
        return module is not None and isinstance(exc, module.Error)

    @abstractmethod
    def connect(self, spec: ConnectionSpec) -> Any:
        """A connection in autocommit mode."""

    @abstractmethod
    def diagnosis(self, exc: BaseException) -> Diagnosis: ...


class PyOdbc(SqlServerDriver):
    name = "pyodbc"
    module = "pyodbc"
    extra = "sqlserver"

    def connect(self, spec: ConnectionSpec) -> Any:
        pyodbc = self.load()
        return pyodbc.connect(odbc.connection_string(spec, pyodbc.drivers()), autocommit=True)

    def diagnosis(self, exc: BaseException) -> Diagnosis:
        return sqlserver_errors.from_pyodbc(exc)

    def registered(self) -> bool:
        """Whether pyodbc loads (it links the system's libodbc) and unixODBC lists a SQL Server driver:
        one read of odbcinst.ini, no connection."""
        if not self.installed():
            return False
        try:
            pyodbc = importlib.import_module(self.module)
        except ImportError:  # pip's pyodbc without the system's libodbc.so.2
            return False
        return any(d in odbc.PREFERRED_DRIVERS for d in pyodbc.drivers())


class MssqlPython(SqlServerDriver):
    name = MSSQL_PYTHON
    module = "mssql_python"
    extra = "mssql"

    def connect(self, spec: ConnectionSpec) -> Any:
        return mssql_python_driver.connect(self.load(), spec)

    def diagnosis(self, exc: BaseException) -> Diagnosis:
        return sqlserver_errors.from_mssql_python(exc, mssql_python_driver.state_of_text(self.load()))


PYODBC = PyOdbc()
MSSQL_PYTHON_DRIVER = MssqlPython()
DRIVERS: tuple[SqlServerDriver, ...] = (PYODBC, MSSQL_PYTHON_DRIVER)


def driver_for(spec: ConnectionSpec) -> SqlServerDriver:
    """``?driver=mssql-python`` picks mssql-python; any other named driver, or a verbatim ODBC
    connection string, is pyodbc's. With none named: pyodbc when unixODBC has a SQL Server driver
    registered, else mssql-python when it is installed, else pyodbc, whose error says what to install."""
    named = spec.param("driver")
    if named is not None and named.strip("{}").lower() == MSSQL_PYTHON:
        return MSSQL_PYTHON_DRIVER
    if named is not None or spec.raw is not None or PYODBC.registered():
        return PYODBC
    return MSSQL_PYTHON_DRIVER if MSSQL_PYTHON_DRIVER.installed() else PYODBC


def driver_of_error(exc: BaseException) -> SqlServerDriver:
    """The driver that raised ``exc``; pyodbc's reading for anything else (its message format is the
    ODBC one every test double imitates)."""
    return next((d for d in DRIVERS if d.is_error(exc)), PYODBC)
