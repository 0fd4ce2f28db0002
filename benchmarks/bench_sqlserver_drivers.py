"""Bulk enqueue per SQL Server driver: rows/s of ``Queue.enqueue`` (the OPENJSON path, one NVARCHAR(MAX)
JSON parameter per 4,000 rows, in one transaction) through FreeTDS, Microsoft's Driver 18 (both through
pyodbc) and mssql-python, against a live TDS server; and mssql-python's own bulk copy beside it.

    .venv/bin/python benchmarks/bench_sqlserver_drivers.py --rows 20000 --repeat 3

The server is Babelfish for PostgreSQL (../shared/babelfish, `babelfish.sh start`) unless --url names
another. Babelfish runs T-SQL on PostgreSQL, so its absolute figures say nothing of SQL Server: only
the ratios between drivers mean anything. Without a server it says so and exits 0 (make bench).

mssql-python's ``cursor.bulkcopy`` opens a connection of its own, so it cannot join the enqueue's
transaction: it could only fill a staging table, which one INSERT ... SELECT would then move into the
queue. Its figure is that whole path: bulk copy into a staging table, then the INSERT ... SELECT and the
staging rows' DELETE in one transaction.
"""

from __future__ import annotations

import argparse
import functools
import socket
import sys
from collections.abc import Callable
from urllib.parse import quote_plus

from common import median_of, report

from sqlqueue.connection import parse_connection
from sqlqueue.identifiers import TableName
from sqlqueue.queue import Queue
from sqlqueue.schema import Column
from tests.support.engines import fresh_name
from tests.support.sqlserver_drivers import FREETDS, MICROSOFT, MSSQL_PYTHON, available

BABELFISH = "sqlserver://babelfish_user:12345678@127.0.0.1:1433/babelfish_db?TrustServerCertificate=yes"
DOMAIN = (Column("payload", "text"), Column("customer", "bigint", nullable=False))
DRIVERS = (FREETDS, MICROSOFT, MSSQL_PYTHON)


def answers(url: str) -> bool:
    parts = parse_connection(url)
    try:
        socket.create_connection((parts.param("host"), int(parts.param("port") or 1433)), timeout=2).close()
        return True
    except OSError:
        return False


def queue_on(url: str, driver: str) -> Queue:
    queue = Queue(parse_connection(f"{url}&driver={quote_plus(driver)}"), TableName(fresh_name("bench_drv_")))
    queue.create(DOMAIN, order="heap")
    return queue


def enqueue(url: str, driver: str, rows: list[dict]) -> Callable[[], None]:
    queue = queue_on(url, driver)
    assert queue.conn is not None  # connected before the clock starts

    def run() -> None:
        queue.enqueue(rows)

    return run


def bulk_copy_then_move(url: str, rows: list[dict]) -> Callable[[], None]:
    queue = queue_on(url, MSSQL_PYTHON)
    staging = fresh_name("bench_stg_")
    cur = queue.conn.cursor()
    cur.execute(f"CREATE TABLE {staging} (payload NVARCHAR(MAX) NULL, customer BIGINT NOT NULL)")
    tuples = [(r["payload"], r["customer"]) for r in rows]
    table = queue.engine.table(queue.table)

    def run() -> None:
        cur.bulkcopy(staging, tuples, timeout=0)  # a connection of its own, committed on its own
        with queue.transaction() as tx:
            tx.execute(f"INSERT INTO {table} (payload, customer) SELECT payload, customer FROM {staging}")
            tx.execute(f"DELETE FROM {staging}")

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=BABELFISH, help="a sqlserver:// URL with credentials (default: Babelfish)")
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not answers(args.url):
        print("bench_sqlserver_drivers: skipped: no TDS server answers at the URL (start ../shared/babelfish)")
        return 0
    rows = [{"payload": f"order {i} " + "é" * 180, "customer": 2**33 + i} for i in range(args.rows)]
    print(f"bulk enqueue of {args.rows:,} rows (NVARCHAR(MAX) of ~190 characters, BIGINT), median of {args.repeat}")
    print("Babelfish runs T-SQL on PostgreSQL: only the ratios between drivers mean anything, not the figures.")
    rates = {}
    for driver in DRIVERS:
        if not available(driver):
            print(f"  {driver:<44} not installed or not registered: skipped")
            continue
        seconds = median_of(args.repeat, functools.partial(enqueue, args.url, driver, rows))
        rates[driver] = report(f"{driver}: enqueue (OPENJSON)", args.rows, seconds)
    if MSSQL_PYTHON in rates:
        try:
            seconds = median_of(args.repeat, lambda: bulk_copy_then_move(args.url, rows))
            rates["bulkcopy"] = report("mssql-python: bulkcopy to staging + move", args.rows, seconds)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - its Rust core panics with a BaseException (pyo3)
            # On Babelfish 4.2.0 mssql-python 1.16's bulk copy panicked in its TDS writer
            # (mssql-tds src/io/packet_writer.rs: "dest is out of bounds") for every table shape tried.
            print(f"  {'mssql-python: bulkcopy to staging + move':<44} failed: {type(exc).__name__}: {exc}")
    if rates:
        slowest = min(rates.values())
        print("  ratios to the slowest: " + ", ".join(f"{k} {v / slowest:.2f}x" for k, v in rates.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
