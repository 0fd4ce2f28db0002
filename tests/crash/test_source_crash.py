"""The source under SIGKILL: every key reaches Delta exactly once and the queue drains.

Each engine's driver is killed inside every crash window of the claim protocol and at random
moments, restarted from the same checkpoint each time, then run to completion. The seed is
printed; rerun with SQLQUEUE_CRASH_SEED=<seed> to replay the kill times.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from sqlqueue.schema import Column
from tests.support.crash import run_job
from tests.support.engines import Engine

pytestmark = [pytest.mark.crash, pytest.mark.spark]
JOB = Path(__file__).with_name("source_job.py")
KEYS = 20_000
# One sink per engine keeps make test-crash within its budget; each is killed in every window of its own.
# PostgreSQL's kills land on an adopted table's source (test_adopted_crash) and on the sink, and its
# restarts under sqlqueue's layout (test_database_restart); foreachBatch's windows on SQLite run over
# Spark Connect below.
ONE_SINK = {"sqlite": "delta", "sqlserver": "foreach"}
WINDOWS = {"delta": ["claimed", "reading", "completing"], "foreach": ["claimed", "reading", "committed", "completing"]}


def crash_plan(sink: str, rng: random.Random) -> list[dict]:
    """A kill in each window, and SQLQUEUE_CRASH_ROUNDS random ones (none by default: random kills at
    scale are the fault matrix's, make chaos)."""
    rounds = int(os.environ.get("SQLQUEUE_CRASH_ROUNDS", "0"))
    plan = [{"window": w} for w in WINDOWS[sink]]
    # Random kills land a random moment after a random number of batches of the run, so they hit
    # mid-stream on a fast machine or a loaded one (a timer would miss a job that already drained).
    plan += [{"window": "progress", "progress_after": rng.randint(1, 3)} for _ in range(rounds)]
    rng.shuffle(plan)
    return plan


@pytest.mark.parametrize("sink", ["delta", "foreach"])
def test_every_key_arrives_once_after_repeated_kills(engine, spark, tmp_path, sink, monkeypatch):
    if sink != ONE_SINK.get(engine.name):
        pytest.skip("SQLite runs the Delta sink, SQL Server foreachBatch with append_once; PostgreSQL an adopted table")
    seed = int(os.environ.get("SQLQUEUE_CRASH_SEED", random.randrange(1_000_000)))
    print(f"crash seed: {seed} (SQLQUEUE_CRASH_SEED={seed} replays it)")
    rng = random.Random(seed)
    kill_and_restart(engine, spark, tmp_path, sink, crash_plan(sink, rng), rng, monkeypatch)


def test_every_key_arrives_once_after_kills_over_spark_connect(spark, tmp_path, monkeypatch):
    """The jobs' writer (append_once in foreachBatch) on a local Connect server the job starts."""
    seed = int(os.environ.get("SQLQUEUE_CRASH_SEED", random.randrange(1_000_000)))
    print(f"crash seed: {seed} (SQLQUEUE_CRASH_SEED={seed} replays it)")
    rng = random.Random(seed)
    plan = [{"window": "claimed"}, {"window": "committed"}, {"window": "progress", "progress_after": 2}]
    rng.shuffle(plan)
    engine = Engine("sqlite", {"url": f"sqlite:///{tmp_path}/queue.db"})
    try:
        kill_and_restart(engine, spark, tmp_path, "foreach", plan, rng, monkeypatch, ["--remote", "local[2]"])
    finally:
        engine.close()


def kill_and_restart(engine, spark, tmp_path, sink, plan, rng, monkeypatch, more_args=()) -> None:
    """Kill the job at each step of ``plan``, restart it from its checkpoint, run it to the end and check
    that every key reached Delta once and the queue drained."""
    queue = engine.new_queue(domain=(Column("key", "bigint", nullable=False),))
    queue.enqueue([{"key": k} for k in range(KEYS)])
    connection = {**{k: v for k, v in engine.options.items() if k != "password"}, "order": engine.order}
    if "password" in engine.options:
        monkeypatch.setenv("SQLQUEUE_PASSWORD", engine.options["password"])
    args = [
        "--connection",
        json.dumps(connection),
        "--queue",
        str(queue.table),
        "--consumer",
        "crash-test",
        "--checkpoint",
        str(tmp_path / "checkpoint"),
        "--delta",
        str(tmp_path / "delta"),
        "--sink",
        sink,
        # Ten batches: each costs Spark's floor, about 2.4 s on a loaded 2-core host, and the final run
        # drains what the kills left (20 batches took 45 s of a test's 180).
        "--max-rows",
        str(KEYS // 10),
        *more_args,
    ]
    run_killed_then_whole(args, plan, rng, tmp_path)

    delta = spark.read.format("delta").load(str(tmp_path / "delta"))
    counts = delta.groupBy("key").count()
    assert delta.count() == KEYS
    assert counts.filter(F.col("count") > 1).count() == 0
    assert counts.count() == KEYS
    assert {s for s in queue.inspection.stats()} <= {"done"}, queue.inspection.stats()


def run_killed_then_whole(args: list[str], plan: list[dict], rng, tmp_path) -> None:
    """Run the source job once per step of ``plan``, killed in the step's window, then once to its end;
    at least three runs must have been killed (a window the job finished before is no kill)."""
    markers = tmp_path / "markers"
    markers.mkdir()
    log = tmp_path / "job.log"
    kills = 0
    for step in plan:
        extra = ["--progress-after", str(step.pop("progress_after"))] if "progress_after" in step else []
        outcome = run_job(JOB, args + extra, log, marker_dir=markers, rng=rng, **step)
        print(f"round {step} {extra}: {'killed' if outcome.killed else f'exited {outcome.returncode}'}")
        kills += outcome.killed
    final = run_job(JOB, args, log)
    assert final.returncode == 0, final.log[-3000:]
    assert kills >= 3
