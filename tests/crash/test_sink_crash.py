"""The sink under SIGKILL: every key of a 20,000-row stream lands in the queue exactly once.

The job (sink_job.py) streams 40 parquet files of keyed rows into the queue, one file per
micro-batch, on master local[2,3] so the tasks it fails on purpose are retried. It is killed once
inside the sink's commit (after the batch was published, before Spark logged the commit, so the
restart writes that batch again and must find it in the ledger) and SQLQUEUE_CRASH_ROUNDS times
(at least 3) at a random moment: after a random number of batches of the run, plus up to half a
second, so the kill lands mid-stream however fast the machine is. Rounds come in a shuffled order,
each restarting from the same checkpoint, then the job runs until the source is drained. The seed
is printed; SQLQUEUE_CRASH_SEED=<seed> replays the plan. The key is a plain domain column, not a
dedup key, so the dedup index cannot hide a duplicate. On PostgreSQL it runs a second time into a
table sqlqueue adopted (a dequeue table of the user's, whose batches wait in sqlqueue's staging table).
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
from tests.support import user_tables
from tests.support.crash import run_job

pytestmark = [pytest.mark.crash, pytest.mark.spark]
JOB = Path(__file__).with_name("sink_job.py")
ROWS, FILES = 20_000, 40  # a micro-batch a file: each costs about a second whatever its size


def crash_plan(rng: random.Random) -> list[dict]:
    rounds = int(os.environ.get("SQLQUEUE_CRASH_ROUNDS", "1"))
    plan = [{"window": "published"}] + [{"window": "progress", "after": rng.randint(1, 8)} for _ in range(rounds)]
    rng.shuffle(plan)
    return plan


def write_input(folder: Path) -> None:
    folder.mkdir()
    per_file = ROWS // FILES
    for f in range(FILES):
        keys = list(range(f * per_file, (f + 1) * per_file))
        table = pa.table({"k": pa.array(keys, pa.int64()), "payload": [f"item {k}" for k in keys]})
        pq.write_table(table, folder / f"part-{f:03d}.parquet")


def keys_in(queue) -> Counter:
    queue.consuming.claim("checker", 1, ROWS * 2, order="heap")
    found: Counter = Counter()
    for lo, hi in queue.consuming.partition_bounds("checker", 0, 1, 1):
        for rows in queue.consuming.read_claimed("checker", 0, 1, lo, hi, ["k"]):
            found.update(r[0] for r in rows)
    return found


@pytest.mark.parametrize("table", ["native", "adopted"])
def test_every_key_is_enqueued_exactly_once_across_kills_and_task_retries(engine, tmp_path, monkeypatch, table):
    if (table == "adopted") != (engine.name == "postgres"):
        pytest.skip("PostgreSQL runs the sink into an adopted table, the other engines into sqlqueue's own layout")
    seed = int(os.environ.get("SQLQUEUE_CRASH_SEED", random.randrange(1_000_000)))
    print(f"crash seed: {seed} (SQLQUEUE_CRASH_SEED={seed} replays it)")
    rng = random.Random(seed)
    if table == "adopted":
        queue = user_tables.keyed_dequeue(engine)
        options = engine.sink_options(queue, profile=queue.declared.name)
    else:
        queue = engine.new_queue(domain=(Column("k", "bigint", nullable=False), Column("payload", "text")))
        options = engine.sink_options(queue)
    write_input(tmp_path / "in")
    if "password" in options:
        monkeypatch.setenv("SQLQUEUE_PASSWORD", options.pop("password"))
    evidence, markers = tmp_path / "evidence", tmp_path / "markers"
    evidence.mkdir()
    markers.mkdir()
    config = {
        "master": "local[2,3]",
        "input": str(tmp_path / "in"),
        "checkpoint": str(tmp_path / "checkpoint"),
        "evidence": str(evidence),
        "options": options,
    }
    log, rounds = tmp_path / "job.log", itertools.count(1)

    def args(progress_after: int | None = None) -> list[str]:
        run = tmp_path / f"run-{next(rounds)}"
        run.mkdir()
        return [json.dumps({**config, "run": str(run), "progress_after": progress_after})]

    kills, plan = 0, crash_plan(rng)
    for step in plan:
        outcome = run_job(JOB, args(step.get("after")), log, marker_dir=markers, window=step["window"], rng=rng)
        published = queue.inspection.count_ready()
        print(
            f"round {step}: {'killed' if outcome.killed else f'exited {outcome.returncode}'}, "
            f"{published} rows published so far"
        )
        kills += outcome.killed
    final = run_job(JOB, args(), log)
    assert final.returncode == 0, final.log[-3000:]
    assert kills == len(plan)

    happened = {p.name.rsplit("-", 1)[0] for p in evidence.iterdir()}
    print(f"{kills} kills; scenarios seen: {sorted(happened)}")
    assert happened == {"replayed", "retried-after-staging", "retried-while-staging"}
    assert queue.inspection.unpublished_rows() == 0, "unpublished rows were left behind"
    found = keys_in(queue)
    assert sorted(found) == list(range(ROWS)), f"{ROWS - len(found)} keys missing"
    assert [k for k, n in found.items() if n > 1] == []
