"""run_to_end and run_until: each failure names the query, says what went wrong and shows its last progress."""

from __future__ import annotations

import pytest

from sqlqueue.testing import run_to_end, run_until

pytestmark = pytest.mark.spark


def failing_batch(df, batch_id: int) -> None:
    raise ValueError(f"cannot parse batch {batch_id}")


def drain(spark, queue, checkpoint: str, write=failing_batch):
    stream = spark.readStream.format("sqlqueue").options(**queue.source_options()).load()
    return stream.writeStream.foreachBatch(write).option("checkpointLocation", checkpoint).queryName("drain")


def endless(spark, checkpoint: str):
    """A rate stream: it never ends on its own."""
    stream = spark.readStream.format("rate").option("rowsPerSecond", 10).load()
    return stream.writeStream.format("noop").option("checkpointLocation", checkpoint).queryName("endless").start()


def test_run_to_end_returns_the_query_once_it_drained_the_queue(spark, make_queue, checkpoint_path):
    queue = make_queue(rows=[{"payload": "a"}])
    seen: list = []
    query = drain(spark, queue, checkpoint_path, lambda df, _: seen.extend(df.collect())).trigger(availableNow=True)
    assert not run_to_end(query.start()).isActive
    assert [row.payload for row in seen] == ["a"]


def test_run_to_end_fails_with_the_query_exception_and_its_last_progress(spark, make_queue, checkpoint_path):
    queue = make_queue(rows=[{"payload": "a"}])
    query = drain(spark, queue, checkpoint_path).trigger(availableNow=True).start()
    with pytest.raises(AssertionError) as failure:
        run_to_end(query)
    assert str(failure.value) == (
        "streaming query 'drain' failed: ValueError: cannot parse batch 0; "
        "it reported no progress (no micro-batch completed)"
    )


def test_run_to_end_stops_a_query_that_runs_past_the_timeout(spark, checkpoint_path):
    query = endless(spark, checkpoint_path)
    with pytest.raises(AssertionError, match=r"^streaming query 'endless' did not finish within 2 s; (last|it)"):
        run_to_end(query, timeout=2)
    assert not query.isActive


def test_run_until_stops_the_query_once_the_condition_holds(spark, checkpoint_path):
    query = endless(spark, checkpoint_path)
    run_until(query, lambda: query.lastProgress is not None and query.lastProgress["numInputRows"] > 0)
    assert not query.isActive


def test_run_until_fails_on_a_timeout_with_the_last_progress(spark, checkpoint_path):
    query = endless(spark, checkpoint_path)
    with pytest.raises(AssertionError) as failure:
        run_until(query, lambda: False, timeout=5)
    assert str(failure.value).startswith("streaming query 'endless' ran 5 s without the condition holding; ")
    assert not query.isActive


def test_run_until_fails_at_once_when_the_query_fails(spark, make_queue, checkpoint_path):
    queue = make_queue(rows=[{"payload": "a"}])
    query = drain(spark, queue, checkpoint_path).trigger(processingTime="100 milliseconds").start()
    with pytest.raises(AssertionError, match=r"^streaming query 'drain' failed: ValueError: cannot parse batch 0;"):
        run_until(query, lambda: False, timeout=120)
