"""sqlqueue's own SQL Server code through each real driver (FreeTDS, Microsoft's Driver 18 where it is
registered, mssql-python where it is installed), against the recording TDS stub.

The unit tests pin what sqlqueue hands the driver; these show what the driver then sends: the
password our connection string carries, the session setup, and the bulk path's one NVARCHAR(MAX)
JSON parameter per chunk, decoded back into the rows it came from.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from sqlqueue.connection import parse_connection
from sqlqueue.dialects.sqlserver import SqlServerEngine
from sqlqueue.identifiers import TableName
from sqlqueue.schema import PORTABLE_TYPES, STAGE_TAG, Column
from tests.support.sqlserver_drivers import DRIVERS, stub_url
from tests.support.tds_server import TdsServer


@pytest.fixture
def server():
    with TdsServer() as s:
        yield s
        assert s.errors == [], "the stub failed to parse a request"


def open_queue_connection(server: TdsServer, driver: str, password: str = "p"):
    return SqlServerEngine().connect(parse_connection(stub_url(server, driver), password=password))


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("password", ["plain", " sp ace ", "a}b", "a;b", "{lead", "pä€"])
def test_the_password_our_connection_string_carries_arrives_intact(server, driver, password):
    open_queue_connection(server, driver, password).close()
    (login,) = server.logins
    assert (login.user, login.database, login.password) == ("app", "queues", password)


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_connection_sets_read_committed_before_anything_of_ours(server, driver):
    open_queue_connection(server, driver).close()
    ours = [b for b in server.batches if not b.startswith("sp_datatype_info")]  # pyodbc's connect asks those
    assert ours == ["SET TRANSACTION ISOLATION LEVEL READ COMMITTED"]


DOMAIN = tuple(Column(f"col_{t}", t) for t in PORTABLE_TYPES)
ROW = ("Zürich — 東京 — 😀", "é" * 3000, 7, 2**53 + 1, 0.1, True, dt.datetime(2026, 1, 2, 3, 4, 5, 123456), b"\x00\xff")
# Over 4,000 UTF-16 units in one value, surrogate pairs among them; and a NULL of every type.
LONG_ROW = ("😀" * 2100, "x" * 5000, *ROW[2:])
NULL_ROW = (None,) * len(DOMAIN)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("row", [ROW, LONG_ROW, NULL_ROW], ids=["row", "over 4000 characters", "nulls"])
def test_a_bulk_load_sends_one_nvarchar_max_json_parameter_per_chunk_and_every_byte(server, driver, row):
    engine = SqlServerEngine()
    conn = open_queue_connection(server, driver)
    conn.autocommit = False
    rows = [(*row, f"tag{i}") for i in range(engine.default_chunk + 1)]
    server.clear()
    engine.load(conn.cursor(), engine.table(TableName("jobs", "dbo")), [*DOMAIN, STAGE_TAG], rows)
    inserts = [r for r in server.rpcs if r.statement and "OPENJSON" in r.statement]
    # one sp_prepexec a chunk, never sp_prepare + sp_execute; NVARCHAR(MAX), not NTEXT, NVARCHAR(n) or VARCHAR
    assert [(r.proc, r.declaration.upper()) for r in inserts] == [("sp_prepexec", "@P1 NVARCHAR(MAX)")] * 2
    sent = [json.loads(r.values[0].value) for r in inserts]
    assert [len(chunk) for chunk in sent] == [engine.default_chunk, 1]
    expected = list(engine.json_chunks([*DOMAIN, STAGE_TAG], rows))
    assert [json.loads(text) for text in expected] == sent
    conn.close()
