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

from common import percentiles, report
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


class MemoryReader(DataSourceStreamReader):
    def __init__(self, batch: int, partitions: int, batches: int = BATCHES) -> None:
        self.batch, self.parts, self.batches, self.latest = batch, partitions, batches, 0

    def initialOffset(self) -> dict:
        return {"batch": 0}

    def latestOffset(self) -> dict:
        self.latest = min(self.latest + 1, self.batches)  # one more micro-batch per trigger
        return {"batch": self.latest}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        return [InputPartition(i) for i in range(self.parts)] if end["batch"] > start["batch"] else []

    def read(self, partition: InputPartition):
        # One record batch built here costs next to nothing beside Spark's own work per batch.
        import datetime as dt

        import pyarrow as pa

        n = self.batch // self.parts
        yield pa.RecordBatch.from_pydict(
            {
                "id": pa.array(range(n), pa.int64()),
                "enqueued_at": pa.array([dt.datetime(2026, 1, 1)] * n, pa.timestamp("us", tz="UTC")),
                "attempts": pa.array([1] * n, pa.int32()),
                "payload": pa.array([f'{{"order": {i}, "note": "benchmark row"}}' for i in range(n)]),
                "customer": pa.array([i % 977 for i in range(n)], pa.int64()),
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


def floor_rate(spark, batch: int, partitions: int, delta: str | None = None, batches: int = BATCHES) -> float:
    """Spark's steady-state rows/s serving ``batch``-row micro-batches from memory: into a noop sink, or with
    ``delta`` (a folder) into a Delta table there through the job's writer (foreachBatch + append_once)."""
    from sqlqueue.spark.delta import append_once

    spark.dataSource.register(MemorySource)
    reader = spark.readStream.format(MemorySource.name()).option("batch", batch).option("partitions", partitions)
    stream = reader.option("batches", batches).load()
    checkpoint = tempfile.mkdtemp(prefix="sqlqueue-floor-")
    writer = stream.writeStream.option("checkpointLocation", checkpoint)
    writer = writer.foreachBatch(append_once(delta, checkpoint)) if delta else writer.format("noop")
    query = writer.trigger(processingTime="0 seconds").start()
    deadline = time.monotonic() + 600
    while query.lastProgress is None or query.lastProgress["batchId"] < batches - 1:  # ids count from 0
        if time.monotonic() > deadline:
            raise TimeoutError(f"the floor query ran {query.lastProgress} batches in 600 s")
        time.sleep(0.1)
    query.stop()
    latencies = [p["durationMs"]["triggerExecution"] for p in query.recentProgress if p["numInputRows"]][1:]
    return report(
        f"Spark floor: rows from memory, {'Delta (the job writer)' if delta else 'noop sink'}",
        batch * len(latencies),
        sum(latencies) / 1000,
        f"(batch {percentiles(latencies)})",
    )


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
