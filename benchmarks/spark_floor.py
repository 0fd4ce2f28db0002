"""Spark's own costs, the floor under any Python Data Source: for the source, a streaming reader
serving rows from memory; for the sink, writers (batch and streaming) that only turn the rows into
Python tuples.

No database: what is left is what every Python Data Source pays (offset and commit logs,
planning, Python workers, Arrow transfer).
"""

from __future__ import annotations

import sys
import tempfile
import time

from pyspark import cloudpickle
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)

# Spark's Python workers cannot import this script's folder: ship the classes by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

BATCHES = 20
SCHEMA = "id bigint, enqueued_at timestamp, attempts int, payload string, customer bigint"
PAYLOAD_BYTES = 100  # a benchmark queue's rows (drains.fill) and the floor's


def payload(i: int, size: int) -> str:
    """A JSON payload of about ``size`` bytes: row i of a benchmark's queue (drains.fill) and of the floor."""
    head = f'{{"order": {i}, "note": "benchmark row", "pad": "'
    return head + "x" * max(size - len(head) - 2, 0) + '"}'


class MemoryReader(DataSourceStreamReader):
    """``batches`` micro-batches of ``batch`` rows from memory, one a trigger, in ``partitions`` read tasks:
    the rows a benchmark's queue holds (ids from 1, payloads of PAYLOAD_BYTES), so that the floor's Delta
    writer does the job's work for each row."""

    def __init__(self, batch: int, partitions: int, batches: int = BATCHES) -> None:
        self.batch, self.parts, self.batches, self.latest = batch, partitions, batches, 0

    def initialOffset(self) -> dict:
        return {"batch": 0}

    def latestOffset(self) -> dict:
        self.latest = min(self.latest + 1, self.batches)  # one more micro-batch per trigger
        return {"batch": self.latest}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        done = end["batch"] - 1  # the batches before this one
        return [InputPartition((done, i)) for i in range(self.parts)] if end["batch"] > start["batch"] else []

    def read(self, partition: InputPartition):
        # One record batch built here costs little beside Spark's own work per batch.
        import datetime as dt

        import pyarrow as pa

        done, part = partition.value
        n = self.batch // self.parts
        first = done * self.batch + part * n + 1
        ids = range(first, first + n)
        yield pa.RecordBatch.from_pydict(
            {
                "id": pa.array(ids, pa.int64()),
                "enqueued_at": pa.array([dt.datetime(2026, 1, 1)] * n, pa.timestamp("us", tz="UTC")),
                "attempts": pa.array([1] * n, pa.int32()),
                "payload": pa.array([payload(i, PAYLOAD_BYTES) for i in ids]),
                "customer": pa.array([i % 977 for i in ids], pa.int64()),
            }
        )

    def commit(self, end: dict) -> None:
        pass


class MemorySource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "sqlqueue_bench_memory"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema):
        options = self.options
        return MemoryReader(int(options["batch"]), int(options["partitions"]), int(options.get("batches", BATCHES)))


class ArrivalReader(DataSourceStreamReader):
    """Rows that arrive at ``rate`` a second from ``started`` (epoch seconds) on, served from memory: each
    trigger takes every row arrived by then, and row i carries its arrival time, ``started + i / rate``, as
    ``sent_at``: the latency benchmark's floor, a source that costs nothing but Spark's own work. Its rows
    have the columns queue_to_delta writes from the benchmark's queue, so that Delta's work per commit (each
    file's column statistics, and the log checkpoints they fill) is the job's: with three columns against the
    job's five, the floor's log checkpoints were a quarter smaller (44 and 64 KB against 55 and 86 KB in one
    run)."""

    def __init__(self, rate: float, started: float, partitions: int) -> None:
        self.rate, self.started, self.parts = rate, started, partitions

    def initialOffset(self) -> dict:
        return {"rows": 0}

    def latestOffset(self) -> dict:
        return {"rows": max(int((time.time() - self.started) * self.rate), 0)}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        lo, hi = start["rows"], end["rows"]
        step = -(-(hi - lo) // self.parts) if hi > lo else 0
        return [InputPartition((a, min(a + step, hi))) for a in range(lo, hi, step)] if step else []

    def read(self, partition: InputPartition):
        import pyarrow as pa

        lo, hi = partition.value
        arrived = [self.started + i / self.rate for i in range(lo, hi)]
        yield pa.RecordBatch.from_pydict(
            {
                "id": pa.array(range(lo, hi), pa.int64()),
                "enqueued_at": pa.array([int(t * 1_000_000) for t in arrived], pa.timestamp("us", tz="UTC")),
                "attempts": pa.array([1] * (hi - lo), pa.int32()),
                "payload": pa.array(["latency benchmark row"] * (hi - lo)),
                "sent_at": pa.array(arrived, pa.float64()),
            }
        )

    def commit(self, end: dict) -> None:
        pass


class ArrivalSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "sqlqueue_bench_arrivals"

    def schema(self) -> str:
        return "id bigint, enqueued_at timestamp, attempts int, payload string, sent_at double"

    def streamReader(self, schema):
        o = self.options
        return ArrivalReader(float(o["rate"]), float(o["started"]), int(o.get("partitions", 2)))


def drain(batch: int, rows: int, target: str) -> None:
    """Spark's floor into Delta, in this process: ``rows`` rows from memory in ``batch``-row micro-batches (two
    read tasks each) appended to a Delta table at ``target`` by queue_to_delta's writer (foreachBatch +
    append_once), in a session built as the job's is (drains.floor times it from the table's log)."""
    from sqlqueue.spark.delta import append_once
    from sqlqueue.spark.session import build_session

    spark = build_session("sqlqueue-bench-floor", "local[2]")
    spark.dataSource.register(MemorySource)
    batches = rows // batch
    stream = spark.readStream.format(MemorySource.name()).options(batch=batch, partitions=2, batches=batches).load()
    checkpoint = tempfile.mkdtemp(prefix="sqlqueue-floor-")
    writer = stream.writeStream.option("checkpointLocation", checkpoint).foreachBatch(append_once(target, checkpoint))
    query = writer.trigger(processingTime="0 seconds").start()
    deadline = time.monotonic() + 600
    while query.lastProgress is None or query.lastProgress["batchId"] < batches - 1:  # ids count from 0
        if time.monotonic() > deadline:
            raise TimeoutError(f"the floor query ran {query.lastProgress} batches in 600 s")
        time.sleep(0.1)
    query.stop()
    spark.stop()


def _as_tuples(iterator) -> WriterCommitMessage:
    for batch in iterator:
        for _ in zip(*(column.to_pylist() for column in batch.columns)):
            pass
    return WriterCommitMessage()


class TuplesWriter(DataSourceArrowWriter):
    def write(self, iterator) -> WriterCommitMessage:
        return _as_tuples(iterator)


class TuplesStreamWriter(DataSourceStreamArrowWriter):
    def write(self, iterator) -> WriterCommitMessage:
        return _as_tuples(iterator)

    def commit(self, messages, batchId) -> None:
        """Nothing to publish."""

    def abort(self, messages, batchId) -> None:
        """Nothing was written."""


class TuplesSink(DataSource):
    """Use it with ``format(TuplesSink.name())`` after ``spark.dataSource.register(TuplesSink)``."""

    @classmethod
    def name(cls) -> str:
        return "sqlqueue_bench_tuples"

    def writer(self, schema, overwrite):
        return TuplesWriter()

    def streamWriter(self, schema, overwrite):
        return TuplesStreamWriter()


def write_floor(spark, df) -> None:
    """The same df.write, handed to Python writers as tuples and committed, writing nothing."""
    spark.dataSource.register(TuplesSink)
    df.write.format(TuplesSink.name()).mode("append").save()


if __name__ == "__main__":
    drain(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
