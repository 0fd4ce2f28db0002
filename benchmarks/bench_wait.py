"""What the queue-wait figures cost a micro-batch on PostgreSQL (issue 14 item 2), through the queue core.

    make bench        # or: .venv/bin/python benchmarks/bench_wait.py [--batch 50000] [--steps 9]
    PGOPTIONS="-c jit=off" .venv/bin/python benchmarks/bench_wait.py    # without PostgreSQL's JIT

Each step claims --batch rows from a queue held at --backlog ready rows (filled in SQL with
enqueue times spread over the last minute; completed rows are deleted and as many put back,
untimed), twice, in turns that alternate:
- before: what the source ran per batch before the figures: the claim (``Consuming.claim``, whose
  statement they leave as it was) and the backlog count (``Inspection.count_ready``);
- after: the claim, the backlog count with the oldest row's age (``Inspection.backlog``) and the claim's
  wait percentiles (``Inspection.claim_waits``; a claim made ahead runs it in the prefetch thread).
On the rows of each "after" claim it also times the other ways to rank them: the ROW_NUMBER and
COUNT(*) OVER () statement the other engines run, and fetching each wait to rank them in Python;
all must agree. The claim statement returns each row's wait with its id, and a third turn per step
(returned) is what the consumer does now: the claim, then its waits ranked in Python (Waits.ranked),
with no claim_waits statement. Last, count_ready against backlog at --large ready rows. Printed:
medians in ms after --warm-up steps; the machine's load makes single figures noisy.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import psycopg
from common import pg_options, start_postgres

from sqlqueue.dialects import dialect_for
from sqlqueue.dialects.statements.claims import Claims
from sqlqueue.waits import Waits
from tests.support.engines import Engine

CONSUMER = "wait-bench"
FILL = (
    "INSERT INTO {t} (payload, enqueued_at) SELECT 'order ' || g, now() - random() * interval '60 seconds' "
    "FROM generate_series(1, %s) AS g"
)
CLAIMED = "state = 'claimed' AND consumer = %s AND claim_seq = %s"


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = work()
    return (time.perf_counter() - started) * 1000, result


def row_number(conn: Any, wait: str, table: str, seq: int) -> Waits:
    """The ranking the other engines run (ROW_NUMBER and COUNT(*) OVER ()), on PostgreSQL."""
    waits = f"SELECT {wait} AS wait_ms FROM {table} WHERE {CLAIMED}"
    ranked = Claims.rank_waits(dialect_for("postgres").claims, waits)
    return Waits.from_row(conn.execute(ranked, (CONSUMER, seq)).fetchone())


def in_python(conn: Any, wait: str, table: str, seq: int) -> Waits:
    return Waits.ranked([r[0] for r in conn.execute(f"SELECT {wait} FROM {table} WHERE {CLAIMED}", (CONSUMER, seq))])


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
        queue = engine.new_queue()
        conn = psycopg.connect(server.url, password=pg_options(server)["password"], autocommit=True)
        (jit,) = queue.conn.execute("SHOW jit").fetchone()  # sqlqueue's own session's
        table = queue.engine.table(queue.table)
        wait = queue.engine.millis_between(queue.engine.quote("enqueued_at"), queue.engine.quote("claimed_at"))
        conn.execute(FILL.format(t=table), (args.backlog,))
        conn.execute(f"VACUUM ANALYZE {table}")

        def before(s: int) -> dict[str, float]:
            claim_ms, claimed = timed(lambda: queue.consuming.claim(CONSUMER, s, args.batch))
            count_ms, _ = timed(queue.inspection.count_ready)
            assert claimed == args.batch, claimed
            return {"claim": claim_ms, "count_ready": count_ms, "before": claim_ms + count_ms}

        def after(s: int) -> dict[str, float]:
            claim_ms, claimed = timed(lambda: queue.consuming.claim(CONSUMER, s, args.batch))
            backlog_ms, _ = timed(queue.inspection.backlog)
            waits_ms, waits = timed(lambda: queue.inspection.claim_waits(CONSUMER, s))
            rank_ms, ranked = timed(lambda: row_number(conn, wait, table, s))
            python_ms, fetched = timed(lambda: in_python(conn, wait, table, s))
            assert claimed == args.batch and waits == ranked == fetched, (claimed, waits, ranked, fetched)
            return {
                "claim": claim_ms,
                "backlog": backlog_ms,
                "claim_waits": waits_ms,
                "after": claim_ms + backlog_ms + waits_ms,
                "row_number": rank_ms,
                "python": python_ms,
            }

        def returned(s: int) -> dict[str, float]:
            waited: list[int] = []
            claim_ms, claimed = timed(lambda: queue.consuming.claim(CONSUMER, s, args.batch, taken=[], waited=waited))
            backlog_ms, _ = timed(queue.inspection.backlog)
            rank_ms, waits = timed(lambda: Waits.ranked(waited))
            assert claimed == args.batch and waits == queue.inspection.claim_waits(CONSUMER, s), waits
            return {"claim": claim_ms, "ranked": rank_ms, "returned": claim_ms + backlog_ms + rank_ms}

        times: dict[str, list[float]] = {}
        seq = 0
        for step in range(args.warm_up + args.steps):
            turns = [before, after, returned]
            for turn in turns[step % 3 :] + turns[: step % 3]:
                seq += 1
                figures = turn(seq)
                if step >= args.warm_up:
                    for name, ms in figures.items():
                        times.setdefault(f"{turn.__name__} {name}" if name == "claim" else name, []).append(ms)
                queue.consuming.complete(CONSUMER, seq)
                conn.execute(FILL.format(t=table), (args.batch,))

        m = {name: statistics.median(ms) for name, ms in times.items()}
        print(
            f"queue wait on PostgreSQL (jit {jit}): claims of {args.batch:,} rows, {args.backlog:,} ready rows "
            f"held; median ms of {args.steps} steps"
        )
        print(f"  claim (the same statement), before / after     {m['before claim']:8.1f} / {m['after claim']:.1f}")
        print(f"  count_ready / backlog (count and oldest age)   {m['count_ready']:8.1f} / {m['backlog']:.1f}")
        print(f"  claim_waits (percentile_disc, one row back)    {m['claim_waits']:8.1f}")
        change = m["after"] / m["before"] - 1
        print(f"  per batch in the foreground, before / after   {m['before']:8.1f} / {m['after']:.1f} ({change:+.0%})")
        print(
            f"  other ways: ROW_NUMBER (the other engines') {m['row_number']:.1f}, fetched and ranked in Python "
            f"{m['python']:.1f}"
        )
        print(
            f"  the consumer's way: the claim's returned waits ranked in Python {m['ranked']:.1f}; per batch, the "
            f"claim, backlog and ranking {m['returned']:.1f} against {m['after']:.1f} with claim_waits"
        )
        if args.large:
            conn.execute(FILL.format(t=table), (args.large - queue.inspection.count_ready(),))
            conn.execute(f"VACUUM ANALYZE {table}")
            large: dict[str, list[float]] = {"count_ready": [], "backlog": []}
            for step in range(args.warm_up + args.steps):
                for name, work in (
                    ("count_ready", queue.inspection.count_ready),
                    ("backlog", queue.inspection.backlog),
                ):
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
