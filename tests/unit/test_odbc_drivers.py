"""What sqlqueue sends to each SQL Server ODBC driver: connection strings and bulk-path bindings.

No SQL Server runs here. These tests pin what our code hands to pyodbc for Microsoft's
"ODBC Driver 18 for SQL Server" and for FreeTDS 1.3, the two drivers it supports; the FreeTDS wire
tests (tests/drivers) check what the real FreeTDS driver makes of it.
"""

from __future__ import annotations

import datetime as dt
import json

import pyodbc
import pytest

from sqlqueue.connection import parse_connection
from sqlqueue.dialects import odbc
from sqlqueue.dialects.sqlserver import SqlServerEngine
from sqlqueue.errors import ConfigError, SchemaError
from sqlqueue.identifiers import TableName
from sqlqueue.schema import PORTABLE_TYPES, STAGE_TAG, Column
from tests.support.statements import RecordingConnection, RecordingCursor

MICROSOFT = "ODBC Driver 18 for SQL Server"
# What each driver reports as SQL_DRIVER_NAME / SQL_DRIVER_VER on Linux.
REPORTED = {MICROSOFT: ("libmsodbcsql-18.3.so.3.1", "18.03.0003"), odbc.FREETDS: ("libtdsodbc.so", "01.03.0017")}


def conn_string(url: str, password: str | None = None) -> str:
    return odbc.connection_string(parse_connection(url, password=password), [MICROSOFT, odbc.FREETDS])


# ---- connection strings ---------------------------------------------------------------------------
def test_microsoft_driver_gets_host_comma_port_and_braced_credentials():
    assert conn_string("sqlserver://db.example:1433/queues?driver=ODBC Driver 18 for SQL Server", "s3cret") == (
        "DRIVER={ODBC Driver 18 for SQL Server};SERVER=db.example,1433;DATABASE=queues;PWD={s3cret}"
    )


def test_freetds_gets_server_and_port_as_separate_keys_and_a_bare_password():
    assert conn_string("sqlserver://app@db.example:1433/queues?driver=FreeTDS", "s3cret") == (
        "DRIVER={FreeTDS};Server=db.example;Port=1433;Database=queues;TDS_Version=7.4;ClientCharset=UTF-8;"
        "UID=app;PWD=s3cret"
    )


def test_the_preferred_driver_is_microsofts_when_both_are_installed():
    assert conn_string("sqlserver://db.example/queues").startswith("DRIVER={ODBC Driver 18 for SQL Server};")


@pytest.mark.parametrize(
    ("password", "sent"),
    [("a;b", "PWD={a;b}"), ("a}b", "PWD={a}}b}"), ("sp ace ", "PWD={sp ace }"), ("{x}", "PWD={{x}}}")],
)
def test_microsoft_driver_carries_any_password_inside_braces(password: str, sent: str):
    assert conn_string("sqlserver://u@h:1/d?driver=ODBC Driver 18 for SQL Server", password).endswith(";" + sent)


# What FreeTDS 1.3.17 reads from each form was observed on the wire (the password in LOGIN7):
# bare values keep spaces and "}"; "{a;b};" gives a;b; "{secret}" as the last item gives "secret}".
@pytest.mark.parametrize(
    ("password", "sent"),
    [
        ("a}b", "PWD=a}b"),
        (" sp ace ", "PWD= sp ace "),
        ("x=y", "PWD=x=y"),
        ("pä€", "PWD=pä€"),
    ],
)
def test_freetds_carries_a_password_bare_when_it_can(password: str, sent: str):
    assert conn_string("sqlserver://u@h:1/d?driver=FreeTDS", password).endswith(";" + sent)


@pytest.mark.parametrize(("password", "sent"), [("a;b", "PWD={a;b};"), ("{lead", "PWD={{lead};")])
def test_freetds_gets_braces_closed_by_a_semicolon_for_a_semicolon_or_leading_brace(password: str, sent: str):
    assert conn_string("sqlserver://u@h:1/d?driver=FreeTDS", password).endswith(";" + sent)


@pytest.mark.parametrize("password", ["a;b}c", "{x}"])
def test_freetds_refuses_a_password_it_cannot_carry_without_showing_it(password: str):
    with pytest.raises(ConfigError, match="FreeTDS") as caught:
        conn_string("sqlserver://u@h:1/d?driver=FreeTDS", password)
    assert password.strip() not in str(caught.value)


def test_a_verbatim_freetds_connection_string_gets_bare_credentials():
    spec = parse_connection(None, "DRIVER={FreeTDS};Server=h;Port=1;Database=d", "sqlserver", "u", "pw")
    assert odbc.connection_string(spec, []) == "DRIVER={FreeTDS};Server=h;Port=1;Database=d;UID=u;PWD=pw"


def test_a_verbatim_microsoft_connection_string_gets_braced_credentials():
    spec = parse_connection(None, f"DRIVER={{{MICROSOFT}}};SERVER=h,1;DATABASE=d", "sqlserver", "u", "p;w")
    assert odbc.connection_string(spec, []).endswith(";UID={u};PWD={p;w}")


# ---- the bulk path: what is bound, per driver ------------------------------------------------------
ALL_TYPES = tuple(Column(f"col_{t}", t) for t in PORTABLE_TYPES)
VALUES = {
    "string": "Zürich — 東京 — 😀",
    "text": "x" * 1000,
    "int": 7,
    "bigint": 2**53 + 1,
    "double": 0.1,
    "boolean": True,
    "timestamp": dt.datetime(2026, 11, 23, 1, 2, 3, 456789),
    "binary": b"\x00\xffsql",
}
# How the JSON document carries each type: the OPENJSON column reads it back as the column's type.
IN_JSON = {
    "string": VALUES["string"],
    "text": VALUES["text"],
    "int": 7,
    "bigint": 2**53 + 1,
    "double": 0.1,
    "boolean": 1,
    "timestamp": "2026-11-23T01:02:03.456789",
    "binary": "00ff73716c",
}
OPENJSON_TYPE = {
    "string": "NVARCHAR(MAX)",
    "text": "NVARCHAR(MAX)",
    "int": "INT",
    "bigint": "BIGINT",
    "double": "FLOAT",
    "boolean": "BIT",
    "timestamp": "DATETIME2(6)",
    "binary": "NVARCHAR(MAX)",
}


def bulk_load(driver: str, rows: list[tuple], columns=ALL_TYPES) -> RecordingConnection:
    conn = RecordingConnection(*REPORTED[driver])
    SqlServerEngine().load(RecordingCursor(conn), "[dbo].[jobs]", [*columns, STAGE_TAG], [(*r, "tag") for r in rows])
    return conn


@pytest.mark.parametrize("driver", REPORTED)
def test_every_column_type_travels_in_one_json_parameter_read_back_as_its_type(driver: str):
    sent = bulk_load(driver, [tuple(VALUES[c.type] for c in ALL_TYPES)]).sent
    (sql,) = [arg for what, arg in sent if what == "sql"]
    (params,) = [arg for what, arg in sent if what == "params"]
    for i, column in enumerate(ALL_TYPES):
        assert f"[c{i}] {OPENJSON_TYPE[column.type]} '$.c{i}'" in sql
    assert "CONVERT(VARBINARY(MAX), r.[c7], 2)" in sql
    assert json.loads(params[0]) == [
        {"n": 0, **{f"c{i}": IN_JSON[c.type] for i, c in enumerate(ALL_TYPES)}, "c8": "tag"}
    ]


@pytest.mark.parametrize("driver", REPORTED)
def test_nulls_of_every_type_travel_as_json_null(driver: str):
    (params,) = [arg for what, arg in bulk_load(driver, [(None,) * len(ALL_TYPES)]).sent if what == "params"]
    assert json.loads(params[0]) == [{"n": 0, **{f"c{i}": None for i in range(len(ALL_TYPES))}, "c8": "tag"}]


@pytest.mark.parametrize("driver", REPORTED)
def test_each_driver_binds_the_json_as_nvarchar_max_and_never_fast_executemany(driver: str):
    conn = RecordingConnection(*REPORTED[driver])
    cursor = RecordingCursor(conn)
    SqlServerEngine().load(cursor, "[dbo].[jobs]", [Column("payload", "text")], [("x",)])
    assert [what for what, _ in conn.sent] == ["input sizes", "sql", "params"]
    # Each driver's binding that declares NVARCHAR(MAX) (tests/drivers show it on the wire): Microsoft's
    # Driver 18 refuses SQL_WLONGVARCHAR of size 0 (HY104), FreeTDS refuses SQL_WVARCHAR of size 0 (HY090).
    binding = pyodbc.SQL_WLONGVARCHAR if driver == odbc.FREETDS else pyodbc.SQL_WVARCHAR
    assert conn.sent[0] == ("input sizes", [(binding, 0, 0)])
    assert not getattr(cursor, "fast_executemany", False)


@pytest.mark.parametrize("driver", REPORTED)
def test_rows_go_in_chunks_of_default_chunk_one_statement_each(driver: str):
    rows = [(str(i),) for i in range(SqlServerEngine.default_chunk * 2 + 1)]
    sent = bulk_load(driver, rows, (Column("payload", "text"),)).sent
    chunks = [json.loads(arg[0]) for what, arg in sent if what == "params"]
    assert [len(c) for c in chunks] == [4000, 4000, 1]
    assert [r["c0"] for c in chunks for r in c] == [r[0] for r in rows]


def test_dedup_insert_reads_the_same_json_without_a_temp_table():
    conn = RecordingConnection(*REPORTED[MICROSOFT])
    columns = (Column("payload", "text"), Column("dedup_key", "string"))
    SqlServerEngine().insert_many(RecordingCursor(conn), TableName("jobs", "dbo"), columns, [("p", "k")], True)
    (sql,) = [arg for what, arg in conn.sent if what == "sql"]
    assert "OPENJSON" in sql and "#" not in sql


def test_a_double_that_sql_server_cannot_store_is_refused_by_name():
    with pytest.raises(SchemaError, match="column 'score' holds nan"):
        bulk_load(MICROSOFT, [(float("nan"),)], (Column("score", "double"),))


@pytest.mark.parametrize(
    ("name", "version", "describes"),
    [
        ("libtdsodbc.so", "01.03.0017", False),
        ("libtdsodbc.so", "01.05.0001", True),
        ("libmsodbcsql-18.3.so.3.1", "18.03.0003", True),
    ],
)
def test_only_freetds_before_1_5_cannot_describe_parameters(name: str, version: str, describes: bool):
    assert odbc.Driver(name, version).describes_params is describes
