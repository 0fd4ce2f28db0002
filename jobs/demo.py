"""Demo pipeline on the embedded default (SQLite): enqueue work, stream it into Delta, verify.

    make demo            # or: python jobs/demo.py --rows 100000 --out demo-output

Creates a fresh queue, enqueues N JSON payloads, drains the queue with
spark.readStream.format("sqlqueue") into a Delta table (Trigger.AvailableNow), then checks from the
data that every payload arrived exactly once and that the queue is empty.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from pyspark.sql import functions as F

from sqlqueue.connection import parse_connection
from sqlqueue.identifiers import TableName
from sqlqueue.queue import Queue
from sqlqueue.spark.session import build_session


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="payloads to enqueue (default 100000)")
    parser.add_argument("--out", default="demo-output", help="folder for the queue, checkpoint and Delta table")
    parser.add_argument("--batch", type=int, default=25_000, help="maxRowsPerTrigger (default 25000)")
    args = parser.parse_args(argv)

    out = Path(args.out).resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    url = f"sqlite:///{out / 'queue.db'}"

    queue = Queue(parse_connection(url), TableName("orders"))
    queue.create()
    started = time.monotonic()
    queue.enqueue([{"payload": json.dumps({"order_id": i, "amount": round(i * 0.37, 2)})} for i in range(args.rows)])
    print(f"enqueued: {args.rows} rows into {queue.table} ({time.monotonic() - started:.1f} s)")

    spark = build_session("sqlqueue-demo")
    started = time.monotonic()
    stream = (
        spark.readStream.format("sqlqueue")
        .option("url", url)
        .option("queue", "orders")
        .option("maxRowsPerTrigger", args.batch)
        .load()
        .withColumn("order_id", F.get_json_object("payload", "$.order_id").cast("bigint"))
    )
    query = (
        stream.writeStream.format("delta")
        .option("checkpointLocation", str(out / "checkpoint"))
        .trigger(availableNow=True)
        .start(str(out / "delta"))
    )
    query.awaitTermination()
    elapsed = time.monotonic() - started
    batches = [p for p in query.recentProgress if p["numInputRows"]]
    print(
        f"streamed: {sum(p['numInputRows'] for p in batches)} rows in {len(batches)} micro-batches "
        f"({elapsed:.1f} s, {args.rows / elapsed:,.0f} rows/s including query start-up)"
    )

    delta = spark.read.format("delta").load(str(out / "delta"))
    in_delta = delta.count()
    distinct = delta.select("order_id").distinct().count()
    expected = spark.range(args.rows).withColumnRenamed("id", "order_id")
    missing = expected.join(delta, "order_id", "left_anti").count()
    left = sum(s["rows"] for s in queue.inspection.stats().values())
    exactly_once = in_delta == args.rows and distinct == args.rows and missing == 0
    print(f"in delta: {in_delta} rows, {distinct} distinct order ids, {missing} missing")
    print(f"left in queue: {left} rows")
    print(f"exactly once: {'yes' if exactly_once else 'no'}")
    spark.stop()
    return 0 if exactly_once and left == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
