"""Message groups' cost: the grouped claim against the ungrouped one on the same table, through the queue
core (no Spark), with 1,000,000 ready rows in 10,000 groups.

    .venv/bin/python benchmarks/bench_groups.py                      # PostgreSQL and SQLite
    .venv/bin/python benchmarks/bench_groups.py --engines postgres --rows 1000000 --groups 10000

For each engine: one queue table made with `--group account` (sqlqueue's DDL: the group index too),
filled in SQL with --rows ready rows whose account cycles through --groups values. Then --steps steps
that each claim --batch rows grouped (option groupBy: at most --per-group rows of a group) and --batch
rows ungrouped (the heap claim, the fastest sqlqueue has), in turn, each followed by its completion and
by as many new ready rows put back in SQL, so every claim sees the same backlog. Printed: the median ms
of each claim and of its completion over the steps after --warm-up, the smallest and largest, and the
ratio grouped / heap taken step by step (issue 39's target: at most 1.5).

Then (--job ROWS BATCH, PostgreSQL) the whole job: jobs/queue_to_delta.py draining ROWS rows in --groups
groups in BATCH-row micro-batches into Delta, with groupBy and without, in turn, --runs times each, each in a
fresh process on a freshly filled table. Printed: steady rows/s of each (medians, smallest-largest) and the
ratio grouped / ungrouped taken run by run (issue 39's target: at least 0.8).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from typing import Any

import drains
from bench_backlog import raw_connection
from common import pg_options, start_postgres

from sqlqueue.groups import PER_GROUP, Grouping
from sqlqueue.schema import Column
from tests.support.engines import Engine

CONSUMER = "groups-bench"
DOMAIN = (Column("account", "string"), Column("payload", "text"))
# Ready rows ids lo..hi into the table in SQL; row g's account is g modulo the number of groups.
FILL = {
    "postgres": "INSERT INTO {t} (account, payload) SELECT 'acct-' || mod(g, %s), 'order ' || g "
    "FROM generate_series(%s::bigint, %s::bigint) AS g",
    "sqlite": "INSERT INTO {t} (account, payload) WITH RECURSIVE g(x) AS (SELECT ? UNION ALL "
    "SELECT x + 1 FROM g WHERE x < ?) SELECT 'acct-' || (x % ?), 'order ' || x FROM g",
}


def fill(conn: Any, engine: Engine, table: str, groups: int, lo: int, hi: int) -> None:
    values = (groups, lo, hi) if engine.name == "postgres" else (lo, hi, groups)
    conn.execute(FILL[engine.name].format(t=table), values)


def spread(samples: list[float]) -> str:
    return f"{statistics.median(samples):8.1f} ({min(samples):.1f}-{max(samples):.1f})"


def measure(engine: Engine, args: argparse.Namespace) -> dict[str, list[float]]:
    queue = engine.queue("groups_bench")
    conn = raw_connection(engine)
    table = queue.engine.table(queue.table)
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    queue.create(DOMAIN, "fifo", "account")
    fill(conn, engine, table, args.groups, 1, args.rows)
    conn.execute(f"VACUUM ANALYZE {table}" if engine.name == "postgres" else "ANALYZE")
    top, times = args.rows, {"grouped": [], "heap": [], "grouped complete": [], "heap complete": []}
    grouping = Grouping("account", args.per_group)
    for seq in range(1, args.warm_up + args.steps + 1):
        for kind in ("grouped", "heap"):
            started = time.perf_counter()
            claimed = queue.consuming.claim(
                CONSUMER, seq, args.batch, order="heap", groups=grouping if kind == "grouped" else None
            )
            claimed_at = time.perf_counter()
            queue.consuming.complete(CONSUMER, seq)
            done_at = time.perf_counter()
            assert claimed == args.batch, (kind, claimed)
            fill(conn, engine, table, args.groups, top + 1, top + claimed)
            top += claimed
            if seq > args.warm_up:
                times[kind].append((claimed_at - started) * 1000)
                times[f"{kind} complete"].append((done_at - claimed_at) * 1000)
    conn.execute(f"DROP TABLE {table}")
    conn.close()
    queue.close()
    return times


def whole_job(options: dict, rows: int, batch: int, groups: int, runs: int) -> None:
    print(
        f" the job: queue_to_delta draining {rows:,} rows in {groups:,} groups in batches of {batch:,} (PostgreSQL), "
        f"with groupBy and without, {runs} run(s) each"
    )
    rates: dict[str, list[float]] = {"grouped": [], "ungrouped": []}
    for run in range(1, runs + 1):
        for kind in ("ungrouped", "grouped"):
            drains.fill(options, "groups_job", rows, groups=groups)
            extra = {"groupBy": "customer"} if kind == "grouped" else {}
            drain = drains.job(options, "groups_job", batch, extra)
            assert drain.rows == rows, (kind, drain.rows)
            rates[kind].append(drain.rate)
            print(f"  run {run} {kind:<10} {drain.rate:>10,.0f} rows/s", flush=True)
    ratios = [g / u for g, u in zip(rates["grouped"], rates["ungrouped"])]
    for kind, samples in rates.items():
        print(f"  {kind:<18}{statistics.median(samples):>10,.0f} ({min(samples):,.0f}-{max(samples):,.0f}) rows/s")
    print(f"  grouped / ungrouped {spread(ratios)}; target >= 0.8", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", nargs="+", choices=["postgres", "sqlite"], default=["postgres", "sqlite"])
    parser.add_argument("--rows", type=int, default=1_000_000, help="ready rows held in the queue")
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=10_000, help="rows each claim takes")
    parser.add_argument("--per-group", type=int, default=PER_GROUP, help="option maxRowsPerGroup")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warm-up", type=int, default=2)
    parser.add_argument(
        "--job", type=int, nargs=2, default=[1_000_000, 50_000], metavar=("ROWS", "BATCH"),
        help="the whole job on PostgreSQL, grouped and not; 0 0 skips",
    )  # fmt: skip
    parser.add_argument("--runs", type=int, default=3, help="runs of each job")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="sqlqueue-bench-groups-")
    server = start_postgres() if "postgres" in args.engines else None
    try:
        print(
            f"groups benchmark: claims of {args.batch:,} rows with {args.rows:,} ready in {args.groups:,} groups "
            f"(at most {args.per_group} a group), grouped against heap on the same table; median ms of "
            f"{args.steps} steps (smallest-largest)"
        )
        for name in args.engines:
            options = pg_options(server) if server and name == "postgres" else {"url": f"sqlite:///{work}/groups.db"}
            engine = Engine(name, options)
            times = measure(engine, args)
            ratios = [g / h for g, h in zip(times["grouped"], times["heap"])]
            print(f" {name}:")
            for kind, samples in times.items():
                print(f"  {kind:<18}{spread(samples)} ms")
            print(f"  grouped / heap    {spread(ratios)}; target <= 1.5", flush=True)
            engine.close()
        rows, batch = args.job
        if server is not None and rows:
            whole_job(pg_options(server), rows, batch, args.groups, args.runs)
    finally:
        if server:
            server.destroy()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
