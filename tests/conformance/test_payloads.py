"""Every column type survives every write path exactly, on every engine.

The values are the ones drivers get wrong: text past 255, 510 and 4,000 characters (NVARCHAR(n)'s
limit), non-ASCII text, binary, NULL of every type, microsecond timestamps and integers past 2**53.
On SQL Server (run it with ``make test-sqlserver``) this is the bulk path's proof: one JSON
parameter per chunk, typed by OPENJSON, through each driver.
"""

from __future__ import annotations

import datetime as dt

import pytest

from sqlqueue.producer import Producer
from sqlqueue.schema import LIFECYCLE_TYPES, Column

DOMAIN = (
    Column("label", "string"),
    Column("body", "text"),
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
        dt.datetime(2026, 11, 23, 1, 2, 3, 456789, dt.timezone.utc),
        2**53 + 1,
        -7,
        0.1,
        True,
    ),
    ("x" * 400, "y" * 600, dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc), -(2**62), 0, -1e300, False),
    (None, None, None, None, None, None, None),
]


def write_rows(queue, columns: tuple[Column, ...], rows: list[tuple], path: str) -> None:
    """``rows`` into ``queue`` by one write path: enqueue or the sink, with or without dedup keys."""
    keyed = path.endswith("keyed")
    if keyed:
        columns = (*columns, LIFECYCLE_TYPES["dedup_key"])
        rows = [(*row, f"k{i}") for i, row in enumerate(rows)]
    if path.startswith("enqueue"):
        names = [c.name for c in columns]
        queue.enqueue([dict(zip(names, row)) for row in rows])
    else:
        producer = Producer(queue, "payloads")
        producer.publish(0, columns, [producer.write(0, 0, columns, rows)])


# enqueue and enqueue_keyed are Queue.enqueue's two paths; the sink's are its unpublished rows and,
# with dedup keys, the staging table.
PATHS = ["enqueue", "enqueue_keyed", "sink", "sink_keyed"]


def read_back(queue, columns: tuple[Column, ...]) -> list[tuple]:
    """The rows, claimed and read as a consumer reads them, with each value decoded as a reader sees it,
    in a fixed order (the keyed paths promise no identity order: they insert only keys not yet held)."""
    queue.consuming.claim("reader", 1, 100, order="heap")
    names = [c.name for c in columns]
    got = []
    for lo, hi in queue.consuming.partition_bounds("reader", 0, 1, 1):
        for chunk in queue.consuming.read_claimed("reader", 0, 1, lo, hi, ["id", *names]):
            got += chunk
    decode = {
        "timestamp": queue.engine.decode_timestamp,
        "binary": lambda v: None if v is None else bytes(v),
        "boolean": lambda v: None if v is None else bool(v),
    }
    return sorted(
        (tuple(decode.get(c.type, lambda v: v)(v) for c, v in zip(columns, row[1:])) for row in got), key=repr
    )


def as_stored(engine_name: str, rows: list[tuple]) -> list[tuple]:
    """``rows`` as stored: SQLite keeps timestamps to the millisecond (its own text format)."""
    if engine_name != "sqlite":
        return rows
    return [
        tuple(v.replace(microsecond=v.microsecond // 1000 * 1000) if isinstance(v, dt.datetime) else v for v in row)
        for row in rows
    ]


@pytest.mark.parametrize("path", PATHS)
def test_every_write_path_stores_every_type_exactly(engine, path):
    queue = engine.new_queue(DOMAIN)
    write_rows(queue, DOMAIN, ROWS, path)
    assert read_back(queue, DOMAIN) == sorted(as_stored(engine.name, ROWS), key=repr)


PAST_4000 = pytest.mark.babelfish_gap("openjson_max")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    "length",
    # 4,000 is NVARCHAR(n)'s largest n: past it a driver must bind NVARCHAR(MAX), or cut the text.
    [1, 4000, pytest.param(4001, marks=PAST_4000), pytest.param(100_000, marks=PAST_4000)],
)
def test_every_write_path_stores_text_of_any_length_exactly(engine, path, length):
    columns = (Column("body", "text"),)
    # Lengths in UTF-16 code units, as NVARCHAR counts them: 😀 takes two.
    rows = [("é" * length,), ("😀" * (length // 2) + "東" * (length % 2),), ("y" * length,)]
    queue = engine.new_queue(columns)
    write_rows(queue, columns, rows, path)
    assert read_back(queue, columns) == sorted(rows, key=repr)


@pytest.mark.babelfish_gap("convert_style")
@pytest.mark.parametrize("path", PATHS)
def test_every_write_path_stores_binary_exactly(engine, path):
    columns = (Column("blob", "binary"),)
    rows = [(bytes(range(256)),), (b"",), (None,)]
    queue = engine.new_queue(columns)
    write_rows(queue, columns, rows, path)
    assert read_back(queue, columns) == sorted(rows, key=repr)
