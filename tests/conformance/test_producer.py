"""The sink's stage/publish protocol, on every engine: exactly once, all at once."""
from __future__ import annotations

import itertools

import pytest

from sqlqueue.errors import DatabaseError
from sqlqueue.producer import Producer, Staged
from sqlqueue.schema import LIFECYCLE_TYPES, Column

PAYLOAD = (Column("payload", "text"),)
KEYED = (Column("payload", "text"), LIFECYCLE_TYPES["dedup_key"])
_claims = itertools.count(1)


def rows(*payloads: str) -> list[tuple]:
    return [(p,) for p in payloads]


def take_ready(queue) -> list[str]:
    """Claim every claimable row and return the payloads, sorted."""
    seq = next(_claims)
    queue.claim("reader", seq, 1_000_000)
    taken = []
    for lo, hi in queue.partition_bounds("reader", seq - 1, seq, 1):
        for chunk in queue.read_claimed("reader", seq - 1, seq, lo, hi, ["payload"]):
            taken += [r[0] for r in chunk]
    return sorted(taken)


def test_staged_rows_cannot_be_claimed(engine):
    queue = engine.new_queue()
    Producer(queue, "w").stage(0, 0, PAYLOAD, rows("a", "b"))
    assert queue.claim("c", 1, 10) == 0
    assert queue.staged_rows() == 2


def test_publish_makes_every_task_of_the_batch_claimable(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    staged = [producer.stage(0, 0, PAYLOAD, rows("a", "b")), producer.stage(0, 1, PAYLOAD, rows("c"))]
    assert producer.publish(0, PAYLOAD, staged) == 3
    assert take_ready(queue) == ["a", "b", "c"]


def test_stage_reports_its_tag_and_row_count(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    staged = producer.stage(5, 2, PAYLOAD, iter(rows("a", "b", "c")))
    assert (staged.tag, staged.rows) == (producer.tag(5, 2), 3)


def test_publishing_a_batch_twice_is_a_no_op(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    staged = [producer.stage(0, 0, PAYLOAD, rows("a"))]
    assert producer.publish(0, PAYLOAD, staged) == 1
    assert producer.publish(0, PAYLOAD, staged) is None
    assert take_ready(queue) == ["a"]


def test_a_published_batch_written_again_stages_nothing(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w", run_id="run-1")
    producer.publish(0, PAYLOAD, [producer.stage(0, 0, PAYLOAD, rows("a"))])
    replay = Producer(queue, "w", run_id="run-2")  # the restart after a crash inside commit
    staged = replay.stage(0, 0, PAYLOAD, rows("a"))
    assert staged.rows == 0
    assert replay.publish(0, PAYLOAD, [staged]) is None
    assert take_ready(queue) == ["a"]
    assert queue.staged_rows() == 0


def test_a_retried_task_replaces_what_its_earlier_attempt_staged(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    producer.stage(0, 0, PAYLOAD, rows("a", "b"))  # attempt 0 committed its rows, then failed
    producer.publish(0, PAYLOAD, [producer.stage(0, 0, PAYLOAD, rows("a", "b"))])
    assert take_ready(queue) == ["a", "b"]


def test_a_task_that_fails_while_staging_leaves_nothing(engine):
    queue = engine.new_queue()

    def failing():
        yield ("a",)
        raise RuntimeError("task killed")

    with pytest.raises(RuntimeError):
        Producer(queue, "w").stage(0, 0, PAYLOAD, failing())
    assert queue.staged_rows() == 0


def test_publish_deletes_staged_rows_of_tasks_spark_did_not_commit(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    kept = producer.stage(0, 0, PAYLOAD, rows("a"))
    producer.stage(0, 1, PAYLOAD, rows("orphan"))  # e.g. a speculative attempt that lost
    assert producer.publish(0, PAYLOAD, [kept]) == 1
    assert queue.staged_rows() == 0
    assert take_ready(queue) == ["a"]


def test_a_new_run_clears_what_a_crashed_run_staged_for_the_batch(engine):
    queue = engine.new_queue()
    crashed = Producer(queue, "w", run_id="run-1")
    crashed.stage(0, 0, KEYED, [("a", "k1"), ("b", "k2")])
    # The replay puts key k1 in another task: it must not lose to the crashed run's copy.
    replay = Producer(queue, "w", run_id="run-2")
    staged = [replay.stage(0, 1, KEYED, [("a", "k1")]), replay.stage(0, 0, KEYED, [("b", "k2")])]
    assert replay.publish(0, KEYED, staged) == 2
    assert take_ready(queue) == ["a", "b"]
    assert queue.staged_rows() == 0


def test_tasks_of_one_run_keep_each_others_rows(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w", run_id="run-1")
    staged = [producer.stage(0, t, PAYLOAD, rows(f"p{t}")) for t in range(3)]
    assert producer.publish(0, PAYLOAD, staged) == 3


def test_discard_deletes_only_the_aborted_batch(engine):
    queue = engine.new_queue()
    producer, other = Producer(queue, "w"), Producer(queue, "other-writer")
    producer.stage(0, 0, PAYLOAD, rows("aborted", "aborted"))
    keep = [producer.stage(1, 0, PAYLOAD, rows("next-batch")), other.stage(0, 0, PAYLOAD, rows("other"))]
    assert producer.discard(0) == 2
    producer.publish(1, PAYLOAD, keep[:1])
    other.publish(0, PAYLOAD, keep[1:])
    assert take_ready(queue) == ["next-batch", "other"]


def test_writers_publish_the_same_batch_number_independently(engine):
    queue = engine.new_queue()
    one, two = Producer(queue, "one"), Producer(queue, "two")
    s1, s2 = one.stage(0, 0, PAYLOAD, rows("x")), two.stage(0, 0, PAYLOAD, rows("y"))
    assert one.publish(0, PAYLOAD, [s1]) == 1
    assert two.publish(0, PAYLOAD, [s2]) == 1
    assert take_ready(queue) == ["x", "y"]


def test_enqueueing_an_existing_dedup_key_again_is_a_no_op(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    producer.publish(0, KEYED, [producer.stage(0, 0, KEYED, [("first", "k1")])])
    assert producer.publish(1, KEYED, [producer.stage(1, 0, KEYED, [("again", "k1"), ("new", "k2")])]) == 1
    assert take_ready(queue) == ["first", "new"]


def test_a_dedup_key_repeated_within_a_batch_is_enqueued_once(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    staged = producer.stage(0, 0, KEYED, [("a", "k1"), ("b", "k1"), ("c", None), ("d", None)])
    assert producer.publish(0, KEYED, [staged]) == 3
    assert len(take_ready(queue)) == 3


def test_an_empty_task_stages_nothing(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    staged = producer.stage(0, 0, PAYLOAD, [])
    assert staged.rows == 0
    assert producer.publish(0, PAYLOAD, [staged]) == 0
    assert producer.published(0)


def test_a_row_the_table_refuses_fails_the_stage(engine):
    queue = engine.new_queue(domain=(Column("payload", "text", nullable=False),))
    with pytest.raises(DatabaseError):
        Producer(queue, "w").stage(0, 0, PAYLOAD, rows("a", None))
    assert queue.stats() == {}


def test_a_dedup_key_of_a_batch_never_published_does_not_block_later_ones(engine):
    queue = engine.new_queue()
    Producer(queue, "deleted-checkpoint").stage(0, 0, KEYED, [("orphan", "k1")])
    producer = Producer(queue, "w")
    assert producer.publish(0, KEYED, [producer.stage(0, 0, KEYED, [("a", "k1")])]) == 1
    assert take_ready(queue) == ["a"]


def test_publish_refuses_a_batch_whose_staged_rows_are_gone(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    staged = producer.stage(0, 0, PAYLOAD, rows("a", "b"))
    producer.discard(0)  # as PostgreSQL's crash recovery empties an unlogged staging table
    with pytest.raises(DatabaseError, match="batch 0 of writer 'w' was not published: a task staged 2 rows but 0"):
        producer.publish(0, PAYLOAD, [staged])
    assert not producer.published(0)
    assert take_ready(queue) == []
