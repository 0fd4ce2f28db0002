"""What the queue-wait figures cost a micro-batch on PostgreSQL (issue 14 item 2), through the queue core.

    make bench        # or: .venv/bin/python benchmarks/bench_wait.py [--batch 50000] [--steps 9]
    PGOPTIONS="-c jit=off" .venv/bin/python benchmarks/bench_wait.py    # without PostgreSQL's JIT

Each step claims --batch rows from a queue held at --backlog ready rows (filled in SQL with
enqueue times spread over the last minute; completed rows are deleted and as many put back,
untimed), twice, in turns that alternate:
- before: what the source ran per batch until the figures came: the claim returning ids only
  (the statement as it was) and the backlog count (``Queue.count_ready``);
- after: the claim returning each row's wait with its id, ranked in Python (``Queue.claim`` with
  ``waits``, ``Waits.of``), and the backlog count with the oldest row's age (``Queue.backlog``).
On the rows of each "after" claim it also times the ways to rank waits of rows already claimed
(what a batch found tagged after a crash needs): the dialect's statement (``Queue.claim_waits``),
PostgreSQL's percentile_disc, and fetching the waits to rank them in Python; all must agree with
what the claim returned. Last, count_ready against backlog at --large ready rows. Printed: medians
in ms after --warm-up steps. The machine's load makes single figures noisy: compare the medians.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import psycopg
from common import pg_options, start_postgres

from sqlqueue.dialects.postgres import PostgresDialect
from sqlqueue.waits import Waits
from tests.support.engines import Engine

CONSUMER = "wait-bench"
FILL = (
    "INSERT INTO {t} (payload, enqueued_at) SELECT 'order ' || g, now() - random() * interval '60 seconds' "
    "FROM generate_series(1, %s) AS g"
)
WAIT_MS = "CAST(date_part('epoch', claimed_at - enqueued_at) * 1000 AS bigint)"
CLAIMED = "state = 'claimed' AND consumer = %s AND claim_seq = %s"


class IdsOnly(PostgresDialect):
    """The claim as it was before the figures: it returned the ids alone."""

    def claim_returns(self, row: str = "") -> str:
        return f"{row}{self.quote('id')}"


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = work()
    return (time.perf_counter() - started) * 1000, result


def percentile_disc(conn: Any, table: str, seq: int) -> Waits:
    return Waits.from_row(
        conn.execute(
            f"SELECT COUNT(*), percentile_disc(0.5) WITHIN GROUP (ORDER BY {WAIT_MS}), "
            f"percentile_disc(0.95) WITHIN GROUP (ORDER BY {WAIT_MS}), MAX({WAIT_MS}) FROM {table} WHERE {CLAIMED}",
            (CONSUMER, seq),
        ).fetchone()
    )


def in_python(conn: Any, table: str, seq: int) -> Waits:
    return Waits.of([r[0] for r in conn.execute(f"SELECT {WAIT_MS} FROM {table} WHERE {CLAIMED}", (CONSUMER, seq))])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=50_000, help="rows per claim (default 50000)")
    parser.add_argument("--backlog", type=int, default=100_000, help="ready rows held in the queue (default 100000)")
    parser.add_argument("--large", type=int, default=1_000_000, help="ready rows for the backlog-only part; 0 skips")
    parser.add_argument("--steps", type=int, default=9)
    parser.add_argument("--warm-up", type=int, default=1)
    args = parser.parse_args()

    server = start_postgres()
    try:
        engine = Engine("postgres", pg_options(server))
        after = engine.new_queue()
        before = engine.queue(str(after.table))
        before.dialect = IdsOnly()
        conn = psycopg.connect(server.url, password=pg_options(server)["password"], autocommit=True)
        (jit,) = conn.execute("SHOW jit").fetchone()
        table = after.dialect.table(after.table)
        conn.execute(FILL.format(t=table), (args.backlog,))
        conn.execute(f"VACUUM ANALYZE {table}")
        times: dict[str, list[float]] = {}
        seq = 0

        def claim_before(s: int) -> dict[str, float]:
            claim_ms, claimed = timed(lambda: before.claim(CONSUMER, s, args.batch))
            count_ms, _ = timed(before.count_ready)
            assert claimed == args.batch, claimed
            return {"claim before": claim_ms, "count_ready": count_ms, "per batch before": claim_ms + count_ms}

        def claim_after(s: int) -> dict[str, float]:
            waits: list[int] = []
            claim_ms, claimed = timed(lambda: (after.claim(CONSUMER, s, args.batch, waits=waits), Waits.of(waits)))
            backlog_ms, _ = timed(after.backlog)
            assert claimed[0] == args.batch, claimed
            statement_ms, ranked = timed(lambda: after.claim_waits(CONSUMER, s))
            disc_ms, disc = timed(lambda: percentile_disc(conn, table, s))
            python_ms, fetched = timed(lambda: in_python(conn, table, s))
            assert claimed[1] == ranked == disc == fetched, (claimed[1], ranked, disc, fetched)
            return {
                "claim after": claim_ms,
                "backlog": backlog_ms,
                "per batch after": claim_ms + backlog_ms,
                "claim_waits": statement_ms,
                "percentile_disc": disc_ms,
                "python": python_ms,
            }

        for step in range(args.warm_up + args.steps):
            turns = (claim_before, claim_after) if step % 2 == 0 else (claim_after, claim_before)
            for turn in turns:
                seq += 1
                figures = turn(seq)
                if step >= args.warm_up:
                    for name, ms in figures.items():
                        times.setdefault(name, []).append(ms)
                after.complete(CONSUMER, seq)
                conn.execute(FILL.format(t=table), (args.batch,))

        m = {name: statistics.median(ms) for name, ms in times.items()}
        print(
            f"queue wait on PostgreSQL (jit {jit}): claims of {args.batch:,} rows, {args.backlog:,} ready rows "
            f"held; median ms of {args.steps} steps"
        )
        print(f"  claim returning ids / ids and waits, ranked   {m['claim before']:8.1f} / {m['claim after']:.1f}")
        print(f"  count_ready / backlog (count and oldest age)  {m['count_ready']:8.1f} / {m['backlog']:.1f}")
        change = m["per batch after"] / m["per batch before"] - 1
        print(
            f"  per batch, before / after                     {m['per batch before']:8.1f} / "
            f"{m['per batch after']:.1f} ({change:+.0%})"
        )
        print(
            f"  ranking claimed rows again: claim_waits {m['claim_waits']:.1f}, percentile_disc "
            f"{m['percentile_disc']:.1f}, fetched and ranked in Python {m['python']:.1f}"
        )
        if args.large:
            after.complete(CONSUMER, seq)
            conn.execute(FILL.format(t=table), (args.large - after.count_ready(),))
            conn.execute(f"VACUUM ANALYZE {table}")
            large: dict[str, list[float]] = {"count_ready": [], "backlog": []}
            for step in range(args.warm_up + args.steps):
                for name, work in (("count_ready", after.count_ready), ("backlog", after.backlog)):
                    ms, _ = timed(work)
                    if step >= args.warm_up:
                        large[name].append(ms)
            count, backlog = (statistics.median(large[n]) for n in ("count_ready", "backlog"))
            print(f"  at {args.large:,} ready rows: count_ready / backlog {count:8.1f} / {backlog:.1f}")
        conn.close()
        engine.close()
    finally:
        server.destroy()


if __name__ == "__main__":
    main()
