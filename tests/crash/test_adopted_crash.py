"""Adopted tables under SIGKILL: every row reaches Delta exactly once and the table ends as its
profile says (relational: every row Completed; dequeue: empty), with sqlqueue's claims table empty.

The source job of test_source_crash is killed in each window of the claim protocol (between the claim
and the offset log, mid-read, after the Delta commit, inside completion) and at random moments.
"""

from __future__ import annotations

import json
import os
import random

import pytest
from pyspark.sql import functions as F

from tests.crash.test_source_crash import crash_plan, run_killed_then_whole
from tests.support import user_tables

pytestmark = [pytest.mark.crash, pytest.mark.spark]
ROWS = 4_000


def filled(engine, profile: str):
    if profile == "relational":
        queue = user_tables.relational(engine)
        user_tables.enqueue_relational(queue, ROWS)
    else:
        queue = user_tables.dequeue(engine)
        user_tables.insert_payloads(queue, ROWS)
    return queue


def left_in_table(queue) -> list[tuple]:
    return queue.fetch(queue.engine.compile(f"SELECT * FROM {queue.table}"), {})


@pytest.mark.parametrize(
    ("profile", "sink"),
    [("relational", "delta"), ("dequeue", "foreach")],
)
def test_every_row_of_an_adopted_table_arrives_once_after_repeated_kills(
    engine, spark, tmp_path, profile, sink, monkeypatch
):
    if (engine.name, profile) in (("sqlite", "dequeue"), ("postgres", "relational"), ("sqlserver", "dequeue")):
        pytest.skip("each engine runs one profile: SQLite and SQL Server the relational table, PostgreSQL the dequeue")
    seed = int(os.environ.get("SQLQUEUE_CRASH_SEED", random.randrange(1_000_000)))
    print(f"crash seed: {seed} (SQLQUEUE_CRASH_SEED={seed} replays it)")
    rng = random.Random(seed)
    queue = filled(engine, profile)
    order = ", ".join(f"{c} {d}" for c, d in queue.declared.order)
    connection = {**{k: v for k, v in engine.options.items() if k != "password"}}
    connection |= {"profile": queue.declared.name, "profile.order": order, "leaseSeconds": "3600"}
    if "password" in engine.options:
        monkeypatch.setenv("SQLQUEUE_PASSWORD", engine.options["password"])
    args = ["--connection", json.dumps(connection), "--queue", str(queue.table), "--consumer", "crash-test"]
    args += ["--checkpoint", str(tmp_path / "checkpoint"), "--delta", str(tmp_path / "delta"), "--sink", sink]
    # 16 batches: a random kill after up to three of them still leaves batches for the windows after it.
    args += ["--max-rows", str(ROWS // 16)]
    # One kill in each window of the protocol and one at random (the source's own crash test runs more).
    run_killed_then_whole(args, crash_plan(sink, rng), rng, tmp_path)

    delta = spark.read.format("delta").load(str(tmp_path / "delta"))
    payload = next(c for c in delta.columns if c.lower() == "payload")
    counts = delta.groupBy(payload).count()
    assert delta.count() == ROWS
    assert counts.filter(F.col("count") > 1).count() == 0
    assert counts.count() == ROWS
    claims = queue.dialect.lifecycle.claims_table(queue.table)
    assert queue.fetch(queue.engine.compile(f"SELECT COUNT(*) FROM {queue.engine.table(claims)}"), {})[0][0] == 0
    if profile == "relational":
        statuses = queue.fetch(queue.engine.compile(f"SELECT Status, COUNT(*) FROM {queue.table} GROUP BY Status"), {})
        assert dict(statuses) == {"Completed": ROWS}
    else:
        assert left_in_table(queue) == []
