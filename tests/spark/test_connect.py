"""The source, the sinks and the jobs' Delta writers on Spark Connect: a local Connect server with
Delta's jars and SQL extension only (no Delta Connect plugin), as a Connect client would use them.

Each scenario runs in the Connect process of ``tests.support.connect`` (a classic session cannot
share a process with a Connect one); the queue, a SQLite file, is checked here.
"""

from __future__ import annotations

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from sqlqueue.connection import parse_connection
from sqlqueue.identifiers import TableName
from sqlqueue.options import QueueAddress
from sqlqueue.queue import Queue
from sqlqueue.schema import Column
from sqlqueue.spark.deadletters import DeadLetterMover, redrive
from sqlqueue.spark.delta import append_once, merge_on
from tests.spark.test_dead_letters import fail_rows
from tests.spark.test_jobs import job
from tests.support.connect import ConnectSession
from tests.support.engines import Engine, config_file

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def connect():
    session = ConnectSession()
    yield session
    session.close()


@pytest.fixture
def sqlite(tmp_path):
    engine = Engine("sqlite", {"url": f"sqlite:///{tmp_path}/queue.db"})
    yield engine
    engine.close()


def _is_connect(spark) -> bool:
    return type(spark).__module__ == "pyspark.sql.connect.session"


def stream_into_delta(spark, options: dict, checkpoint: str, target: str) -> None:
    assert _is_connect(spark)
    stream = spark.readStream.format("sqlqueue").options(**options).load().select("payload")
    stream.writeStream.format("delta").option("checkpointLocation", checkpoint).trigger(availableNow=True).start(
        target
    ).awaitTermination()
    expected = spark.createDataFrame([(f"p{i}",) for i in range(250)], "payload string")
    assert_df_equality(spark.read.format("delta").load(target), expected, ignore_row_order=True, ignore_nullable=True)


def test_a_queue_streams_into_delta_over_connect(connect, sqlite, tmp_path):
    queue = sqlite.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(250)])
    options = sqlite.source_options(queue, maxRowsPerTrigger=100)
    connect.run(stream_into_delta, options, str(tmp_path / "cp"), str(tmp_path / "delta"))
    assert queue.inspection.stats() == {}


def write_batch_and_stream(spark, options: dict, folder: str) -> None:
    rows = spark.createDataFrame([(f"b{i}", i) for i in range(30)], "payload string, customer bigint")
    rows.write.format("sqlqueue").mode("append").options(**options).save()
    rows.selectExpr("replace(payload, 'b', 's') AS payload", "customer").write.format("delta").save(f"{folder}/in")
    (
        spark.readStream.format("delta")
        .load(f"{folder}/in")
        .writeStream.format("sqlqueue")
        .options(**options)
        .option("checkpointLocation", f"{folder}/cp")
        .trigger(availableNow=True)
        .start()
        .awaitTermination()
    )


def test_the_batch_and_stream_sinks_enqueue_over_connect(connect, sqlite, tmp_path):
    queue = sqlite.new_queue(domain=(Column("payload", "text"), Column("customer", "bigint")))
    connect.run(write_batch_and_stream, sqlite.sink_options(queue), str(tmp_path))
    queue.consuming.claim("reader", 1, 1000)
    [(lo, hi)] = queue.consuming.partition_bounds("reader", 0, 1, 1)
    got = sorted(
        row for chunk in queue.consuming.read_claimed("reader", 0, 1, lo, hi, ["payload", "customer"]) for row in chunk
    )
    assert got == sorted([(f"b{i}", i) for i in range(30)] + [(f"s{i}", i) for i in range(30)])


def append_twice_and_merge(spark, target: str, merged: str) -> None:
    write = append_once(target, "job-1")
    first = spark.createDataFrame([(1, "a"), (2, "b")], "id bigint, payload string")
    write(first, 0)
    write(first, 0)  # the replay of batch 0 after a crash between the Delta commit and Spark's commit log
    append_once(target, "job-1")(first, 0)  # a restarted writer learns batch 0 from the table's history
    write(spark.createDataFrame([(3, "c")], "id bigint, payload string"), 1)
    expected = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id bigint, payload string")
    assert_df_equality(spark.read.format("delta").load(target), expected, ignore_row_order=True)
    merge = merge_on(merged, ["id"])
    merge(first, 0)
    merge(spark.createDataFrame([(2, "again"), (3, "c"), (3, "c")], "id bigint, payload string"), 1)
    assert_df_equality(spark.read.format("delta").load(merged), expected, ignore_row_order=True)


def test_append_once_and_merge_on_write_each_row_once_over_connect(connect, tmp_path):
    connect.run(append_twice_and_merge, str(tmp_path / "appended"), str(tmp_path / "merged"))


def run_queue_to_delta(spark, argv: list[str], target: str) -> None:
    module = job("queue_to_delta")
    assert module.run(module.JOB, module.pipeline, argv) == 0
    expected = spark.createDataFrame([(f"p{i}",) for i in range(250)], "payload string")
    got = spark.read.format("delta").load(target).select("payload")
    assert_df_equality(got, expected, ignore_row_order=True, ignore_nullable=True)
    history = spark.sql(f"DESCRIBE HISTORY delta.`{target}`").select("userMetadata").collect()
    assert sorted(r.userMetadata for r in history) == [f"sqlqueue:{target}-cp:{b}" for b in range(3)]


def test_queue_to_delta_appends_each_batch_once_over_connect(connect, sqlite, tmp_path, monkeypatch):
    queue = sqlite.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(250)])
    target = str(tmp_path / "delta")
    argv = [
        *("-c", config_file(sqlite, tmp_path, monkeypatch)),
        *("--set", f"source.queue={queue.table}", "--set", "source.maxRowsPerTrigger=100"),
        *("--set", f"job.target={target}", "--set", f"job.checkpointLocation={target}-cp"),
        *("--set", "job.trigger=availableNow", "--remote", "local[2]"),
    ]
    connect.run(run_queue_to_delta, argv, target)
    assert queue.inspection.stats() == {}


def ack_every_row(spark, options: dict, order: str, checkpoint: str) -> None:
    def ack(batch, batch_id: int) -> None:
        outcomes = batch.select("id", F.when(F.col("id") % 10 == 0, "failed").otherwise("done").alias("outcome"))
        outcomes.write.format("sqlqueue").options(**options).option("operation", "ack").option(
            "writerId", "ack-test"
        ).option("batchId", batch_id).mode("append").save()

    source = spark.readStream.format("sqlqueue").options(**options).option("order", order)
    source = source.option("completion", "ack").load()
    source.writeStream.foreachBatch(ack).option("checkpointLocation", checkpoint).trigger(
        availableNow=True
    ).start().awaitTermination()


def test_the_ack_operation_settles_each_row_over_connect(connect, sqlite, tmp_path):
    queue = sqlite.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(100)])
    connect.run(ack_every_row, sqlite.sink_options(queue), sqlite.order, str(tmp_path / "cp"))
    assert {state: s["rows"] for state, s in queue.inspection.stats().items()} == {"failed": 10}


def move_and_redrive(spark, url: str, table: str, target: str) -> tuple[int, list[int]]:
    queue = Queue(parse_connection(url), TableName.parse(table))
    mover = DeadLetterMover(QueueAddress(queue.spec, queue.table), target, "/cp/orders", chunk=10)
    moved = mover.move(spark)
    mover.close()
    done = redrive(spark, queue, target, where="id > 5")
    left = spark.read.format("delta").load(target).where("redriven_at IS NULL").orderBy("id").collect()
    queue.close()
    return moved, [r.rows for r in done], [r.id for r in left]


def test_dead_letters_move_to_delta_and_redrive_back_over_connect(connect, sqlite, tmp_path):
    queue = sqlite.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(30)])
    failed = fail_rows(queue, 25)
    moved, redriven, left = connect.run(move_and_redrive, sqlite.options["url"], str(queue.table), str(tmp_path / "dl"))
    assert (moved, redriven, left) == (25, [sum(i > 5 for i in failed)], [i for i in failed if i <= 5])
    assert {state: s["rows"] for state, s in queue.inspection.stats().items()} == {
        "ready": 5 + sum(i > 5 for i in failed)
    }


def reach_the_running_server(spark) -> tuple[str, list[str]]:
    import logging

    from sqlqueue.spark.session import build_session

    warnings: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: warnings.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("sqlqueue.session").addHandler(handler)
    try:
        # The test process's server listens on Spark Connect's default port.
        reached = build_session(
            "reach", conf={"spark.jars": "/nowhere.jar", "spark.sqlqueue.test": "set"}, remote="sc://localhost:15002"
        )
    finally:
        logging.getLogger("sqlqueue.session").removeHandler(handler)
    return reached.conf.get("spark.sqlqueue.test"), warnings


def test_a_running_server_takes_runtime_settings_and_a_warning_names_the_ones_it_keeps(connect):
    value, warnings = connect.run(reach_the_running_server)
    assert value == "set"
    assert len(warnings) == 1 and "keeps its own value of: spark.jars (" in warnings[0], warnings
