"""Message groups through Spark: a grouped stream gives each micro-batch at most maxRowsPerGroup rows of a
group, every row of a group in one read task and in the order the group was enqueued in."""

from __future__ import annotations

from collections import defaultdict

from pyspark.sql.functions import monotonically_increasing_id, spark_partition_id

from sqlqueue.schema import Column
from sqlqueue.testing import run_to_end
from tests.support import user_tables

DOMAIN = (Column("account", "string"), Column("payload", "text"))


def batches(spark, options: dict, checkpoint: str) -> list[list]:
    """Each micro-batch's rows with the read task that gave them and their place in its output."""
    seen: list[list] = []

    def record(frame, _batch_id) -> None:
        placed = frame.withColumn("task", spark_partition_id()).withColumn("place", monotonically_increasing_id())
        seen.append(placed.collect())

    reader = spark.readStream.format("sqlqueue").options(**options).load()
    writer = reader.writeStream.foreachBatch(record).option("checkpointLocation", checkpoint)
    run_to_end(writer.trigger(availableNow=True).start())
    return seen


def check_groups(seen: list[list], group: str, number, per_group: int) -> dict[str, list[int]]:
    """Every group whole within a read task of a batch, at most ``per_group`` rows a batch, in the order it was
    enqueued across batches; returns each group's numbers in the order they were processed."""
    processed: dict[str, list[int]] = defaultdict(list)
    for rows in seen:
        tasks = defaultdict(set)
        for row in rows:
            tasks[row[group]].add(row["task"])
        assert all(len(t) == 1 for t in tasks.values()), f"a group was split between read tasks: {tasks}"
        in_batch = defaultdict(list)
        for row in sorted(rows, key=lambda r: r["place"]):
            in_batch[row[group]].append(number(row))
        assert max(len(n) for n in in_batch.values()) <= per_group
        for key, numbers in in_batch.items():
            processed[key] += numbers
    return processed


def test_a_grouped_stream_takes_each_group_in_order_in_one_read_task(spark, engine, tmp_path):
    queue = engine.new_queue(DOMAIN, group="account")
    queue.enqueue([{"account": f"a{i % 9}", "payload": str(i // 9)} for i in range(900)])
    options = engine.source_options(
        queue, groupBy="ACCOUNT", maxRowsPerGroup=20, maxRowsPerTrigger=120, numPartitions=3
    )
    seen = batches(spark, options, str(tmp_path / "c"))
    processed = check_groups(seen, "account", lambda r: int(r["payload"]), 20)
    assert processed == {f"a{k}": list(range(100)) for k in range(9)}
    assert len(seen) >= 900 // 120


def payload_of(row) -> str:
    """The Payload column, as the engine spells it (PostgreSQL folds the seed's unquoted name)."""
    return next(value for name, value in row.asDict().items() if name.lower() == "payload")


def test_an_adopted_table_streams_by_its_profiles_group(spark, engine, tmp_path):
    queue = user_tables.relational(engine)
    for n, kind in enumerate(("Sync", "Mail", "Bill")):
        user_tables.enqueue_relational(queue, 60, kind, start=100 * n)
    options = {**engine.options, "queue": str(queue.table), "profile": "relational", "profile.group": "Type"}
    options["profile.order"] = ", ".join(f"{c} {d}" for c, d in queue.declared.order)
    options |= {"maxRowsPerTrigger": "40", "numPartitions": "2", "maxRowsPerGroup": "10"}
    seen = batches(spark, options, str(tmp_path / "c"))
    processed = check_groups(seen, "Type", lambda r: int(payload_of(r)[1:]), 10)
    assert processed == {kind: list(range(100 * n, 100 * n + 60)) for n, kind in enumerate(("Sync", "Mail", "Bill"))}


def test_rows_the_sink_writes_are_read_back_by_their_group_in_the_order_written(spark, engine, tmp_path):
    queue = engine.new_queue(DOMAIN, group="account")
    rows = [(f"a{i % 4}", str(i // 4)) for i in range(200)]
    spark.createDataFrame(rows, "account string, payload string").coalesce(1).write.format("sqlqueue").options(
        **engine.sink_options(queue)
    ).mode("append").save()
    options = engine.source_options(queue, groupBy="account", maxRowsPerGroup=10, maxRowsPerTrigger=30)
    processed = check_groups(batches(spark, options, str(tmp_path / "c")), "account", lambda r: int(r["payload"]), 10)
    assert processed == {f"a{k}": list(range(50)) for k in range(4)}
