"""Queue wait on every engine: how long a claim's rows waited (claimed_at - enqueued_at) as p50, p95
and max, the oldest claimable row's age, and the waits of recent claims, checked against rows whose
times the test sets in SQL; per claim, in the consumer, and in the source's progress and log line
(its reader called as Spark's driver calls it, no Spark needed)."""

from __future__ import annotations

import datetime as dt
import logging
import math
import re

import pytest

from sqlqueue.consumer import ClaimPolicy, Consumer
from sqlqueue.options import SourceOptions
from sqlqueue.producer import Producer
from sqlqueue.schema import Column
from sqlqueue.waits import Backlog, Waits, duration
from tests.support.clock import move_back, set_times
from tests.support.ids import ids

T0 = dt.datetime(2026, 3, 1, 12, 0, 0, tzinfo=dt.timezone.utc)


def recorded(queue, consumer: str, seq: int) -> list[tuple[dt.datetime, dt.datetime]]:
    """(enqueued_at, claimed_at) of a claim's rows, as the database recorded them."""
    e, held = queue.engine, queue.dialect.lifecycle.held(queue.consuming.holding)
    statement = e.compile(
        f"SELECT {e.quote('enqueued_at')}, {e.quote('claimed_at')} FROM {e.table(queue.table)} WHERE {held}"
    )
    rows = queue.fetch(statement, {"consumer": consumer, "seq": seq})
    return [(e.decode_timestamp(enqueued), e.decode_timestamp(claimed)) for enqueued, claimed in rows]


def nearest_rank(values: list[int], p: float) -> int:
    """The reference: the value at rank ceil(p * n) of the sorted values."""
    return sorted(values)[math.ceil(p * len(values)) - 1]


def expected(waits_ms: list[int]) -> Waits:
    return Waits(len(waits_ms), nearest_rank(waits_ms, 0.5), nearest_rank(waits_ms, 0.95), max(waits_ms))


@pytest.mark.babelfish_gap("datetime2_param")
@pytest.mark.parametrize("n", [1, 2, 3, 20, 101])
def test_a_claims_waits_are_the_nearest_rank_percentiles_of_claim_time_minus_enqueue_time(engine, n):
    queue = engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(n)])
    # Waits of 1.25 s, 2.25 s, ... in an order unrelated to the ids, some of them repeated.
    waits_ms = [((7 * i) % n) // 2 * 1000 + 1250 for i in range(n)]
    rows = ids(queue)
    set_times(queue, "enqueued_at", {r: T0 - dt.timedelta(milliseconds=w) for r, w in zip(rows, waits_ms)})
    assert queue.consuming.claim("c", 1, n, order=engine.order) == n
    set_times(queue, "claimed_at", dict.fromkeys(rows, T0))
    queue.enqueue([{"payload": "later"}])  # another claim's row, claimed as it arrives
    queue.consuming.claim("c", 2, 1, order=engine.order)
    assert queue.inspection.claim_waits("c", 1) == expected(waits_ms)


def test_the_waits_of_twenty_rows_of_one_to_twenty_seconds(engine):
    """The figures by hand: p50 is the 10th of 20 waits, p95 the 19th."""
    queue = engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(20)])
    rows = ids(queue)
    set_times(queue, "enqueued_at", {r: T0 - dt.timedelta(seconds=20 - i) for i, r in enumerate(rows)})
    queue.consuming.claim("c", 1, 20, order=engine.order)
    set_times(queue, "claimed_at", dict.fromkeys(rows, T0))
    assert queue.inspection.claim_waits("c", 1) == Waits(20, 10_000, 19_000, 20_000)


def test_a_consumer_reports_the_waits_of_its_claim_from_the_claim_time_the_database_recorded(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(10)])
    for i, row in enumerate(ids(queue), 1):
        move_back(queue, "enqueued_at", 30 * i, ids=[row])
    consumer = engine.consumer(queue, "c", ClaimPolicy(order=engine.order, prefetch=False))
    assert consumer.advance(0, 10) == 1
    waits = consumer.last_waits
    # The reference from the recorded times; engines round to the millisecond differently.
    want = expected([round((c - e).total_seconds() * 1000) for e, c in recorded(queue, "c", 1)])
    assert waits.rows == want.rows == 10
    for got, ref in ((waits.p50_ms, want.p50_ms), (waits.p95_ms, want.p95_ms), (waits.max_ms, want.max_ms)):
        assert got is not None and ref is not None and abs(got - ref) <= 1
    assert 150_000 <= waits.p50_ms < 160_000 and 300_000 <= waits.max_ms < 310_000


def test_a_claim_returns_its_waits_with_its_rows_so_none_is_ranked_again(engine, monkeypatch):
    queue = engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(10)])
    spread_enqueue_times(queue, 10)
    ranked_again: list[int] = []
    measure = queue.inspection.claim_waits
    monkeypatch.setattr(queue.inspection, "claim_waits", lambda c, seq: ranked_again.append(seq) or measure(c, seq))
    consumer = Consumer(queue, "c", ClaimPolicy(order=engine.order, prefetch=True))
    assert consumer.advance(0, 4) == 1  # claims 1, and 2 ahead
    assert consumer.last_waits == measure("c", 1) and consumer.last_waits.rows == 4
    assert consumer.advance(1, 4) == 2
    assert consumer.last_waits == measure("c", 2) and consumer.last_waits.rows == 4
    consumer.close()
    assert ranked_again == []


def test_a_claim_with_no_rows_has_no_waits(engine):
    queue = engine.new_queue()
    assert queue.inspection.claim_waits("c", 1) == Waits()
    consumer = engine.consumer(queue, "c", ClaimPolicy(order=engine.order))
    assert consumer.advance(0, 10) == 0 and consumer.last_waits == Waits()


def spread_enqueue_times(queue, n: int) -> None:
    """The first n rows enqueued 1 s, 2 s, ... n s before T0, in an order unrelated to their ids."""
    rows = ids(queue)[:n]
    set_times(queue, "enqueued_at", {r: T0 - dt.timedelta(seconds=(7 * i) % n + 1) for i, r in enumerate(rows, 1)})


def test_a_claim_made_ahead_hands_its_waits_to_the_batch_it_serves(engine, monkeypatch):
    queue = engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(10)])
    spread_enqueue_times(queue, 10)
    consumer = Consumer(queue, "c", ClaimPolicy(order=engine.order, prefetch=True))
    consumer.advance(0, 4)  # claims 1, and 2 ahead
    read_again: list[int] = []
    measure = queue.inspection.claim_waits
    monkeypatch.setattr(queue.inspection, "claim_waits", lambda c, seq: read_again.append(seq) or measure(c, seq))
    assert consumer.advance(1, 4) == 2
    assert read_again == [] and consumer.last_waits == measure("c", 2) and consumer.last_waits.rows == 4
    consumer.close()


def test_rows_claimed_before_a_crash_are_measured_from_the_table(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(6)])
    spread_enqueue_times(queue, 6)
    queue.consuming.claim("c", 1, 6, order=engine.order)  # the offset of claim 1 was never logged
    set_times(queue, "claimed_at", dict.fromkeys(ids(queue), T0))  # waits of 1 s to 6 s
    consumer = engine.consumer(queue, "c", ClaimPolicy(order=engine.order, prefetch=False))
    assert consumer.advance(0, 100) == 1
    assert consumer.last_waits == Waits(6, 3_000, 6_000, 6_000)


def test_the_backlog_ages_the_oldest_row_a_claim_could_take_by_the_database_clock(engine):
    queue = engine.new_queue()
    assert queue.inspection.backlog() == Backlog(0, None)
    queue.enqueue([{"payload": "claimable"}, {"payload": "fresh"}, {"payload": "claimed"}])
    queue.enqueue([{"payload": "not due", "due_at": dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)}])
    Producer(queue, "w").write(0, 0, (Column("payload", "text"),), [("unpublished",)])
    queue.consuming.claim("c", 1, 1, order=engine.order)  # row 1, the oldest id: claimed, not ready any more
    rows = ids(queue)
    move_back(queue, "enqueued_at", 3000, ids=[rows[0]])
    move_back(queue, "enqueued_at", 300, ids=[rows[1]])
    move_back(queue, "enqueued_at", 600, ids=[rows[3]])  # not due yet
    move_back(queue, "enqueued_at", 900, ids=[rows[4]])  # in a sink batch Spark has not committed
    backlog = queue.inspection.backlog()
    assert backlog.ready_rows == 2 == queue.inspection.count_ready()
    assert backlog.oldest_age_ms is not None and 300_000 <= backlog.oldest_age_ms < 330_000
    # The oldest by enqueue time, not the lowest id (a producer's transaction can commit an older
    # enqueue time after newer ids; on PostgreSQL now() is the transaction's start).
    queue.enqueue([{"payload": "late commit"}])
    move_back(queue, "enqueued_at", 450, ids=ids(queue)[5:])
    assert queue.inspection.backlog().oldest_age_ms >= 450_000


def test_recent_waits_count_every_row_claimed_since_a_time_that_is_still_in_the_table(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(6)])
    rows = ids(queue)
    set_times(queue, "enqueued_at", {r: T0 - dt.timedelta(seconds=i) for i, r in enumerate(rows, 1)})
    queue.consuming.claim("c", 1, 6, order=engine.order)
    set_times(queue, "claimed_at", dict.fromkeys(rows, T0) | {rows[4]: T0 - dt.timedelta(hours=2)})
    queue.consuming.complete("c", 1, keep=True)  # rows 1-6 done and kept, claimed_at kept with them
    queue.enqueue([{"payload": "ready, never claimed"}])
    assert queue.inspection.recent_waits(T0 - dt.timedelta(minutes=1)) == Waits(5, 3_000, 6_000, 6_000)
    assert queue.inspection.recent_waits(T0 + dt.timedelta(minutes=1)) == Waits()


def reader(engine, queue, **options):
    """The source's reader as Spark's driver calls it, without Spark."""
    from sqlqueue.spark.reader import QueueStreamReader

    raw = engine.source_options(queue, consumer="waits", emptyPollIntervalMs=1, prefetch=False, **options)
    return QueueStreamReader(SourceOptions.parse(raw), None)


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def source_log():
    """The source's log lines. Its logger does not propagate to pytest's capture (see spark/logs.py)."""
    logger, lines = logging.getLogger("sqlqueue.source"), Lines()
    logger.addHandler(lines)
    yield lines.lines
    logger.removeHandler(lines)


def test_a_batch_reports_its_waits_and_the_oldest_ready_row_in_progress_and_its_log_line(engine, source_log):
    from pyspark.sql.streaming.datasource import ReadMaxRows

    queue = engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(5)])  # rows 1-5 enqueued 2:01:00 to 2:05:00 ago
    for i, row in enumerate(ids(queue), 1):
        move_back(queue, "enqueued_at", 7200 + 60 * i, ids=[row])
    source = reader(engine, queue, maxRowsPerTrigger=3)
    end = source.latestOffset({"consumer": "waits", "seq": 0}, ReadMaxRows(3))
    progress = source.reportLatestOffset()
    waits = queue.inspection.claim_waits("waits", end["seq"])
    assert progress is not None and progress["claimedRows"] == 3 and progress["readyRows"] == 2
    # The claim measures its rows' waits as it reads them; held as runs, they are recorded by the next
    # statement of its transaction, whose clock reading may be a millisecond on (not PostgreSQL's: now() is
    # the transaction's start).
    shown = (progress["waitP50Ms"], progress["waitP95Ms"], progress["waitMaxMs"])
    recorded = (waits.p50_ms, waits.p95_ms, waits.max_ms)
    assert None not in recorded and all(abs(a - b) <= 1_000 for a, b in zip(shown, recorded)), (shown, recorded)
    assert 7_500_000 <= progress["oldestReadyAgeMs"] < 7_560_000  # row 5, enqueued 2:05:00 ago
    table = queue.table
    pattern = (
        rf"waits: claim 1 took 3 rows from {re.escape(str(table))} \(queue wait {re.escape(str(waits))}\), "
        r"2 ready rows remain \(oldest 2:05:\d\d\)"
    )
    assert len(source_log) == 1 and re.fullmatch(pattern, source_log[0]), source_log
    assert waits.p50_ms is not None and 7_320_000 <= waits.p50_ms < 7_380_000  # row 2: 2:02:00 and a little
    source.stop()


def test_an_empty_poll_reports_the_backlog_and_no_waits(engine, source_log):
    from pyspark.sql.streaming.datasource import ReadMaxRows

    queue = engine.new_queue()
    source = reader(engine, queue)
    source.latestOffset({"consumer": "waits", "seq": 0}, ReadMaxRows(10))
    assert source.reportLatestOffset() == {
        "consumer": "waits",
        "seq": 0,
        "claimedRows": 0,
        "readyRows": 0,
        "waitP50Ms": None,
        "waitP95Ms": None,
        "waitMaxMs": None,
        "oldestReadyAgeMs": None,
        "fencedRows": 0,
    }
    assert source_log == []
    source.stop()


def test_durations_read_as_milliseconds_seconds_or_hours():
    assert [duration(ms) for ms in (None, 812, 12_345, 99_949, 7_325_000)] == [
        "-",
        "812 ms",
        "12.3 s",
        "99.9 s",
        "2:02:05",
    ]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 20, 101])
def test_waits_a_claim_returned_are_ranked_as_the_database_ranks_them(n):
    waits_ms = [((7 * i) % max(n, 1)) * 1000 + 250 for i in range(n)]
    assert Waits.ranked(waits_ms) == (expected(waits_ms) if n else Waits())
