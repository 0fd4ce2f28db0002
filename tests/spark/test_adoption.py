"""A table sqlqueue did not create, streamed into Delta as it is, beside the table's own worker."""

from __future__ import annotations

import threading

import pytest

from sqlqueue.testing import assert_each_key_once, run_to_end, run_until, wait_until
from tests.support import user_tables


def adopted_options(engine, queue, **extra) -> dict[str, str]:
    options = {**engine.options, "queue": str(queue.table), "profile": queue.declared.name}
    options["profile.order"] = ", ".join(f"{c} {d}" for c, d in queue.declared.order)
    return options | {k: str(v) for k, v in extra.items()}


def stream(spark, options: dict, target: str, checkpoint: str, trigger: dict):
    reader = spark.readStream.format("sqlqueue")
    for key, value in options.items():
        reader = reader.option(key, value)
    return (
        reader.load()
        .writeStream.format("delta")
        .option("checkpointLocation", checkpoint)
        .trigger(**trigger)
        .start(target)
    )


def statuses(queue) -> dict[str, int]:
    rows = queue.fetch(queue.engine.compile(f"SELECT Status, COUNT(*) FROM {queue.table} GROUP BY Status"), {})
    return dict(rows)


def test_a_relational_table_streams_into_delta_once_and_each_row_is_completed_the_tables_way(spark, engine, tmp_path):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 1_500)
    options = adopted_options(engine, queue, maxRowsPerTrigger=600)
    run_to_end(stream(spark, options, str(tmp_path / "t"), str(tmp_path / "c"), {"availableNow": True}))
    got = spark.read.format("delta").load(str(tmp_path / "t")).selectExpr("Payload AS Payload")  # any case
    assert_each_key_once(got, [f"p{i}" for i in range(1_500)], "Payload")
    assert statuses(queue) == {"Completed": 1_500}


def test_an_available_now_run_takes_the_rows_ready_at_its_start_not_those_enqueued_during_it(spark, engine, tmp_path):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 300)
    options = adopted_options(engine, queue, maxRowsPerTrigger=50)
    query = stream(spark, options, str(tmp_path / "t"), str(tmp_path / "c"), {"availableNow": True})
    assert wait_until(lambda: query.lastProgress is not None, 120), "the run made no batch"
    # Five batches of the rows ready at the start are still to come; these rows have later EnqueuedAt.
    user_tables.enqueue_relational(queue, 200, start=1_000)
    run_to_end(query)
    got = spark.read.format("delta").load(str(tmp_path / "t")).selectExpr("Payload AS Payload")
    assert_each_key_once(got, [f"p{i}" for i in range(300)], "Payload")
    assert queue.inspection.backlog().ready_rows == 200


def test_a_source_shows_the_tables_columns_but_those_the_lifecycle_writes(spark, engine):
    queue = user_tables.relational(engine)
    reader = spark.readStream.format("sqlqueue")
    for key, value in adopted_options(engine, queue).items():
        reader = reader.option(key, value)
    assert [f.name.lower() for f in reader.load().schema] == [
        "enqueuedat",
        "type",
        "step",
        "response",
        "scheduledfor",
        "payload",
    ]


def test_a_dequeue_table_streams_into_delta_once(spark, engine, tmp_path):
    queue = user_tables.dequeue(engine)
    user_tables.insert_payloads(queue, 700)
    options = adopted_options(engine, queue, maxRowsPerTrigger=300)
    run_to_end(stream(spark, options, str(tmp_path / "t"), str(tmp_path / "c"), {"availableNow": True}))
    got = spark.read.format("delta").load(str(tmp_path / "t")).selectExpr("Payload AS Payload")
    assert_each_key_once(got, [f"p{i}" for i in range(700)], "Payload")
    assert queue.inspection.backlog().ready_rows == 0


def test_the_stream_and_the_tables_own_worker_each_take_every_row_once_between_them(spark, engine, tmp_path):
    if engine.babelfish:
        pytest.skip(
            "Babelfish ignores READPAST and UPDLOCK (tests/support/babelfish.py, table_hints): two claimers there "
            "race for the same rows, so the test's subject cannot be witnessed, only a race's luck"
        )
    queue = user_tables.relational(engine)
    total = 3_000
    user_tables.enqueue_relational(queue, total)
    worker = user_tables.TableWorker(queue, engine.name)
    stop = threading.Event()
    thread = threading.Thread(target=worker.work, args=(stop.is_set,), daemon=True)
    options = adopted_options(engine, queue, maxRowsPerTrigger=500)
    query = stream(spark, options, str(tmp_path / "t"), str(tmp_path / "c"), {"processingTime": "0 seconds"})
    # The worker starts once the stream holds its first claim, or it could drain the table while Spark starts.
    assert wait_until(lambda: statuses(queue).get("Processing", 0) > 0, timeout=120)
    thread.start()
    try:
        run_until(query, lambda: statuses(queue) == {"Completed": total}, timeout=240)
    finally:
        stop.set()
        thread.join(timeout=60)
    assert statuses(queue) == {"Completed": total}
    ours = [r[0] for r in spark.read.format("delta").load(str(tmp_path / "t")).select("Payload").collect()]
    assert worker.rejected == 0, "the worker's UpdatedAt check rejected a row we had left alone"
    assert ours and worker.done, "both sides took part"
    assert sorted(ours + worker.done) == sorted(f"p{i}" for i in range(total))
