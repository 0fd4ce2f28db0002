"""The source as operators meet it: competing queries, a database restart, progress and logs."""

from __future__ import annotations

import json
import os
import time

import pytest

from sqlqueue.connection import parse_connection
from sqlqueue.errors import DatabaseError
from sqlqueue.identifiers import TableName
from sqlqueue.queue import Queue
from sqlqueue.schema import Column
from sqlqueue.testing import assert_each_key_once, run_to_end, wait_until
from sqlqueue.testing.pgserver import PASSWORD, PgServer
from tests.support.clock import move_back

pytestmark = pytest.mark.spark
KEYED = (Column("key", "bigint", nullable=False),)


def start_query(spark, options: dict, target: str, checkpoint: str, **trigger):
    return (
        spark.readStream.format("sqlqueue")
        .options(**options)
        .load()
        .writeStream.format("delta")
        .option("checkpointLocation", checkpoint)
        .trigger(**(trigger or {"processingTime": "500 milliseconds"}))
        .start(target)
    )


def is_empty(queue: Queue) -> bool:
    """The test's own view of the queue; while the server is down it just sees "not yet"."""
    try:
        return queue.inspection.stats() == {}
    except DatabaseError:
        return False


def written(paths: list[str]) -> list[str]:
    """The Delta tables that exist: a query that took no row wrote none (on Babelfish, which ignores
    READPAST, one of several competing queries can go without a share)."""
    return [p for p in paths if os.path.isdir(os.path.join(p, "_delta_log"))]


def keys_in(spark, paths: list[str]):
    frames = [spark.read.format("delta").load(p).select("key") for p in written(paths)]
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return union


@pytest.mark.parametrize("consumers", [2, 4])
def test_competing_queries_share_a_queue_without_delivering_a_row_twice(spark, engine, tmp_path, consumers):
    if engine.name == "sqlite":
        pytest.skip("competing consumers are shown on the server engines; SQLite's are in the conformance suite")
    queue = engine.new_queue(domain=KEYED)
    total = 2_400
    options = engine.source_options(queue, maxRowsPerTrigger=300, emptyPollIntervalMs=100)
    targets = [str(tmp_path / f"delta{i}") for i in range(consumers)]
    queries = [start_query(spark, options, targets[i], str(tmp_path / f"cp{i}")) for i in range(consumers)]
    try:
        # Every query polls before the rows arrive: one slow to start would otherwise find them taken.
        assert wait_until(lambda: all(q.lastProgress for q in queries), timeout=120)
        queue.enqueue([{"key": k} for k in range(total)])
        assert wait_until(lambda: queue.inspection.stats() == {}, timeout=180), queue.inspection.stats()
    finally:
        for q in queries:
            q.stop()
    assert_each_key_once(keys_in(spark, targets), range(total), column="key")
    if not engine.babelfish:  # READPAST is ignored there (a Babelfish gap): who gets a share is timing
        per_query = [spark.read.format("delta").load(t).count() for t in written(targets)]
        assert len(per_query) == consumers and all(n > 0 for n in per_query), per_query  # every one took a share


def test_query_rides_out_a_database_restart(spark, tmp_path):
    server = PgServer().start()
    try:
        queue = Queue(parse_connection(server.url, password=PASSWORD), TableName("restart_q"))
        queue.create(KEYED)
        total = 3_000
        queue.enqueue([{"key": k} for k in range(total)])
        options = {
            "url": server.url,
            "password": PASSWORD,
            "queue": "restart_q",
            "maxRowsPerTrigger": "500",
            "retryBackoffMs": "500",
            "consumer": "restart-test",
        }
        target, checkpoint = str(tmp_path / "delta"), str(tmp_path / "cp")
        query = start_query(spark, options, target, checkpoint)
        assert wait_until(lambda: any(p["numInputRows"] for p in query.recentProgress), timeout=90)
        server.stop()
        time.sleep(3)
        server.start()
        drained = wait_until(lambda: is_empty(queue) or not query.isActive, timeout=120)
        survived = query.isActive
        query.stop()
        assert drained and survived, query.exception()
        assert_each_key_once(target, range(total), column="key")
        queue.close()
    finally:
        server.destroy()


def test_progress_shows_the_claim_its_waits_and_the_backlog_but_never_the_password(spark, postgres_server, tmp_path):
    from tests.support.engines import Engine

    engine = Engine("postgres", {"url": postgres_server.url, "password": PASSWORD})
    queue = engine.new_queue(domain=KEYED)
    queue.enqueue([{"key": k} for k in range(500)])
    move_back(queue, "enqueued_at", 3600)  # every row enqueued an hour ago
    options = engine.source_options(queue, maxRowsPerTrigger=200, prefetch=False)  # a backlog we can predict
    query = run_to_end(start_query(spark, options, str(tmp_path / "d"), str(tmp_path / "c"), availableNow=True))
    progress = [p for p in query.recentProgress if p["numInputRows"]]
    latest = [json.loads(p["sources"][0]["latestOffset"]) for p in progress]
    assert [(o["claimedRows"], o["readyRows"]) for o in latest] == [(200, 300), (200, 100), (100, 0)]
    hour = 3_600_000
    for o in latest:
        assert hour <= o["waitP50Ms"] <= o["waitP95Ms"] <= o["waitMaxMs"] < hour + 600_000, o
    ages = [o["oldestReadyAgeMs"] for o in latest]
    assert ages[2] is None and all(hour <= age < hour + 600_000 for age in ages[:2]), ages
    everything = json.dumps(query.recentProgress, default=str)
    assert PASSWORD not in everything
    engine.close()


def test_bad_option_is_refused_before_the_query_starts(spark, engine):
    queue = engine.new_queue()
    reader = spark.readStream.format("sqlqueue")
    for key, value in engine.source_options(queue, maxRowsPerTrigger="lots").items():
        reader = reader.option(key, value)
    with pytest.raises(Exception, match=r"option 'maxRowsPerTrigger' = 'lots' is not allowed: a whole number"):
        reader.load()
