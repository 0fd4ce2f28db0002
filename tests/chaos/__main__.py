"""`make chaos`: run the fault matrix and print one table.

    python -m tests.chaos --seed 7                       # every cell: PostgreSQL 10 rounds of 5,000 keys
    python -m tests.chaos --seed 7 --slice ci            # the seeded slice CI runs (under 5 minutes)
    python -m tests.chaos --seed 7 --only 'postgres/queue-to-delta/*'

The seed fixes the table names, the moment of every fault and the keys' order; the same seed replays
the same plan (timing on a busy machine still varies). Exit status 1 when any cell lost, duplicated
or invented a key, left rows behind, or saw its job die.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import fnmatch
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tests.chaos.cells import Cell, Result, Run, matrix
from tests.chaos.databases import open_database
from tests.support.toxiproxy import Toxiproxy

ENGINES = ("postgres", "sqlite", "babelfish")
# (cell, rounds, keys): an outage longer than the lease with a claim made ahead, on the relational table
# whose trigger rewrites its token; database restarts under the native source; the sink into the
# relational table killed; a stalled connection under queue_to_queue; SQLite's claimer table killed; two
# grouped streams and a grouped worker on one queue, one stream killed.
CI_SLICE = (
    (Cell("postgres", "queue-to-delta", "relational", ("outage",)), 1, 2000),
    (Cell("postgres", "queue-to-delta", "native", ("restart",)), 2, 2000),
    (Cell("postgres", "delta-to-queue", "relational", ("kill",)), 1, 2000),
    (Cell("postgres", "queue-to-queue", "claimer", ("stall",)), 1, 2000),
    (Cell("sqlite", "queue-to-delta", "claimer", ("kill",)), 1, 2000),
    (Cell("postgres", "groups", "native", ("kill",)), 1, 2000),
)


def plan(args: argparse.Namespace) -> list[tuple[Cell, int, int]]:
    if args.slice == "ci":
        return list(CI_SLICE)
    cells = [c for c in matrix(tuple(args.engines)) if fnmatch.fnmatch(c.name, args.only)]
    return [(c, args.rounds if c.engine == "postgres" else args.other_rounds, args.keys) for c in cells]


def table(results: list[Result]) -> str:
    head = (
        "| cell | rounds | keys | lost | duplicated | unexpected | out of order | taken again after expiry "
        "| fenced-out writes | faults injected; notes |"
    )
    rows = [head, "|" + "---|" * 10]
    for r in results:
        notes = "; ".join(r.notes or ["ok" if r.passed else "FAILED", *r.seen])
        rows.append(
            f"| {r.cell.name} | {r.rounds} | {r.keys:,} | {r.lost} | {r.duplicated} | {r.unexpected} | {r.disordered} "
            f"| {r.expired} | {r.fenced} | {notes} |"
        )
    return "\n".join(rows)


def play(cell: Cell, rounds: int, keys: int, rng: random.Random, root: Path) -> Result | None:
    """One cell on a database of its own (a PostgreSQL server, a SQLite file; Babelfish is shared, and
    its cells never restart it), so that a restart or a proxy fault touches no other cell."""
    workdir = root / cell.name.replace("/", "-")
    workdir.mkdir(parents=True)
    db = open_database(cell.engine, workdir)
    if db is None:
        print(f"{cell.name}: skipped: no {cell.engine} here (../shared/babelfish beside the clone)", flush=True)
        return None
    print(f"{cell.name}: {rounds} rounds of {keys:,} keys", flush=True)
    try:
        with contextlib.ExitStack() as stack:
            proxy = None
            if {"reset", "stall"} & set(cell.faults):  # the job reaches its database through the fault proxy
                proxy = stack.enter_context(Toxiproxy.running()).proxy(f"{db.host}:{db.port}")
            result = Run(cell, db, workdir, rng, proxy).play(rounds, keys)
    finally:
        db.close()
    print(f"{cell.name}: {'ok' if result.passed else 'FAILED'} {result}", flush=True)
    if result.passed:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"  kept for a look: {workdir}", flush=True)
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="make chaos", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=None, help="the plan's seed (default: a new one, printed)")
    parser.add_argument("--slice", choices=("all", "ci"), default="all")
    parser.add_argument("--only", default="*", help="cells whose name matches this pattern (engine/pipeline/design)")
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--rounds", type=int, default=10, help="rounds of each PostgreSQL cell")
    parser.add_argument("--other-rounds", type=int, default=2, help="rounds of each SQLite and Babelfish cell")
    parser.add_argument("--keys", type=int, default=5000, help="keys a round produces")
    parser.add_argument("--report", type=Path, help="also write the table (Markdown) to this file")
    parser.add_argument("--jobs", type=int, default=1, help="cells run side by side (each job is a Spark driver)")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    print(f"chaos seed {seed} (make chaos SEED={seed} replays this plan)", flush=True)
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(prefix="sqlqueue-chaos-"))
    planned = [(cell, rounds, keys, random.Random(rng.random())) for cell, rounds, keys in plan(args)]
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        done = pool.map(lambda p: play(*p, root), planned)
        results = [r for r in done if r is not None]
    report = table(results)
    minutes = (time.monotonic() - started) / 60
    print(f"\nseed {seed}, {len(results)} cells, {minutes:.0f} min\n{report}")
    if args.report:
        args.report.write_text(f"Seed {seed}, {len(results)} cells, {minutes:.0f} minutes.\n\n{report}\n")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
