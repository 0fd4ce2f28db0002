"""make_queue.adopted: a throwaway table of a design sqlqueue adopts, streamed as a user's table would be."""

from __future__ import annotations

import pytest

from sqlqueue.errors import ConfigError
from sqlqueue.queue import DONE_OUTCOME, FAILED_OUTCOME, RETRY_OUTCOME, Ack
from sqlqueue.testing import assert_dead_lettered, assert_each_key_once, assert_queue_holds, run_to_end


@pytest.mark.parametrize("design", ["relational", "started-mark", "claimer", "dequeue"])
def test_a_table_of_each_design_is_adopted_and_filled(make_queue, design):
    table = make_queue.adopted(design, rows=5)
    assert table.inspection.backlog().ready_rows == 5
    assert table.consuming.claim("test", 1, 2) == 2


def test_an_unknown_design_lists_the_designs(make_queue):
    with pytest.raises(ConfigError, match="design 'fifo' is not allowed: use one of relational, started-mark"):
        make_queue.adopted("fifo")


@pytest.mark.spark
def test_an_adopted_table_streams_into_delta_through_its_source_options(spark, make_queue, delta_path, checkpoint_path):
    table = make_queue.adopted("relational", rows=50)
    stream = spark.readStream.format("sqlqueue").options(**table.source_options()).load()
    query = stream.writeStream.format("delta").option("checkpointLocation", checkpoint_path)
    run_to_end(query.trigger(availableNow=True).start(delta_path))
    assert_each_key_once(delta_path, [f"p{i}" for i in range(50)], "Payload")


@pytest.fixture
def acknowledged(make_queue):
    """A relational table whose rows p0, p1 and p2 one claim took, then acknowledged: done, failed, retry."""
    table = make_queue.adopted("relational", rows=3)
    table.consuming.claim("test", 1, 3)
    with table.transaction() as cur:
        cur.execute(f"SELECT EnqueuedAt, Payload FROM {table.table}")
        key = {payload: (at,) for at, payload in cur.fetchall()}
        acks = [
            Ack(key["p0"], DONE_OUTCOME),
            Ack(key["p1"], FAILED_OUTCOME, "no such mailbox"),
            Ack(key["p2"], RETRY_OUTCOME, "SMTP 451", delay_seconds=600),
        ]
        table.consuming.apply_acks(cur, acks, keep=True, max_attempts=3)
    return table


def test_queue_holds_counts_an_adopted_tables_rows_per_status_value(acknowledged):
    assert_queue_holds(acknowledged, Completed=1, Failed=1, Error=1)
    with pytest.raises(
        AssertionError, match=r"holds rows per state: Pending 0 \(expected 1\), Error 1 \(expected 0\)$"
    ):
        assert_queue_holds(acknowledged, Pending=1, Completed=1, Failed=1)


def test_queue_holds_refuses_a_state_an_adopted_tables_profile_does_not_name(acknowledged):
    with pytest.raises(
        ValueError, match="unknown state\\(s\\) done: use Pending, Error, Processing, Completed, Failed"
    ):
        assert_queue_holds(acknowledged, done=1)


def test_dead_lettered_reads_an_adopted_tables_failed_status_and_its_error_column(acknowledged):
    assert_dead_lettered(acknowledged, {"p1": "mailbox"}, column="Payload")
    with pytest.raises(AssertionError) as failure:
        assert_dead_lettered(acknowledged, {"p2": "SMTP"}, column="Payload")
    assert str(failure.value) == (
        f"queue {acknowledged.table} did not dead-letter what was expected (Payload):\n"
        "  missing (1): p2\n"
        "  unexpected (1): p1: 'no such mailbox'"
    )


def test_dead_lettered_refuses_a_table_whose_profile_has_no_failed_status(make_queue):
    with pytest.raises(ValueError, match="profile claimer\\) has no failed status \\(profile.failed\\)"):
        assert_dead_lettered(make_queue.adopted("claimer"), {1: "x"})
