"""The sink stores each value as the queue core's own enqueue does, whichever way its rows travel: on
PostgreSQL as COPY's text written by Arrow (sqlqueue.textrows), elsewhere a row at a time."""

from __future__ import annotations

import datetime as dt
import math

import pyarrow as pa

from sqlqueue.schema import Column
from sqlqueue.spark.types import sink_rows, spark_ddl
from sqlqueue.textrows import TextRows

from ..conformance.test_payloads import DOMAIN
from .test_sink import take, writer

UTC = dt.timezone.utc
# What bulk-load text could get wrong: the empty string beside NULL, quotes, separators (tab, comma), line
# breaks, backslashes and COPY's own escapes, NULL's own spellings, the end-of-data line, spaces at the ends;
# doubles' special values and shortest digits; the ends of the timestamp range.
ROWS = [
    ("", '"quoted", with a comma', dt.datetime(2026, 11, 23, 1, 2, 3, 456789, UTC), 2**53 + 1, -7, 0.1, True),
    ("line\nbreak\r\n", "back\\slash \\N NULL", dt.datetime(1000, 1, 1, tzinfo=UTC), -(2**62), 0, 1 / 3, False),
    ("  spaces  ", "Zürich — 東京 — 😀", dt.datetime(9999, 12, 31, 23, 59, 59, 999999, UTC), 0, 2**31 - 1, -0.0, True),
    ("nan", "inf", dt.datetime(1970, 1, 1, tzinfo=UTC), 1, -(2**31), math.nan, False),
    ("a\tb", "\\.\n\\x22\\t", dt.datetime(2000, 2, 29, tzinfo=UTC), 2, 1, math.inf, True),
    ("c", "d", dt.datetime(2000, 3, 1, tzinfo=UTC), 3, 2, -1e300, False),
    (None, None, None, None, None, None, None),
]
NAMES = [c.name for c in DOMAIN]


def stored(queue) -> list[str]:
    """Every row the queue holds, as text that tells NaN and -0.0 apart, in a fixed order."""
    got = take(queue, NAMES)
    times = [i for i, c in enumerate(DOMAIN) if c.type == "timestamp"]
    decoded = [tuple(queue.engine.decode_timestamp(v) if i in times else v for i, v in enumerate(row)) for row in got]
    return sorted(repr(row) for row in decoded)


def test_the_sink_stores_every_value_as_an_enqueue_does(spark, engine):
    enqueued, written = engine.new_queue(DOMAIN), engine.new_queue(DOMAIN)
    enqueued.enqueue([dict(zip(NAMES, row)) for row in ROWS])
    frame = spark.createDataFrame(ROWS, spark_ddl(DOMAIN)).repartition(2)
    writer(frame, engine.sink_options(written)).mode("append").save()
    assert stored(written) == stored(enqueued)


def test_a_float_column_is_stored_as_the_double_it_is(spark, engine):
    queue = engine.new_queue((Column("score", "double"),))
    df = spark.createDataFrame([(0.1,), (1 / 3,)], "score float")
    writer(df, engine.sink_options(queue)).mode("append").save()
    exact = [pa.array([v], pa.float32()).cast(pa.float64())[0].as_py() for v in (0.1, 1 / 3)]
    assert sorted(v for (v,) in take(queue, ["score"])) == sorted(exact)


def test_plain_columns_travel_as_text_and_binary_ones_row_by_row():
    batch = pa.record_batch([pa.array(["x"]), pa.array([b"\x00"])], names=["label", "blob"])
    plain = sink_rows([batch.select([0])], [Column("label", "string")], native=True)
    binary = sink_rows([batch], [Column("label", "string"), Column("blob", "binary")], native=True)
    assert isinstance(plain, TextRows) and list(plain) == [("x",)]
    assert not isinstance(binary, TextRows) and list(binary) == [("x", b"\x00")]


def test_text_rows_count_the_rows_they_rendered():
    batches = [pa.record_batch([pa.array(["x"] * n, pa.string())], names=["label"]) for n in (2, 0, 3)]
    rows = sink_rows(batches, [Column("label", "string")], native=True)
    assert isinstance(rows, TextRows)
    assert b"".join(rows.text(("tag",))) == b"x\ttag\n" * 5 and rows.count == 5


def test_a_task_without_rows_has_none_to_write():
    empty = pa.record_batch([pa.array([], pa.string())], names=["label"])
    assert list(sink_rows([empty, empty], [Column("label", "string")], native=True)) == []
