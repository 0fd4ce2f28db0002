"""The sink under SIGKILL: every key of a 20,000-row stream lands in the queue exactly once.

The job (sink_job.py) streams 40 parquet files of keyed rows into the queue, one file per
micro-batch, on master local[2,3] so the tasks it fails on purpose are retried. It is killed:
- once inside the sink's commit, after the batch was published and before Spark logged the commit,
  so the restart writes that batch again and must find it in the ledger;
- SQLQUEUE_CRASH_ROUNDS times (at least 3) at a random moment after its first commit of the run;
and then runs until the source is drained. The kill times come from a seeded RNG whose seed is
printed (SQLQUEUE_CRASH_SEED repeats a run). The key is a plain domain column, not a dedup key,
so the dedup index cannot hide a duplicate.
"""
from __future__ import annotations

import itertools
import json
import os
import random
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sqlqueue.schema import Column
from tests.crash.harness import run

JOB = Path(__file__).with_name("sink_job.py")
ROWS, FILES = 20_000, 40
TIMED_KILLS = max(3, int(os.environ.get("SQLQUEUE_CRASH_ROUNDS", "3")))
MOST_SECONDS_AFTER_FIRST_COMMIT = 6.0


def write_input(folder: Path) -> None:
    folder.mkdir()
    per_file = ROWS // FILES
    for f in range(FILES):
        keys = list(range(f * per_file, (f + 1) * per_file))
        table = pa.table({"k": pa.array(keys, pa.int64()), "payload": [f"item {k}" for k in keys]})
        pq.write_table(table, folder / f"part-{f:03d}.parquet")


def after_first_commit(markers: Path, delay: float):
    """A kill condition: ``delay`` seconds after the run's first published batch."""
    seen_at: float | None = None

    def due(elapsed: float) -> bool:
        nonlocal seen_at
        if seen_at is None and any(markers.glob("committed-*")):
            seen_at = elapsed
        return seen_at is not None and elapsed >= seen_at + delay

    return due


def keys_in(queue) -> Counter:
    queue.claim("checker", 1, ROWS * 2)
    found: Counter = Counter()
    for lo, hi in queue.partition_bounds("checker", 0, 1, 1):
        for rows in queue.read_claimed("checker", 0, 1, lo, hi, ["k"]):
            found.update(r[0] for r in rows)
    return found


@pytest.mark.crash
def test_every_key_is_enqueued_exactly_once_across_kills_and_task_retries(engine, tmp_path):
    seed = int(os.environ.get("SQLQUEUE_CRASH_SEED", random.randrange(2**32)))
    rng = random.Random(seed)
    print(f"sink crash test on {engine.name}: seed {seed} (SQLQUEUE_CRASH_SEED={seed} repeats it)")
    queue = engine.new_queue(domain=(Column("k", "bigint", nullable=False), Column("payload", "text")))
    write_input(tmp_path / "in")
    log = tmp_path / "job.log"
    runs = itertools.count(1)

    def job(pause_in_commit: bool = False, kill_when=None) -> tuple[bool, Path]:
        markers = tmp_path / f"markers-{next(runs)}"
        markers.mkdir()
        config = {
            "master": "local[2,3]", "input": str(tmp_path / "in"), "checkpoint": str(tmp_path / "checkpoint"),
            "markers": str(markers), "options": engine.source_options(queue), "pause_in_commit": pause_in_commit,
        }
        condition = kill_when(markers) if kill_when else None
        return run(JOB, {"SINK_CRASH_JOB": json.dumps(config)}, log, condition), markers

    killed, markers = job(pause_in_commit=True, kill_when=lambda m: lambda _: any(m.glob("in-commit-*")))
    assert killed, f"the job ended before it paused in a commit; see {log}"
    in_commit = sorted(p.name for p in markers.glob("in-commit-*"))
    print(f"kill 1: inside the sink's commit ({in_commit[0]})")
    kills = 1
    for _ in range(TIMED_KILLS):
        delay = rng.uniform(0.0, MOST_SECONDS_AFTER_FIRST_COMMIT)
        killed, markers = job(kill_when=lambda m, d=delay: after_first_commit(m, d))
        published = sorted(int(p.name.split("-")[1]) for p in markers.glob("committed-*"))
        print(f"kill {kills + 1}: {delay:.2f} s after the run's first commit (it published batches {published})"
              if killed else f"no kill: the run drained the source before {delay:.2f} s")
        kills += killed
    drained, _ = job()
    assert not drained

    everything = list(tmp_path.glob("markers-*/*"))
    print(f"{kills} kills; markers: {sorted({p.name.rsplit('-', 1)[0] for p in everything})}")
    assert kills >= 3
    assert any(p.name.startswith("replayed-") for p in everything), "no batch was committed twice"
    assert any(p.name.startswith("retried-after-staging-") for p in everything)
    assert any(p.name.startswith("retried-while-staging-") for p in everything)
    assert queue.stats().keys() == {"ready"}, "staged rows were left behind"
    found = keys_in(queue)
    assert sorted(found) == list(range(ROWS)), f"{ROWS - len(found)} keys missing"
    assert [k for k, n in found.items() if n > 1] == []
