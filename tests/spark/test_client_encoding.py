"""Text that travels in bulk (the sink's COPY in, a read task's COPY out) is UTF-8, as Arrow writes and
reads it, whatever client encoding the PostgreSQL session has (a LATIN1 database's, or client_encoding in
the URL): each character is stored and read as it is, as the row at a time path stores it."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sqlqueue.schema import Column
from sqlqueue.spark.types import csv_batches
from tests.support.engines import Engine

from .test_sink import take, writer

DOMAIN = (Column("payload", "text"),)
WORDS = ["Zürich", "Ærøskøbing", "façade"]  # each in LATIN1 as well, so the row path can send them too


@pytest.fixture
def sessions(postgres_server):
    """The test server through a UTF-8 session and through a LATIN1 one."""
    latin1 = {**postgres_server.options, "url": postgres_server.url + "?client_encoding=LATIN1"}
    utf8, through_latin1 = Engine("postgres", postgres_server.options), Engine("postgres", latin1)
    yield utf8, through_latin1
    utf8.close()
    through_latin1.close()


def test_the_sink_stores_each_character_through_a_latin1_session(spark, sessions):
    utf8, through_latin1 = sessions
    queue = utf8.new_queue(DOMAIN)
    frame = spark.createDataFrame([(w,) for w in WORDS], "payload string")
    writer(frame, through_latin1.sink_options(queue)).mode("append").save()
    assert sorted(take(queue, ["payload"])) == sorted((w,) for w in WORDS)


def test_a_read_task_reads_each_character_through_a_latin1_session(sessions):
    utf8, through_latin1 = sessions
    queue = through_latin1.queue(str(utf8.new_queue(DOMAIN).table))
    queue.enqueue([{"payload": w} for w in WORDS])  # the row path, through the same session
    queue.consuming.claim("reader", 1, 100, order="heap")
    (lo, hi), *_ = queue.consuming.partition_bounds("reader", 0, 1, 1)
    chunks = queue.consuming.export_claimed("reader", 0, 1, lo, hi, ["payload"])
    assert chunks is not None
    read = pa.Table.from_batches(list(csv_batches(chunks, pa.schema([("payload", pa.string())]))))
    assert sorted(read.column("payload").to_pylist()) == sorted(WORDS)
