"""Source throughput: queue to Delta through spark.readStream.format("sqlqueue"), beside the raw
claim rate of the same database in the same run (the queue core claiming, reading and deleting the
same batches with no Spark).

    make bench        # or: .venv/bin/python benchmarks/bench_source.py --rows 200000 --batches 10000 50000

Beside them, Spark's floor: a Python streaming source serving the same batches from memory (no
database), which shows what Spark alone costs per micro-batch on this machine.

Connector throughput is measured over the steady state: from the end of the first micro-batch to
the end of the last (the first pays for query start-up, reported separately).
"""
from __future__ import annotations

import argparse
import datetime as dt
import shutil
import tempfile
import time

from common import pg_options, percentiles, report, start_postgres
from spark_floor import floor_rate

from sqlqueue.connection import parse_connection
from sqlqueue.consumer import ClaimPolicy, Consumer
from sqlqueue.identifiers import TableName
from sqlqueue.options import SourceOptions
from sqlqueue.queue import Queue
from sqlqueue.schema import Column
from sqlqueue.spark.delta import append_once
from sqlqueue.spark.reader import QueueStreamReader, shared_queue
from sqlqueue.spark.source import SqlQueueDataSource

DOMAIN = (Column("payload", "text"), Column("customer", "bigint"))


def fill(queue: Queue, rows: int) -> None:
    queue.create(DOMAIN)
    chunk = 50_000
    for start in range(0, rows, chunk):
        queue.enqueue([{"payload": f'{{"order": {i}, "note": "benchmark row"}}', "customer": i % 977}
                       for i in range(start, min(rows, start + chunk))])


def raw_rate(options: dict, table: str, rows: int, batch: int) -> float:
    queue = Queue(parse_connection(options["url"], password=options["password"]), TableName(table))
    fill(queue, rows)
    consumer = Consumer(queue, "raw", ClaimPolicy())
    started, seq, seen = time.perf_counter(), 0, 0
    while True:
        nxt = consumer.advance(seq, batch)
        if nxt == seq:
            break
        for lo, hi in queue.partition_bounds("raw", seq, nxt, 1):
            for chunk in queue.read_claimed("raw", seq, nxt, lo, hi, ["id", "enqueued_at", "attempts", "payload", "customer"]):
                seen += len(chunk)
        seq = nxt
    consumer.complete_through(seq)
    elapsed = time.perf_counter() - started
    assert seen == rows, (seen, rows)
    queue.close()
    return report("raw client: claim, read, delete", rows, elapsed)


class TupleReader(QueueStreamReader):
    """The same reader returning Python tuples instead of Arrow record batches, for comparison."""

    def read(self, partition):
        queue = shared_queue(self.options.address)
        for rows in queue.read_claimed(partition.consumer, partition.after_seq, partition.upto_seq, partition.lo,
                                       partition.hi, self.schema.fieldNames(), self.options.fetch_size):
            yield from rows


class TupleSource(SqlQueueDataSource):
    @classmethod
    def name(cls) -> str:
        return "sqlqueue_tuples"

    def streamReader(self, schema):
        return TupleReader(SourceOptions.parse(self.options), schema)


SINKS = {
    "delta": "Delta streaming sink",
    "foreach": "foreachBatch + append_once (the job's)",
    "noop": "noop sink (connector alone)",
}


def start_sink(stream, sink: str, work: str):
    writer = stream.writeStream.option("checkpointLocation", f"{work}/cp").trigger(availableNow=True)
    if sink == "delta":
        return writer.format("delta").start(f"{work}/delta")
    if sink == "noop":
        return writer.format("noop").start()

    return writer.foreachBatch(append_once(f"{work}/delta", "bench")).start()


def connector_rate(
    spark, options: dict, table: str, rows: int, batch: int, partitions: int, sink: str, fmt: str = "sqlqueue"
) -> float:
    queue = Queue(parse_connection(options["url"], password=options["password"]), TableName(table))
    fill(queue, rows)
    work = tempfile.mkdtemp(prefix="sqlqueue-bench-")
    reader = spark.readStream.format(fmt)
    for key, value in {**options, "queue": table, "maxRowsPerTrigger": batch, "numPartitions": partitions}.items():
        reader = reader.option(key, str(value))
    started = time.perf_counter()
    query = start_sink(reader.load(), sink, work)
    query.awaitTermination()
    total = time.perf_counter() - started
    batches = [p for p in query.recentProgress if p["numInputRows"]]
    ends = [dt.datetime.fromisoformat(p["timestamp"].replace("Z", "+00:00")).timestamp()
            + p["durationMs"]["triggerExecution"] / 1000 for p in batches]
    steady_rows = sum(p["numInputRows"] for p in batches[1:])
    assert sum(p["numInputRows"] for p in batches) == rows
    latencies = [p["durationMs"]["triggerExecution"] for p in batches[1:]]
    label = SINKS[sink] + (", tuples" if fmt != "sqlqueue" else "")
    rate = report(f"{label}, steady state", steady_rows, ends[-1] - ends[0],
                  f"(batch {percentiles(latencies)}; {total:.1f} s with start-up)")
    shutil.rmtree(work, ignore_errors=True)
    queue.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--batches", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--sinks", nargs="+", choices=list(SINKS), default=list(SINKS))
    args = parser.parse_args()

    from sqlqueue.spark.session import build_session

    server = start_postgres()
    spark = build_session("sqlqueue-bench-source")
    try:
        options = pg_options(server)
        # Warm up Spark's Python workers and the JVM so the first measured query does not pay for them.
        for sink in SINKS:
            connector_rate(spark, options, f"warmup_{sink}", 30_000, 10_000, args.partitions, sink)
        print(f"source benchmark: PostgreSQL, {args.rows} rows, {args.partitions} read partitions")
        for batch in args.batches:
            print(f" batches of {batch}:")
            raw = raw_rate(options, f"raw_{batch}", args.rows, batch)
            print(f"  ratio Spark floor / raw: {floor_rate(spark, batch, args.partitions) / raw:.2f}", flush=True)
            for sink in args.sinks:
                rate = connector_rate(spark, options, f"src_{sink}_{batch}", args.rows, batch, args.partitions, sink)
                print(f"  ratio {SINKS[sink]} / raw: {rate / raw:.2f}", flush=True)
        print(f" read path, Arrow record batches vs Python tuples (noop sink, batches of {max(args.batches)}):")
        spark.dataSource.register(TupleSource)
        for fmt in ("sqlqueue", "sqlqueue_tuples"):
            connector_rate(spark, options, f"read_{fmt}", args.rows, max(args.batches), args.partitions, "noop", fmt)
    finally:
        spark.stop()
        server.destroy()


if __name__ == "__main__":
    main()
