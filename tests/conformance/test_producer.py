"""The sink's write/publish protocol, on every engine: exactly once, all at once.

Protocol tests run twice: batches without a dedup key (written into the queue under unpublished
tags) and batches with one (staged in the staging table).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from sqlqueue.dialects.engine import execute
from sqlqueue.errors import DatabaseError
from sqlqueue.producer import Producer, Written, row_tag
from sqlqueue.retry import RetryPolicy
from sqlqueue.schema import LIFECYCLE_TYPES, Column
from sqlqueue.testing import assert_queue_holds

PAYLOAD = (Column("payload", "text"),)
KEYED = (Column("payload", "text"), LIFECYCLE_TYPES["dedup_key"])
_claims = itertools.count(1)


@pytest.fixture(params=["unpublished", "staged"])
def columns(request) -> tuple[Column, ...]:
    return PAYLOAD if request.param == "unpublished" else KEYED


def rows(columns: tuple[Column, ...], *payloads: str | None) -> list[tuple]:
    """Rows of ``columns`` with these payloads (and no dedup key)."""
    return [(p,) if columns == PAYLOAD else (p, None) for p in payloads]


def take_ready(queue) -> list[str]:
    """Claim every claimable row and return the payloads, sorted."""
    seq = next(_claims)
    queue.consuming.claim("reader", seq, 1_000_000, order="heap")
    taken = []
    for lo, hi in queue.consuming.partition_bounds("reader", seq - 1, seq, 1):
        for chunk in queue.consuming.read_claimed("reader", seq - 1, seq, lo, hi, ["payload"]):
            taken += [r[0] for r in chunk]
    return sorted(taken)


def test_rows_of_an_unpublished_batch_cannot_be_claimed(engine, columns):
    queue = engine.new_queue()
    Producer(queue, "w").write(0, 0, columns, rows(columns, "a", "b"))
    assert queue.consuming.claim("c", 1, 10, order=engine.order) == 0
    assert queue.inspection.unpublished_rows() == 2


def test_rows_of_an_unpublished_batch_are_not_in_the_backlog_nor_peeked(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "ready"}])
    Producer(queue, "w").write(0, 0, PAYLOAD, rows(PAYLOAD, "unpublished"))
    assert queue.inspection.count_ready() == 1
    assert [r["payload"] for r in queue.inspection.peek(10, columns=["payload"])] == ["ready"]
    assert queue.consuming.available_now_bound() == 1
    assert {state: s["rows"] for state, s in queue.inspection.stats().items()} == {"ready": 1, "unpublished": 1}


def test_ready_rows_around_an_unpublished_batch_stay_claimable_in_order(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "before"}])
    producer = Producer(queue, "w")
    written = producer.write(0, 0, PAYLOAD, rows(PAYLOAD, "b1", "b2"))
    queue.enqueue([{"payload": "after"}])
    assert take_ready(queue) == ["after", "before"]
    producer.publish(0, PAYLOAD, [written])
    assert take_ready(queue) == ["b1", "b2"]


def test_publish_makes_every_task_of_the_batch_claimable(engine, columns):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    written = [
        producer.write(0, 0, columns, rows(columns, "a", "b")),
        producer.write(0, 1, columns, rows(columns, "c")),
    ]
    assert producer.publish(0, columns, written) == 3
    assert take_ready(queue) == ["a", "b", "c"]


def test_stage_reports_its_tag_and_row_count(engine, columns):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    written = producer.write(5, 2, columns, iter(rows(columns, "a", "b", "c")))
    assert (written.stage_tag, written.rows) == (producer.stage_tag(5, 2), 3)


def test_publishing_a_batch_twice_is_a_no_op(engine, columns):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    written = [producer.write(0, 0, columns, rows(columns, "a"))]
    assert producer.publish(0, columns, written) == 1
    assert producer.publish(0, columns, written) is None
    assert take_ready(queue) == ["a"]


def test_a_published_batch_written_again_stages_nothing(engine, columns):
    queue = engine.new_queue()
    producer = Producer(queue, "w", run_id="run-1")
    producer.publish(0, columns, [producer.write(0, 0, columns, rows(columns, "a"))])
    replay = Producer(queue, "w", run_id="run-2")  # the restart after a crash inside commit
    written = replay.write(0, 0, columns, rows(columns, "a"))
    assert written.rows == 0
    assert replay.publish(0, columns, [written]) is None
    assert take_ready(queue) == ["a"]
    assert queue.inspection.unpublished_rows() == 0


def test_publish_deletes_what_a_failed_attempt_of_a_task_wrote(engine, columns):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    producer.write(0, 0, columns, rows(columns, "a", "b"), attempt=7)  # committed its rows, then failed
    producer.publish(0, columns, [producer.write(0, 0, columns, rows(columns, "a", "b"), attempt=9)])
    assert take_ready(queue) == ["a", "b"]
    assert queue.inspection.unpublished_rows() == 0


def test_an_attempt_writing_late_leaves_the_committed_attempt_whole(engine, columns):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    committed = producer.write(0, 0, columns, rows(columns, "a", "b"), attempt=2)
    producer.write(0, 0, columns, rows(columns, "zombie"), attempt=1)  # still running when Spark moved on
    assert producer.publish(0, columns, [committed]) == 2
    assert take_ready(queue) == ["a", "b"]


def test_a_batch_write_run_again_replaces_what_a_dead_run_wrote_under_the_same_tag(engine, columns):
    queue = engine.new_queue()
    Producer(queue, "job").write(3, 0, columns, rows(columns, "dead run"))  # attempt ids start again in a new run
    producer = Producer(queue, "job")
    assert producer.publish(3, columns, [producer.write(3, 0, columns, rows(columns, "a"))]) == 1
    assert take_ready(queue) == ["a"]


def unpublished_table(queue) -> str:
    return queue.engine.table(queue.dialect.schema.unpublished(queue.table))


def ranges_miss_their_rows(queue) -> None:
    """Every listed tag's id range emptied, as ids given explicitly or drawn from a cached sequence would leave it."""
    with queue.transaction() as cur:
        cur.execute(f"UPDATE {unpublished_table(queue)} SET id_after = id_upto")


def listed(queue) -> int:
    """Entries of the queue's unpublished table, row tags' included (their row count is 0)."""
    with queue.transaction() as cur:
        cur.execute(f"SELECT COUNT(*) FROM {unpublished_table(queue)}")
        return int(cur.fetchone()[0])


def as_an_older_version_wrote(queue, written: Written) -> None:
    """Rows of ``written`` as a version before row tags left them: under the stage tag, nothing else listed."""
    tag = queue.engine.quote("stage_tag")
    stage, short = written.stage_tag, row_tag(written.stage_tag)
    with queue.transaction() as cur:
        cur.execute(f"UPDATE {queue.engine.table(queue.table)} SET {tag} = '{stage}' WHERE {tag} = '{short}'")
        assert cur.rowcount == written.rows
        cur.execute(f"DELETE FROM {unpublished_table(queue)} WHERE {tag} = '{short}'")
        assert cur.rowcount == 1


def test_abort_deletes_rows_outside_the_id_range_their_tag_recorded(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    producer.write(0, 0, PAYLOAD, rows(PAYLOAD, "a", "b"))
    ranges_miss_their_rows(queue)
    assert producer.discard(0) == 2
    assert queue.inspection.stats() == {} and listed(queue) == 0


def test_a_batch_an_older_version_wrote_is_published_whole(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    written = producer.write(0, 0, PAYLOAD, rows(PAYLOAD, "a", "b"))
    as_an_older_version_wrote(queue, written)
    assert queue.consuming.claim("c", 1, 10, order=engine.order) == 0
    assert producer.publish(0, PAYLOAD, [written]) == 2
    assert take_ready(queue) == ["a", "b"]
    assert listed(queue) == 0


def test_publish_deletes_what_an_older_version_left_unpublished(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    as_an_older_version_wrote(queue, producer.write(0, 0, PAYLOAD, rows(PAYLOAD, "failed", "failed"), attempt=3))
    assert producer.publish(0, PAYLOAD, [producer.write(0, 0, PAYLOAD, rows(PAYLOAD, "a"), attempt=4)]) == 1
    assert take_ready(queue) == ["a"]
    assert listed(queue) == 0


def test_a_write_retried_over_what_an_older_version_committed_leaves_its_rows_once(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    as_an_older_version_wrote(queue, producer.write(0, 0, PAYLOAD, rows(PAYLOAD, "a", "b"), attempt=7))
    written = producer.write(0, 0, PAYLOAD, rows(PAYLOAD, "a", "b"), attempt=7)  # the same tag, written again
    assert producer.publish(0, PAYLOAD, [written]) == 2
    assert take_ready(queue) == ["a", "b"]
    assert listed(queue) == 0


def listed_beside_a_writers_ranges(engine, row_tag_like: Callable[[str], str]) -> None:
    """``row_tag_like``, listed as another task's row tag, stays listed through a publish and a discard
    of the writer's batches: no range they select takes it, in the engine's own collation."""
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    with queue.transaction() as cur:
        register = queue.dialect.sink.register_unpublished(queue.table)
        execute(cur, register, tag=row_tag_like(producer.stage_tag(0, 0)), id_after=0, id_upto=0, row_count=0)
    producer.publish(0, PAYLOAD, [producer.write(0, 0, PAYLOAD, rows(PAYLOAD, "a"))])
    producer.write(1, 0, PAYLOAD, rows(PAYLOAD, "aborted"))
    producer.discard(1)
    assert listed(queue) == 1


def test_no_range_of_a_writers_stage_tags_takes_the_row_tag_nearest_it(engine):
    """The 12 first digits of a writer's key sort below its ranges."""
    listed_beside_a_writers_ranges(engine, lambda stage: stage[:12])


def test_no_range_of_a_writers_stage_tags_takes_a_row_tag_with_a_letter_past_hex(engine):
    """A row tag that leaves the writer's key for a letter above every hex digit sorts above its ranges."""
    listed_beside_a_writers_ranges(engine, lambda stage: stage[:11] + "z")


def test_discard_deletes_what_an_older_version_wrote_outside_its_id_range(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    as_an_older_version_wrote(queue, producer.write(0, 0, PAYLOAD, rows(PAYLOAD, "a", "b")))
    ranges_miss_their_rows(queue)
    assert producer.discard(0) == 2
    assert queue.inspection.stats() == {} and listed(queue) == 0


def test_a_task_that_fails_while_writing_leaves_nothing(engine, columns):
    queue = engine.new_queue()

    def failing():
        yield from rows(columns, "a")
        raise RuntimeError("task killed")

    with pytest.raises(RuntimeError):
        Producer(queue, "w").write(0, 0, columns, failing())
    assert queue.inspection.unpublished_rows() == 0


def test_publish_deletes_rows_of_tasks_spark_did_not_commit(engine, columns):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    kept = producer.write(0, 0, columns, rows(columns, "a"))
    producer.write(0, 1, columns, rows(columns, "orphan"))  # e.g. a speculative attempt that lost
    assert producer.publish(0, columns, [kept]) == 1
    assert queue.inspection.unpublished_rows() == 0
    assert take_ready(queue) == ["a"]


def test_a_new_run_clears_what_a_crashed_run_staged_for_the_batch(engine):
    queue = engine.new_queue()
    crashed = Producer(queue, "w", run_id="run-1")
    crashed.write(0, 0, KEYED, [("a", "k1"), ("b", "k2")])
    # The replay puts key k1 in another task: it must not lose to the crashed run's copy.
    replay = Producer(queue, "w", run_id="run-2")
    written = [replay.write(0, 1, KEYED, [("a", "k1")]), replay.write(0, 0, KEYED, [("b", "k2")])]
    assert replay.publish(0, KEYED, written) == 2
    assert take_ready(queue) == ["a", "b"]
    assert queue.inspection.unpublished_rows() == 0


def test_publish_deletes_what_the_writer_left_unpublished_in_earlier_batches(engine, columns, monkeypatch):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    producer.publish(0, columns, [producer.write(0, 0, columns, rows(columns, "a"))])
    # A task attempt Spark gave up on commits late: its ledger check ran before batch 0 was published.
    late = Producer(queue, "w")
    monkeypatch.setattr(late.ledger, "contains", lambda cur, batch_id: False)
    late.write(0, 1, columns, rows(columns, "late"))
    assert queue.inspection.unpublished_rows() == 1
    producer.publish(1, columns, [producer.write(1, 0, columns, rows(columns, "b"))])
    assert queue.inspection.unpublished_rows() == 0
    assert take_ready(queue) == ["a", "b"]


def test_tasks_of_one_run_keep_each_others_rows(engine, columns):
    queue = engine.new_queue()
    producer = Producer(queue, "w", run_id="run-1")
    written = [producer.write(0, t, columns, rows(columns, f"p{t}")) for t in range(3)]
    assert producer.publish(0, columns, written) == 3


def test_discard_deletes_only_the_aborted_batch(engine, columns):
    queue = engine.new_queue()
    producer, other = Producer(queue, "w"), Producer(queue, "other-writer")
    producer.write(0, 0, columns, rows(columns, "aborted", "aborted"))
    keep = [
        producer.write(1, 0, columns, rows(columns, "next-batch")),
        other.write(0, 0, columns, rows(columns, "other")),
    ]
    assert producer.discard(0) == 2
    producer.publish(1, columns, keep[:1])
    other.publish(0, columns, keep[1:])
    assert take_ready(queue) == ["next-batch", "other"]


def test_writers_publish_the_same_batch_number_independently(engine, columns):
    queue = engine.new_queue()
    one, two = Producer(queue, "one"), Producer(queue, "two")
    s1, s2 = one.write(0, 0, columns, rows(columns, "x")), two.write(0, 0, columns, rows(columns, "y"))
    assert one.publish(0, columns, [s1]) == 1
    assert two.publish(0, columns, [s2]) == 1
    assert take_ready(queue) == ["x", "y"]


def test_enqueueing_an_existing_dedup_key_again_is_a_no_op(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    producer.publish(0, KEYED, [producer.write(0, 0, KEYED, [("first", "k1")])])
    assert producer.publish(1, KEYED, [producer.write(1, 0, KEYED, [("again", "k1"), ("new", "k2")])]) == 1
    assert take_ready(queue) == ["first", "new"]


def test_a_dedup_key_repeated_within_a_batch_is_enqueued_once(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    written = producer.write(0, 0, KEYED, [("a", "k1"), ("b", "k1"), ("c", None), ("d", None)])
    assert producer.publish(0, KEYED, [written]) == 3
    assert len(take_ready(queue)) == 3


def test_an_empty_task_writes_nothing(engine):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    written = producer.write(0, 0, PAYLOAD, [])
    assert written.rows == 0
    assert producer.publish(0, PAYLOAD, [written]) == 0
    assert producer.published(0)


def test_a_row_the_table_refuses_fails_the_task(engine, columns):
    queue = engine.new_queue(domain=(Column("payload", "text", nullable=False),))
    with pytest.raises(DatabaseError):
        Producer(queue, "w").write(0, 0, columns, rows(columns, "a", None))
    assert_queue_holds(queue)


def test_a_dedup_key_of_a_batch_never_published_does_not_block_later_ones(engine):
    queue = engine.new_queue()
    Producer(queue, "deleted-checkpoint").write(0, 0, KEYED, [("orphan", "k1")])
    producer = Producer(queue, "w")
    assert producer.publish(0, KEYED, [producer.write(0, 0, KEYED, [("a", "k1")])]) == 1
    assert take_ready(queue) == ["a"]


def test_publish_refuses_a_batch_whose_rows_are_gone(engine, columns):
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    written = producer.write(0, 0, columns, rows(columns, "a", "b"))
    producer.discard(0)  # as PostgreSQL's crash recovery empties an unlogged staging table
    with pytest.raises(DatabaseError, match="batch 0 of writer 'w' was not published: a task wrote 2 rows but 0"):
        producer.publish(0, columns, [written])
    assert not producer.published(0)
    assert take_ready(queue) == []


def test_a_write_retried_after_its_commit_landed_unseen_leaves_its_rows_once(engine, columns):
    """A connection lost around COMMIT: the rows are in, but the task saw an error and the retry policy
    writes again, under the same stage tag, whose transaction first deletes what the tag holds."""
    queue = engine.new_queue()
    producer = Producer(queue, "w")
    attempts: list[Written] = []

    def write() -> Written:
        attempts.append(producer.write(0, 0, columns, rows(columns, "a", "b", "c"), attempt=7))
        if len(attempts) == 1:
            raise DatabaseError(f"{engine.name}: connection lost around COMMIT", transient=True)
        return attempts[-1]

    written = RetryPolicy(timeout_ms=10_000, backoff_ms=1).run(write, "writing task 0 of batch 0")
    assert len(attempts) == 2 and attempts[0] == written
    assert producer.publish(0, columns, [written]) == 3
    assert take_ready(queue) == ["a", "b", "c"]
