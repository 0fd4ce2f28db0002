"""df.write / df.writeStream .format("sqlqueue") end to end: real Spark, real engines."""

from __future__ import annotations

import datetime as dt
import itertools
import sys
import threading
import time

import pytest
from chispa import assert_df_equality
from pyspark import cloudpickle
from pyspark.sql import functions as F

from sqlqueue.schema import Column
from sqlqueue.spark.source import SqlQueueDataSource
from sqlqueue.spark.writer import QueueBatchWriter, batch_writer
from sqlqueue.testing import assert_queue_holds, wait_until

# Spark's workers cannot import this module: send its classes and functions by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

DOMAIN = (Column("payload", "text"), Column("customer", "bigint", nullable=False))
_claims = itertools.count(1)


def writer(df, options: dict, source: str = "sqlqueue"):
    w = df.write.format(source)
    for key, value in options.items():
        w = w.option(key, value)
    return w


def stream(df, options: dict, checkpoint: str):
    w = df.writeStream.format("sqlqueue").option("checkpointLocation", checkpoint)
    for key, value in options.items():
        w = w.option(key, value)
    return w


def take(queue, columns: list[str], consumer: str = "reader") -> list[tuple]:
    """Claim every claimable row and return the given columns."""
    seq = next(_claims)
    queue.consuming.claim(consumer, seq, 10_000_000, order="heap")
    rows = []
    for lo, hi in queue.consuming.partition_bounds(consumer, seq - 1, seq, 1):
        for chunk in queue.consuming.read_claimed(consumer, seq - 1, seq, lo, hi, columns):
            rows += chunk
    return rows


def customers(spark, n: int):
    return spark.range(n).select(F.format_string("p%d", "id").alias("payload"), F.col("id").alias("customer"))


def parquet_source(spark, tmp_path, files: int, rows_per_file: int):
    """A file stream of ``files`` parquet files, one micro-batch per file."""
    folder = tmp_path / "in"
    for f in range(files):
        customers(spark, rows_per_file).withColumn("customer", F.col("customer") + f * rows_per_file).withColumn(
            "payload", F.format_string("p%d", "customer")
        ).coalesce(1).write.mode("append").parquet(str(folder))
    return (
        spark.readStream.schema("payload string, customer bigint").option("maxFilesPerTrigger", 1).parquet(str(folder))
    )


# ---- batch writes ---------------------------------------------------------------------------------
def test_batch_append_enqueues_every_row_once(spark, engine):
    queue = engine.new_queue(domain=DOMAIN)
    writer(customers(spark, 3_000).repartition(3), engine.sink_options(queue)).mode("append").save()
    got = spark.createDataFrame(take(queue, ["payload", "customer"]), "payload string, customer bigint")
    assert_df_equality(got, customers(spark, 3_000), ignore_row_order=True, ignore_nullable=True)
    assert queue.inspection.stats().keys() == {"claimed"}


def test_optional_lifecycle_columns_are_written_and_nulls_take_the_defaults(spark, engine):
    queue = engine.new_queue()
    due = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
    df = spark.createDataFrame(
        [("later", 5, due, 2), ("now", None, None, None)],
        "payload string, priority int, due_at timestamp, max_attempts int",
    )
    writer(df, engine.sink_options(queue)).mode("append").save()
    assert take(queue, ["payload", "priority", "max_attempts"]) == [("now", 0, None)]  # "later" is not due
    assert queue.inspection.stats()["ready"]["rows"] == 1


def test_dedup_key_makes_writing_the_same_item_again_a_no_op(spark, engine):
    queue = engine.new_queue()
    df = spark.createDataFrame([("a", "k1"), ("a-again", "k1"), ("b", "k2")], "payload string, dedup_key string")
    writer(df, engine.sink_options(queue)).mode("append").save()
    writer(df, engine.sink_options(queue)).mode("append").save()
    assert sorted(k for _, k in take(queue, ["payload", "dedup_key"])) == ["k1", "k2"]


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("overwrite", "mode 'overwrite' is not supported by the sqlqueue sink.*use mode\\('append'\\)"),
        # Spark refuses these for every Python data source before asking it for a writer.
        ("ignore", 'UNSUPPORTED_DATA_SOURCE_SAVE_MODE.*"Ignore" mode'),
        ("error", 'UNSUPPORTED_DATA_SOURCE_SAVE_MODE.*"ErrorIfExists" mode'),
    ],
)
def test_batch_write_modes_other_than_append_are_refused(spark, engine, mode, message):
    queue = engine.new_queue()
    df = spark.createDataFrame([("a",)], "payload string")
    with pytest.raises(Exception, match=message):
        writer(df, engine.sink_options(queue)).mode(mode).save()
    assert_queue_holds(queue)


def test_writer_id_without_batch_id_is_refused_for_batch_writes(spark, engine):
    queue = engine.new_queue(domain=DOMAIN)
    df = customers(spark, 3)
    with pytest.raises(Exception, match="options 'writerId' and 'batchId' go together"):
        writer(df, engine.sink_options(queue, writerId="w")).mode("append").save()


def test_batch_write_with_writer_and_batch_id_is_applied_once(spark, engine):
    queue = engine.new_queue(domain=DOMAIN)
    df = customers(spark, 5)
    for _ in range(2):  # foreachBatch running the same batch again after a crash
        writer(df, engine.sink_options(queue, writerId="job-7", batchId=3)).mode("append").save()
    assert queue.inspection.stats()["ready"]["rows"] == 5


# ---- column mapping -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("ddl", "message"),
    [
        ("payload string, customer bigint, colour string", "column 'colour' is not in queue table"),
        ("payload string, customer bigint, state string", "column 'state' is managed by sqlqueue"),
        ("payload string", "column\\(s\\) 'customer' are required"),
        ("payload string, customer string", "column 'customer' is string in the DataFrame.*cast it"),
        (
            "payload string, customer bigint, priority bigint",
            "column 'priority' is bigint.*queue column 'priority' is int",
        ),
    ],
    ids=["unknown", "lifecycle", "missing-required", "wrong-type", "lifecycle-wrong-type"],
)
def test_a_column_mismatch_fails_before_anything_is_written_and_names_the_column(spark, engine, ddl, message):
    queue = engine.new_queue(domain=DOMAIN)
    df = spark.createDataFrame([], ddl)
    with pytest.raises(Exception, match=message):
        writer(df, engine.sink_options(queue)).mode("append").save()
    assert_queue_holds(queue)


def test_columns_match_ignoring_case_and_may_come_in_any_order(spark, engine):
    queue = engine.new_queue(domain=DOMAIN)
    df = spark.createDataFrame([(7, "x")], "CUSTOMER bigint, Payload string")
    writer(df, engine.sink_options(queue)).mode("append").save()
    assert take(queue, ["payload", "customer"]) == [("x", 7)]


# ---- streams ------------------------------------------------------------------------------------
def test_stream_enqueues_every_row_once_per_micro_batch(spark, engine, tmp_path):
    queue = engine.new_queue(domain=DOMAIN)
    query = stream(parquet_source(spark, tmp_path, 3, 500), engine.sink_options(queue), str(tmp_path / "ck"))
    query.trigger(availableNow=True).start().awaitTermination()
    got = spark.createDataFrame(take(queue, ["payload", "customer"]), "payload string, customer bigint")
    assert_df_equality(got, customers(spark, 1_500), ignore_row_order=True, ignore_nullable=True)
    assert queue.inspection.stats().keys() == {"claimed"}


def test_stream_column_mismatch_fails_the_query_and_writes_nothing(spark, engine, tmp_path):
    queue = engine.new_queue(domain=DOMAIN)
    source = parquet_source(spark, tmp_path, 1, 10).withColumnRenamed("customer", "client")
    query = stream(source, engine.sink_options(queue), str(tmp_path / "ck")).trigger(availableNow=True).start()
    with pytest.raises(Exception, match="column 'client' is not in queue table"):
        query.awaitTermination()
    assert queue.inspection.stats() == {} and queue.inspection.unpublished_rows() == 0


def test_complete_output_mode_is_refused(spark, engine, tmp_path):
    queue = engine.new_queue(domain=DOMAIN)
    counts = parquet_source(spark, tmp_path, 1, 10).groupBy("payload").agg(F.count("*").alias("customer"))
    query = stream(counts, engine.sink_options(queue), str(tmp_path / "ck"))
    started = query.outputMode("complete").trigger(availableNow=True).start()
    with pytest.raises(Exception, match="outputMode 'complete' is not supported"):
        started.awaitTermination()
    assert_queue_holds(queue)


def _per_task(df, action):
    """``df`` whose tasks each call ``action(partition_id)`` once, before their first row goes on.

    A plain Python UDF: mapInArrow and Arrow UDFs would need pandas.
    """

    def once(customer):
        from pyspark import TaskContext

        ctx = TaskContext.get()
        key = (ctx.stageId(), ctx.partitionId(), ctx.attemptNumber())
        if key not in _started:
            _started.add(key)
            action(ctx.partitionId())
        return customer

    return df.withColumn("customer", F.udf(once, "bigint", useArrow=False)("customer"))


_started: set = set()


def fail_task(partition: int, engine, queue, others_staged: int):
    """Task ``partition`` fails once the database shows the other tasks' ``others_staged`` rows
    staged, so that the abort has their rows to undo. It looks from the worker, through a Queue
    of its own; past the deadline it fails with a message of its own, which fails the test."""
    options, table = dict(engine.options), str(queue.table)

    def act(task: int) -> None:
        if task != partition:
            return
        from sqlqueue.connection import parse_connection
        from sqlqueue.identifiers import TableName
        from sqlqueue.queue import Queue

        spec = parse_connection(
            options.get("url"),
            options.get("connectionString"),
            options.get("dialect"),
            options.get("user"),
            options.get("password"),
        )
        watcher = Queue(spec, TableName.parse(table))
        deadline = time.monotonic() + 120
        try:
            while watcher.inspection.unpublished_rows() < others_staged:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the other tasks did not stage {others_staged} rows in 120 s")
                time.sleep(0.05)
        finally:
            watcher.close()
        raise RuntimeError("task failed on purpose")

    return act


def slow_tasks(seconds_per_partition: float):
    return lambda task: time.sleep(seconds_per_partition * task)


def test_an_aborted_stream_batch_leaves_nothing_behind(spark, engine, tmp_path):
    queue = engine.new_queue(domain=DOMAIN)
    source = parquet_source(spark, tmp_path, 1, 300).repartition(3)  # 100 rows a task
    failing = _per_task(source, fail_task(2, engine, queue, others_staged=200))
    query = stream(failing, engine.sink_options(queue), str(tmp_path / "ck")).trigger(availableNow=True).start()
    with pytest.raises(Exception, match="task failed on purpose"):
        query.awaitTermination()
    assert queue.inspection.stats() == {} and queue.inspection.unpublished_rows() == 0


def test_an_aborted_batch_write_leaves_nothing_behind(spark, engine):
    queue = engine.new_queue(domain=DOMAIN)
    df = customers(spark, 300).repartition(3)  # 100 rows a task
    with pytest.raises(Exception, match="task failed on purpose"):
        failing = _per_task(df, fail_task(2, engine, queue, others_staged=200))
        writer(failing, engine.sink_options(queue)).mode("append").save()
    assert queue.inspection.stats() == {} and queue.inspection.unpublished_rows() == 0


class StageThenFail(QueueBatchWriter):
    def write(self, iterator):
        super().write(iterator)
        raise RuntimeError("task failed after staging")


class StageThenFailSource(SqlQueueDataSource):
    @classmethod
    def name(cls) -> str:
        return "sqlqueue_stage_then_fail"

    def writer(self, schema, overwrite):
        checked = batch_writer(self.options, schema, overwrite)
        return StageThenFail(checked.options, checked.columns)


def test_a_batch_write_whose_tasks_all_fail_after_staging_leaves_nothing(spark, engine):
    queue = engine.new_queue(domain=DOMAIN)
    spark.dataSource.register(StageThenFailSource)
    df = customers(spark, 200).repartition(2)
    with pytest.raises(Exception, match="task failed after staging"):
        writer(df, engine.sink_options(queue), StageThenFailSource.name()).mode("append").save()
    assert queue.inspection.stats() == {} and queue.inspection.unpublished_rows() == 0


def test_a_consumer_polling_during_a_slow_batch_sees_all_of_it_or_none(spark, engine, tmp_path):
    queue = engine.new_queue(domain=DOMAIN)
    poller = engine.queue(str(queue.table))  # a consumer with its own connection
    source = parquet_source(spark, tmp_path, 1, 3_000).repartition(3)
    slow = _per_task(source, slow_tasks(1.5))
    seen: list[int] = []
    done = threading.Event()

    def poll():
        seq = 0
        while not done.is_set():
            seq += 1
            seen.append(poller.consuming.claim("poller", seq, 1_000_000, order=engine.order))
            time.sleep(0.05)

    thread = threading.Thread(target=poll)
    thread.start()
    try:
        query = stream(slow, engine.sink_options(queue), str(tmp_path / "ck")).trigger(availableNow=True).start()
        query.awaitTermination()
        assert wait_until(lambda: sum(seen) >= 3_000, timeout=60), seen  # a poll after the commit took it
    finally:
        done.set()
        thread.join()
    assert len(seen) > 20  # it polled throughout the batch
    assert [n for n in seen if n] == [3_000]
