"""Which Python driver a sqlserver:// URL gets, and what sqlqueue hands mssql-python.

No server runs here: tests/drivers show what mssql-python then puts on the wire.
"""

from __future__ import annotations

import pytest

from sqlqueue.connection import parse_connection
from sqlqueue.dialects import mssql_python_driver, sqlserver_drivers
from sqlqueue.dialects.sqlserver import SqlServerEngine
from sqlqueue.dialects.sqlserver_drivers import MSSQL_PYTHON_DRIVER, PYODBC, driver_for
from sqlqueue.errors import ConfigError


def mssql_python_string(url: str, password: str | None = None) -> str:
    return mssql_python_driver.connection_string(parse_connection(url, password=password))


# ---- connection strings ---------------------------------------------------------------------------
def test_mssql_python_gets_server_host_comma_port_database_and_braced_credentials():
    assert mssql_python_string("sqlserver://app@db.example:1433/queues?driver=mssql-python", "s3cret") == (
        "Server=db.example,1433;Database=queues;UID={app};PWD={s3cret}"
    )


def test_the_urls_tls_keys_pass_through_and_nothing_is_added_to_driver_18s_defaults():
    # Encrypt=yes with the certificate checked is the default of the Driver 18 inside mssql-python.
    assert mssql_python_string("sqlserver://h/d?driver=mssql-python") == "Server=h;Database=d"
    assert mssql_python_string("sqlserver://h/d?driver=mssql-python&TrustServerCertificate=yes&Encrypt=yes") == (
        "Server=h;Database=d;Encrypt=yes;TrustServerCertificate=yes"
    )


@pytest.mark.parametrize(("password", "sent"), [("a;b", "PWD={a;b}"), ("a}b", "PWD={a}}b}"), ("{x}", "PWD={{x}}}")])
def test_mssql_python_carries_any_password_inside_braces(password: str, sent: str):
    assert mssql_python_string("sqlserver://h/d?driver=mssql-python", password).endswith(";" + sent)


def test_a_key_mssql_python_does_not_take_is_refused_by_name_without_the_password():
    pytest.importorskip("mssql_python", reason="mssql-python is not installed")
    spec = parse_connection("sqlserver://u@h/d?driver=mssql-python&TDS_Version=7.4", password="hunter2")
    with pytest.raises(ConfigError, match="TDS_Version") as caught:
        SqlServerEngine().connect(spec)  # refused by mssql-python's own parser, before any connection
    assert "hunter2" not in str(caught.value)


# ---- which driver -----------------------------------------------------------------------------------
@pytest.fixture
def machine(monkeypatch):
    """What this machine has: an ODBC driver registered with unixODBC (for pyodbc), mssql-python installed."""

    def have(odbc_driver: bool, mssql_python: bool) -> None:
        monkeypatch.setattr(sqlserver_drivers.PyOdbc, "registered", lambda self: odbc_driver)
        monkeypatch.setattr(sqlserver_drivers.MssqlPython, "installed", lambda self: mssql_python)

    return have


@pytest.mark.parametrize("named", ["mssql-python", "MSSQL-Python", "{mssql-python}"])
def test_driver_mssql_python_in_the_url_selects_it_whatever_else_is_installed(machine, named: str):
    machine(odbc_driver=True, mssql_python=True)
    assert driver_for(parse_connection(f"sqlserver://h/d?driver={named}")) is MSSQL_PYTHON_DRIVER


@pytest.mark.parametrize("named", ["FreeTDS", "ODBC Driver 18 for SQL Server"])
def test_an_odbc_driver_named_in_the_url_is_pyodbcs(machine, named: str):
    machine(odbc_driver=False, mssql_python=True)
    assert driver_for(parse_connection(f"sqlserver://h/d?driver={named}")) is PYODBC


@pytest.mark.parametrize(
    ("odbc_driver", "mssql_python", "chosen"),
    [(True, True, PYODBC), (True, False, PYODBC), (False, True, MSSQL_PYTHON_DRIVER), (False, False, PYODBC)],
    ids=["both", "odbc only", "mssql-python only (serverless)", "neither: pyodbc says what to install"],
)
def test_with_no_driver_named_a_registered_odbc_driver_wins_then_mssql_python(
    machine, odbc_driver: bool, mssql_python: bool, chosen
):
    machine(odbc_driver=odbc_driver, mssql_python=mssql_python)
    assert driver_for(parse_connection("sqlserver://h/d")) is chosen


def test_a_verbatim_odbc_connection_string_is_pyodbcs(machine):
    machine(odbc_driver=False, mssql_python=True)
    assert driver_for(parse_connection(None, "DRIVER={FreeTDS};Server=h", "sqlserver")) is PYODBC


def test_with_neither_driver_the_error_names_both_ways_to_install_one(machine, monkeypatch):
    machine(odbc_driver=False, mssql_python=False)
    monkeypatch.setattr("pyodbc.drivers", lambda: [])
    with pytest.raises(ConfigError, match=r"tdsodbc.*sqlqueue\[mssql\]"):
        SqlServerEngine().connect(parse_connection("sqlserver://h/d"))
