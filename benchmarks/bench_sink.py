"""Sink throughput: rows enqueued through format("sqlqueue") beside the raw bulk insert of the same
database in the same run.

    make bench        # or: .venv/bin/python benchmarks/bench_sink.py --rows 200000 --repeat 3 --engines postgres sqlite

Raw: the dialect's bulk path (COPY on PostgreSQL, executemany in one transaction on SQLite)
inserting ready rows straight into a fresh queue table from Python tuples built beforehand. On PostgreSQL
also the same COPY run in parallel, the tuples cut into one part for each of Spark's cores, each copied by
a process of its own, as a user could load a batch; with it the ratio of df.write (whose tasks copy in
parallel too) to that.
Sink: ``df.write.format("sqlqueue").mode("append")`` of the same rows (cached in Spark) into another
fresh queue table, timed from the call to its return: tasks write unpublished rows, then the commit
publishes them. And the same rows streamed from parquet files through ``writeStream.format("sqlqueue")``,
one micro-batch per file, query start included, and the same stream after its first micro-batch
(the rows of the others over the time from the first's end to the last's, from the query's progress:
what a stream that runs on pays per row, without the query start and the first batch's set-up). And a
hand-written foreachBatch stream: the same files, each micro-batch collected to the driver as Arrow, turned
into tuples and inserted through the raw insert's bulk path, at least once; and the ratio of the sink
stream's rows/s to that stream's, after the first micro-batch, round by round (above 1: the sink is faster).
Spark's floor: the same df.write and the same stream into Python writers that only turn the rows into
tuples. Each figure is the median of --repeat runs with the smallest and largest, taken round by round
after a warm-up write that starts Spark's Python workers; a ratio is taken within each round. On
PostgreSQL each run starts with the earlier runs' tables dropped and a CHECKPOINT (fresh_start).
Payloads are short (``order <n>``) unless --payload-bytes fills them (100: rows of the size
bench_source.py drains).

What bounds the stream on PostgreSQL, from the server's log of each statement's end, duration and
transaction: its COPYs after the first micro-batch (a micro-batch's, from the first one's start to the last
one's end), rows over the seconds they ran, against the raw insert's COPY (the database's cost of a row each
way), and how long the database waited for Spark between one micro-batch's COPYs and the next's (the task's
end, the commit, Spark's logs and the next trigger's planning).
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bench_backlog import raw_connection
from common import pg_options, postmaster, ratio_spread, spread, start_postgres
from drains import drop, tree_cpu
from pyspark.sql.streaming import DataStreamWriter
from spark_floor import TuplesSink, write_floor

from sqlqueue.schema import Column
from tests.support.engines import Engine

DOMAIN = (Column("payload", "text"), Column("customer", "bigint", nullable=False))


def with_options(writer, engine: Engine, queue):
    for key, value in engine.sink_options(queue).items():
        writer = writer.option(key, value)
    return writer


def raw_insert(engine: Engine, rows: list[tuple]) -> Callable[[], None]:
    queue = engine.new_queue(domain=DOMAIN)
    queue.inspection.stats()  # connect before the clock starts, as the sink's workers already are

    def write() -> None:
        with queue.transaction() as cur:
            queue.producing.insert(cur, DOMAIN, rows)

    return write


def parallel_raw_insert(engine: Engine, rows: list[tuple], processes: int) -> Callable[[], None]:
    """The raw insert as a user could run it in parallel with no code of sqlqueue's: the tuples cut into
    ``processes`` parts, each copied by a process of its own (forked, so no tuple is sent to it) through
    psycopg's COPY on its own connection, committing on its own. The processes start and connect before
    the clock does, as the raw insert connects before its own.

    Forked from a process with Spark's threads and sockets: the child touches neither, and multiprocessing
    ends it with ``os._exit``, so nothing of the parent's is flushed or closed from it."""
    table = engine.new_queue(domain=DOMAIN).table
    size = max(1, -(-len(rows) // processes))
    parts = [rows[start : start + size] for start in range(0, len(rows), size)]
    names = ", ".join(column.name for column in DOMAIN)
    fork = multiprocessing.get_context("fork")
    connected, go = fork.Barrier(len(parts) + 1), fork.Event()

    def copy(part: list[tuple]) -> None:
        with raw_connection(engine) as conn, conn.cursor() as cur:
            connected.wait()
            go.wait()
            with cur.copy(f"COPY {table} ({names}) FROM STDIN") as copying:
                for row in part:
                    copying.write_row(row)

    children = [fork.Process(target=copy, args=(part,)) for part in parts]
    for child in children:
        child.start()
    connected.wait(timeout=60)

    def write() -> None:
        go.set()
        for child in children:
            child.join()
        if any(child.exitcode for child in children):
            failed = [child.exitcode for child in children]
            raise RuntimeError(f"a process of the parallel raw insert failed: {failed}")

    return write


def sink_write(engine: Engine, df) -> Callable[[], None]:
    return with_options(df.write.format("sqlqueue").mode("append"), engine, engine.new_queue(domain=DOMAIN)).save


def stream_into(spark, folder: str, work: str, sink: str | Callable) -> DataStreamWriter:
    """The input files, one per micro-batch, into format ``sink`` (or foreachBatch with it) with a fresh
    checkpoint."""
    stream = spark.readStream.schema("payload string, customer bigint").option("maxFilesPerTrigger", 1).parquet(folder)
    writer = stream.writeStream.foreachBatch(sink) if callable(sink) else stream.writeStream.format(sink)
    return writer.option("checkpointLocation", tempfile.mkdtemp(dir=work)).trigger(availableNow=True)


# Rows after a stream's first micro-batch, and the seconds from its end to the last one's end.
Steady = tuple[int, float]


def after_the_first(progress: list) -> Steady:
    """What a finished stream's micro-batches after the first wrote, and in how long (StreamingQueryProgress:
    a trigger's start and how long it ran)."""
    batches = [p for p in progress if p.numInputRows]
    ends = [datetime.fromisoformat(p.timestamp).timestamp() + p.durationMs["triggerExecution"] / 1000 for p in batches]
    return sum(p.numInputRows for p in batches[1:]), ends[-1] - ends[0]


def run_stream(writer: DataStreamWriter) -> Callable[[], Steady]:
    def run() -> Steady:
        query = writer.start()
        query.awaitTermination()
        return after_the_first(query.recentProgress)

    return run


def sink_stream(engine: Engine, spark, folder: str, work: str) -> Callable[[], Steady]:
    return run_stream(
        with_options(stream_into(spark, folder, work, "sqlqueue"), engine, engine.new_queue(domain=DOMAIN))
    )


def tuples(frame) -> Iterator[tuple]:
    """A DataFrame's rows as Python tuples, through Arrow (``toArrow``: one collect to the driver)."""
    return zip(*(column.to_pylist() for column in frame.toArrow().columns))


def user_stream(engine: Engine, spark, folder: str, work: str) -> Callable[[], Steady]:
    """A hand-written foreachBatch stream: each micro-batch brought to the driver as Arrow, turned into
    tuples and inserted through the raw insert's bulk path in one transaction. At least once: a restart
    after the insert's commit and before Spark records the micro-batch as done inserts it again."""
    queue = engine.new_queue(domain=DOMAIN)
    queue.inspection.stats()  # connect before the clock starts

    def insert_batch(batch, _batch_id: int) -> None:
        rows = tuples(batch)  # collected before the transaction opens
        with queue.transaction() as cur:
            queue.producing.insert(cur, DOMAIN, rows)

    return run_stream(stream_into(spark, folder, work, insert_batch))


def floor_stream(spark, folder: str, work: str) -> Callable[[], Steady]:
    spark.dataSource.register(TuplesSink)
    return run_stream(stream_into(spark, folder, work, TuplesSink.name()))


def fresh_start(engine: Engine) -> None:
    """Where each PostgreSQL run starts: the tables of the runs before it dropped, so every run writes into an
    otherwise empty database (kept, they slowed the server round by round: a 4,000,000-row COPY took 8.3 s
    of the database's CPU in the first round, 14.5 s in the third), then a CHECKPOINT, so no run writes out
    pages the one before it left dirty. A stream's own table may still be vacuumed between its
    micro-batches, as a user's would be."""
    with raw_connection(engine) as conn:
        conn.execute("SET lock_timeout = '30s'")  # a session left holding a lock fails the drop, not hangs it
        while engine.created:
            queue = engine.created.pop()
            queue.close()
            drop(conn, queue.table.name)
        conn.execute("CHECKPOINT")


RAW = "raw bulk insert"
PARALLEL_RAW = "raw bulk insert, one process a core"
DF_WRITE = "sink, df.write"
SINK_STREAM = "sink, writeStream (with query start)"
USER_STREAM = "foreachBatch + raw insert (with query start)"


def rate(steady: Steady | None) -> float:
    assert steady, "a stream's run measures its micro-batches after the first"
    rows, seconds = steady
    return rows / seconds


# A transaction's COPYs, from the first one's start to the last one's end, seconds since the epoch.
Span = tuple[float, float]
# The server's log line prefix: its default ('%m [%p] ') and the transaction's id.
LOG_PREFIX = "%m [%p] %x "
# A line of PostgreSQL's log for a statement that ended (LOG_PREFIX, then log_min_duration_statement's
# "duration: ... ms  statement: ..."), a COPY.
COPY_LINE = re.compile(r"^(\S+ \S+) \S+ \[\d+\] (\d+) LOG:  duration: ([\d.]+) ms  statement: COPY ", re.MULTILINE)


def log_durations(engine: Engine) -> None:
    """Have the server log every statement with its duration and transaction (COPY_LINE)."""
    with raw_connection(engine) as conn:
        conn.execute("ALTER SYSTEM SET log_min_duration_statement = 0")
        conn.execute(f"ALTER SYSTEM SET log_line_prefix = '{LOG_PREFIX}'")
        conn.execute("SELECT pg_reload_conf()")


def copies(log: Path, since: int) -> tuple[Span, ...]:
    """The COPYs the server's ``log`` records after its first ``since`` bytes, those of one transaction as
    one span (a sink task loads its rows in a few COPYs, sqlqueue.numbering), in the order they began."""
    with log.open("rb") as f:
        f.seek(since)
        text = f.read().decode(errors="replace")
    spans: dict[str, Span] = {}
    for stamp, xid, ms in COPY_LINE.findall(text):
        end = datetime.fromisoformat(stamp).timestamp()
        start = end - float(ms) / 1000
        first, last = spans.get(xid, (start, end))
        spans[xid] = (min(first, start), max(last, end))
    return tuple(sorted(spans.values()))


@dataclass(frozen=True)
class Run:
    seconds: float
    database_cpu: float  # CPU seconds of the database's processes (PostgreSQL's); 0 for SQLite, in this process
    steady: Steady | None = None  # a stream's micro-batches after the first
    copies: tuple[Span, ...] = ()  # with the server's log, the run's COPYs


def timed_run(write: Callable[[], Steady | None], postmaster: int | None, log: Path | None) -> Run:
    before = tree_cpu(postmaster) if postmaster else 0.0
    since = log.stat().st_size if log else 0
    started = time.perf_counter()
    steady = write()
    seconds = time.perf_counter() - started
    spans = copies(log, since) if log else ()
    return Run(seconds, tree_cpu(postmaster) - before if postmaster else 0.0, steady, spans)


def rounds(
    repeat: int,
    contenders: dict[str, Callable[[], Callable[[], Steady | None]]],
    postmaster: int | None = None,
    before_each: Callable[[], None] = lambda: None,
    log: Path | None = None,
) -> dict[str, list[Run]]:
    """Each contender's runs, taken round by round so a busy spell on a shared host falls on all, each after
    ``before_each``; with ``postmaster``, what each run cost the database's processes in CPU; with the
    server's ``log``, its COPYs."""
    runs: dict[str, list[Run]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, prepare in contenders.items():
            before_each()
            runs[name].append(timed_run(prepare(), postmaster, log))
    return runs


def show(rows: int, runs: dict[str, list[Run]], against: str | None = None) -> None:
    """Each contender's rows/s and the database's CPU seconds, and with ``against`` its ratio to that
    contender in the same round."""
    for name, taken in runs.items():
        line = f"  {name:<44} {spread([rows / r.seconds for r in taken]):>32} rows/s"
        if any(r.database_cpu for r in taken):
            line += f", database CPU {statistics.median(r.database_cpu for r in taken):5.2f} s"
        if against and name != against:
            ratios = [base.seconds / r.seconds for base, r in zip(runs[against], taken, strict=True)]
            line += f"   / raw {ratio_spread(ratios)}"
        print(line, flush=True)
        steady = [r.steady for r in taken if r.steady]
        if steady:
            line = f"  {'  after its first micro-batch':<44} {spread([n / s for n, s in steady]):>32} rows/s"
            if against:
                ratios = [n / s * base.seconds / rows for base, (n, s) in zip(runs[against], steady, strict=True)]
                line += f"{'':24}/ raw {ratio_spread(ratios)}"
            print(line, flush=True)


def show_copies(rows: int, micro_batches: int, runs: dict[str, list[Run]]) -> None:
    """The stream's COPYs after its first micro-batch against the raw insert's, and the database's waits
    between them, round by round."""
    loading: list[float] = []  # the stream's rows after its first micro-batch over its COPYs' seconds
    ratios: list[float] = []  # that against the raw insert's COPY
    waits: list[float] = []  # ms from one of its COPYs' end to the next one's start
    for raw, stream in zip(runs[RAW], runs[SINK_STREAM], strict=True):
        if len(raw.copies) != 1 or len(stream.copies) != micro_batches or micro_batches < 2 or not stream.steady:
            continue  # no log, or a stream whose micro-batches did not each copy in one transaction
        (start, end), later = raw.copies[0], stream.copies[1:]
        loading.append(stream.steady[0] / sum(b - a for a, b in later))
        ratios.append(loading[-1] * (end - start) / rows)
        waits += [(b[0] - a[1]) * 1000 for a, b in zip(stream.copies, later)]
    if loading:
        print(
            f"  {'sink stream: its COPYs after the first':<44} {spread(loading):>32} rows/s"
            f"{'':24}/ raw COPY {ratio_spread(ratios)}",
            flush=True,
        )
        print(f"  {'  the database idle between its COPYs':<44} {spread(waits):>32} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engines", nargs="+", choices=["postgres", "sqlite"], default=["postgres", "sqlite"])
    parser.add_argument("--micro-batches", type=int, default=4)
    parser.add_argument(
        "--payload-bytes", type=int, default=0, help="fill each payload ('order <n>') up to this many bytes"
    )
    args = parser.parse_args()

    from pyspark.sql import functions as F

    from sqlqueue.spark.session import build_session

    work = tempfile.mkdtemp(prefix="sqlqueue-bench-sink-")
    server = start_postgres() if "postgres" in args.engines else None
    spark = build_session("sqlqueue-bench-sink")
    try:
        fill = args.payload_bytes  # 0: "order <n>" as it is
        text = F.format_string("order %d", "id")
        df = spark.range(args.rows).select(
            (F.rpad(text, fill, "x") if fill else text).alias("payload"), F.col("id").alias("customer")
        )
        df = df.cache()
        df.count()
        df.repartition(args.micro_batches).write.parquet(f"{work}/in")
        rows = list(tuples(df))  # the raw insert's tuples, built before its clock starts
        shape = f"payload text{f' of {fill} bytes' if fill else ''}, customer bigint"
        print(
            f"sink benchmark: {args.rows} rows ({shape}), median (min-max) of {args.repeat} "
            f"run(s), rows/s; ratios taken run by run; Spark local[{spark.sparkContext.defaultParallelism}]; "
            f"streams in {args.micro_batches} micro-batches of {args.rows // args.micro_batches} rows"
        )
        write_floor(spark, df)  # warm-up
        floors = {
            "Spark floor: Python writer, no database": lambda: lambda: write_floor(spark, df),
            f"Spark floor: {args.micro_batches} micro-batches, no database": lambda: floor_stream(
                spark, f"{work}/in", work
            ),
        }
        show(args.rows, rounds(args.repeat, floors))
        for name in args.engines:
            options = pg_options(server) if name == "postgres" else {"url": f"sqlite:///{work}/bench.db"}
            engine = Engine(name, options)
            sink_write(engine, df.limit(1000))()  # warm-up: Spark's Python workers
            print(f" {name}:")
            contenders = {
                RAW: lambda engine=engine: raw_insert(engine, rows),
                DF_WRITE: lambda engine=engine: sink_write(engine, df),
                SINK_STREAM: lambda engine=engine: sink_stream(engine, spark, f"{work}/in", work),
                USER_STREAM: lambda engine=engine: user_stream(engine, spark, f"{work}/in", work),
            }
            if name == "postgres" and server:
                cores = spark.sparkContext.defaultParallelism  # df.write's tasks at once
                contenders[PARALLEL_RAW] = lambda engine=engine, cores=cores: parallel_raw_insert(engine, rows, cores)
                log_durations(engine)
                before_each = functools.partial(fresh_start, engine)
                runs = rounds(args.repeat, contenders, postmaster(server), before_each, server.root / "log")
            else:
                runs = rounds(args.repeat, contenders)
            show(args.rows, runs, against=RAW)
            show_copies(args.rows, args.micro_batches, runs)
            if PARALLEL_RAW in runs:
                ratios = [p.seconds / w.seconds for p, w in zip(runs[PARALLEL_RAW], runs[DF_WRITE], strict=True)]
                print(f"  df.write / the raw insert, one process a core: {ratio_spread(ratios)}")
            ratios = [
                rate(r.steady) / rate(u.steady) for r, u in zip(runs[SINK_STREAM], runs[USER_STREAM], strict=True)
            ]
            print(f"  the sink's stream / the foreachBatch stream, after the first micro-batch: {ratio_spread(ratios)}")
            engine.close()
    finally:
        spark.stop()
        if server:
            server.destroy()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
