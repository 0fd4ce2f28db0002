"""Per-row outcomes under SIGKILL: on a relational table read with completion=ack, every row ends with the
outcome its job decided, applied once, and every delivery is in the Delta audit once.

The source job (source_job.py --sink ack) records each delivery in a Delta audit table, then acknowledges
each row through the sink's ack operation: done, retried once at once (payloads ending in 7) or failed
(ending in 3). It is killed right after a batch's acknowledgements were applied and before Spark logged
the batch's commit, twice (the restart replays that batch: its acknowledgements are in the ledger, and
its rows no longer the stream's), and a random moment after some batches; then it runs to its end.
"""

from __future__ import annotations

import json
import os
import random

import pytest
from pyspark.sql import functions as F

from tests.crash.test_source_crash import run_killed_then_whole
from tests.support import user_tables

pytestmark = [pytest.mark.crash, pytest.mark.spark]
ROWS = 1_000


def outcome_of(n: int) -> tuple[str, int]:
    """(status, attempts) row p<n> ends with."""
    if n % 10 == 3:
        return "Failed", 1
    return "Completed", 2 if n % 10 == 7 else 1


def test_every_acknowledgement_is_applied_once_across_kills_between_its_write_and_sparks_commit(
    engine, spark, tmp_path, monkeypatch
):
    seed = int(os.environ.get("SQLQUEUE_CRASH_SEED", random.randrange(1_000_000)))
    print(f"crash seed: {seed} (SQLQUEUE_CRASH_SEED={seed} replays it)")
    rng = random.Random(seed)
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, ROWS)
    order = ", ".join(f"{c} {d}" for c, d in queue.declared.order)
    table = {k: v for k, v in engine.options.items() if k != "password"}
    table |= {"profile": queue.declared.name, "profile.order": order}
    if "password" in engine.options:
        monkeypatch.setenv("SQLQUEUE_PASSWORD", engine.options["password"])
    # The acknowledgement's fencing token, the attempts column, is read with the key and the payload.
    source = table | {"completion": "ack", "leaseSeconds": "3600", "columns": "EnqueuedAt, AttemptNum, Payload"}
    args = ["--connection", json.dumps(source), "--queue", str(queue.table), "--consumer", "crash-test"]
    args += ["--checkpoint", str(tmp_path / "checkpoint"), "--delta", str(tmp_path / "audit"), "--sink", "ack"]
    # Five batches of new rows, then one or two of retried ones: each run is a JVM's start and a few batches.
    args += ["--ack-options", json.dumps(table | {"queue": str(queue.table)}), "--max-rows", str(ROWS // 5)]
    plan = [{"window": "acked"}, {"window": "acked"}, {"window": "progress", "progress_after": rng.randint(1, 2)}]
    rng.shuffle(plan)
    run_killed_then_whole(args, plan, rng, tmp_path)

    rows = queue.fetch(queue.engine.compile(f"SELECT Payload, Status, AttemptNum FROM {queue.table}"), {})
    ended = {payload: (status, attempts) for payload, status, attempts in rows}
    assert ended == {f"p{n}": outcome_of(n) for n in range(ROWS)}
    claims = queue.dialect.lifecycle.claims_table(queue.table)
    assert queue.fetch(queue.engine.compile(f"SELECT COUNT(*) FROM {queue.engine.table(claims)}"), {})[0][0] == 0
    audit = spark.read.format("delta").load(str(tmp_path / "audit"))
    deliveries = audit.groupBy("payload", "attempts").count()
    assert deliveries.filter(F.col("count") > 1).count() == 0
    assert audit.count() == ROWS + ROWS // 10  # each row once, and the retried ones again
