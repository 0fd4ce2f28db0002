"""Every column type survives every write path exactly, on every engine.

The values are the ones drivers get wrong: text past 255 and 510 bytes, non-ASCII text, binary,
NULL of every type, microsecond timestamps and integers past 2**53. On SQL Server (run it with
``make test-sqlserver``) this is the bulk path's proof: one JSON parameter per chunk, typed by
OPENJSON, through each driver.
"""

from __future__ import annotations

import datetime as dt

import pytest

from sqlqueue.producer import Producer
from sqlqueue.schema import LIFECYCLE_TYPES, Column

DOMAIN = (
    Column("label", "string"),
    Column("body", "text"),
    Column("blob", "binary"),
    Column("at", "timestamp"),
    Column("big", "bigint"),
    Column("small", "int"),
    Column("score", "double"),
    Column("flag", "boolean"),
)
ROWS = [
    (
        "Zürich — 東京 — 😀",
        "é" * 1000,
        bytes(range(256)),
        dt.datetime(2026, 11, 23, 1, 2, 3, 456789, dt.timezone.utc),
        2**53 + 1,
        -7,
        0.1,
        True,
    ),
    ("x" * 400, "y" * 5000, b"", dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc), -(2**62), 0, -1e300, False),
    (None, None, None, None, None, None, None, None),
]
NAMES = [c.name for c in DOMAIN]


def read_back(queue) -> list[tuple]:
    """The rows, claimed and read as a consumer reads them, with each timestamp decoded by the dialect."""
    queue.claim("reader", 1, 100, order="heap")
    got = []
    for lo, hi in queue.partition_bounds("reader", 0, 1, 1):
        for chunk in queue.read_claimed("reader", 0, 1, lo, hi, ["id", *NAMES]):
            got += chunk
    at = NAMES.index("at")
    decoded = [list(row[1:]) for row in sorted(got)]
    for row in decoded:
        row[at] = queue.dialect.decode_timestamp(row[at])
        row[NAMES.index("blob")] = None if row[NAMES.index("blob")] is None else bytes(row[NAMES.index("blob")])
        row[NAMES.index("flag")] = None if row[NAMES.index("flag")] is None else bool(row[NAMES.index("flag")])
    return [tuple(row) for row in decoded]


def expected(engine_name: str) -> list[tuple]:
    """ROWS as stored: SQLite keeps timestamps to the millisecond (its own text format)."""
    at = NAMES.index("at")
    rows = [list(row) for row in ROWS]
    for row in rows:
        if engine_name == "sqlite" and row[at] is not None:
            row[at] = row[at].replace(microsecond=row[at].microsecond // 1000 * 1000)
    return [tuple(row) for row in rows]


def test_enqueue_stores_every_type_exactly(engine):
    queue = engine.new_queue(DOMAIN)
    queue.enqueue([dict(zip(NAMES, row)) for row in ROWS])
    assert read_back(queue) == expected(engine.name)


def test_enqueue_with_dedup_keys_stores_every_type_exactly(engine):
    queue = engine.new_queue(DOMAIN)
    queue.enqueue([{**dict(zip(NAMES, row)), "dedup_key": f"k{i}"} for i, row in enumerate(ROWS)])
    assert read_back(queue) == expected(engine.name)


@pytest.mark.parametrize("keyed", [False, True], ids=["unpublished", "staged"])
def test_the_sink_stores_every_type_exactly(engine, keyed):
    queue = engine.new_queue(DOMAIN)
    columns = (*DOMAIN, LIFECYCLE_TYPES["dedup_key"]) if keyed else DOMAIN
    rows = [(*row, f"k{i}") if keyed else row for i, row in enumerate(ROWS)]
    producer = Producer(queue, "payloads")
    producer.publish(0, columns, [producer.write(0, 0, columns, rows)])
    assert read_back(queue) == expected(engine.name)
