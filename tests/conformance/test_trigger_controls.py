"""minRowsPerTrigger with maxTriggerDelay: a trickle waits for enough rows, but never longer than the
delay; on every engine, through the source's reader called as Spark calls it (no Spark needed)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from sqlqueue.consumer import ClaimPolicy, Consumer
from sqlqueue.errors import ConfigError
from sqlqueue.options import SourceOptions
from sqlqueue.spark.reader import QueueStreamReader


def fill(queue, n: int) -> None:
    queue.enqueue([{"payload": f"p{i}"} for i in range(n)])


@pytest.fixture
def reader(engine) -> Iterator[Callable[..., QueueStreamReader]]:
    """Makes stream readers as Spark makes a query's, and stops each when the test ends, as Spark stops a
    query's: a reader left running keeps its consumer's heartbeat renewing claims after the test."""
    made: list[QueueStreamReader] = []

    def make(queue, **options) -> QueueStreamReader:
        raw = engine.source_options(
            queue, **{"consumer": "trickle", "emptyPollIntervalMs": 1, "prefetch": False, **options}
        )
        made.append(QueueStreamReader(SourceOptions.parse(raw), None))
        return made[-1]

    yield make
    for each in made:
        each.stop()


def test_a_consumer_claims_nothing_while_fewer_rows_than_min_are_ready(engine):
    queue = engine.new_queue()
    fill(queue, 5)
    consumer = engine.consumer(queue, "c1", ClaimPolicy(order=engine.order))
    assert consumer.advance(0, 100, min_rows=6) == 0
    assert queue.inspection.count_ready() == 5
    fill(queue, 1)
    assert consumer.advance(0, 100, min_rows=6) == 1
    assert consumer.last_claimed_rows == 6


def test_a_trickle_waits_for_min_rows_then_the_delay_releases_it(engine, reader):
    queue = engine.new_queue()
    fill(queue, 3)
    source = reader(queue, minRowsPerTrigger=50, maxTriggerDelay="1h", maxRowsPerTrigger=100)
    start = source.initialOffset()
    limit = source.getDefaultReadLimit()
    assert source.latestOffset(start, limit) == start  # 3 < 50 ready: no batch
    assert queue.inspection.count_ready() == 3
    source._last_batch_at -= 3601  # an hour has gone by since this run's first trigger
    end = source.latestOffset(start, limit)
    assert end["seq"] == 1 and queue.inspection.count_ready() == 0
    fill(queue, 3)
    assert source.latestOffset(end, limit) == end  # the delay counts again from that batch


def test_enough_rows_make_a_batch_at_once(engine, reader):
    queue = engine.new_queue()
    fill(queue, 60)
    source = reader(queue, minRowsPerTrigger=50, maxRowsPerTrigger=100)
    start = source.initialOffset()
    assert source.latestOffset(start, ReadMaxRows(100))["seq"] == 1


def test_available_now_ignores_min_rows(engine, reader):
    queue = engine.new_queue()
    fill(queue, 3)
    source = reader(queue, minRowsPerTrigger=50, maxRowsPerTrigger=100)
    source.prepareForTriggerAvailableNow()
    start = source.initialOffset()
    assert source.latestOffset(start, source.getDefaultReadLimit())["seq"] == 1
    other = reader(queue, minRowsPerTrigger=50, maxRowsPerTrigger=100, consumer="once")
    fill(queue, 3)
    assert other.latestOffset(other.initialOffset(), ReadAllAvailable())["seq"] == 1  # Trigger.Once


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"minRowsPerTrigger": "20000"},
            r"'minRowsPerTrigger' = 20000 is not allowed: at most maxRowsPerTrigger \(10000\)",
        ),
        ({"minRowsPerTrigger": "0"}, r"'minRowsPerTrigger' = '0' is not allowed: a whole number"),
        ({"maxTriggerDelay": "15"}, r"'maxTriggerDelay' = '15' is not allowed: a whole number with a unit"),
        ({"maxTriggerDelay": "soon"}, r"'maxTriggerDelay' = 'soon' is not allowed"),
    ],
)
def test_trigger_controls_are_checked(options, message):
    with pytest.raises(ConfigError, match=message):
        SourceOptions.parse({"url": "sqlite:///q.db", "queue": "jobs", **options})


@pytest.mark.parametrize(("text", "ms"), [("500ms", 500), ("30s", 30_000), ("15m", 900_000), ("1H", 3_600_000)])
def test_max_trigger_delay_takes_a_unit(text, ms):
    parsed = SourceOptions.parse({"url": "sqlite:///q.db", "queue": "jobs", "maxTriggerDelay": text})
    assert parsed.max_trigger_delay_ms == ms
    assert SourceOptions.parse({"url": "sqlite:///q.db", "queue": "jobs"}).max_trigger_delay_ms == 900_000


def test_a_claim_ahead_waits_for_min_rows_too(engine):
    queue = engine.new_queue()
    fill(queue, 60)
    consumer = Consumer(queue, "c1", ClaimPolicy(order=engine.order, prefetch=True))
    assert consumer.advance(0, 50, min_rows=50) == 1
    assert consumer.advance(1, 50, min_rows=50) == 1  # the 10 left were not claimed ahead
    assert queue.inspection.count_ready() == 10
    consumer.close()
