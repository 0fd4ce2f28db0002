"""Source throughput: a PostgreSQL queue drained into Delta by the queue_to_delta job, against what a
user would run instead, on a million rows, each measured as its own process in the same run:

  job      jobs/queue_to_delta.py (Trigger.AvailableNow, maxRowsPerTrigger = the batch size), as users run it
  script   user_script.py: psycopg `DELETE ... RETURNING` of a batch (SKIP LOCKED), a delta-rs append,
           commit; no Spark, at least once
  client   the same script with no Delta write: the database's own rate for the statement
  floor    Spark's floor: a Python streaming source serving the job's rows from memory (no database), in
           the same batches, appended to Delta by the job's writer in a session built like the job's, a
           fresh process timed as the job is
  append   plain Delta appends of the same rows from memory, batch by batch, through Spark

    make bench        # or: .venv/bin/python benchmarks/bench_source.py --batches 50000 200000 500000 1000000 --runs 3

Every rate is the steady state: the rows of the batches between the first and the last, over the first
commit to the last but one (the Delta log's commit times). The job claims each next batch while Spark
writes one, so its first interval holds the JVM's start and two claims, and its last holds none; each
drain takes at least four batches (--rows, or more at large batches). --warm drains twice that instead
and measures the second half only, as a long-running job runs, its JVM warm (the first batches of a fresh
JVM run slower, whatever the backlog); the script and its client drain twice as many rows too, and are
measured the same way. Printed per batch
size: the median of --runs runs with the smallest and largest, and the ratio job / script taken run by
run, and the peak memory of the job's processes (bench_backlog.py times the job's micro-batch against
the backlog).

--memory runs, instead, the job at one batch size with payloads of growing size (--payloads bytes),
printing rows/s and the peak resident memory of the driver's Python, its JVM and Spark's Python workers,
and the driver's memory at the first and the last batch (nothing should grow with the number of batches).

--writers compares, instead, Delta writers for the same stream in one session: the job's
(foreachBatch + append_once), foreachBatch with Delta's own txnAppId/txnVersion, the Delta streaming
sink and a noop sink, and Arrow record batches against Python tuples on the read path.

--profile relational dequeue compares, instead, the queue core's claim, read and completion on tables
of those designs (a relational queue with a status table, a delete-on-dequeue table) adopted through
the presets with the same on sqlqueue's own layout, and for relational, with the table's own worker
logic (its Next_ and Modify_, batched, no sqlqueue code) on the same table, and with per-row outcomes:
claim, read, then acknowledge each row done with a response (completion=ack), against the worker
reporting each row's status, response and step as its Modify_ takes them; each cycle runs twice, one
claim at a time and with each next claim made ahead in the background (the source's prefetch, on by
default), which the acknowledgements overlap, and the worker too, one batch at a time and claiming each
next batch on a second connection while it settles the current one:

    .venv/bin/python benchmarks/bench_source.py --profile relational --rows 100000 --batches 5000 --runs 5

--connect compares, instead, the cost per micro-batch of the same queue -> Delta queries on a classic
session and on a Spark Connect one (a local Connect server with the same settings), each in a
process of its own (pyspark refuses a Connect session in a process that runs a classic one):

    .venv/bin/python benchmarks/bench_source.py --connect --rows 300000 --batches 50000 --sinks foreach delta
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import drains
from common import percentiles, pg_options, postmaster, ratio_spread, report, spark_session, spread, start_postgres
from plots import DOCS_IMG, throughput_by_batch
from spark_floor import SCHEMA

from sqlqueue.connection import parse_connection
from sqlqueue.consumer import ClaimPolicy, Consumer
from sqlqueue.identifiers import TableName
from sqlqueue.options import SourceOptions
from sqlqueue.queue import DONE_OUTCOME, Ack, Queue
from sqlqueue.schema import Column
from sqlqueue.spark.delta import append_once
from sqlqueue.spark.reader import QueueStreamReader, shared_queue
from sqlqueue.spark.session import build_session
from sqlqueue.spark.source import SqlQueueDataSource
from tests.support import user_tables
from tests.support.engines import Engine

DOMAIN = (Column("payload", "text"), Column("customer", "bigint"))
# Every drain of the comparison takes at least this many batches, so two are measured between the first
# and the last (drains.Drain.rate): at 500,000 rows a batch, 2,000,000 rows.
FEWEST_BATCHES = 4


def fill(queue: Queue, rows: int) -> None:
    queue.create(DOMAIN)
    chunk = 50_000
    for start in range(0, rows, chunk):
        queue.enqueue(
            [
                {"payload": f'{{"order": {i}, "note": "benchmark row"}}', "customer": i % 977}
                for i in range(start, min(rows, start + chunk))
            ]
        )


def raw_rate(options: dict, table: str, rows: int, batch: int, keep: bool = False) -> float:
    queue = Queue(parse_connection(options["url"], password=options["password"]), TableName(table))
    fill(queue, rows)
    columns = ["id", "enqueued_at", "attempts", "payload", "customer"]
    done = "mark done" if keep else "delete"
    return report(f"queue core: claim, read, {done} (no Spark)", rows, drain_core(queue, rows, batch, columns, keep))


def drain_core(
    queue: Queue, rows: int, batch: int, columns: list[str], keep: bool = False, prefetch: bool = False
) -> float:
    """Seconds the queue core takes to claim, read and complete every row, ``batch`` rows a claim; ``keep``:
    completion marks the rows done (completion=keep) instead of deleting them; ``prefetch``: each next
    claim is made in the background while the current one is read (the source's default)."""
    consumer = Consumer(queue, "core", ClaimPolicy(keep_completed=keep, partitions=1, prefetch=prefetch))
    started, seq, seen = time.perf_counter(), 0, 0
    while True:
        nxt = consumer.advance(seq, batch)
        if nxt == seq:
            break
        for lo, hi in consumer.partition_bounds(seq, nxt):  # planned as the source plans its read tasks
            for chunk in queue.consuming.read_claimed("core", seq, nxt, lo, hi, columns):
                seen += len(chunk)
        seq = nxt
    consumer.complete_through(seq)
    elapsed = time.perf_counter() - started
    assert seen == rows, (seen, rows)
    consumer.close()
    return elapsed


def adopted_table(options: dict, preset: str, rows: int) -> tuple[Queue, list[str]]:
    """A filled table of the design for ``preset`` (tests/support/user_tables.py), with the claim index
    `sqlqueue adopt --apply --index` creates, and the columns a stream of it reads."""
    engine = Engine("postgres", options)
    if preset == "relational":
        queue = user_tables.relational(engine, audit=False)  # its status vocabulary, no audit trigger
        user_tables.enqueue_relational(queue, rows)
        columns = ["EnqueuedAt", "Type", "Payload"]
    else:
        queue = user_tables.dequeue(engine)
        user_tables.insert_payloads(queue, rows)
        columns = ["Id", "Payload"]
    index = queue.kind.adoption(queue).index  # the claim's index, which `sqlqueue adopt --index` makes
    user_tables.run(queue, *([index] if index else []), f"ANALYZE {queue.table}")
    return queue, columns


def drain_acked(queue: Queue, rows: int, batch: int, columns: list[str], prefetch: bool = False) -> float:
    """Seconds the queue core takes to claim and read every row, then acknowledge each one done with a
    response in one transaction a claim (completion=ack, what a job that calls a service per row does),
    ``batch`` rows a claim; ``columns`` start with the table's key; ``prefetch``: each next claim is made
    in the background while the current one is read and acknowledged (the source's default)."""
    consumer = Consumer(queue, "core", ClaimPolicy(complete_on_commit=False, partitions=1, prefetch=prefetch))
    width = len(queue.profile.key)
    started, seq, seen = time.perf_counter(), 0, 0
    while True:
        nxt = consumer.advance(seq, batch)
        if nxt == seq:
            break
        acks = [
            Ack(tuple(row[:width]), DONE_OUTCOME, response="200 OK")
            for lo, hi in consumer.partition_bounds(seq, nxt)
            for chunk in queue.consuming.read_claimed("core", seq, nxt, lo, hi, columns)
            for row in chunk
        ]
        with queue.transaction() as cur:
            queue.consuming.apply_acks(cur, acks, keep=True, max_attempts=3)
        seen, seq = seen + len(acks), nxt
    elapsed = time.perf_counter() - started
    assert seen == rows, (seen, rows)
    consumer.close()
    return elapsed


def ahead(prefetch: bool) -> str:
    return ", next claim made ahead" if prefetch else ""


def acked_rate(options: dict, rows: int, batch: int, prefetch: bool = False) -> float:
    """The queue core's claim, read and per-row acknowledgement (done, with a response) on a relational table."""
    queue, columns = adopted_table(options, "relational", rows)
    elapsed = drain_acked(queue, rows, batch, columns, prefetch)
    return report(f"adopted relational table: claim, read, acknowledge each row done{ahead(prefetch)}", rows, elapsed)


def adopted_rate(options: dict, preset: str, rows: int, batch: int, prefetch: bool = False) -> float:
    """The queue core's claim, read and completion on an adopted table of ``preset``."""
    queue, columns = adopted_table(options, preset, rows)
    elapsed = drain_core(queue, rows, batch, columns, prefetch=prefetch)
    return report(f"adopted {preset} table: claim, read, complete{ahead(prefetch)}", rows, elapsed)


# The relational queue's own worker (its Next_ and Modify_), batched, with no sqlqueue code: claim by the
# table's ready rule skipping locked rows, then mark each row Completed while UpdatedAt still holds the
# claim's token.
WORKER_CLAIM = (
    "UPDATE {t} SET Status = 'Processing', StartedAt = LOCALTIMESTAMP, AttemptNum = AttemptNum + 1, "
    "UpdatedAt = LOCALTIMESTAMP WHERE EnqueuedAt = ANY(ARRAY(SELECT EnqueuedAt FROM {t} WHERE Status IN "
    "('Pending', 'Error') AND ScheduledFor <= LOCALTIMESTAMP AND AttemptNum < 3 ORDER BY ScheduledFor, EnqueuedAt "
    "LIMIT %s FOR UPDATE SKIP LOCKED)) RETURNING EnqueuedAt, UpdatedAt, Type, Payload"
)
WORKER_DONE = (
    "UPDATE {t} AS t SET Status = 'Completed', UpdatedAt = LOCALTIMESTAMP, "
    "Duration = CAST(date_part('epoch', LOCALTIMESTAMP - t.StartedAt) * 1000 AS BIGINT) "
    "FROM unnest(%s::timestamp[], %s::timestamp[]) AS d(k, token) WHERE t.EnqueuedAt = d.k AND t.UpdatedAt = d.token"
)


# Its Modify_ batched as a worker that reports each row's outcome calls it: the row's status, response and
# step (none kept the row's), Failed instead once the row's attempts are spent unless it is Completed, the
# duration when it finishes.
WORKER_REPORT = (
    "UPDATE {t} AS t SET Status = CASE WHEN d.status <> 'Completed' AND t.AttemptNum >= 3 THEN 'Failed' "
    "ELSE d.status END, Response = COALESCE(d.response, t.Response), Step = COALESCE(d.step, t.Step), "
    "UpdatedAt = LOCALTIMESTAMP, Duration = CASE WHEN d.status IN ('Completed', 'Failed') "
    "THEN CAST(date_part('epoch', LOCALTIMESTAMP - t.StartedAt) * 1000 AS BIGINT) ELSE t.Duration END "
    "FROM unnest(%s::timestamp[], %s::timestamp[], %s::text[], %s::text[], %s::text[]) "
    "AS d(k, token, status, response, step) WHERE t.EnqueuedAt = d.k AND t.UpdatedAt = d.token"
)


def worker_rate(options: dict, rows: int, batch: int, report_each: bool = False, claim_ahead: bool = False) -> float:
    """The same relational table drained by its own worker logic, batched: no copies, no replay; with
    ``report_each``, each row's status, response and step reported, as the acknowledged cycle does; with
    ``claim_ahead``, each next batch claimed on a second connection while the current one is reported, as
    the source's prefetch does."""
    queue, _ = adopted_table(options, "relational", rows)
    second = queue.twin()
    t, seen = queue.table, 0

    def claim(conn) -> list:
        with conn.transaction():
            return conn.execute(WORKER_CLAIM.format(t=t), (batch,)).fetchall()

    def settle(conn, claimed: list) -> None:
        keys, tokens = [r[0] for r in claimed], [r[1] for r in claimed]
        with conn.transaction():
            if report_each:
                outcomes = (["Completed"] * len(claimed), ["200 OK"] * len(claimed), [None] * len(claimed))
                conn.execute(WORKER_REPORT.format(t=t), (keys, tokens, *outcomes))
            else:
                conn.execute(WORKER_DONE.format(t=t), (keys, tokens))

    conns = [queue.conn, second.conn if claim_ahead else queue.conn]
    started = time.perf_counter()
    with ThreadPoolExecutor(1) as pool:
        claimed = claim(conns[0])
        while claimed:
            following = pool.submit(claim, conns[1]) if claim_ahead else None
            settle(conns[0], claimed)
            seen += len(claimed)
            claimed = following.result() if following else claim(conns[0])
            conns.reverse()
    elapsed = time.perf_counter() - started
    assert seen == rows, (seen, rows)
    queue.close()
    second.close()
    done = "each row's status, response and step reported" if report_each else "done"
    pipelined = ", next batch claimed ahead on a second connection" if claim_ahead else ""
    return report(f"relational table, its own worker batched, {done}{pipelined} (no sqlqueue code)", rows, elapsed)


def compare_profiles(options: dict, presets: list[str], rows: int, batches: list[int], runs: int) -> None:
    print(f"adopted tables against sqlqueue's own layout: PostgreSQL, {rows} rows, queue core (no Spark)")
    for batch in batches:
        ratios: dict[str, list[float]] = {}
        for run in range(1, runs + 1):
            print(f" run {run}, batches of {batch}:")
            native = raw_rate(options, f"native_{batch}", rows, batch)
            for preset in presets:
                adopted = adopted_rate(options, preset, rows, batch)
                ratios.setdefault(f"adopted {preset} / native", []).append(adopted / native)
                if preset == "relational":
                    # The relational profile keeps its done rows (Completed): so does the native layout with
                    # completion=keep, the like-for-like cycle.
                    kept = raw_rate(options, f"native_keep_{batch}", rows, batch, keep=True)
                    ratios.setdefault("adopted relational / native keeping done rows", []).append(adopted / kept)
                    worker = worker_rate(options, rows, batch)
                    reporting = worker_rate(options, rows, batch, report_each=True)
                    worker_ahead = worker_rate(options, rows, batch, claim_ahead=True)
                    reporting_ahead = worker_rate(options, rows, batch, report_each=True, claim_ahead=True)
                    ratios.setdefault("claim, read, complete / the table's own worker", []).append(adopted / worker)
                    completed = adopted_rate(options, preset, rows, batch, prefetch=True)
                    cycle = "claim, read, complete"
                    ratios.setdefault(f"{cycle}{ahead(True)} / the table's own worker", []).append(completed / worker)
                    ratios.setdefault(f"{cycle}{ahead(True)} / the worker claiming ahead too", []).append(
                        completed / worker_ahead
                    )
                    for prefetch in (False, True):
                        acked = acked_rate(options, rows, batch, prefetch)
                        cycle = f"claim, read, ack each row{ahead(prefetch)}"
                        ratios.setdefault(f"{cycle} / the worker reporting each row", []).append(acked / reporting)
                        if prefetch:
                            ahead_too = f"{cycle} / the worker reporting each row, claiming ahead too"
                            ratios.setdefault(ahead_too, []).append(acked / reporting_ahead)
                        else:
                            ratios.setdefault(f"{cycle} / the table's own worker", []).append(acked / worker)
        print(f" ratios at batches of {batch}, median (min-max) of {runs} run(s), each taken within its run:")
        for name, values in ratios.items():
            print(f"  {name}: {ratio_spread(values)}", flush=True)


def delta_append_rate(spark, rows: int, batch: int) -> float:
    """Plain Delta appends of the same rows from memory, one per batch: what Delta alone costs."""
    from pyspark.sql import functions as F

    df = (
        spark.range(batch)
        .withColumn("enqueued_at", F.current_timestamp())
        .withColumn("attempts", F.lit(1))
        .withColumn("payload", F.format_string('{"order": %d, "note": "benchmark row"}', "id"))
        .withColumn("customer", F.col("id") % 977)
        .selectExpr(*[c.split()[0] for c in SCHEMA.split(", ")])
        .cache()
    )
    df.count()
    work = tempfile.mkdtemp(prefix="sqlqueue-bench-append-")
    latencies = []
    for _ in range(-(-rows // batch)):
        started = time.perf_counter()
        df.write.format("delta").mode("append").save(work)
        latencies.append((time.perf_counter() - started) * 1000)
    df.unpersist()
    shutil.rmtree(work, ignore_errors=True)
    return report(
        "plain Delta append of the rows from memory",
        batch * len(latencies),
        sum(latencies) / 1000,
        f"(batch {percentiles(latencies)})",
    )


class TupleReader(QueueStreamReader):
    """The same reader returning Python tuples instead of Arrow record batches, for comparison."""

    def read(self, partition):
        queue = shared_queue(self.options.address)
        for rows in queue.consuming.read_claimed(
            partition.consumer,
            partition.after_seq,
            partition.upto_seq,
            partition.lo,
            partition.hi,
            self.schema.fieldNames(),
            self.options.fetch_size,
        ):
            yield from rows


class TupleSource(SqlQueueDataSource):
    @classmethod
    def name(cls) -> str:
        return "sqlqueue_tuples"

    def streamReader(self, schema):
        return TupleReader(SourceOptions.parse(self.options), schema)


SINKS = {
    "foreach": "foreachBatch + append_once (the job's)",
    "txn": "foreachBatch + txnAppId/txnVersion",
    "delta": "Delta streaming sink",
    "noop": "noop sink (connector alone)",
}
# The throughput figure's series, in the order they are drawn.
FIGURE_SERIES = {
    "client": "the script's client alone (DELETE ... RETURNING, no Delta)",
    "script": "the script a user would write (psycopg + delta-rs)",
    "job": "queue_to_delta (sqlqueue, exactly once)",
    "floor": "Spark's floor into Delta (rows from memory)",
    "append": "plain Delta append through Spark (memory)",
}


def start_sink(stream, sink: str, work: str):
    writer = stream.writeStream.option("checkpointLocation", f"{work}/cp").trigger(availableNow=True)
    if sink == "delta":
        return writer.format("delta").start(f"{work}/delta")
    if sink == "noop":
        return writer.format("noop").start()
    if sink == "txn":

        def write(batch, batch_id: int) -> None:
            (
                batch.write.format("delta")
                .mode("append")
                .option("txnAppId", "bench")
                .option("txnVersion", batch_id)
                .save(f"{work}/delta")
            )

        return writer.foreachBatch(write).start()
    return writer.foreachBatch(append_once(f"{work}/delta", "bench")).start()


def connector_rate(
    spark, options: dict, table: str, rows: int, batch: int, partitions: int, sink: str, fmt: str = "sqlqueue"
) -> float:
    rows = max(rows, FEWEST_BATCHES * batch)  # two batches measured, as compare_drains's
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
    # Attributes, not keys: over Spark Connect a progress's numInputRows key is None (the sources hold it).
    batches = [p for p in query.recentProgress if p.numInputRows]
    ends = [
        dt.datetime.fromisoformat(p.timestamp.replace("Z", "+00:00")).timestamp()
        + p.durationMs["triggerExecution"] / 1000
        for p in batches
    ]
    assert sum(p.numInputRows for p in batches) == rows
    steady = drains.steady(batches)
    latencies = [p.durationMs["triggerExecution"] for p in steady]
    label = SINKS[sink] + (", tuples" if fmt != "sqlqueue" else "")
    rate = report(
        f"{label}, steady state",
        sum(p.numInputRows for p in steady),
        ends[-2] - ends[0],
        f"(batch {percentiles(latencies)}; {total:.1f} s with start-up)",
    )
    shutil.rmtree(work, ignore_errors=True)
    queue.close()
    return rate


def seconds_per_batch(remote: str | None, options: dict, rows: int, batch: int, partitions: int, sinks: list[str]):
    """{sink: steady-state seconds per micro-batch} on a classic session, or a Connect one on ``remote``."""
    spark = build_session("sqlqueue-bench-connect", "local[2]", remote=remote)
    mode = "connect" if remote else "classic"
    try:
        for sink in sinks:  # warm-up: the Python workers and the JVM
            connector_rate(spark, options, f"warmup_{mode}_{sink}", 30_000, 10_000, partitions, sink)
        print(f" {mode}:", flush=True)
        return {
            sink: batch / connector_rate(spark, options, f"{mode}_{sink}_{batch}", rows, batch, partitions, sink)
            for sink in sinks
        }
    finally:
        spark.stop()


def compare_connect(options: dict, rows: int, batches: list[int], partitions: int, sinks: list[str]) -> None:
    print(f"Spark Connect vs classic: PostgreSQL, {rows} rows, {partitions} read partitions, local[2] (steady state)")
    for batch in batches:
        cost = {}
        for remote in (None, "local[2]"):
            with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
                cost[remote] = pool.submit(seconds_per_batch, remote, options, rows, batch, partitions, sinks).result()
        for sink in sinks:
            classic, connect = cost[None][sink], cost["local[2]"][sink]
            print(
                f"  {batch}-row batches, {SINKS[sink]}: {classic * 1000:.0f} ms classic, {connect * 1000:.0f} ms "
                f"Connect per micro-batch = {connect / classic - 1:+.0%} (target <= +10%)",
                flush=True,
            )


def cpu(drain: drains.Drain) -> str:
    """CPU seconds per 100,000 rows of the whole drain, by role: where a 2-core machine's time goes."""
    per = 100_000 / drain.rows
    shown = ", ".join(f"{role} {seconds * per:.2f}" for role, seconds in sorted(drain.cpu_s.items()))
    return f"(CPU s per 100k rows: {shown})" if shown else ""


def measured_part(drain: drains.Drain, drained: int, size: int) -> drains.Drain:
    """The last ``size`` of the ``drained`` rows a drain took (all of them unless --warm)."""
    assert drain.rows == drained, (drain.rows, drained)
    return drain.after(drained - size)


def compare_drains(
    options: dict,
    spark,
    rows: int,
    batches: list[int],
    runs: int,
    plots: str,
    warm: bool = False,
    database: int | None = None,
) -> None:
    print(
        f"queue -> Delta: PostgreSQL, {rows:,} rows of about 100 bytes (at least {FEWEST_BATCHES} batches' worth), "
        f"Spark local[2]; steady-state rows/s, median (min-max) of {runs} run(s)"
        + ("; each drain takes twice as many rows and is measured on the second half (warm)" if warm else ""),
        flush=True,
    )
    measured: dict[int, dict[str, list[float]]] = {b: {} for b in batches}
    peaks: dict[int, list[dict[str, float]]] = {b: [] for b in batches}
    for run in range(1, runs + 1):
        for batch in batches:
            size = max(rows, FEWEST_BATCHES * batch)  # the rows measured
            drained = 2 * size if warm else size
            print(f" run {run}, batches of {batch:,} ({drained:,} rows):", flush=True)
            m = measured[batch]
            drains.fill(options, "bench_job", drained)
            whole_job = drains.job(options, "bench_job", batch, database=database)
            job = measured_part(whole_job, drained, size)
            m.setdefault("job", []).append(report("job: queue_to_delta", size, size / job.rate, cpu(whole_job)))
            peaks[batch].append(job.peak_mb)
            drains.fill(options, "bench_script", drained)
            whole_script = drains.script(options, "bench_script", batch, database=database)
            script = measured_part(whole_script, drained, size)
            m.setdefault("script", []).append(
                report("script: psycopg + delta-rs", size, size / script.rate, cpu(whole_script))
            )
            drains.fill(options, "bench_client", drained)
            client = measured_part(drains.script(options, "bench_client", batch, delta=False), drained, size)
            m.setdefault("client", []).append(report("client alone: DELETE ... RETURNING", size, size / client.rate))
            floor = measured_part(drains.floor(batch, drained), drained, size)
            floor_rate = report("Spark floor: the rows from memory into Delta", size, size / floor.rate)
            m.setdefault("floor", []).append(floor_rate)
            m.setdefault("append", []).append(delta_append_rate(spark, size, batch))
    print(f"\nsummary: rows/s, median (min-max) of {runs} run(s); ratio job / script taken run by run")
    print(f"  {'batch':>8}  {'job':>24}  {'script':>26}  {'client alone':>26}  {'Spark floor':>26}  {'job/script':>17}")
    for batch, m in measured.items():
        ratios = [j / s for j, s in zip(m["job"], m["script"])]
        print(
            f"  {batch:>8,}  {spread(m['job']):>24}  {spread(m['script']):>26}  {spread(m['client']):>26}  "
            f"{spread(m['floor']):>26}  {ratio_spread(ratios):>17}"
        )
    if len(batches) > 1:
        # Each at the batch size where it drains fastest in that run: the job's best against the script's.
        best = [
            max(measured[b]["job"][i] for b in batches) / max(measured[b]["script"][i] for b in batches)
            for i in range(runs)
        ]
        fastest = {k: max(batches, key=lambda b: statistics.median(measured[b][k])) for k in ("job", "script")}
        print(
            f"  each at its best batch size (job {fastest['job']:,}, script {fastest['script']:,} by their medians): "
            f"job / script {ratio_spread(best)}, the best of each run by run"
        )
    for batch, found in peaks.items():
        roles = sorted({r for p in found for r in p})
        shown = ", ".join(f"{r} {statistics.median(p.get(r, 0.0) for p in found):,.0f} MB" for r in roles)
        print(f"  job's peak memory at {batch:,}: {shown}")
    if plots:
        best = {b: {k: statistics.median(v) for k, v in m.items()} for b, m in measured.items()}
        throughput_by_batch(Path(plots) / "source-throughput.png", best, FIGURE_SERIES)


def memory(options: dict, rows: int, batch: int, payloads: list[int]) -> None:
    print(f"memory and payload size: the job at batches of {batch:,}, {rows:,} rows per payload size")
    print(
        f"  {'payload':>8}  {'rows/s':>9}  {'driver Python':>14}  {'driver JVM':>11}  {'Python workers':>15}  "
        "driver at batch 2 / the middle one / the last"
    )
    for size in payloads:
        drains.fill(options, "bench_memory", rows, size)
        job = drains.job(options, "bench_memory", batch)
        peak = job.peak_mb
        at = job.rss_by_batch
        first, middle, last = at[min(1, len(at) - 1)], at[len(at) // 2], at[-1]
        print(
            f"  {size:>7} B  {job.rate:>9,.0f}  {peak.get('driver python', 0):>11,.0f} MB  "
            f"{peak.get('driver JVM', 0):>8,.0f} MB  {peak.get('python workers', 0):>12,.0f} MB  "
            f"{first:,.0f} / {middle:,.0f} / {last:,.0f} MB",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batches", type=int, nargs="+", default=[50_000, 200_000, 500_000, 1_000_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--warm", action="store_true", help="drain twice as long, measure the second half (a warm JVM)")
    parser.add_argument("--memory", action="store_true", help="only: the job's memory and rate as payloads grow")
    parser.add_argument("--payloads", type=int, nargs="+", default=[100, 1000, 4000], help="bytes, for --memory")
    parser.add_argument("--writers", action="store_true", help="only: Delta writers and the read path, in-process")
    parser.add_argument("--sinks", nargs="+", choices=list(SINKS), default=list(SINKS), help="for --writers")
    parser.add_argument("--master", default="local[2]", help="for --writers: local[N] or spark://host:port")
    parser.add_argument(
        "--plots", default=str(DOCS_IMG), help="folder for the throughput figure (source-throughput.png); '' for none"
    )
    parser.add_argument("--connect", action="store_true", help="per-batch cost on Spark Connect beside classic only")
    parser.add_argument(
        "--profile",
        nargs="+",
        choices=("relational", "dequeue"),
        help="only: claim and completion of an adopted table of each preset beside the native layout's",
    )
    args = parser.parse_args()

    server = start_postgres()
    options = pg_options(server)
    try:
        if args.profile:
            compare_profiles(options, args.profile, args.rows, args.batches, args.runs)
        elif args.connect:
            compare_connect(options, args.rows, args.batches, args.partitions, args.sinks)
        elif args.memory:
            memory(options, args.rows, args.batches[0], args.payloads)
        elif args.writers:
            compare_writers(options, args)
        else:
            spark = build_session("sqlqueue-bench-source", "local[2]")
            try:
                database = postmaster(server)
                compare_drains(options, spark, args.rows, args.batches, args.runs, args.plots, args.warm, database)
            finally:
                spark.stop()
    finally:
        server.destroy()


def compare_writers(options: dict, args: argparse.Namespace) -> None:
    spark = spark_session("sqlqueue-bench-source", args.master)
    try:
        # Warm up Spark's Python workers and the JVM so the first measured query does not pay for them.
        for sink in args.sinks:
            connector_rate(spark, options, f"warmup_{sink}", 30_000, 10_000, args.partitions, sink)
        print(f"Delta writers: PostgreSQL, {args.rows} rows, {args.partitions} read partitions, Spark on {args.master}")
        for batch in args.batches:
            print(f" batches of {batch}:")
            rates = {
                sink: connector_rate(spark, options, f"src_{sink}_{batch}", args.rows, batch, args.partitions, sink)
                for sink in args.sinks
            }
            for sink in ("delta", "txn"):
                if sink in rates and "foreach" in rates:
                    print(f"  {SINKS[sink]} costs {rates['foreach'] / rates[sink]:.2f}x the job's writer per batch")
        print(f" read path, Arrow record batches vs Python tuples (noop sink, batches of {max(args.batches)}):")
        spark.dataSource.register(TupleSource)
        for fmt in ("sqlqueue", "sqlqueue_tuples"):
            connector_rate(spark, options, f"read_{fmt}", args.rows, max(args.batches), args.partitions, "noop", fmt)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
