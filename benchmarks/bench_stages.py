"""Where a micro-batch's time goes: Spark's own stage durations (StreamingQueryProgress.durationMs) of
the sqlqueue source draining a PostgreSQL queue, beside Spark's floor (the same batches served from
memory), each into queue_to_delta's writer (``append_once``, a Delta append) and into a writer that
writes nothing (Spark's noop format): what the read costs shows between the two writers.

    .venv/bin/python benchmarks/bench_stages.py --rows 1000000 --batch 50000

Each drain runs in a fresh process (a job's cold start, as bench_source.py's), with Trigger.AvailableNow
for the source and a processing-time trigger for the floor. Figures: the median of each stage over
the batches between the first and the last (the first pays the JVM's start and the first claim; the last
claims no batch ahead while Spark writes it), and the steady rows/s those batches give.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from common import pg_options, start_postgres
from drains import fill

STAGES = ("latestOffset", "queryPlanning", "addBatch", "walCommit", "commitOffsets", "triggerExecution")
VARIANTS = ("source-delta", "source-noop", "floor-delta", "floor-noop")


PASSWORD = "SQLQUEUE_BENCH_PASSWORD"  # the database's password reaches a drain's process in its environment


def drain(variant: str, url: str, rows: int, batch: int) -> list[dict[str, int]]:
    """One drain in this process; each batch's stage durations in ms."""
    from spark_floor import MemorySource

    from sqlqueue.spark.delta import append_once
    from sqlqueue.spark.session import build_session

    spark = build_session("bench-stages", "local[2]")
    work = tempfile.mkdtemp(prefix="sqlqueue-bench-stages-")
    source, sink = variant.split("-")
    if source == "source":
        stream = (
            spark.readStream.format("sqlqueue")
            .options(url=url, password=os.environ[PASSWORD], queue="stages", maxRowsPerTrigger=batch)
            .load()
        )
    else:
        spark.dataSource.register(MemorySource)
        stream = (
            spark.readStream.format("sqlqueue_bench_memory")
            .options(batch=batch, partitions=2, batches=rows // batch)
            .load()
        )
    write = append_once(f"{work}/delta", f"{work}/checkpoint") if sink == "delta" else _nothing
    writer = stream.writeStream.foreachBatch(write).option("checkpointLocation", f"{work}/checkpoint")
    if source == "source":
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination()
    else:  # the memory source adds a batch per trigger: stop once every batch is in
        query = writer.trigger(processingTime="0 seconds").start()
        while not query.recentProgress or query.recentProgress[-1].batchId < rows // batch - 1:
            time.sleep(0.2)
        query.stop()
    return [{k: p.durationMs.get(k, 0) for k in STAGES} for p in query.recentProgress if p.numInputRows]


def _nothing(batch, batch_id: int) -> None:
    batch.write.format("noop").mode("append").save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=50_000)
    parser.add_argument("--variant", choices=VARIANTS, help="one drain, in this process (the script runs each so)")
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        print(json.dumps(drain(args.variant, args.url, args.rows, args.batch)))
        return
    server = start_postgres()
    options = pg_options(server)
    try:
        print(f"stages of a micro-batch: {args.rows:,} rows, {args.batch:,} a batch, PostgreSQL, Spark local[2]")
        print(f"  median ms over the batches between the first and the last: {', '.join(STAGES)}; then steady rows/s")
        for variant in VARIANTS:
            if variant.startswith("source"):
                fill(options, "stages", args.rows)
            command = [sys.executable, __file__, "--variant", variant, "--rows", str(args.rows)]
            command += ["--batch", str(args.batch), "--url", options["url"]]
            env = {**os.environ, PASSWORD: options["password"]}
            done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
            # Neither the first batch (the JVM's start, the first claim) nor the last (it claims none ahead).
            batches = json.loads(done.stdout.strip().splitlines()[-1])[1:-1]
            medians = [statistics.median(b[k] for b in batches) for k in STAGES] if batches else [0] * len(STAGES)
            steady = args.batch * 1000 / statistics.mean(b["triggerExecution"] for b in batches) if batches else 0
            print(
                f"  {variant:13} " + " ".join(f"{m:>8.0f}" for m in medians) + f"   {steady:>9,.0f} rows/s", flush=True
            )
    finally:
        server.destroy()


if __name__ == "__main__":
    main()
