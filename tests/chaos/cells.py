"""One cell of the fault matrix: an engine, a pipeline and a table design, run for some rounds, each
round under one of the engine's faults.

A round produces a new set of keys into the pipeline's input, injects its fault once at a random moment
while they flow (after a random share of them arrived, and once the job's run has reached its database),
and waits until every key produced so far has arrived. A cell's rounds take its faults in a seeded order,
each once before any comes again. After the last round the cell waits for the input to drain and
sqlqueue's side tables to empty, stops the job and hands the outputs to the verifier.

Faults:
- kill: SIGKILL of the job (every process of it), restarted at once;
- outage: SIGKILL while the job holds claims, a claim made ahead among them where it makes ones, then
  down for longer than the lease (claims expire while held), restarted;
- restart: the database stopped as by a crash (PostgreSQL -m immediate) and started 3 s later;
- reset: every connection through the fault proxy reset by peer, for a second;
- stall: every connection through the fault proxy stalled (no byte gets through), closed after 4 s;
- worker: the table's own worker, working beside the stream the whole time, killed and restarted.

The groups pipeline is two queue_to_delta streams (the job and a rival, each into its Delta table) and the
table's own worker (tests/chaos/worker.py, grouped) competing on one queue of sqlqueue's own layout read by
message group (option groupBy), its keys spread over GROUPS groups. Its kill kills one of the two streams.
Its cells also count keys out of order: written to a Delta table after a larger key of their group (the
log's versions and each file's rows), or delivered, by any of the three, before a smaller key of their group
(the Delta commits' times, the worker's). Its lease is long (GROUP_LEASE_SECONDS): an outage longer than the
lease lets a rival take the rows of a batch in flight, the window the guarantee leaves (docs/guarantees.md),
so its cells inject no outage.
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.chaos import designs, jobs
from tests.chaos.databases import Database
from tests.chaos.designs import Table
from tests.chaos.verify import (
    Output,
    after_expiry,
    delivered_late,
    delta_commits,
    delta_sequence,
    leftovers,
    out_of_order,
    table_keys,
    tally,
)
from tests.support.crash import kill_session, wait_for_session_end

PIPELINES = ("queue-to-delta", "delta-to-queue", "queue-to-queue", "ack", "groups")
FAULTS = ("kill", "outage", "restart", "reset", "stall", "worker")
# Designs whose own worker the matrix runs: a worker killed on a started-at mark table leaves its row
# marked for good (that design has no lease to give it back), which no consumer can fix.
WORKED = ("relational", "claimer", "dequeue")
# Designs whose table supports per-row outcomes (the sink's ack operation): sqlqueue's own layout, and
# the relational queue, whose status has done, failed and retry values.
ACKED = ("native", "relational")
# Designs the groups pipeline reads by message group, and how many groups its keys fall in.
GROUPED = ("native",)
GROUPS = 499
GROUP_LEASE_SECONDS = 120
LEASE_SECONDS = 8
BATCH = 1000
ROUND_TIMEOUT_S = 600
FENCED = re.compile(r"(\d+) (?:rows of .*|acknowledgements of batch \d+ changed nothing.*)fenced out")


@dataclass(frozen=True)
class Cell:
    engine: str
    pipeline: str
    design: str
    faults: tuple[str, ...]  # what its rounds inject, in turn

    @property
    def name(self) -> str:
        return f"{self.engine}/{self.pipeline}/{self.design}"


def faults_for(engine: str, pipeline: str, design: str) -> tuple[str, ...]:
    """PostgreSQL's cells take every fault; SQLite's and Babelfish's the kill and the outage. A worker
    needs a design that has one, beside a source, a sink or the acknowledgements."""
    if pipeline == "groups":
        return ("kill", "restart", "reset", "stall", "worker") if engine == "postgres" else ("kill", "worker")
    if engine != "postgres":
        return ("kill", "outage")
    return tuple(f for f in FAULTS if f != "worker" or design in WORKED)


def matrix(engines: tuple[str, ...]) -> list[Cell]:
    """Every cell: each pipeline on sqlqueue's own layout and each adopted design, on each engine. The ack
    pipeline runs on the designs whose table supports per-row outcomes (ACKED)."""
    return [
        Cell(engine, pipeline, design, faults_for(engine, pipeline, design))
        for engine in engines
        for pipeline in PIPELINES
        for design in {"ack": ACKED, "groups": GROUPED}.get(pipeline, designs.DESIGNS)
    ]


@dataclass
class Result:
    cell: Cell
    rounds: int = 0
    keys: int = 0
    lost: int = 0
    duplicated: int = 0
    # Arrivals again of keys the table's own worker took from the stream's claim after its lease ran out,
    # which the run that held the claim delivered too: the window the guarantee leaves (docs/guarantees.md).
    expired: int = 0
    unexpected: int = 0
    disordered: int = 0  # keys written after a larger key of their message group (the groups pipeline)
    fenced: int = 0
    notes: list[str] = field(default_factory=list)  # what went wrong
    seen: list[str] = field(default_factory=list)  # what else the cell saw (the worker's share)

    @property
    def passed(self) -> bool:
        return not (self.lost or self.duplicated or self.unexpected or self.disordered or self.notes)


class Run:
    """The tables, job, worker and proxy of one cell."""

    def __init__(self, cell: Cell, db: Database, workdir: Path, rng: random.Random, proxy=None) -> None:
        self.cell, self.db, self.dir, self.rng, self.proxy = cell, db, workdir, rng, proxy
        stem = re.sub(r"\W", "_", f"cx_{cell.pipeline}_{cell.design}")[:40] + f"_{rng.randrange(10**6)}"
        queues = cell.pipeline in ("queue-to-delta", "queue-to-queue", "ack", "groups")
        self.source = Table(cell.design, f"{stem}_s") if queues else None
        target_design = "native" if cell.pipeline == "queue-to-queue" else cell.design
        self.target = (
            Table(target_design, f"{stem}_t") if cell.pipeline in ("delta-to-queue", "queue-to-queue") else None
        )
        self.input = workdir / "input"  # the Delta table delta-to-queue streams
        self.output = workdir / "delta"
        self.checkpoint = workdir / "checkpoint"
        self.produced: set[int] = set()
        self.worked = self._worked_table()
        self.job = jobs.JobProcess(cell.pipeline, workdir / "job.toml", workdir / "job.log", db, self.checkpoint)
        self.rival = (
            jobs.JobProcess(
                cell.pipeline, workdir / "rival.toml", workdir / "rival.log", db, workdir / "rival-checkpoint"
            )
            if cell.pipeline == "groups"
            else None
        )
        self.worker: subprocess.Popen[bytes] | None = None

    # ---- set-up --------------------------------------------------------------------------------
    def _worked_table(self) -> str | None:
        if "worker" not in self.cell.faults and self.cell.pipeline != "groups":
            return None
        worked_on = self.source if self.cell.pipeline != "delta-to-queue" else self.target
        return f"{worked_on.name}_worked" if worked_on else None

    def config(self, section: str, table: Table) -> dict[str, object]:
        values: dict[str, object] = {"queue": table.name}
        if table.profile is not None:
            values["profile"] = table.profile
            if self.db.name == "babelfish":  # no UPDATE through a CTE there: claims in no order
                values["profile.order"] = ""
        if section == "source":
            values |= {
                "consumer": "chaos",
                "maxRowsPerTrigger": BATCH,
                "leaseSeconds": LEASE_SECONDS,
                "emptyPollIntervalMs": 200,
            }
            if table.profile is None:
                values["order"] = "heap" if self.db.name == "babelfish" else "fifo"
            if self.cell.pipeline == "groups":
                values |= {"groupBy": "grp", "maxRowsPerGroup": 5, "numPartitions": 2, "completion": "keep"}
                values["leaseSeconds"] = GROUP_LEASE_SECONDS
            if self.cell.pipeline == "ack":
                values["completion"] = "ack"
                if table.acked_columns is not None:
                    values["columns"] = table.acked_columns
        return values

    def set_up(self) -> None:
        port = self.proxy.port if self.proxy is not None else None  # tests.support.toxiproxy.Proxy
        sections: dict[str, dict[str, object]] = {"connection": self.db.connection(port)}
        if self.source is not None:
            sections["source"] = self.config("source", self.source)
        if self.target is not None:
            sections["sink"] = self.config("sink", self.target)
        job = {"checkpointLocation": str(self.checkpoint), "trigger": "processingTime:1 second"}
        if self.cell.pipeline == "ack":
            assert self.source is not None
            sections["sink"] = self.config("sink", self.source)
        if self.cell.pipeline in ("queue-to-delta", "ack", "groups"):
            job["target"] = str(self.output)
        if self.cell.pipeline == "delta-to-queue":
            job["input"] = str(self.input)
        if self.cell.pipeline == "queue-to-queue":
            job["transform"] = "tests.chaos.transforms:payload_only"
        sections |= {"job": job, "spark": jobs.SPARK, "logging": {"level": "INFO", "sparkLevel": "WARN"}}
        (self.dir / "job.toml").write_text(jobs.toml(sections))
        if self.rival is not None:
            rival = {**sections, "source": {**sections["source"], "consumer": "chaos-rival"}}
            job = {**job, "checkpointLocation": str(self.dir / "rival-checkpoint"), "target": str(self.dir / "rival")}
            (self.dir / "rival.toml").write_text(jobs.toml(rival | {"job": job}))
        direct = {k: v for k, v in sections.items() if k in ("source", "sink")} | {"connection": self.db.connection()}
        (self.dir / "setup.toml").write_text(jobs.toml(direct))
        for table, role in ((self.source, "source"), (self.target, "sink")):
            if table is not None:
                self._make(table, role)
        if self.worked is not None:
            t = designs.types(self.db)
            self.db.run(
                f"CREATE TABLE {self.worked} (Payload {t.text} NULL, TakenAt {t.short} NULL, Expired {t.short} NULL)"
            )
            self.db.made.append(self.worked)
        if self.cell.pipeline == "delta-to-queue":
            self._append_input(range(0))  # the stream needs the table (its schema) to exist

    def _make(self, table: Table, role: str) -> None:
        flag = ["--sink"] if role == "sink" else []
        if table.design == "native":
            grouped = ("--columns", "payload text, grp string", "--group", "grp")
            self._cli("create", "--queue", table.name, *flag, *(grouped if self.cell.pipeline == "groups" else ()))
            self.db.made += [f"{table.name}_{s}" for s in ("unpublished", "staging", "layout")] + [table.name]
        else:
            self.db.run(*designs.ddl(self.db, table))
            self._cli("adopt", "--queue", table.name, "--apply", *flag)
            # Dropped in reverse: the status vocabulary after the table whose foreign key references it.
            self.db.made += [f"{table.name}_Status", table.name, f"{table.name}_Audit"]
            self.db.made += [f"{table.name}_sqlqueue_{s}" for s in ("claims", "staging")]

    def _cli(self, *args: str) -> None:
        env = {**os.environ, "PYTHONPATH": f"{jobs.ROOT / 'connector'}"}
        if self.db.password:
            env[jobs.PASSWORD_ENV] = self.db.password
        run = subprocess.run(
            [sys.executable, "-m", "sqlqueue.cli", *args[:1], "-c", str(self.dir / "setup.toml"), *args[1:]],
            capture_output=True,
            text=True,
            env=env,
        )
        if run.returncode != 0:
            raise RuntimeError(f"sqlqueue {' '.join(args)}: {run.stderr.strip() or run.stdout.strip()}")

    # ---- keys in, keys out ---------------------------------------------------------------------
    def produce(self, keys: range) -> None:
        if self.source is not None:
            designs.insert(self.db, self.source, keys, GROUPS if self.cell.pipeline == "groups" else None)
        else:
            self._append_input(keys)
        self.produced.update(keys)

    def _append_input(self, keys: range) -> None:
        """Rows for ``keys`` appended to the input Delta table with delta-rs, as another team's job would."""
        import datetime as dt

        import pyarrow as pa
        from deltalake import write_deltalake

        assert self.target is not None
        columns: dict[str, pa.Array] = {self.target.payload: pa.array([str(k) for k in keys], pa.string())}
        design = designs.REGISTRY.get(self.target.design)  # None: sqlqueue's own layout takes the payload alone
        if design is not None:
            now = dt.datetime.now().replace(microsecond=0)
            sample = design.row(0, "0", now, designs.EPOCH)  # the given columns' types, also with no key to append
            rows = [design.row(k, str(k), now, designs.EPOCH) for k in keys]
            for name in design.given:
                kind = pa.timestamp("us", tz="UTC") if isinstance(sample[name], dt.datetime) else pa.string()
                columns[name] = pa.array([row[name] for row in rows], kind)
        write_deltalake(str(self.input), pa.table(columns), mode="append")

    def output_of(self) -> Output:
        out = Output()
        if self.cell.pipeline in ("queue-to-delta", "groups"):
            out.delta.append((self.output, self.source.payload, None))  # type: ignore[union-attr]
        if self.rival is not None:
            out.delta.append((self.dir / "rival", "payload", None))
        if self.cell.pipeline == "ack":
            out.delta.append((self.output, "payload", ("outcome", "done")))
        if self.target is not None:
            at = "enqueued_at" if self.target.design == "native" else None  # a queue-to-queue target's
            out.tables.append((self.target.name, self.target.payload, at))
        # What the table's own worker completed arrived too, except where it works on the output table
        # and keeps the rows it completes there (counted once, as rows of the table).
        design = designs.REGISTRY.get(self.cell.design)  # None: sqlqueue's own layout, which has no worker
        keeps = self.cell.pipeline == "delta-to-queue" and (design is None or design.keeps_done)
        if not keeps:
            out.worked = self.worked
        return out

    def side_tables(self) -> list[str]:
        tables = []
        for table in (self.source, self.target):
            if table is None:
                continue
            if table.design == "native":
                tables += [f"{table.name}_unpublished", f"{table.name}_staging"]
            else:
                tables += [f"{table.name}_sqlqueue_claims", f"{table.name}_sqlqueue_staging"]
        return tables

    # ---- the table's own worker ----------------------------------------------------------------
    def start_worker(self) -> None:
        worked_on = self.source if self.cell.pipeline != "delta-to-queue" else self.target
        assert worked_on is not None
        spec = {"name": self.db.name, "host": self.db.host, "port": self.db.port, "password": self.db.password}
        if self.db.path is not None:
            spec["path"] = str(self.db.path)
        design = "grouped" if self.cell.pipeline == "groups" else worked_on.design
        with open(self.dir / "worker.log", "ab") as log:
            self.worker = subprocess.Popen(
                [sys.executable, "-m", "tests.chaos.worker", json.dumps(spec), design, worked_on.name,
                 str(LEASE_SECONDS), str(self.dir / "stop-worker")],
                stdout=log, stderr=subprocess.STDOUT, cwd=jobs.ROOT, start_new_session=True,
                env={**os.environ, "PYTHONPATH": f"{jobs.ROOT}:{jobs.ROOT / 'connector'}"},
            )  # fmt: skip

    def kill_worker(self) -> None:
        if self.worker is not None:
            kill_session(self.worker.pid)
            self.worker.wait()
            wait_for_session_end(self.worker.pid)
            self.worker = None

    # ---- faults --------------------------------------------------------------------------------
    def held_claims(self) -> int:
        """How many claims the stream holds now (distinct claim numbers with rows held)."""
        if self.source is None:
            return 0
        if self.source.design == "native":
            sql = f"SELECT COUNT(DISTINCT claim_seq) FROM {self.source.name} WHERE state = 'claimed'"
        else:
            sql = f"SELECT COUNT(DISTINCT sqlqueue_claim_seq) FROM {self.source.name}_sqlqueue_claims"
        return self.db.query(sql)[0][0]

    def inject(self, fault: str) -> str:
        if fault == "kill":
            killed = self.job if self.rival is None or self.rng.random() < 0.5 else self.rival
            killed.kill()
            killed.start()
            return "the rival" if killed is self.rival else ""
        elif fault == "outage":
            # Kill while a claim made ahead is held beside the batch in flight (two claims held), when the
            # stream holds claims at all and one comes within half a minute.
            soon = time.monotonic() + 30
            while self.source is not None and self.held_claims() < 2 and time.monotonic() < soon:
                self.job.check()
                time.sleep(0.05)
            held = self.held_claims()
            self.job.kill()
            time.sleep(LEASE_SECONDS * 1.5)
            self.job.start()
            return f"held {held}"
        elif fault == "restart":
            self.db.restart(3)
        elif fault in ("reset", "stall"):
            # reset: every connection reset for a second; stall: no byte gets through, and the proxy closes
            # the connection after 4 s, as a network that drops a connection does (one stalled for good,
            # never closed, waits on: no client timeout is set; docs/guarantees.md)
            self.proxy.reset_peer() if fault == "reset" else self.proxy.stall(4000)
            time.sleep(1 if fault == "reset" else 5)
            self.proxy.clear()
        elif fault == "worker":
            self.kill_worker()
            time.sleep(self.rng.uniform(0, 2))
            self.start_worker()
        return ""

    def disordered(self) -> int:
        """Keys out of order: in each stream's Delta table, and across the three consumers by when each key was
        delivered (verify.delivered_late)."""
        group_of = functools.partial(designs.group_of, groups=GROUPS)
        late, deliveries = 0, {}
        for path in (self.output, self.dir / "rival"):
            commits = delta_commits(path, "payload") if (path / "_delta_log").exists() else []
            late += out_of_order([k for _, keys in commits for k in keys], group_of)
            deliveries |= {k: when for when, keys in commits for k in keys}
        if self.worked is not None:
            deliveries |= {int(k): float(t) for k, t in self.db.query(f"SELECT Payload, TakenAt FROM {self.worked}")}
        return late + delivered_late(deliveries, group_of)

    # ---- the run ---------------------------------------------------------------------------------
    def arrived(self, out: Output) -> int:
        return len(set(out.arrivals(self.db)) & self.produced)

    def wait_for(self, condition, deadline: float, what: str) -> None:
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(what)
            self.job.check()
            if self.rival is not None:
                self.rival.check()
            time.sleep(0.5)

    def play(self, rounds: int, keys: int) -> Result:
        result = Result(self.cell)
        injected: dict[str, int] = {}
        out = self.output_of()
        self.set_up()
        self.job.start()
        if self.rival is not None:
            self.rival.start()
        if self.worked is not None:
            self.start_worker()
        try:
            order = self.rng.sample(self.cell.faults, len(self.cell.faults))
            for r in range(rounds):
                fault = order[r % len(order)]
                began = time.monotonic()
                deadline = began + ROUND_TIMEOUT_S
                some = self.arrived(out) + self.rng.uniform(0.1, 0.7) * keys
                self.produce(range(r * keys, (r + 1) * keys))
                self.wait_for(lambda: self.arrived(out) >= some, deadline, f"round {r}: no progress")  # noqa: B023
                self.wait_for(self.job.settled, deadline, f"round {r}: the job never started")
                note = self.inject(fault)
                injected[fault] = injected.get(fault, 0) + 1
                self.wait_for(lambda: self.arrived(out) >= len(self.produced), deadline, f"round {r}: keys missing")
                took = time.monotonic() - began
                print(f"  {self.cell.name} round {r + 1}/{rounds}: {fault} in {took:.0f} s {note}".rstrip(), flush=True)
                result.rounds += 1
            self.wait_for(
                lambda: not leftovers(self.db, self.source, self.side_tables()),
                time.monotonic() + ROUND_TIMEOUT_S,
                "the input did not drain",
            )
        except TimeoutError as exc:
            result.notes.append(str(exc))
        finally:
            self.job.kill()
            if self.rival is not None:
                self.rival.kill()
            if self.worker is not None:
                (self.dir / "stop-worker").touch()
                self.kill_worker()
        arrivals = out.arrivals(self.db)
        counts = tally(self.produced, arrivals)
        taken = out.taken_after_expiry(self.db)  # only a cell with the table's worker has any
        result.expired = after_expiry(arrivals, out.delivered(self.db) if taken else {}, taken, self.job.starts)
        result.keys, result.lost = len(self.produced), counts.lost
        result.duplicated, result.unexpected = counts.duplicated - result.expired, counts.unexpected
        if self.cell.pipeline == "groups":
            result.disordered = self.disordered()
        left = leftovers(self.db, self.source, self.side_tables())
        if left:
            result.notes.append(f"left: {left}")
        if self.job.deaths:
            result.notes.append(f"job died {len(self.job.deaths)}x (exit {self.job.deaths})")
        result.seen.append(", ".join(f"{f} {n}" for f, n in injected.items()))
        if self.worked is not None:
            result.seen.append(f"worker took {sum(table_keys(self.db, self.worked, 'Payload').values())}")
        if self.rival is not None:
            result.seen.append(f"rival took {len(delta_sequence(self.dir / 'rival', 'payload'))}")
        log = (self.dir / "job.log").read_text(errors="replace") if (self.dir / "job.log").exists() else ""
        result.fenced = sum(int(m.group(1)) for m in FENCED.finditer(log))
        if result.expired > result.fenced:  # the stream must have seen each of them fenced out of its completion
            result.notes.append(f"{result.expired} taken again after expiry, {result.fenced} logged fenced out")
        return result
