"""The source and the sink refuse, on the driver and before any task, a queue table of an older layout:
one line that names `sqlqueue migrate`. No SparkSession is needed to see it."""

from __future__ import annotations

import pytest
from pyspark.sql.types import StringType, StructField, StructType

from sqlqueue import layouts
from sqlqueue.errors import SchemaError
from sqlqueue.schema import LAYOUT
from sqlqueue.spark.source import SqlQueueDataSource
from sqlqueue.spark.writer import batch_writer, stream_writer
from tests.support.layouts import layout1_queue

SCHEMA = StructType([StructField("payload", StringType())])


def first_offset(options: dict) -> dict:
    """A stream reader's first call to the database, as the query's first trigger makes it."""
    reader = SqlQueueDataSource(options).streamReader(SCHEMA)
    return reader.latestOffset(reader.initialOffset(), reader.getDefaultReadLimit())


STARTS = {
    "source schema": lambda options: SqlQueueDataSource(options).schema(),
    "stream reader": first_offset,
    "stream writer": lambda options: stream_writer(options, SCHEMA, False),
    "batch writer": lambda options: batch_writer(options, SCHEMA, False),
    "ack writer": lambda options: batch_writer({**options, "operation": "ack"}, SCHEMA, False),
}


@pytest.mark.parametrize("start", STARTS.values(), ids=STARTS.keys())
def test_a_layout_1_queue_is_refused_in_one_line_naming_migrate(engine, start):
    queue = layout1_queue(engine)
    with pytest.raises(SchemaError) as refused:
        start(engine.sink_options(queue))  # the options every start takes
    message = str(refused.value)
    assert "\n" not in message and f"queue table {queue.table} at " in message
    refusal = f"has layout 1, older than this sqlqueue's layout {LAYOUT}: run `sqlqueue migrate --queue {queue.table}`"
    assert refusal in message


@pytest.mark.babelfish_gap("nocheck")
def test_a_migrated_queue_is_accepted(engine):
    queue = layout1_queue(engine)
    layouts.migrate(queue, say=lambda line: None)
    assert SqlQueueDataSource(engine.source_options(queue)).schema().endswith("`payload` STRING")
