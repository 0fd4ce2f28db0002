"""Enqueueing through the sink against the database's own bulk insert, in the same run.

    .venv/bin/python benchmarks/bench_sink.py [--rows 200000] [--repeat 3] [--engines postgres,sqlite]

For each engine: the raw rate is the dialect's bulk path (COPY on PostgreSQL, executemany in one
transaction on SQLite) inserting ready rows straight into a fresh queue table, from Python tuples
built beforehand. The sink rate is ``df.write.format("sqlqueue").mode("append")`` of the same
rows into another fresh queue table, timed from the call to its return (staging in Spark's tasks,
then the publish), and a stream of the same rows as parquet files through
``writeStream.format("sqlqueue")`` with one micro-batch per file. A first small write warms Spark's
Python workers up. Each figure is the best of --repeat runs; the ratio is sink / raw.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyspark.sql import functions as F  # noqa: E402

from sqlqueue.spark.session import build_session  # noqa: E402
from sqlqueue.schema import Column  # noqa: E402
from tests.support.engines import Engine  # noqa: E402
from tests.support.pgserver import PASSWORD, PgServer  # noqa: E402

DOMAIN = (Column("payload", "text"), Column("customer", "bigint", nullable=False))
TARGET = 0.6


def best_rate(rows: int, repeat: int, prepare: Callable[[], Callable[[], None]]) -> tuple[float, list[float]]:
    """``prepare`` makes a fresh table and returns the write to time."""
    seconds = []
    for _ in range(repeat):
        write = prepare()
        started = time.perf_counter()
        write()
        seconds.append(time.perf_counter() - started)
    return rows / min(seconds), seconds


def options_writer(writer, engine: Engine, queue):
    for key, value in engine.source_options(queue).items():
        writer = writer.option(key, value)
    return writer


def raw_insert(engine: Engine, rows: list[tuple]) -> Callable[[], None]:
    queue = engine.new_queue(domain=DOMAIN)

    def write() -> None:
        with queue.transaction() as cur:
            queue.insert(cur, DOMAIN, rows)

    queue.stats()  # connect before the clock starts, as the sink's workers are
    return write


def sink_write(engine: Engine, df) -> Callable[[], None]:
    queue = engine.new_queue(domain=DOMAIN)
    return options_writer(df.write.format("sqlqueue").mode("append"), engine, queue).save


def sink_stream(engine: Engine, spark, folder: Path, scratch: Path) -> Callable[[], None]:
    queue = engine.new_queue(domain=DOMAIN)
    stream = spark.readStream.schema("payload string, customer bigint").option("maxFilesPerTrigger", 1).parquet(str(folder))
    writer = stream.writeStream.format("sqlqueue").option("checkpointLocation", tempfile.mkdtemp(dir=scratch))
    query = options_writer(writer, engine, queue).trigger(availableNow=True)
    return lambda: query.start().awaitTermination()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engines", default="postgres,sqlite")
    parser.add_argument("--batches", type=int, default=4, help="micro-batches of the streamed run")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="sqlqueue-bench-"))
    spark = build_session("bench-sink", "local[2]")
    df = spark.range(args.rows).select(F.format_string("order %d", "id").alias("payload"), F.col("id").alias("customer"))
    df = df.cache()
    df.count()
    folder = scratch / "in"
    df.repartition(args.batches).write.parquet(str(folder))
    rows = [(f"order {i}", i) for i in range(args.rows)]
    server = PgServer().start() if "postgres" in args.engines else None
    print(f"{args.rows:,} rows of (payload text, customer bigint) into a queue table; best of {args.repeat}; "
          f"Spark local[2] on {spark.sparkContext.defaultParallelism} cores")
    try:
        for name in args.engines.split(","):
            if name == "postgres":
                engine = Engine("postgres", {"url": server.url, "password": PASSWORD})
            else:
                engine = Engine("sqlite", {"url": f"sqlite:///{scratch}/bench.db"})
            sink_write(engine, df.limit(1000))()  # warm-up: Python workers
            raw, raw_s = best_rate(args.rows, args.repeat, lambda: raw_insert(engine, rows))
            batch, batch_s = best_rate(args.rows, args.repeat, lambda: sink_write(engine, df))
            streamed, stream_s = best_rate(args.rows, args.repeat, lambda: sink_stream(engine, spark, folder, scratch))
            print(f"{name:9} raw bulk insert       {raw:>10,.0f} rows/s  (runs: {', '.join(f'{s:.2f}' for s in raw_s)} s)")
            print(f"{name:9} sink, df.write        {batch:>10,.0f} rows/s  (runs: {', '.join(f'{s:.2f}' for s in batch_s)} s)"
                  f"  ratio {batch / raw:.2f}")
            print(f"{name:9} sink, {args.batches} micro-batches {streamed:>10,.0f} rows/s  (runs: {', '.join(f'{s:.2f}' for s in stream_s)} s)"
                  f"  ratio {streamed / raw:.2f}  (query start-up included)")
            engine.close()
    finally:
        if server:
            server.destroy()
        spark.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
