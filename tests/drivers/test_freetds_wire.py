"""What the real FreeTDS ODBC driver (1.3.17, Debian's tdsodbc) puts on the wire, seen by a recording
TDS 7.4 stub on loopback (tests/support/tds_server.py): which connection strings log in and with
what password, and how pyodbc + FreeTDS send our statements and their parameters.

The expectations are what FreeTDS 1.3.17 with pyodbc 5.5 was observed to do; a different FreeTDS
or pyodbc may differ, and then these tests say where.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.support.tds_server import TdsServer

pyodbc = pytest.importorskip("pyodbc", reason="pyodbc is not installed")
if "FreeTDS" not in pyodbc.drivers():
    pytest.skip("no ODBC driver registered as 'FreeTDS' (Debian: apt-get install tdsodbc)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
NON_ASCII = "Zürich — 東京 — 😀"
OPENJSON_INSERT = "INSERT INTO t (a) SELECT a FROM OPENJSON(CAST(? AS NVARCHAR(MAX))) WITH (a NVARCHAR(MAX) '$.a')"


@pytest.fixture
def server():
    with TdsServer() as s:
        yield s
        assert s.errors == [], "the stub failed to parse a request"


def conn_string(server: TdsServer, password: str = "p", server_part: str | None = None) -> str:
    where = server_part or f"Server=127.0.0.1;Port={server.port}"
    # pyodbc caches what connect learns (SQLGetTypeInfo) per connection string for the process, and
    # a later stub may get an earlier one's port: a fresh APP name keeps each connect uncached.
    return f"DRIVER={{FreeTDS}};{where};APP=stub-{uuid.uuid4().hex};Database=db;UID=u;PWD={password};TDS_Version=7.4"


def connect(server: TdsServer, **kw) -> pyodbc.Connection:
    return pyodbc.connect(conn_string(server, **kw), timeout=5)


def sized(n: int) -> str:
    """n code points of repeated non-ASCII text (each 😀 is two UTF-16 units)."""
    return (NON_ASCII * (n // len(NON_ASCII) + 1))[:n]


# ---- 1. logins and passwords ---------------------------------------------------------------------
# What FreeTDS 1.3.17 sends as the password for PWD=<value> followed by ";TDS_Version=7.4".
# A value starting with '{' runs to the first '}' that ends the string or is followed by ';'; '}}'
# is NOT unescaped; a bare value runs to the first ';' and keeps spaces and braces.
PASSWORDS = [
    ("plain", "plain"),
    ("with space inside", "with space inside"),
    (" lead and trail ", " lead and trail "),
    ("a}b", "a}b"),
    ("}a", "}a"),
    ("a{b", "a{b"),
    ("a=b", "a=b"),
    ("{plain}", "plain"),
    ("{a;b}", "a;b"),
    ("{a}}b}", "a}}b"),  # Microsoft's escape: its driver would send 'a}b'
    ("{a}b}", "a}b"),
    ("{a}b;c}", "a}b;c"),
    ("{a}}}", "a}}"),
    ("{}", ""),
    ("a;b", "a"),  # a bare ';' ends the value: the rest is another (ignored) key
    ("{a};b}", "a"),
    ("{a", "a;TDS_Version=7.4"),  # an unclosed brace swallows the rest of the string
]


@pytest.mark.parametrize("written, received", PASSWORDS, ids=[p for p, _ in PASSWORDS])
def test_login_sends_user_database_and_the_password_freetds_parsed(server, written, received):
    connect(server, password=written).close()
    (login,) = server.logins
    assert (login.user, login.database, login.password) == ("u", "db", received)
    assert login.tds_version == 0x74000004


def test_a_wrong_password_fails_with_login_failed(server):
    server.reject_password = "wrong"
    with pytest.raises(pyodbc.Error, match=r"Login failed for user 'u'.*18456"):
        connect(server, password="wrong")


def test_no_tls_key_is_needed_and_microsofts_encrypt_key_is_ignored(server):
    # The stub answers ENCRYPT_NOT_SUP: FreeTDS's default (request) goes on in clear text, and so
    # does Encrypt=yes (a Microsoft key FreeTDS does not read); its own Encryption=require refuses.
    for extra in ("", ";Encryption=off", ";Encryption=request", ";Encrypt=yes"):
        pyodbc.connect(conn_string(server) + extra, timeout=5).close()
    with pytest.raises(pyodbc.Error, match="Unable to connect"):
        pyodbc.connect(conn_string(server) + ";Encryption=require", timeout=5)
    assert len(server.logins) == 4


def test_tds_version_defaults_to_7_4(server):
    pyodbc.connect(conn_string(server).replace(";TDS_Version=7.4", ""), timeout=5).close()
    assert server.logins[0].tds_version == 0x74000004


# ---- 2. SERVER=host,port ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "form, connects",
    [
        ("SERVER=127.0.0.1,{port}", True),
        ("SERVER=localhost,{port}", True),
        ("SERVER=127.0.0.1, {port}", True),
        ("SERVER=tcp:127.0.0.1,{port}", False),  # Microsoft's tcp: prefix is not understood
        ("SERVER=127.0.0.1:{port}", False),
    ],
)
def test_microsoft_host_comma_port_form(server, form, connects):
    try:
        pyodbc.connect(conn_string(server, server_part=form.format(port=server.port)), timeout=5).close()
        connected = True
    except pyodbc.Error as exc:
        assert "Unable to connect" in str(exc)
        connected = False
    assert (connected, len(server.logins)) == (connects, int(connects))


# ---- 3. the OPENJSON bulk path ------------------------------------------------------------------
# pyodbc binds a str as SQL_WVARCHAR sized in UTF-16 *bytes* while that is <= the nvarchar maximum
# SQLGetTypeInfo reported (4000), else as SQL_WLONGVARCHAR at execution; FreeTDS declares these as
# NVARCHAR(<bytes>) and NVARCHAR(MAX) (sent as PLP) - never NTEXT, never NVARCHAR(4000) for long text.
@pytest.mark.parametrize(
    "text, declared",
    [
        (sized(10), "nvarchar(20)"),
        ("x" * 2000, "nvarchar(4000)"),
        ("x" * 2001, "nvarchar(max)"),
        (sized(5000), "nvarchar(max)"),
        (sized(100_000), "nvarchar(max)"),
    ],
    ids=["10", "2000-ascii", "2001-ascii", "5000", "100000"],
)
def test_openjson_parameter_arrives_whole_in_one_sp_prepexec(server, text, declared):
    cnxn = connect(server)
    cur = cnxn.cursor()  # kept: freeing it sends sp_unprepare
    server.clear()
    cur.execute(OPENJSON_INSERT, text)
    (rpc,) = server.rpcs
    assert rpc.proc == "sp_prepexec"
    assert rpc.statement == OPENJSON_INSERT.replace("?", "@P1")
    assert rpc.declaration == f"@P1 {declared.upper()}"
    # sp_prepexec's own @handle (OUTPUT int), @params and @stmt: the latter two travel as NTEXT
    assert [p.sql_type.split("(")[0] for p in rpc.params[:3]] == ["int", "ntext", "ntext"]
    (param,) = rpc.values
    assert (param.sql_type, param.value) == (declared, text)


# ---- 4. plain executemany -----------------------------------------------------------------------
WHEN = dt.datetime(2024, 1, 2, 3, 4, 5, 123456)


def test_plain_executemany_prepares_every_row_and_declares_none_as_varchar_1(server):
    rows = [("x" * 1000, b"\x00\xffbin", WHEN, 2**40), (NON_ASCII, None, WHEN, 1.5), ("plain", b"", None, True)]
    cnxn = connect(server)
    cur = cnxn.cursor()
    server.clear()
    cur.executemany("INSERT INTO t (a, b, c, d) VALUES (?, ?, ?, ?)", rows)
    # one sp_prepexec per row, and an sp_unprepare before each next one: two round trips a row
    assert [r.proc for r in server.rpcs] == ["sp_prepexec", "sp_unprepare"] * 2 + ["sp_prepexec"]
    sent = [[(p.sql_type, p.value) for p in r.values] for r in server.rpcs if r.proc == "sp_prepexec"]
    assert sent == [
        [("nvarchar(2000)", "x" * 1000), ("varbinary(5)", b"\x00\xffbin"), ("datetime2(7)", WHEN), ("bigint", 2**40)],
        # None goes as VARCHAR(1) NULL (FreeTDS has no SQLDescribeParam): SQL Server refuses an
        # implicit varchar -> varbinary conversion even for NULL (error 257)
        [("nvarchar(32)", NON_ASCII), ("varchar(1)", None), ("datetime2(7)", WHEN), ("float", 1.5)],
        [("nvarchar(10)", "plain"), ("varbinary(1)", b""), ("varchar(1)", None), ("bit", True)],
    ]
    assert [r.declaration for r in server.rpcs if r.proc == "sp_prepexec"][
        1
    ] == "@P1 NVARCHAR(32),@P2 VARCHAR(1),@P3 DATETIME2,@P4 FLOAT"


def test_datetime_precision_follows_the_servers_type_info(server):
    # pyodbc cuts a datetime to the precision SQLGetTypeInfo(SQL_TYPE_TIMESTAMP) reported on
    # connect: 27 (datetime2, SQL Server's first row) keeps microseconds, 23 (datetime) keeps ms.
    server.type_info[93] = ("datetime", 23)
    cnxn = connect(server)
    cur = cnxn.cursor()
    server.clear()
    cur.execute("INSERT INTO t (c) VALUES (?)", WHEN)
    (param,) = server.rpcs[0].values
    assert (param.sql_type, param.value) == ("datetime2(7)", WHEN.replace(microsecond=123000))


def test_other_parameter_types_and_their_declarations(server):
    values = [
        decimal.Decimal("-12.345"),
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
        dt.date(2024, 2, 29),
        dt.time(13, 14, 15, 123456),
        7,
        -(2**63),
        0.1,
        "",
        b"\x01" * 9000,
        False,
    ]
    cnxn = connect(server)
    cur = cnxn.cursor()
    server.clear()
    cur.execute(f"INSERT INTO t VALUES ({', '.join('?' * len(values))})", *values)
    (rpc,) = server.rpcs
    assert (
        rpc.declaration == "@P1 NUMERIC(5,3),@P2 UNIQUEIDENTIFIER,@P3 DATE,@P4 TIME,@P5 INT,@P6 BIGINT,"
        "@P7 FLOAT,@P8 NVARCHAR(1),@P9 VARBINARY(MAX),@P10 BIT"
    )
    assert [(p.sql_type, p.value) for p in rpc.values] == [
        ("numeric(5,3)", values[0]),
        ("uniqueidentifier", values[1]),
        ("date", values[2]),
        ("time(7)", dt.time(13, 14, 15)),  # pyodbc binds a time without its fraction
        ("int", 7),
        ("bigint", -(2**63)),
        ("float", 0.1),
        ("nvarchar(1)", ""),
        ("varbinary(max)", b"\x01" * 9000),  # over 8000 bytes: SQL_LONGVARBINARY, sent as PLP
        ("bit", False),
    ]


# ---- 5. loopback throughput ----------------------------------------------------------------------
@pytest.fixture
def server_process():
    """The stub in a process of its own, so its Python does not share the client's GIL: yields the
    process and its port; closing its stdin stops it and it prints a JSON summary."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.tds_server"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc, int(proc.stdout.readline())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_loopback_rows_per_second_executemany_vs_openjson(server_process):
    proc, port = server_process
    n = 10_000
    rows = [(2**32 + i, f"row {i} ".ljust(200, "é")) for i in range(n)]
    cnxn = pyodbc.connect(
        f"DRIVER={{FreeTDS}};Server=127.0.0.1;Port={port};Database=db;UID=u;PWD=p;TDS_Version=7.4", timeout=5
    )
    cur = cnxn.cursor()
    start = time.perf_counter()
    cur.executemany("INSERT INTO t (a, b) VALUES (?, ?)", rows)
    figures = {"executemany": n / (time.perf_counter() - start)}
    sql = (
        "INSERT INTO t (a, b) SELECT n, c0 FROM OPENJSON(CAST(? AS NVARCHAR(MAX))) "
        "WITH (n BIGINT '$.n', c0 NVARCHAR(200) '$.c0')"
    )
    for chunk in (1000, 5000):
        start = time.perf_counter()
        for i in range(0, n, chunk):  # the JSON is built as sqlqueue builds it, inside the timing
            doc = [{"n": a, "c0": b} for a, b in rows[i : i + chunk]]
            cur.execute(sql, json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
        figures[f"openjson/{chunk}"] = n / (time.perf_counter() - start)
    cur.close()
    cnxn.close()
    summary = json.loads(proc.communicate(timeout=30)[0].splitlines()[-1])
    # executemany: an sp_prepexec per row and an sp_unprepare between rows; each OPENJSON execute
    # after the first also unprepares the last: two round trips a row, or a chunk
    assert summary["rpcs"] == {"sp_prepexec": n + n // 1000 + n // 5000, "sp_unprepare": n + n // 1000 + n // 5000}
    assert summary["errors"] == []
    print(f"\nloopback, {n:,} rows of (bigint, 200-char str), FreeTDS 1.3.17 against the stub process:")
    for k, v in figures.items():
        print(f"  {k:16} {v:>10,.0f} rows/s  ({n / v:.3f} s)")
    print(f"  the stub's own CPU time over all three: {summary['cpu']:.3f} s")
    assert figures["openjson/1000"] > 5 * figures["executemany"]


# ---- 6. getinfo ----------------------------------------------------------------------------------
def test_getinfo_driver_and_dbms_version(server):
    cnxn = connect(server)
    assert cnxn.getinfo(pyodbc.SQL_DRIVER_NAME) == "libtdsodbc.so"
    assert cnxn.getinfo(pyodbc.SQL_DRIVER_VER) == "01.03.0017"
    assert cnxn.getinfo(pyodbc.SQL_DBMS_NAME) == "Microsoft SQL Server"  # LOGINACK's ProgName
    assert cnxn.getinfo(pyodbc.SQL_DBMS_VER) == "16.00.4135"  # LOGINACK's version 16.0.4135
    assert cnxn.getinfo(pyodbc.SQL_DESCRIBE_PARAMETER) is False


# ---- the stub itself ------------------------------------------------------------------------------
def test_canned_results_and_what_a_connect_sends(server):
    server.add_result(r"^\s*SELECT 1\s*$", [("x", "int")], [(1,)])
    server.add_result(r"@@VERSION", [("v", "nvarchar")], [("Microsoft SQL Server 2022 - 16.0.4135.4",)])
    cnxn = connect(server)
    # pyodbc turns autocommit off (FreeTDS: a transaction manager 'begin', no SET statements) and
    # asks SQLGetTypeInfo for VARCHAR, WVARCHAR, VARBINARY, TYPE_TIMESTAMP, sent as SQL batches
    assert server.transactions == ["begin"]
    assert server.batches == [f"sp_datatype_info_100 {t},3" for t in (12, -9, -3, 93)]
    cur = cnxn.cursor()
    assert [tuple(r) for r in cur.execute("SELECT 1").fetchall()] == [(1,)]
    assert cur.execute("SELECT @@VERSION").fetchone()[0].endswith("16.0.4135.4")
    server.rowcount = 3
    assert cur.execute("DELETE FROM t WHERE a = ?", 1).rowcount == 3
    cnxn.commit()
    cnxn.rollback()
    assert server.transactions == ["begin", "commit", "rollback"]
