"""sqlqueue's own SQL Server code through the real FreeTDS driver (and Microsoft's, where registered),
against the recording TDS stub.

The unit tests pin what sqlqueue hands pyodbc; these show what FreeTDS 1.3.17 then sends: the
password our connection string carries, the session setup, and the bulk path's one NVARCHAR(MAX)
JSON parameter per chunk, decoded back into the rows it came from.
"""

from __future__ import annotations

import datetime as dt
import json
from urllib.parse import quote_plus

import pytest

from sqlqueue.connection import parse_connection
from sqlqueue.dialects.sqlserver import SqlServerDialect
from sqlqueue.identifiers import TableName
from sqlqueue.schema import PORTABLE_TYPES, STAGE_TAG, Column
from tests.support.tds_server import TdsServer

pyodbc = pytest.importorskip("pyodbc", reason="pyodbc is not installed")
if "FreeTDS" not in pyodbc.drivers():
    pytest.skip("no ODBC driver registered as 'FreeTDS' (Debian: apt-get install tdsodbc)", allow_module_level=True)


@pytest.fixture
def server():
    with TdsServer() as s:
        yield s
        assert s.errors == [], "the stub failed to parse a request"


def open_queue_connection(server: TdsServer, password: str = "p", driver: str = "FreeTDS"):
    # The stub speaks no TLS: Microsoft's driver, which encrypts by default, is told not to.
    tls = "" if driver == "FreeTDS" else "&Encrypt=no"
    url = f"sqlserver://app@127.0.0.1:{server.port}/queues?driver={quote_plus(driver)}{tls}"
    return SqlServerDialect().connect(parse_connection(url, password=password))


MICROSOFT = "ODBC Driver 18 for SQL Server"
# Each driver registered here: Microsoft's by ../shared/babelfish/msodbc18.sh (make test-babelfish).
DRIVERS = [
    "FreeTDS",
    pytest.param(
        MICROSOFT, marks=pytest.mark.skipif(MICROSOFT not in pyodbc.drivers(), reason=f"{MICROSOFT} is not registered")
    ),
]


@pytest.mark.parametrize("password", ["plain", " sp ace ", "a}b", "a;b", "{lead", "pä€"])
def test_the_password_our_connection_string_carries_arrives_intact(server, password):
    open_queue_connection(server, password).close()
    (login,) = server.logins
    assert (login.user, login.database, login.password) == ("app", "queues", password)


def test_a_connection_sets_read_committed_before_anything_of_ours(server):
    open_queue_connection(server).close()
    ours = [b for b in server.batches if not b.startswith("sp_datatype_info")]  # pyodbc's connect asks those
    assert ours == ["SET TRANSACTION ISOLATION LEVEL READ COMMITTED"]


DOMAIN = tuple(Column(f"col_{t}", t) for t in PORTABLE_TYPES)
ROW = ("Zürich — 東京 — 😀", "é" * 3000, 7, 2**53 + 1, 0.1, True, dt.datetime(2026, 1, 2, 3, 4, 5, 123456), b"\x00\xff")


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_bulk_load_sends_one_nvarchar_max_json_parameter_per_chunk_and_every_byte(server, driver):
    dialect = SqlServerDialect()
    conn = open_queue_connection(server, driver=driver)
    conn.autocommit = False
    rows = [(*ROW, f"tag{i}") for i in range(dialect.default_chunk + 1)]
    server.clear()
    dialect.load(conn.cursor(), dialect.table(TableName("jobs", "dbo")), [*DOMAIN, STAGE_TAG], rows)
    inserts = [r for r in server.rpcs if r.statement and "OPENJSON" in r.statement]
    assert [r.declaration.upper() for r in inserts] == ["@P1 NVARCHAR(MAX)"] * 2  # not NTEXT, not NVARCHAR(n)
    sent = [json.loads(r.values[0].value) for r in inserts]
    assert [len(chunk) for chunk in sent] == [dialect.default_chunk, 1]
    expected = list(dialect.json_chunks([*DOMAIN, STAGE_TAG], rows))
    assert [json.loads(text) for text in expected] == sent
    conn.close()
