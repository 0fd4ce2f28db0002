"""Latency: from a row's enqueue to the Delta commit that holds it becoming visible, under a steady
load, through the queue_to_delta job (its pipeline, started from its configuration as the job does).

    make bench        # or: .venv/bin/python benchmarks/bench_latency.py --rates 500 5000 --seconds 40
    .venv/bin/python benchmarks/bench_latency.py --engines postgres sqlite --rates 500 --seconds 60 --runs 3
    .venv/bin/python benchmarks/bench_latency.py --rates 500 --set source.prefetch=false

A producer thread offers each rate (rows/s) steadily: every 10 ms it enqueues the rows due so far
in one transaction (the queue core's bulk insert). Each row carries, in a domain column
``sent_at``, the wall-clock time just before that transaction began. The job runs with a
processing-time trigger (--trigger; "0 seconds": each micro-batch starts when the one before it
ends) and the source's defaults unless --set changes them.

Visible in Delta: a commit is visible once its log file ``_delta_log/<version>.json`` exists
(Delta writes it atomically; readers list the log). A thread of this script looks for the next
version's file every 10 ms and records when it first sees it: the time a reader polling the
table would first see the rows, at most 10 ms late. (The commitInfo timestamp would be earlier
than visibility: Delta takes it before writing the file.) A row's latency is that time minus its
``sent_at``; each commit's rows are read back from the parquet files its add actions name.
Counted: rows sent from --warm-up seconds after the query's 11th commit on (query start and the first
commits are the JVM's first pass through their code, seconds longer than the later ones). Delta's log
checkpoints (every 100th commit in a build_session session), are counted where they fall. Before any
counted run, the floor and then the job on each engine run uncounted until their tables are past a log
checkpoint: Spark compiles a checkpoint's code for each table schema, and a job that runs for hours has
compiled it for its own.

In the same run, the floor: the same writer (foreachBatch + append_once), trigger and session, fed by a
source that costs nothing (rows arriving in memory at the same rate, each carrying its arrival time),
measured the same way; and the ratio of the job's percentiles to the floor's. With --runs, the job and the
floor run that many times in turn, each run on a queue and tables of its own: a minute holds two or three
of Delta's log checkpoints, which make the tail, and where they fall moved single runs' p99 ratio from
0.87 to 1.26 and p95's from 0.57 to 1.31 (docs/evidence.md, "Latency"). Printed
then: each run's ratios, their median (min-max), and the percentiles of every run's rows together.
Printed per rate: latency p50/p95/p99/max, and the medians per micro-batch of its rows and of
the parts of Spark's progress report (latestOffset holds the claim, addBatch the Delta append).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

from common import ROOT, pg_options, ratio_spread, start_postgres
from plots import DOCS_IMG, latency_distribution

from sqlqueue.schema import Column
from tests.support.engines import Engine

DOMAIN = (Column("payload", "text"), Column("sent_at", "double"))
TICK_S = 0.01
PASSWORD_VARIABLE = "SQLQUEUE_BENCH_PASSWORD"
TARGETS = {500: (1000, 3000)}  # rows/s: issue 12's p50 and p99 targets, ms
# The first commits take longer than the rest (the JVM's first pass through their code): counting starts
# after this many.
WARM_UP = 11
# The warm-ups' load and trigger, whatever --rates and --trigger: about 100 commits reach a log checkpoint,
# and a warm-up only has to pass through Delta's code, as fast as it can.
WARM_UP_RATE, WARM_UP_TRIGGER = 500, "0 seconds"


def queue_to_delta():
    """jobs/queue_to_delta.py as a module (jobs/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("queue_to_delta", ROOT / "jobs" / "queue_to_delta.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Producer(threading.Thread):
    """Enqueues ``rate`` rows/s until stopped, each stamped with the time its transaction began."""

    def __init__(self, engine: Engine, table: str, rate: int) -> None:
        super().__init__(name=f"producer-{rate}", daemon=True)
        self.queue, self.rate = engine.queue(table), rate
        self.sent, self.stop = 0, threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        started = time.monotonic()
        try:
            while not self.stop.wait(TICK_S):
                due = int((time.monotonic() - started) * self.rate) - self.sent
                if due <= 0:
                    continue
                sent_at = time.time()
                with self.queue.transaction() as cur:
                    self.queue.producing.insert(cur, DOMAIN, [("latency benchmark row", sent_at)] * due)
                self.sent += due
        except BaseException as exc:  # reported by the main thread
            self.error = exc
        finally:
            self.queue.close()

    def finish(self) -> int:
        """Stops it and returns the rows it sent; raises what stopped it early, if anything did."""
        self.stop.set()
        self.join()
        if self.error:
            raise self.error
        return self.sent


def commit_file(log: Path, version: int) -> Path:
    """The file of a Delta table's commit ``version`` in its log folder ``log``."""
    return log / f"{version:020d}.json"


class LogWatcher(threading.Thread):
    """Records when each commit file of a Delta table first exists, and the rows it adds."""

    def __init__(self, table: Path) -> None:
        super().__init__(name="delta-log-watcher", daemon=True)
        self.log, self.stop = table / "_delta_log", threading.Event()
        self.seen: dict[int, float] = {}
        self.rows = 0

    def run(self) -> None:
        version = 0
        while not self.stop.wait(TICK_S):
            while commit_file(self.log, version).exists():
                self.seen[version] = time.time()
                self.rows += sum(json.loads(a["stats"])["numRecords"] for a in adds(self.log, version))
                version += 1


def adds(log: Path, version: int) -> list[dict]:
    actions = [json.loads(line) for line in commit_file(log, version).read_text().splitlines() if line]
    return [a["add"] for a in actions if "add" in a]


def latencies_ms(table: Path, seen: dict[int, float], after: float, before: float) -> list[float]:
    """Each row's visibility time minus its sent_at, for rows sent from ``after`` until ``before``: the
    floor's rows go on arriving until its query stops, the job's producer stops at ``before``."""
    import pyarrow.parquet as pq

    found = []
    for version, visible in seen.items():
        for add in adds(table / "_delta_log", version):
            sent = pq.read_table(table / unquote(add["path"]), columns=["sent_at"]).column(0).to_pylist()
            found += [(visible - s) * 1000 for s in sent if after <= s < before]
    return found


def wait_for(predicate, timeout_s: float, what: str, query) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if query.exception() is not None:
            raise RuntimeError(f"the query failed while waiting for {what}: {query.exception()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {timeout_s:.0f} s")
        time.sleep(0.05)


def configuration(engine: Engine, work: Path, table: str, trigger: str, args) -> list[str]:
    """The job's command line: a configuration file reaching the queue, and --set overrides."""
    lines = ["[connection]", *(f'{k} = "{v}"' for k, v in engine.options.items() if k != "password")]
    if "password" in engine.options:
        os.environ[PASSWORD_VARIABLE] = engine.options["password"]
        lines.append(f'passwordEnv = "{PASSWORD_VARIABLE}"')
    path = work / f"{engine.name}.toml"
    path.write_text("\n".join(lines) + "\n")
    settings = {
        "source.queue": table,
        "job.target": str(work / table / "delta"),
        "job.checkpointLocation": str(work / table / "checkpoint"),
        "job.trigger": f"processingTime:{trigger}",
    }
    return ["-c", str(path), *(f"--set={k}={v}" for k, v in settings.items()), *(f"--set={s}" for s in args.set)]


@contextlib.contextmanager
def running_job(spark, job, engine: Engine, work: Path, table: str, rate: int, trigger: str, args):
    """The job started on a new queue ``table`` that a producer feeds ``rate`` rows/s: yields the query, its
    Delta table and the producer, and stops all three on the way out."""
    from sqlqueue.spark.jobs import prepare

    queue = engine.queue(table)
    queue.create(DOMAIN)
    config = prepare(job.JOB, configuration(engine, work, table, trigger, args))
    producer = Producer(engine, table, rate)
    query = job.pipeline(config, spark)
    try:
        producer.start()
        yield query, Path(config.required("target")), producer
    finally:
        producer.stop.set()
        producer.join()
        query.stop()
        queue.close()


def run_rate(spark, job, engine: Engine, work: Path, rate: int, run: int, args) -> list[float]:
    """Runs the job under ``rate`` rows/s on a queue and Delta table of run ``run``'s own, prints its figures
    and returns each counted row's latency (ms)."""
    table = f"latency_{engine.name}_{rate}_{run}"
    with running_job(spark, job, engine, work, table, rate, args.trigger, args) as (query, target, producer):
        return observe(query, target, producer.finish, rate, args)


def floor_query(spark, folder: Path, rate: int, started: float, trigger: str):
    """The floor's query: rows arriving in memory at ``rate`` a second from ``started`` on, through the job's
    writer into a Delta table in ``folder``."""
    from spark_floor import ArrivalSource

    from sqlqueue.spark.delta import append_once

    spark.dataSource.register(ArrivalSource)
    reader = spark.readStream.format(ArrivalSource.name()).option("rate", rate).option("started", started)
    writer = reader.load().writeStream.option("checkpointLocation", str(folder / "checkpoint"))
    writer = writer.foreachBatch(append_once(str(folder / "delta"), str(folder / "checkpoint")))
    return writer.trigger(processingTime=trigger).start()


def run_floor(spark, work: Path, beside: str, rate: int, args) -> list[float]:
    """The same writer, trigger and session fed by a source that costs nothing (rows arriving in memory at
    ``rate`` a second): Spark's and Delta's own latency, the floor under the job's."""
    folder = work / f"floor_{beside}_{rate}"  # a table and checkpoint of its own beside each engine
    started = time.time()
    query = floor_query(spark, folder, rate, started, args.trigger)
    return observe(query, folder / "delta", lambda: int((time.time() - started) * rate), rate, args)


def past_a_checkpoint(target: Path) -> Callable[[], bool]:
    """Whether the Delta table at ``target`` has written a log checkpoint and two commits after it: the
    first commit after a checkpoint reads it back, a second pass through Delta's code."""
    log = target / "_delta_log"

    def passed() -> bool:
        try:
            version = json.loads((log / "_last_checkpoint").read_text())["version"]
        except (FileNotFoundError, ValueError):  # none yet, or caught mid-write
            return False
        return commit_file(log, version + 2).exists()

    return passed


def warm_up_jvm(spark, work: Path, args) -> None:
    """The floor's query, run and thrown away for --warm-jvm seconds and at least until its table is past
    Delta's first log checkpoint. A time alone did not reach it on a slow day (60 s, about 100
    commits of 0.57 s), and the job's counted minute then held the JVM's first checkpoint: 10.4 s against
    the floor's 3.5 s."""
    folder = work / "warm-up"
    query = floor_query(spark, folder, WARM_UP_RATE, time.time(), WARM_UP_TRIGGER)
    try:
        time.sleep(args.warm_jvm)
        wait_for(past_a_checkpoint(folder / "delta"), 600, "log checkpoint in the warm-up's table", query)
    finally:
        query.stop()


def warm_up_job(spark, job, engine: Engine, work: Path, args) -> None:
    """The job on a queue of its own, run and thrown away until its table is past a log checkpoint.
    Spark compiles a checkpoint's code for each table schema (its statistics are typed by the table's
    columns): the floor's warm-up compiled it for the floor's rows, and this for the job's, so that each
    counted minute holds a checkpoint of a schema the JVM has checkpointed before, as in a job that runs
    for hours."""
    table = f"warm_up_{engine.name}"
    with running_job(spark, job, engine, work, table, WARM_UP_RATE, WARM_UP_TRIGGER, args) as (query, target, producer):
        passed = past_a_checkpoint(target)
        wait_for(lambda: producer.error is not None or passed(), 600, "log checkpoint in the job's warm-up", query)
        producer.finish()  # raises what stopped the producer, if that ended the wait


def observe(query, target: Path, finish, rate: int, args) -> list[float]:
    """Watch ``query`` write ``target``: from --warm-up seconds after its first WARM_UP commits, for
    --seconds; then ``finish()`` (the rows sent by then) and wait until that many are visible. Prints the
    figures and returns each counted row's latency (ms)."""
    watcher = LogWatcher(target)
    try:
        watcher.start()
        wait_for(lambda: WARM_UP in watcher.seen, 300, f"{WARM_UP} commits", query)
        counted_from = time.time() + args.warm_up
        time.sleep(args.warm_up + args.seconds)
        counted_until = time.time()
        sent = finish()
        wait_for(lambda: watcher.rows >= sent, 120, f"all {sent} rows in Delta", query)
        with contextlib.suppress(TimeoutError):  # stopped within a batch, Spark logs the interruption
            wait_for(lambda: not query.status["isTriggerActive"], 10, "an idle moment", query)
    finally:
        watcher.stop.set()
        query.stop()
    watcher.join()
    samples = latencies_ms(target, watcher.seen, counted_from, counted_until)
    counted = (iso(counted_from), iso(counted_until))
    batches = [p for p in query.recentProgress if p["numInputRows"] and counted[0] <= p["timestamp"] < counted[1]]
    report(rate, samples, batches)
    return samples


PERCENTILES = (50, 95, 99)


def ratios(ours: list[float], floor: list[float]) -> dict[int, float]:
    """The job's percentiles over the floor's."""
    a = statistics.quantiles(ours, n=100, method="inclusive")
    b = statistics.quantiles(floor, n=100, method="inclusive")
    return {p: a[p - 1] / b[p - 1] for p in PERCENTILES}


def iso(epoch: float) -> str:
    """An epoch time as Spark's progress timestamps spell it (UTC, milliseconds, Z)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1000):03d}Z"


def report(rate: int, samples: list[float], batches: list[dict]) -> None:
    q = statistics.quantiles(samples, n=100, method="inclusive")
    line = f"    {rate:>6} rows/s: {len(samples):>7} rows, latency p50 {q[49]:>6.0f} ms, p95 {q[94]:>6.0f} ms, "
    line += f"p99 {q[98]:>6.0f} ms, max {max(samples):>6.0f} ms"
    if rate in TARGETS:
        p50, p99 = TARGETS[rate]
        met = q[49] <= p50 and q[98] <= p99
        line += f"  (target p50 <= {p50} ms, p99 <= {p99} ms: {'met' if met else 'missed'})"
    print(line)
    if not batches:  # rows of several runs together
        return
    parts = ("latestOffset", "getBatch", "queryPlanning", "walCommit", "addBatch", "commitOffsets", "triggerExecution")
    medians = {k: statistics.median(p["durationMs"].get(k, 0) for p in batches) for k in parts}
    rows = statistics.median(p["numInputRows"] for p in batches)
    print(
        f"            {len(batches)} micro-batches of median {rows:.0f} rows; median ms per batch: "
        + ", ".join(f"{k} {v:.0f}" for k, v in medians.items()),
        flush=True,
    )
    # A tail is a few long micro-batches: which ones, and in which part of the batch.
    slowest = sorted(batches, key=lambda p: p["durationMs"].get("triggerExecution", 0), reverse=True)[:3]
    print(
        "            slowest: "
        + "; ".join(
            f"batch {p['batchId']} {p['durationMs'].get('triggerExecution', 0)} ms ("
            + ", ".join(f"{k} {p['durationMs'].get(k, 0)}" for k in ("latestOffset", "walCommit", "addBatch"))
            + ")"
            for p in slowest
        ),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", nargs="+", choices=["postgres", "sqlite"], default=["postgres", "sqlite"])
    parser.add_argument("--rates", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--seconds", type=float, default=40, help="load counted per rate")
    parser.add_argument("--warm-up", type=float, default=2, help="seconds after the 11th commit")
    parser.add_argument("--trigger", default="0 seconds", help="the processing-time trigger's interval")
    parser.add_argument(
        "--warm-jvm",
        type=float,
        default=60,
        help="seconds the floor runs uncounted first, and on until its table is past a log checkpoint; the job "
        "then runs uncounted on each engine until its table is (0: neither)",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="runs of the job and the floor, alternated, per rate: prints each run's ratios and their median",
    )
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="a job override")
    parser.add_argument(
        "--plots", default=str(DOCS_IMG), help="folder for the latency figure (latency.png); '' for none"
    )
    args = parser.parse_args()

    from sqlqueue.spark.session import build_session

    os.environ.setdefault("SQLQUEUE_LOG_LEVEL", "WARNING")  # not the source's line per micro-batch
    work = Path(tempfile.mkdtemp(prefix="sqlqueue-bench-latency-"))
    server = start_postgres() if "postgres" in args.engines else None
    # Progress reports of every micro-batch of a run, not only Spark's last 100.
    spark = build_session("sqlqueue-bench-latency", conf={"spark.sql.streaming.numRecentProgressUpdates": "1000"})
    job = queue_to_delta()
    try:
        print(
            f"latency benchmark: enqueue -> visible in Delta through queue_to_delta, trigger processingTime "
            f"{args.trigger!r}, {args.seconds:.0f} s counted per rate from {args.warm_up:.0f} s after the "
            f"11th commit, Spark local[{spark.sparkContext.defaultParallelism}]"
            + (f", {' '.join(args.set)}" if args.set else "")
        )
        samples: dict[str, list[float]] = {}
        if args.warm_jvm:  # the JVM's first minute (its compiler, Delta's first log checkpoint) in no run's figures
            print(
                f" warming the JVM up: the floor for {args.warm_jvm:.0f} s and past a log checkpoint, not counted",
                flush=True,
            )
            warm_up_jvm(spark, work, args)
        for name in args.engines:
            options = pg_options(server) if name == "postgres" else {"url": f"sqlite:///{work}/latency.db"}
            engine = Engine(name, options)
            print(f" {name}:")
            if args.warm_jvm:
                print("  warming the job up: until its table is past a log checkpoint, not counted", flush=True)
                warm_up_job(spark, job, engine, work, args)
            for rate in args.rates:
                taken: dict[int, list[float]] = {p: [] for p in PERCENTILES}
                ours_all = samples.setdefault(f"{name}, {rate:,} rows/s", [])
                floor_all = samples.setdefault(f"floor beside {name}, {rate:,} rows/s", [])
                for run in range(1, args.runs + 1):
                    print(f"  run {run}, sqlqueue (queue_to_delta):")
                    ours = run_rate(spark, job, engine, work, rate, run, args)
                    print(f"  run {run}, the floor (the same writer, trigger and session; rows from memory):")
                    floor = run_floor(spark, work, f"{name}_{run}", rate, args)
                    for p, r in ratios(ours, floor).items():
                        taken[p].append(r)
                    ours_all += ours
                    floor_all += floor
                    print("  sqlqueue / floor: " + ", ".join(f"p{p} {v[-1]:.2f}" for p, v in taken.items()), flush=True)
                if args.runs > 1:
                    print("  every run's rows together, sqlqueue then the floor (the figure draws these):")
                    report(rate, ours_all, [])
                    report(rate, floor_all, [])
                    print(
                        f"  sqlqueue / floor, median (min-max) of {args.runs} runs, each taken within its run: "
                        + ", ".join(f"p{p} {ratio_spread(v)}" for p, v in taken.items())
                        + " (target: within 1.15)",
                        flush=True,
                    )
            engine.close()
        if args.plots:
            latency_distribution(Path(args.plots) / "latency.png", samples)
    finally:
        spark.stop()
        if server:
            server.destroy()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
