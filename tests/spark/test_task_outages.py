"""Spark tasks that meet their database down ride the outage out: a task's first connection, in a fresh
executor process, is refused, and the stream proved the address on the driver before it planned the
task. The source's reader and the sink's writer are driven as Spark drives them (no session needed):
the driver side works through a Toxiproxy proxy, then a copy pickled as Spark ships it runs the task
with no connection of its own (a fresh process) while the proxy is down, until the retry policy's
first retry brings it back.
"""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from sqlqueue.options import SourceOptions
from sqlqueue.spark import reader as reader_module
from sqlqueue.spark import writer as writer_module
from sqlqueue.spark.reader import QueueStreamReader
from sqlqueue.spark.writer import QueueStreamWriter, batch_writer, stream_writer
from tests.support.retries import retry_lines

ROWS = 40
SCHEMA = StructType([StructField("id", LongType(), False), StructField("payload", StringType())])


@pytest.fixture
def fresh_process(monkeypatch):
    """An executor process that has not connected yet: no queue in the reader's cache (and none left after)."""
    monkeypatch.setattr(reader_module, "_QUEUES", {})
    monkeypatch.setattr(reader_module, "_CURRENT_LAYOUT", set())
    yield
    for queue in reader_module._QUEUES.values():
        queue.close()


@pytest.fixture
def server_engine(engine):
    if engine.name == "sqlite":
        pytest.skip("a SQLite file has no connection to refuse")
    return engine


def test_a_read_task_in_a_fresh_process_rides_out_a_refused_connection(server_engine, toxiproxy, fresh_process):
    queue = server_engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(ROWS)])
    proxy = toxiproxy.proxy(server_engine.server_address())
    raw = {
        **server_engine.options_through(proxy.listen),
        "queue": str(queue.table),
        "order": server_engine.order,
        "consumer": "read-task-test",
        "columns": "id,payload",
        "numPartitions": "1",
        "prefetch": "false",
        "retryBackoffMs": "100",
    }
    driver = QueueStreamReader(SourceOptions.parse(raw), SCHEMA)
    shipped = pickle.dumps(driver)  # Spark pickles the reader when the query starts
    start = driver.initialOffset()
    end = driver.latestOffset(start, driver.getDefaultReadLimit())
    (partition,) = driver.partitions(start, end)
    driver.stop()

    task = pickle.loads(shipped)
    proxy.disable()
    with retry_lines(after=1, then=proxy.enable) as logged:
        rows = [row for batch in task.read(partition) for row in batch.to_pylist()]
    assert sorted(row["payload"] for row in rows) == sorted(f"p{i}" for i in range(ROWS))
    assert logged.lines[0].startswith(f"reading ids {partition.lo}..{partition.hi} failed ({server_engine.name}: ")


def test_a_write_task_in_a_fresh_process_rides_out_a_refused_connection_and_writes_its_rows_once(
    server_engine, toxiproxy, fresh_process, monkeypatch
):
    """The task reads its first Arrow batch before it connects; the retry sends the same rows again."""
    queue = server_engine.new_queue()
    proxy = toxiproxy.proxy(server_engine.server_address())
    raw = {**server_engine.options_through(proxy.listen), "queue": str(queue.table), "retryBackoffMs": "100"}
    schema = StructType([StructField("payload", StringType())])
    driver = batch_writer(raw, schema, overwrite=False)  # checks the table through the proxy
    shipped = pickle.dumps(driver)
    reader_module._QUEUES.clear()  # what the driver side cached is not in the executor
    monkeypatch.setattr(
        writer_module, "task_context", lambda: SimpleNamespace(partitionId=lambda: 0, taskAttemptId=lambda: 3)
    )
    batches = [pa.RecordBatch.from_pylist([{"payload": f"p{i}"} for i in range(n, n + 10)]) for n in (0, 10, 20)]

    task = pickle.loads(shipped)
    proxy.disable()
    with retry_lines(after=1, then=proxy.enable) as logged:
        message = task.write(iter(batches))
    driver.commit([message])
    assert message.rows == 30
    assert logged.lines[0].startswith(f"writing task 0 of batch 0 failed ({server_engine.name}: ")
    queue.consuming.claim("check", 1, 100, order="heap")
    (bounds,) = queue.consuming.partition_bounds("check", 0, 1, 1)
    read = [r[0] for chunk in queue.consuming.read_claimed("check", 0, 1, *bounds, ["payload"]) for r in chunk]
    assert sorted(read) == sorted(f"p{i}" for i in range(30))


def test_a_stream_writer_built_again_in_a_fresh_process_rides_out_a_refused_connection(
    server_engine, toxiproxy, fresh_process
):
    """Spark builds a stream's writer again to plan and to commit every micro-batch, in a Python worker
    that may be new: its table check meets the outage as any other step does."""
    queue = server_engine.new_queue()
    proxy = toxiproxy.proxy(server_engine.server_address())
    raw = {**server_engine.options_through(proxy.listen), "queue": str(queue.table), "retryBackoffMs": "100"}
    proxy.disable()
    with retry_lines(after=1, then=proxy.enable) as logged:
        writer = stream_writer(raw, StructType([StructField("payload", StringType())]), overwrite=False)
    assert isinstance(writer, QueueStreamWriter)
    assert logged.lines[0].startswith(f"checking table {queue.table} failed ({server_engine.name}: ")
