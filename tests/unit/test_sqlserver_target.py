"""`make test-sqlserver`: without a server it says what it needs in one line and installs nothing;
with one it runs the sqlserver-marked tests (crash tests included) on the server and driver named by
SQLQUEUE_TEST_SQLSERVER and SQLQUEUE_TEST_SQLSERVER_DRIVER."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from sqlqueue.connection import parse_connection
from sqlqueue.dialects import odbc
from tests.conftest import ROOT
from tests.support.engines import SQLSERVER_DRIVER_ENV, SQLSERVER_ENV, Engine, sqlserver_options

MICROSOFT = "ODBC Driver 18 for SQL Server"


def make(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in (SQLSERVER_ENV, SQLSERVER_DRIVER_ENV, "PYTEST_ARGS", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")
    }
    return subprocess.run(["make", *args], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("value", [None, "", "  "], ids=["unset", "empty", "blank"])
def test_without_a_server_it_says_what_it_needs_in_one_line_and_fails(value):
    result = make("-s", "test-sqlserver", **({} if value is None else {SQLSERVER_ENV: value}))
    assert result.returncode != 0
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert "set SQLQUEUE_TEST_SQLSERVER to a sqlserver:// URL or an ODBC connection string" in lines[0]
    page, section = re.search(r'see (docs/[\w-]+\.md) "([^"]+)"', lines[0]).groups()
    assert f"\n## {section}\n" in (ROOT / page).read_text()


def test_with_a_server_it_sets_up_then_runs_the_sqlserver_marked_tests():
    result = make("-n", "test-sqlserver", **{SQLSERVER_ENV: "sqlserver://u:p@db:1433/q"})  # dry run
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == ".venv/bin/python -m pytest -m sqlserver"


def test_the_crash_tests_run_on_sqlserver_under_the_marker():
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "sqlserver", "--collect-only", "-q", "tests/crash"],
        cwd=ROOT,
        env={**os.environ, SQLSERVER_ENV: "sqlserver://u:p@db:1433/q"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    collected = {line for line in result.stdout.splitlines() if "::" in line}
    assert {c.split("::")[0] for c in collected} == {
        "tests/crash/test_ack_crash.py",
        "tests/crash/test_adopted_crash.py",
        "tests/crash/test_deadletter_crash.py",
        "tests/crash/test_sink_crash.py",
        "tests/crash/test_source_crash.py",
    }
    assert all("[sqlserver" in c for c in collected), collected


def test_nothing_named_means_no_server():
    assert sqlserver_options("", "FreeTDS") is None


def test_a_url_gives_up_its_credentials_to_the_user_and_password_options_and_takes_the_driver():
    options = sqlserver_options("sqlserver://sqlqueue:s%40cret-1@127.0.0.1:1433/sqlqueue_test", "FreeTDS")
    assert options == {
        "url": "sqlserver://127.0.0.1:1433/sqlqueue_test?driver=FreeTDS",
        "user": "sqlqueue",
        "password": "s@cret-1",
    }
    spec = Engine("sqlserver", options).connection()
    assert odbc.connection_string(spec, [MICROSOFT, odbc.FREETDS]) == (
        "DRIVER={FreeTDS};Server=127.0.0.1;Port=1433;Database=sqlqueue_test;TDS_Version=7.4;"
        "ClientCharset=UTF-8;UID=sqlqueue;PWD=s@cret-1"
    )


def test_the_workflows_url_for_driver_18_keeps_its_options():
    options = sqlserver_options(
        "sqlserver://sqlqueue:pw-Q9@127.0.0.1:1433/sqlqueue_test?TrustServerCertificate=yes", MICROSOFT
    )
    spec = parse_connection(options["url"], user=options["user"], password=options["password"])
    assert odbc.connection_string(spec, [odbc.FREETDS]) == (
        "DRIVER={ODBC Driver 18 for SQL Server};SERVER=127.0.0.1,1433;DATABASE=sqlqueue_test;"
        "TrustServerCertificate=yes;UID={sqlqueue};PWD={pw-Q9}"
    )


def test_without_a_driver_the_connection_code_chooses_as_it_does_for_users():
    options = sqlserver_options("mssql://db/q", "")
    assert options == {"url": "mssql://db/q"}
    assert odbc.connection_string(parse_connection(options["url"]), [odbc.FREETDS]).startswith("DRIVER={FreeTDS};")


def test_an_odbc_string_is_used_verbatim_with_the_driver_put_first_when_it_names_none():
    odbc_string = "Server=db;Port=1433;Database=q;UID=sa;PWD=x"
    assert sqlserver_options(odbc_string, "FreeTDS") == {
        "connectionString": "Driver={FreeTDS};" + odbc_string,
        "dialect": "sqlserver",
    }
    named = "DRIVER={ODBC Driver 18 for SQL Server};SERVER=db,1433;DATABASE=q"
    assert sqlserver_options(named, "") == {"connectionString": named, "dialect": "sqlserver"}
    assert sqlserver_options(named, "{odbc driver 18 for sql server}")["connectionString"] == named


def test_mssql_python_as_the_driver_reaches_a_url_through_mssql_python():
    from sqlqueue.dialects.sqlserver_drivers import MSSQL_PYTHON_DRIVER, driver_for

    options = sqlserver_options("sqlserver://u:pw@127.0.0.1:1433/db?TrustServerCertificate=yes", "mssql-python")
    assert options["url"] == "sqlserver://127.0.0.1:1433/db?TrustServerCertificate=yes&driver=mssql-python"
    assert driver_for(Engine("sqlserver", options).connection()) is MSSQL_PYTHON_DRIVER


def test_mssql_python_as_the_driver_of_an_odbc_connection_string_is_an_error():
    with pytest.raises(ValueError, match="sqlserver:// URL"):
        sqlserver_options("Server=db;Database=q", "mssql-python")


@pytest.mark.parametrize("value", ["sqlserver://db/q?driver=FreeTDS", "Driver={FreeTDS};Server=db"])
def test_two_different_drivers_named_is_an_error(value):
    with pytest.raises(ValueError, match="name it in one place"):
        sqlserver_options(value, MICROSOFT)
