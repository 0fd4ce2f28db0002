"""Spark's writers into a table sqlqueue adopted: each row becomes one new ready row of the table's profile,
which the table's own worker then takes."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from sqlqueue.testing import run_to_end
from tests.support import user_tables

ROWS = 600


def sink_options(engine, queue) -> dict[str, str]:
    return {**engine.options, "queue": str(queue.table), "profile": queue.declared.name}


def work_rows(spark, n: int):
    """Rows as the table's producers would give them: a key of their own (EnqueuedAt), a type, a payload."""
    return spark.range(n).select(
        F.expr("timestamp_seconds(1700000000 + id)").alias("EnqueuedAt"),
        F.lit("Sync").alias("Type"),
        F.concat(F.lit("s"), F.col("id").cast("string")).alias("Payload"),
    )


def drained_by_the_tables_worker(queue, engine) -> list[str]:
    worker = user_tables.TableWorker(queue, engine.name)
    worker.work(until=lambda: True)
    return sorted(worker.done)


@pytest.mark.babelfish_gap("datetime2_param")  # the worker's UpdatedAt check sends the token back
def test_a_stream_enqueues_each_row_once_as_a_ready_row_the_tables_worker_takes(spark, engine, tmp_path):
    queue = user_tables.relational(engine)
    work_rows(spark, ROWS).write.format("delta").save(str(tmp_path / "work"))
    writer = spark.readStream.format("delta").option("maxFilesPerTrigger", 1).load(str(tmp_path / "work")).writeStream
    for key, value in sink_options(engine, queue).items():
        writer = writer.option(key, value)
    query = writer.format("sqlqueue").option("checkpointLocation", str(tmp_path / "c")).trigger(availableNow=True)
    run_to_end(query.start())
    assert drained_by_the_tables_worker(queue, engine) == sorted(f"s{i}" for i in range(ROWS))


def test_a_batch_write_enqueues_each_row_once(spark, engine):
    queue = user_tables.relational(engine)
    writer = work_rows(spark, ROWS).repartition(3).write.format("sqlqueue").mode("append")
    for key, value in sink_options(engine, queue).items():
        writer = writer.option(key, value)
    writer.save()
    counts = queue.fetch(queue.engine.compile(f"SELECT Status, COUNT(*) FROM {queue.table} GROUP BY Status"), {})
    assert dict(counts) == {"Pending": ROWS}
