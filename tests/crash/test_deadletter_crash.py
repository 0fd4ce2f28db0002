"""Dead letters under SIGKILL: every failed row lands in Delta once, and every redriven row is back once.

The move: queue_to_delta's own pipeline (deadletter_job.py move) runs with the source option
deadLetterTable on a queue where 450 more rows fail before each run, and is killed with a chunk
tagged but not in Delta, with a chunk in Delta but still in the queue, and at a random moment after
a random move of the run; a last run finishes. The redrive: `sqlqueue redrive` (deadletter_job.py
redrive) is killed after it marked its rows in Delta, after a random chunk, and at a random moment
after a later one; between runs every redriven row is consumed and deleted, so its dedup key is
gone and only the ledger keeps a chunk from being enqueued twice. The seed is printed;
SQLQUEUE_CRASH_SEED=<seed> replays the plan.
"""

from __future__ import annotations

import importlib.util
import os
import random
import time
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from sqlqueue import cli
from sqlqueue.options import QueueAddress
from sqlqueue.queue import FAILED_OUTCOME, Ack
from sqlqueue.schema import Column
from sqlqueue.spark.deadletters import DeadLetterMover
from tests.support.crash import run_job
from tests.support.engines import config_file

pytestmark = [pytest.mark.crash, pytest.mark.spark]
JOB = Path(__file__).with_name("deadletter_job.py")
_spec = importlib.util.spec_from_file_location("queue_to_delta", Path(__file__).parents[2] / "jobs/queue_to_delta.py")
queue_to_delta = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(queue_to_delta)
FAILED_PER_RUN, READY_PER_RUN, MOVE_CHUNK = 450, 200, 150
REDRIVEN = 1000
# Kills at a random moment, besides one in each window of the protocol (SQLQUEUE_CRASH_ROUNDS; each costs a
# Spark start, so none by default: each test stays near 90 s on two quiet cores).
RANDOM_KILLS = int(os.environ.get("SQLQUEUE_CRASH_ROUNDS", "0"))


def seeded() -> random.Random:
    seed = int(os.environ.get("SQLQUEUE_CRASH_SEED", random.randrange(1_000_000)))
    print(f"crash seed: {seed} (SQLQUEUE_CRASH_SEED={seed} replays it)")
    return random.Random(seed)


def held(queue, consumer: str, seq: int, column: str) -> list:
    return [
        r[0]
        for lo, hi in queue.consuming.partition_bounds(consumer, seq - 1, seq, 1)
        for rows in queue.consuming.read_claimed(consumer, seq - 1, seq, lo, hi, [column])
        for r in rows
    ]


def enqueue_and_fail(queue, start: int, seq: int) -> list[int]:
    """Enqueue READY_PER_RUN + FAILED_PER_RUN rows and fail FAILED_PER_RUN of them as a worker would."""
    queue.enqueue([{"key": k} for k in range(start, start + FAILED_PER_RUN + READY_PER_RUN)])
    queue.consuming.claim("worker", seq, FAILED_PER_RUN, order="heap")
    ids = held(queue, "worker", seq, "id")
    with queue.transaction() as cur:
        queue.consuming.apply_acks(cur, [Ack((i,), FAILED_OUTCOME, "poison") for i in ids], keep=False, max_attempts=5)
    return ids


def test_every_failed_row_lands_in_delta_once_across_kills_during_the_move(engine, spark, tmp_path, monkeypatch):
    if engine.name == "sqlite":
        pytest.skip("the move's crash test runs on PostgreSQL and SQL Server, the redrive's on SQLite")
    rng = seeded()
    queue = engine.new_queue(domain=(Column("key", "bigint", nullable=False),))
    dead = tmp_path / "dead"
    source = (
        f'[source]\nqueue = "{queue.table}"\nconsumer = "dl-crash"\nmaxRowsPerTrigger = 500\n'
        f'claimChunkSize = {MOVE_CHUNK}\nemptyPollIntervalMs = 200\ndeadLetterTable = "{dead}"\n'
        f'[job]\ncheckpointLocation = "{tmp_path / "checkpoint"}"\ntarget = "{tmp_path / "out"}"\n'
        'trigger = "availableNow"\n'
    )
    args = ["move", "-c", config_file(engine, tmp_path, monkeypatch, source)]
    markers, log = tmp_path / "markers", tmp_path / "job.log"
    markers.mkdir()
    windows = ["marked", "appended"] + ["progress"] * RANDOM_KILLS
    plan = [{"window": w, "chunk": rng.randint(1, 3)} for w in windows]
    rng.shuffle(plan)
    failed: list[int] = []
    kills = 0
    for n, step in enumerate(plan):
        failed += enqueue_and_fail(queue, n * 1000, n + 1)
        monkeypatch.setenv("SQLQUEUE_TEST_CHUNK", str(step["chunk"]))
        started = time.monotonic()
        outcome = run_job(JOB, args, log, marker_dir=markers, window=step["window"], rng=rng)
        print(f"round {step}: {'killed' if outcome.killed else 'exited'} after {time.monotonic() - started:.1f} s")
        kills += outcome.killed
    queue.enqueue([{"key": -1}])  # a batch, after which the last run moves what is left
    # The last run, in this process: the job's pipeline with nothing known but the tables (and no JVM to start).
    started = time.monotonic()
    assert queue_to_delta.run(queue_to_delta.JOB, queue_to_delta.pipeline, args[1:]) == 0
    print(f"last run: {time.monotonic() - started:.1f} s")
    assert kills == len(plan)

    moved = Counter(r.id for r in spark.read.format("delta").load(str(dead)).select("id").collect())
    assert [i for i, n in moved.items() if n > 1] == []
    assert sorted(moved) == sorted(failed)
    assert "failed" not in queue.inspection.stats()


def test_every_redriven_row_is_back_in_the_queue_once_across_kills(engine, spark, tmp_path, monkeypatch):
    if engine.name != "sqlite":
        pytest.skip("the redrive's crash test runs on SQLite, the move's on PostgreSQL and SQL Server")
    rng = seeded()
    queue = engine.new_queue(domain=(Column("key", "bigint", nullable=False),))
    queue.enqueue([{"key": k} for k in range(REDRIVEN)])
    queue.consuming.claim("worker", 1, REDRIVEN, order=engine.order)
    ids = held(queue, "worker", 1, "id")
    with queue.transaction() as cur:
        queue.consuming.apply_acks(cur, [Ack((i,), FAILED_OUTCOME, "poison") for i in ids], keep=False, max_attempts=5)
    dead = str(tmp_path / "dead")
    mover = DeadLetterMover(QueueAddress(engine.connection(), queue.table), dead, "setup", chunk=500, every_seconds=0)
    assert mover.move(spark) == REDRIVEN
    mover.close()

    args = [
        "redrive",
        "-c",
        config_file(engine, tmp_path, monkeypatch),
        "--queue",
        str(queue.table),
        "--from-delta",
        dead,
    ]
    markers, log = tmp_path / "markers", tmp_path / "job.log"
    markers.mkdir()
    sent_at = rng.randint(2, 4)  # chunks of 100 rows: 10 of them
    plan = [("chosen", 1), ("sent", sent_at)] + [
        ("progress", sent_at + 2 * k + rng.randint(1, 2)) for k in range(RANDOM_KILLS)
    ]
    consumed: Counter = Counter()
    kills = 0
    for seq, (window, chunk) in enumerate(plan, 1):
        monkeypatch.setenv("SQLQUEUE_TEST_CHUNK", str(chunk))
        started = time.monotonic()
        outcome = run_job(JOB, args, log, marker_dir=markers, window=window, rng=rng)
        kills += outcome.killed
        took = time.monotonic() - started
        print(f"round {window} at chunk {chunk}: {'killed' if outcome.killed else 'exited'} after {took:.1f} s")
        # Consume and delete what came back: its dedup keys are gone, only the ledger remembers.
        queue.consuming.claim("reader", seq, 10 * REDRIVEN, order=engine.order)
        consumed.update(held(queue, "reader", seq, "dedup_key"))
        queue.consuming.complete("reader", seq)
    # The last run, in this process: the command with nothing known but the tables (and no JVM to start).
    assert cli.main(args) == 0
    assert kills == len(plan)

    queue.consuming.claim("reader", 99, 10 * REDRIVEN, order=engine.order)
    back = consumed + Counter(held(queue, "reader", 99, "dedup_key"))
    assert [k for k, n in back.items() if n > 1] == []
    assert sorted(back) == sorted(f"deadletter:{i}" for i in ids)
    table = spark.read.format("delta").load(dead)
    assert table.where(F.col("redriven_at").isNull()).count() == 0
