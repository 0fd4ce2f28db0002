"""Draining one queue into Delta three ways, each as its own process, timed the same way: the job
(jobs/queue_to_delta.py, as a user runs it), the script a user would write instead (user_script.py), and
that script's client with no Delta write. A queue is sqlqueue's own layout, filled by COPY.

A rate is the steady state: the rows of the batches between the first and the last, over the time from
the first batch's commit to the last but one's (the Delta log's commit timestamps where there is a Delta
table); Drain.rate says why.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from common import ROOT
from spark_floor import PAYLOAD_BYTES, payload

from sqlqueue.connection import parse_connection
from sqlqueue.identifiers import TableName
from sqlqueue.queue import Queue
from sqlqueue.schema import Column

DOMAIN = (Column("payload", "text"), Column("customer", "bigint"))
JARS = ROOT / ".cache" / "jars"


def drop(conn: Any, table: str) -> None:
    """Drop a queue ``table`` of sqlqueue's layout on PostgreSQL, its side tables too (``conn``: autocommit)."""
    for name in (table, f"{table}_staging", f"{table}_unpublished", f"{table}_layout", f"{table}_claims"):
        conn.execute(f'DROP TABLE IF EXISTS "{name}" CASCADE')


def fill(options: dict, table: str, rows: int, size: int = PAYLOAD_BYTES, groups: int | None = None) -> None:
    """A fresh queue ``table`` of sqlqueue's layout with ``rows`` ready rows, loaded by COPY and analysed; row i's
    customer is i modulo 977, or with ``groups`` modulo that, and the table indexes customer as its message group."""
    import psycopg

    queue = Queue(parse_connection(options["url"], password=options["password"]), TableName(table))
    with psycopg.connect(options["url"], password=options["password"], autocommit=True) as conn:
        drop(conn, table)
        queue.create(DOMAIN, "fifo", None if groups is None else "customer")
        queue.close()
        with conn.cursor().copy(f'COPY "{table}" (payload, customer) FROM STDIN') as copy:
            for i in range(rows):
                copy.write_row((payload(i, size), i % (groups or 977)))
        conn.execute(f'VACUUM ANALYZE "{table}"')


# The fewest batches a drain's steady state is taken from (Drain.rate): the first, one measured, the last.
STEADY_BATCHES = 3
T = TypeVar("T")


def steady(batches: Sequence[T]) -> Sequence[T]:
    """The batches a steady state is taken from: those between the first and the last (Drain.rate says why)."""
    if len(batches) < STEADY_BATCHES:
        raise ValueError(
            f"{len(batches)} batch(es): a steady state needs at least {STEADY_BATCHES}; drain more rows "
            "or take smaller batches"
        )
    return batches[1:-1]


@dataclass
class Drain:
    """What one drain measured: (time, rows) per batch, and peak resident memory per process role."""

    batches: list[tuple[float, int]]
    peak_mb: dict[str, float] = field(default_factory=dict)
    cpu_s: dict[str, float] = field(default_factory=dict)  # CPU seconds of the whole drain, by role
    rss_by_batch: list[float] = field(default_factory=list)  # driver JVM + Python, sampled at each batch's end

    @property
    def rows(self) -> int:
        return sum(n for _, n in self.batches)

    @property
    def rate(self) -> float:
        """Steady-state rows/s: the batches between the first and the last, over the first commit to the last
        but one. The job claims each next batch while Spark writes one, so its first interval holds two
        claims and the JVM's start, and its last holds no claim at all: with two batches, the one measured
        would be a batch whose claim was never timed."""
        middle = steady(self.batches)
        return sum(n for _, n in middle) / (middle[-1][0] - self.batches[0][0])

    def after(self, rows: int) -> Drain:
        """The batches committed once ``rows`` rows had been: the warm share of a longer drain."""
        done, kept = 0, []
        for at, n in self.batches:
            if done >= rows:
                kept.append((at, n))
            done += n
        return Drain(kept, self.peak_mb, self.cpu_s)

    def intervals(self) -> list[float]:
        """Seconds from each batch's commit to the next's."""
        times = [t for t, _ in self.batches]
        return [b - a for a, b in zip(times, times[1:])]


def backlog_cost(drain: Drain, large_at: int = 1) -> tuple[float, float] | None:
    """Median seconds per micro-batch while the backlog was large (the four batches from index ``large_at``)
    and small (the last four), from the commit times; None with too few batches."""
    intervals = drain.intervals()
    if len(intervals) < large_at + 8:
        return None
    return statistics.median(intervals[large_at : large_at + 4]), statistics.median(intervals[-4:])


def delta_commits(path: Path) -> list[tuple[float, int]]:
    """(commit time in seconds, rows added) of each commit in a Delta table's log that added rows: Spark's and
    delta-rs's alike (the rows from each added file's statistics)."""
    commits = []
    for log in sorted((path / "_delta_log").glob("*.json")):
        at, rows = None, 0
        for line in log.read_text().splitlines():
            action = json.loads(line)
            if "commitInfo" in action:
                at = action["commitInfo"]["timestamp"] / 1000
            elif "add" in action:
                rows += json.loads(action["add"]["stats"])["numRecords"]
        if rows and at is not None:
            commits.append((at, rows))
    return commits


@dataclass(frozen=True)
class Process:
    """One process as /proc/<pid>/stat shows it."""

    parent: int
    name: str
    rss_mb: float
    cpu_s: float  # its own user and system time
    reaped_s: float  # the time of its ended children it waited for


def processes() -> dict[int, Process]:
    """Every process, read once from /proc (a process that ends while it is read is left out)."""
    tick, page_mb = os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE") / 2**20
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            name, fields = text.split("(", 1)[1].rsplit(")", 1)[0], text.rsplit(")", 1)[1].split()
            found[int(stat.parent.name)] = Process(
                int(fields[1]),
                name,
                int(fields[21]) * page_mb,
                (int(fields[11]) + int(fields[12])) / tick,
                (int(fields[13]) + int(fields[14])) / tick,
            )
        except (OSError, ValueError, IndexError):
            continue
    return found


def children_of(found: dict[int, Process]) -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for pid, process in found.items():
        children.setdefault(process.parent, []).append(pid)
    return children


def tree_cpu(root: int, found: dict[int, Process] | None = None, children: dict[int, list[int]] | None = None) -> float:
    """CPU seconds of the process tree under ``root`` (a database's postmaster): its processes' own, and
    those of the ended children they reaped."""
    found = processes() if found is None else found
    children = children_of(found) if children is None else children
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        if pid in found:
            total += found[pid].cpu_s + found[pid].reaped_s
        todo += children.get(pid, [])
    return total


class Sampler:
    """Peak resident memory and CPU time of a process tree by role, sampled from /proc every ``every``
    seconds: the driver's Python (the root), the JVM, and Spark's Python workers (Python under the JVM);
    and the CPU time of the database's processes (the tree under ``database``, its postmaster), which
    serve the drain. A process's CPU is its last sample's: a worker that ends loses at most ``every``."""

    def __init__(self, root: int, every: float = 0.25, database: int | None = None) -> None:
        self.root, self.every, self.database = root, every, database
        self.peak: dict[str, float] = {}
        self._cpu: dict[tuple[str, int], float] = {}  # (role, pid) -> CPU seconds at its last sample
        self._cpu_before = tree_cpu(database) if database else 0.0
        self.driver: list[tuple[float, float]] = []  # (time, JVM + driver Python MB)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            by_role = self.sample()
            for role, mb in by_role.items():
                self.peak[role] = max(self.peak.get(role, 0.0), mb)
            self.driver.append((time.time(), by_role.get("driver python", 0.0) + by_role.get("driver JVM", 0.0)))

    @property
    def cpu_s(self) -> dict[str, float]:
        """CPU seconds by role since the sampler started."""
        totals: dict[str, float] = {}
        for (role, _), seconds in self._cpu.items():
            totals[role] = totals.get(role, 0.0) + seconds
        if "database" in totals:
            totals["database"] -= self._cpu_before
        return totals

    def sample(self) -> dict[str, float]:
        found = processes()
        children = children_of(found)
        if self.database:
            self._cpu[("database", 0)] = tree_cpu(self.database, found, children)
        by_role: dict[str, float] = {}

        def walk(pid: int, under_jvm: bool) -> None:
            process = found.get(pid)
            name = process.name if process else ""
            role = "driver python" if pid == self.root else None
            if name == "java":
                role, under_jvm = "driver JVM", True
            elif under_jvm and name.startswith("python"):
                role = "python workers"
            if role and process:
                by_role[role] = by_role.get(role, 0.0) + process.rss_mb
                self._cpu[(role, pid)] = process.cpu_s
            for child in children.get(pid, []):
                walk(child, under_jvm)

        walk(self.root, False)
        return by_role

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        if self.database:  # the backends the drain used have ended by now: their CPU is the postmaster's
            self._cpu[("database", 0)] = tree_cpu(self.database)


def _env(options: dict | None = None) -> dict[str, str]:
    env = dict(os.environ)
    if options is not None:
        env.update({"SQLQUEUE_BENCH_PASSWORD": options["password"], "PGPASSWORD": options["password"]})
    env.setdefault("SQLQUEUE_JARS_DIR", str(JARS))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "connector"), env.get("PYTHONPATH")) if p)
    return env


def job(
    options: dict, table: str, batch: int, extra: dict[str, str] | None = None, database: int | None = None
) -> Drain:
    """jobs/queue_to_delta.py on ``table`` with Trigger.AvailableNow, maxRowsPerTrigger ``batch``."""
    work = Path(tempfile.mkdtemp(prefix="sqlqueue-bench-job-"))
    config = work / "job.toml"
    source = {"queue": table, "maxRowsPerTrigger": batch, **(extra or {})}
    config.write_text(
        "\n".join(
            [
                "[connection]",
                f'url = "{options["url"]}"',
                'passwordEnv = "SQLQUEUE_BENCH_PASSWORD"',
                "[spark]",
                '"spark.master" = "local[2]"',
                "[source]",
                *(f"{k} = {json.dumps(v)}" for k, v in source.items()),
                "[job]",
                f'checkpointLocation = "{work / "checkpoint"}"',
                f'target = "{work / "delta"}"',
                'trigger = "availableNow"',
            ]
        )
    )
    command = [sys.executable, str(ROOT / "jobs" / "queue_to_delta.py"), "-c", str(config)]
    process = subprocess.Popen(command, env=_env(options), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sampler = Sampler(process.pid, database=database)
    output, _ = process.communicate()
    sampler.stop()
    if process.returncode:
        raise RuntimeError(f"queue_to_delta failed ({process.returncode}):\n{output[-3000:]}")
    commits = delta_commits(work / "delta")
    return Drain(commits, sampler.peak, sampler.cpu_s, [_at(sampler.driver, t) for t, _ in commits])


def floor(batch: int, rows: int) -> Drain:
    """Spark's floor into Delta (spark_floor.drain): the job's rows served from memory by a Python source, in a
    fresh process and timed from the Delta log, as the job is."""
    target = Path(tempfile.mkdtemp(prefix="sqlqueue-bench-floor-")) / "delta"
    command = [sys.executable, str(Path(__file__).with_name("spark_floor.py")), str(batch), str(rows), str(target)]
    done = subprocess.run(command, env=_env(), capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"spark_floor.py failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return Drain(delta_commits(target))


def _at(samples: list[tuple[float, float]], moment: float) -> float:
    """The last sample taken at or before ``moment``."""
    before = [mb for t, mb in samples if t <= moment]
    return before[-1] if before else 0.0


def script(options: dict, table: str, batch: int, delta: bool = True, database: int | None = None) -> Drain:
    """user_script.py on ``table``: with a delta-rs append per batch, or (``delta`` False) the client alone."""
    work = Path(tempfile.mkdtemp(prefix="sqlqueue-bench-script-"))
    target = str(work / "delta") if delta else "-"
    user_script = str(Path(__file__).with_name("user_script.py"))
    command = [sys.executable, user_script, options["url"], table, str(batch), target]
    process = subprocess.Popen(command, env=_env(options), stdout=subprocess.PIPE, text=True)
    sampler = Sampler(process.pid, database=database)
    output, _ = process.communicate()
    sampler.stop()
    if process.returncode:
        raise RuntimeError(f"user_script.py failed ({process.returncode})")
    printed = [(float(t), int(n)) for t, n in (line.split() for line in output.splitlines())]
    return Drain(delta_commits(work / "delta") if delta else printed, sampler.peak, sampler.cpu_s)
