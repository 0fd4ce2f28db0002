"""Queue wait: how long rows waited between enqueue and claim, per claim and in the source's progress,
checked against rows whose enqueue times the test sets in SQL; on every engine, no Spark needed."""

from __future__ import annotations

import json
import logging

from pyspark.sql.streaming.datasource import ReadMaxRows

from sqlqueue.consumer import ClaimPolicy, Consumer
from sqlqueue.options import SourceOptions
from sqlqueue.spark.reader import QueueStreamReader
from sqlqueue.waits import Waits
from tests.support.clock import move_back

MINUTE_MS = 60_000


def enqueued_ago(queue, seconds: list[int]) -> list[int]:
    """Enqueue a row per entry, each enqueued that many seconds before the database's now; their ids."""
    queue.enqueue([{"payload": f"p{i}"} for i in range(len(seconds))])
    ids = sorted(row["id"] for row in queue.peek(len(seconds), columns=["id"]))
    for row_id, ago in zip(ids, seconds, strict=True):
        move_back(queue, "enqueued_at", ago, ids=[row_id])
    return ids


def recorded_waits(queue) -> list[int]:
    """Claim time minus enqueue time of every claimed row, from the times the database recorded."""
    d = queue.dialect
    with queue.transaction() as cur:
        cur.execute(f"SELECT {d.quote('enqueued_at')}, {d.quote('claimed_at')} FROM {d.table(queue.table)}")
        times = [(d.decode_timestamp(e), d.decode_timestamp(c)) for e, c in cur.fetchall()]
    return [round((claimed - enqueued).total_seconds() * 1000) for enqueued, claimed in times]


def test_nearest_rank_percentiles():
    assert Waits.of(range(100, 0, -1)) == Waits(100, 50, 95, 100)
    assert Waits.of([7]) == Waits(1, 7, 7, 7)
    assert Waits.of([]) == Waits(0, None, None, None)


def test_a_claim_reports_how_long_its_rows_waited(engine):
    queue = engine.new_queue()
    enqueued_ago(queue, [600 + i for i in range(20)])  # 600 s to 619 s ago
    consumer = Consumer(queue, "c1", ClaimPolicy())
    consumer.advance(0, 20)
    expected = sorted(recorded_waits(queue))
    waits = consumer.last_waits
    assert waits.rows == 20
    for figure, rank in ((waits.p50_ms, 10), (waits.p95_ms, 19), (waits.max_ms, 20)):
        assert abs(figure - expected[rank - 1]) <= 1  # the engine rounds its own difference
    assert 609_000 <= waits.p50_ms < 609_000 + MINUTE_MS


def test_an_empty_claim_reports_no_wait(engine):
    consumer = Consumer(engine.new_queue(), "c1", ClaimPolicy())
    consumer.advance(0, 10)
    assert consumer.last_waits == Waits()


def test_the_oldest_ready_row_is_the_first_one_enqueued(engine):
    queue = engine.new_queue()
    assert queue.oldest_ready_age_ms() is None
    ids = enqueued_ago(queue, [900, 300, 60])
    assert 900_000 <= queue.oldest_ready_age_ms() < 900_000 + MINUTE_MS
    queue.claim("c1", 1, 1)  # takes the oldest: the next one is 300 s old
    assert queue.peek(1, columns=["id"])[0]["id"] == ids[1]
    assert 300_000 <= queue.oldest_ready_age_ms() < 300_000 + MINUTE_MS


def test_progress_and_log_line_show_the_queue_wait_and_the_oldest_ready_row(engine, caplog):
    queue = engine.new_queue()
    enqueued_ago(queue, [1200] * 3 + [600] * 3)
    raw = engine.source_options(queue, consumer="waits", prefetch=False, maxRowsPerTrigger=3)
    source = QueueStreamReader(SourceOptions.parse(raw), None)
    logging.getLogger("sqlqueue").addHandler(caplog.handler)  # the worker logger does not propagate
    try:
        with caplog.at_level(logging.INFO, logger="sqlqueue"):
            source.latestOffset(source.initialOffset(), ReadMaxRows(3))
    finally:
        logging.getLogger("sqlqueue").removeHandler(caplog.handler)
    progress = json.loads(json.dumps(source.reportLatestOffset()))
    assert progress["claimedRows"] == 3 and progress["readyRows"] == 3
    assert 1_200_000 <= progress["waitP50Ms"] <= progress["waitP95Ms"] <= progress["waitMaxMs"] < 1_260_000
    assert 600_000 <= progress["oldestReadyAgeMs"] < 660_000
    assert "(queue wait p50 1200." in caplog.text and "(oldest 600." in caplog.text


def test_a_claim_made_ahead_reports_its_own_rows_waits(engine):
    queue = engine.new_queue()
    enqueued_ago(queue, [1200] * 5 + [600] * 5)
    consumer = Consumer(queue, "c1", ClaimPolicy(prefetch=True))
    assert consumer.advance(0, 5) == 1  # a full claim: the next one is made ahead, in the background
    assert consumer.advance(1, 5) == 2  # served from the claim made ahead
    assert consumer.last_waits.rows == 5
    assert 600_000 <= consumer.last_waits.max_ms < 660_000
    consumer.close()
