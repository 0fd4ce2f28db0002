"""What each SQL Server driver, left to itself, sends for one parameter, and how it logs in: FreeTDS
1.3.17 and Microsoft's Driver 18.6 through pyodbc 5.5, and mssql-python 1.16 (Driver 18.6 inside its
wheel), seen by the recording TDS stub.

This is why the bulk path binds its JSON explicitly (``odbc.long_text_size``): left to the driver, a
str is declared by its length, and by its content on mssql-python (VARCHAR for ASCII), past 4,000
UTF-16 units Driver 18 refuses it and mssql-python needs two round trips, and a datetime's fraction
depends on the driver. tests/drivers/test_freetds_wire.py shows FreeTDS in more depth.
"""

from __future__ import annotations

import datetime as dt

import pytest

from sqlqueue.connection import parse_connection
from sqlqueue.dialects.sqlserver import SqlServerEngine
from tests.support.sqlserver_drivers import DRIVERS, FREETDS, MICROSOFT, MSSQL_PYTHON, raw_connect, stub_url
from tests.support.tds_server import TdsServer

NON_ASCII = "Zürich — 東京 — 😀"  # 16 characters, 17 UTF-16 units (😀 is a surrogate pair)
WHEN = dt.datetime(2024, 1, 2, 3, 4, 5, 123456)
VALUES = {
    "ascii": "abc",
    "non-ascii": NON_ASCII,
    "4001 ascii": "x" * 4001,
    "4001 non-ascii": "é" * 4001,
    "null": None,
    "datetime": WHEN,
}
PREPEXEC, PREPARE_THEN_EXECUTE = ["sp_prepexec"], ["sp_prepare", "sp_execute"]
# Per driver and value: the RPCs one execute sends, and the parameter's declared type and value as
# the stub decoded them; or the SQLSTATE the driver refuses the value with.
SENT = {
    FREETDS: {
        "ascii": (PREPEXEC, "nvarchar(6)", "abc"),
        "non-ascii": (PREPEXEC, "nvarchar(32)", NON_ASCII),
        "4001 ascii": (PREPEXEC, "nvarchar(max)", "x" * 4001),
        "4001 non-ascii": (PREPEXEC, "nvarchar(max)", "é" * 4001),
        "null": (PREPEXEC, "varchar(1)", None),
        "datetime": (PREPEXEC, "datetime2(7)", WHEN),
    },
    MICROSOFT: {
        "ascii": (PREPEXEC, "nvarchar(6)", "abc"),
        "non-ascii": (PREPEXEC, "nvarchar(32)", NON_ASCII),
        "4001 ascii": "HY104",  # pyodbc binds SQL_WLONGVARCHAR of size 0, which Driver 18 refuses
        "4001 non-ascii": "HY104",
        "null": (["sp_describe_undeclared_parameters", "sp_prepexec"], "varchar(1)", None),
        # pyodbc takes the precision from SQLGetTypeInfo, which Driver 18 does not ask the stub for
        "datetime": (PREPEXEC, "datetime2(0)", WHEN.replace(microsecond=0)),
    },
    MSSQL_PYTHON: {
        "ascii": (PREPEXEC, "varchar(3)", "abc"),  # ASCII goes as VARCHAR(n)
        "non-ascii": (PREPEXEC, "nvarchar(16)", NON_ASCII),
        "4001 ascii": (PREPARE_THEN_EXECUTE, "varchar(max)", "x" * 4001),  # data at execution
        "4001 non-ascii": (PREPARE_THEN_EXECUTE, "nvarchar(max)", "é" * 4001),
        "null": (["sp_describe_undeclared_parameters", "sp_prepexec"], "varchar(1)", None),
        "datetime": (PREPEXEC, "datetime2(6)", WHEN),  # every microsecond
    },
}


@pytest.fixture
def server():
    with TdsServer() as s:
        yield s
        assert s.errors == [], "the stub failed to parse a request"


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("label", VALUES)
def test_what_a_driver_left_to_itself_declares_for_one_parameter(server, driver, label):
    cur = raw_connect(server, driver).cursor()
    server.clear()
    expected = SENT[driver][label]
    if isinstance(expected, str):
        with pytest.raises(Exception, match=expected):
            cur.execute("INSERT INTO t (a) VALUES (?)", VALUES[label])
        return
    cur.execute("INSERT INTO t (a) VALUES (?)", VALUES[label])
    procs, declared, value = expected
    assert [r.proc for r in server.rpcs if r.proc != "sp_unprepare"] == procs
    param = server.rpcs[-1].values[0]
    assert (param.sql_type, param.value) == (declared, value)


APP_NAME = {FREETDS: "", MSSQL_PYTHON: "MSSQL-Python"}  # Driver 18's is the process's name


@pytest.mark.parametrize("driver", DRIVERS)
def test_each_driver_logs_in_with_tds_7_4_and_the_user_database_and_password_it_was_given(server, driver):
    SqlServerEngine().connect(parse_connection(stub_url(server, driver), password="pä €}")).close()
    (login,) = server.logins
    assert (login.user, login.database, login.password, login.tds_version) == ("app", "queues", "pä €}", 0x74000004)
    if driver in APP_NAME:
        assert login.app == APP_NAME[driver]


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_wrong_password_fails_the_first_connection_at_once_without_showing_it(server, driver):
    server.reject_password = "wrong-pw"
    engine, spec = SqlServerEngine(), parse_connection(stub_url(server, driver), password="wrong-pw")
    with pytest.raises(Exception, match="Login failed") as caught:
        engine.connect(spec)
    mapped = engine.map_error(caught.value, spec, proven=False)
    assert engine.is_driver_error(caught.value) and not mapped.transient
    assert "wrong-pw" not in str(mapped)
