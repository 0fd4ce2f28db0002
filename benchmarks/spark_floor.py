"""Spark's own cost per micro-batch: a Python streaming source serving rows from memory.

No database, no claim, no completion: what is left is what every Python Data Source pays per
micro-batch (offset and commit logs, planning, Python workers), the floor under any connector.
"""
from __future__ import annotations

import tempfile
import time

from common import percentiles, report
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

BATCHES = 20
SCHEMA = "id bigint, enqueued_at timestamp, attempts int, payload string, customer bigint"


class MemoryReader(DataSourceStreamReader):
    def __init__(self, batch: int, partitions: int) -> None:
        self.batch, self.partitions, self.latest = batch, partitions, 0

    def initialOffset(self) -> dict:
        return {"batch": 0}

    def latestOffset(self) -> dict:
        self.latest = min(self.latest + 1, BATCHES)  # one more micro-batch per trigger
        return {"batch": self.latest}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        return [InputPartition(i) for i in range(self.partitions)] if end["batch"] > start["batch"] else []

    def read(self, partition: InputPartition):
        import datetime as dt

        now = dt.datetime.now()
        for i in range(self.batch // self.partitions):
            yield (i, now, 1, f'{{"order": {i}, "note": "benchmark row"}}', i % 977)

    def commit(self, end: dict) -> None:
        pass


class MemorySource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "sqlqueue_bench_memory"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema):
        return MemoryReader(int(self.options["batch"]), int(self.options["partitions"]))


def floor_rate(spark, batch: int, partitions: int) -> float:
    spark.dataSource.register(MemorySource)
    stream = (spark.readStream.format(MemorySource.name()).option("batch", batch)
              .option("partitions", partitions).load())
    query = (stream.writeStream.format("noop").option("checkpointLocation", tempfile.mkdtemp(prefix="sqlqueue-floor-"))
             .trigger(processingTime="0 seconds").start())
    while query.lastProgress is None or query.lastProgress["batchId"] < BATCHES:
        time.sleep(0.1)
    query.stop()
    latencies = [p["durationMs"]["triggerExecution"] for p in query.recentProgress if p["numInputRows"]][1:]
    return report("Spark floor: rows from memory, noop sink", batch * len(latencies), sum(latencies) / 1000,
                  f"(batch {percentiles(latencies)})")
