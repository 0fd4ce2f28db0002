"""Per-row acknowledgements through the sink's ack operation, with the source in ack completion."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from sqlqueue.schema import Column
from sqlqueue.spark.delta import append_once
from sqlqueue.testing import assert_dead_lettered, assert_each_key_once, assert_queue_holds, run_until, wait_until
from tests.support import user_tables

pytestmark = pytest.mark.spark
KEYED = (Column("key", "bigint", nullable=False),)


def source(spark, options: dict):
    return spark.readStream.format("sqlqueue").options(**{k: str(v) for k, v in options.items()}).load()


def test_every_tenth_row_comes_back_after_its_backoff_and_the_rest_are_done_once(spark, engine, tmp_path):
    queue = engine.new_queue(domain=KEYED)
    queue.enqueue([{"key": k} for k in range(200)])
    options = engine.source_options(queue, completion="ack", maxRowsPerTrigger=100, emptyPollIntervalMs=100)
    first_attempt = F.col("attempts") == 1
    acks = source(spark, options).select(
        "id",
        "key",
        F.when((F.col("key") % 10 == 0) & first_attempt, F.lit("retry")).otherwise(F.lit("done")).alias("outcome"),
        F.when((F.col("key") % 10 == 0) & first_attempt, F.lit("try again")).alias("error"),
        F.when((F.col("key") % 10 == 0) & first_attempt, F.lit(2)).alias("retryAfterSeconds"),
    )
    seen = str(tmp_path / "seen")
    record = append_once(seen, "ack-test")

    def record_and_ack(df, batch_id: int) -> None:
        df.persist()
        record(df, batch_id)
        (
            df.drop("key")
            .write.format("sqlqueue")
            .options(**engine.sink_options(queue))
            .option("operation", "ack")
            .option("writerId", "ack-test")
            .option("batchId", batch_id)
            .mode("append")
            .save()
        )
        df.unpersist()

    query = (
        acks.writeStream.foreachBatch(record_and_ack)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    run_until(query, lambda: queue.inspection.stats() == {}, timeout=120)
    delivered = spark.read.format("delta").load(seen)
    assert_each_key_once(delivered.filter("outcome = 'done'"), range(200), column="key")
    retried = delivered.filter("outcome = 'retry'").select("key").orderBy("key").collect()
    assert [r.key for r in retried] == list(range(0, 200, 10))


def test_a_poison_row_fails_after_its_attempts_while_the_rest_flows(spark, engine, tmp_path):
    queue = engine.new_queue(domain=KEYED)
    queue.enqueue([{"key": k} for k in range(50)])
    options = engine.source_options(
        queue, completion="ack", maxRowsPerTrigger=20, emptyPollIntervalMs=100, maxAttempts=3
    )
    # The job's transform fails on key 13 every time; it reports that instead of crashing the query.
    outcomes = source(spark, options).select(
        "id",
        "attempts",
        F.when(F.col("key") == 13, F.lit("retry")).otherwise(F.lit("done")).alias("outcome"),
        F.when(F.col("key") == 13, F.lit("ValueError: cannot parse key 13")).alias("error"),
        F.when(F.col("key") == 13, F.lit(0)).alias("retryAfterSeconds"),
    )
    sink = engine.sink_options(queue, operation="ack", maxAttempts=3)
    query = (
        outcomes.writeStream.format("sqlqueue")
        .options(**sink)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="300 milliseconds")
        .start()
    )
    try:
        assert wait_until(lambda: set(queue.inspection.stats()) == {"failed"}, timeout=120), queue.inspection.stats()
        queue.enqueue([{"key": 50}])  # the query is still alive: it takes a row enqueued after the failure
        assert wait_until(lambda: set(queue.inspection.stats()) == {"failed"}, timeout=120), queue.inspection.stats()
        assert query.isActive
    finally:
        query.stop()
    assert_queue_holds(queue, failed=1)
    assert_dead_lettered(queue, {13: "ValueError: cannot parse key 13"}, column="key")
    with queue.transaction() as cur:
        cur.execute(f"SELECT attempts FROM {queue.engine.table(queue.table)} WHERE state = 'failed'")
        assert [tuple(r) for r in cur.fetchall()] == [(3,)]


def test_unknown_ack_column_is_refused_before_anything_is_written(spark, engine):
    queue = engine.new_queue(domain=KEYED)
    df = spark.createDataFrame([(1, "done", "x")], "id bigint, outcome string, payload string")
    with pytest.raises(Exception, match="unknown column\\(s\\) payload"):
        df.write.format("sqlqueue").options(**engine.sink_options(queue, operation="ack")).mode("append").save()


def test_an_adopted_relational_queue_takes_each_rows_outcome_the_tables_way(spark, engine, tmp_path):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 30)
    adopted = {**engine.options, "queue": str(queue.table), "profile": "relational", "profile.order": ""}
    options = {**adopted, "completion": "ack", "maxRowsPerTrigger": "10", "emptyPollIntervalMs": "100"}
    n = F.expr("CAST(substring(Payload, 2) AS INT)")
    outcome = F.when(n < 10, "done").when(n < 20, "retry").otherwise("failed")
    acks = source(spark, options).select(
        "EnqueuedAt",
        outcome.alias("outcome"),
        F.when(outcome == "done", F.concat(F.lit("sent "), "Payload")).alias("response"),
        F.when(outcome != "done", F.lit("mailbox full")).alias("error"),
        F.when(outcome == "retry", F.lit(600)).alias("retryAfterSeconds"),
        F.lit("Send").alias("step"),
    )
    query = (
        acks.writeStream.format("sqlqueue")
        .options(**adopted, operation="ack")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="300 milliseconds")
        .start()
    )
    sql = queue.engine.compile(f"SELECT Payload, Status, Response, Error, Step FROM {queue.table}")
    settled = {"Completed", "Error", "Failed"}
    run_until(query, lambda: {s for _, s, *_ in queue.fetch(sql, {})} <= settled, timeout=120)
    rows = {payload: tuple(rest) for payload, *rest in queue.fetch(sql, {})}
    assert rows == {
        **{f"p{i}": ("Completed", f"sent p{i}", None, "Send") for i in range(10)},
        **{f"p{i}": ("Error", None, "mailbox full", "Send") for i in range(10, 20)},
        **{f"p{i}": ("Failed", None, "mailbox full", "Send") for i in range(20, 30)},
    }
