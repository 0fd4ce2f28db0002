"""Queue lifecycle on every engine: claim orders, leases, per-row outcomes, attempts, housekeeping."""

from __future__ import annotations

import datetime as dt
import threading

import pytest

from sqlqueue.consumer import ClaimPolicy
from sqlqueue.queue import Ack
from sqlqueue.testing import assert_queue_holds
from tests.support.clock import move_back
from tests.support.ids import ids

UTC = dt.timezone.utc


def ago(seconds: float) -> dt.datetime:
    return dt.datetime.now(UTC) - dt.timedelta(seconds=seconds)


def claimed(queue, consumer: str, seq: int, columns=("payload",)) -> list:
    rows = []
    for lo, hi in queue.consuming.partition_bounds(consumer, seq - 1, seq, 1):
        for chunk in queue.consuming.read_claimed(consumer, seq - 1, seq, lo, hi, ["id", *columns]):
            rows += chunk
    return [r[1:] if len(columns) > 1 else r[1] for r in sorted(rows)]


def row(queue, id_: int) -> dict:
    with queue.transaction() as cur:
        cur.execute(
            f"SELECT state, attempts, last_error, consumer FROM {queue.engine.table(queue.table)} "
            f"WHERE {queue.engine.quote('id')} = {int(id_)}"
        )
        found = cur.fetchone()
    return dict(zip(("state", "attempts", "last_error", "consumer"), found)) if found else {}


@pytest.mark.babelfish_gap("update_cte")
@pytest.mark.parametrize(
    ("order", "expected"),
    [("fifo", ["a", "b", "c"]), ("lifo", ["e", "d", "c"]), ("priority", ["d", "b", "a"]), ("pending", ["c", "e", "b"])],
)
def test_claim_order_decides_which_rows_come_first(engine, order, expected):
    queue = engine.new_queue(order=order)
    queue.enqueue(
        [
            {"payload": "a", "priority": 1, "due_at": ago(30)},
            {"payload": "b", "priority": 5, "due_at": ago(40)},
            {"payload": "c", "priority": 0, "due_at": ago(90)},
            {"payload": "d", "priority": 9, "due_at": ago(20)},
            {"payload": "e", "priority": 0, "due_at": ago(60)},
        ]
    )
    taken: list[str] = []
    for seq in range(1, 4):  # one row per claim, so the order is the order of claims
        queue.consuming.claim("c", seq, 1, order=order)
        taken += claimed(queue, "c", seq)
    assert taken == expected


def test_heap_claim_takes_any_ready_rows(engine):
    queue = engine.new_queue(order="heap")
    queue.enqueue([{"payload": p} for p in "abcde"])
    queue.consuming.claim("c", 1, 3, order="heap")
    assert len(set(claimed(queue, "c", 1))) == 3


@pytest.mark.babelfish_gap("update_cte")
def test_rows_due_later_are_not_claimed_yet(engine):
    queue = engine.new_queue(order="pending")
    queue.enqueue([{"payload": "now", "due_at": ago(1)}, {"payload": "later", "due_at": ago(-3600)}])
    assert queue.consuming.claim("c", 1, 10, order="pending") == 1
    assert claimed(queue, "c", 1) == ["now"]


def test_expired_lease_gives_the_rows_to_another_consumer_with_attempts_raised(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": p} for p in "abc"])
    dead = engine.consumer(queue, "dead", ClaimPolicy(order=engine.order, lease_seconds=300, rescue_interval_s=0))
    assert dead.advance(0, 10) == 1  # claims, then its process dies and never comes back
    survivor_queue = engine.queue(str(queue.table))
    early = engine.consumer(survivor_queue, "early", ClaimPolicy(order=engine.order, rescue_interval_s=0))
    assert early.advance(0, 10) == 0  # lease holds
    assert move_back(queue, "lease_until", 60) == 3  # ...until it runs out
    survivor = engine.consumer(
        engine.queue(str(queue.table)), "survivor", ClaimPolicy(order=engine.order, rescue_interval_s=0)
    )
    assert survivor.advance(0, 10) == 1
    assert claimed(queue, "survivor", 1, ("payload", "attempts")) == [("a", 2), ("b", 2), ("c", 2)]


def test_expired_lease_on_the_last_attempt_fails_the_row(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "x"}])
    queue.consuming.claim("dead", 1, 1, lease_seconds=300, order=engine.order)
    assert queue.consuming.rescue_expired(max_attempts=1) == 0
    move_back(queue, "lease_until", 60)
    assert queue.consuming.rescue_expired(max_attempts=1) == 1
    assert row(queue, 1) == {"state": "failed", "attempts": 1, "last_error": "lease expired", "consumer": "dead"}


def fail_time(queue, id_: int) -> dt.datetime:
    with queue.transaction() as cur:
        cur.execute(
            f"SELECT {queue.engine.quote('completed_at')} FROM {queue.engine.table(queue.table)} "
            f"WHERE {queue.engine.quote('id')} = {int(id_)}"
        )
        return queue.engine.decode_timestamp(cur.fetchone()[0])


def test_a_row_whose_last_lease_ran_out_failed_when_it_ran_out_not_when_it_was_noticed(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "x"}])
    queue.consuming.claim("dead", 1, 1, lease_seconds=300, order=engine.order)
    move_back(queue, "lease_until", 3600)  # nobody rescued it for an hour
    assert queue.consuming.rescue_expired(max_attempts=1) == 1
    assert abs((fail_time(queue, 1) - ago(3600)).total_seconds()) < 60


def test_a_row_failed_by_an_acknowledgement_failed_then(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "x"}, {"payload": "y"}])
    x, y = ids(queue)
    queue.consuming.claim("c", 1, 2, order=engine.order)
    with queue.transaction() as cur:
        queue.consuming.apply_acks(
            cur, [Ack((x,), "failed", "bad"), Ack((y,), "retry", "again")], keep=False, max_attempts=1
        )
    for id_ in (x, y):
        assert row(queue, id_)["state"] == "failed"
        assert abs((fail_time(queue, id_) - ago(0)).total_seconds()) < 60


def test_live_leases_are_not_rescued(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "x"}])
    queue.consuming.claim("alive", 1, 1, lease_seconds=300, order=engine.order)
    assert queue.consuming.rescue_expired(max_attempts=5) == 0


def ack(queue, acks, keep=False, max_attempts=5):
    with queue.transaction() as cur:
        queue.consuming.apply_acks(cur, acks, keep=keep, max_attempts=max_attempts)


def test_retry_returns_the_row_after_its_backoff_with_the_error(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "x"}])
    queue.consuming.claim("c", 1, 1, order=engine.order)
    ack(queue, [Ack((1,), "retry", "timeout talking to the mailer", delay_seconds=60)])
    assert row(queue, 1) == {
        "state": "ready",
        "attempts": 1,
        "last_error": "timeout talking to the mailer",
        "consumer": None,
    }
    assert queue.consuming.claim("c", 2, 1, order=engine.order) == 0  # not due yet
    move_back(queue, "due_at", 1)  # the minute has passed
    assert queue.consuming.claim("c", 2, 1, order=engine.order) == 1


def test_retry_on_the_last_attempt_fails_the_row_with_its_error(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "x"}])
    queue.consuming.claim("c", 1, 1, order=engine.order)
    ack(queue, [Ack((1,), "retry", "still broken")], max_attempts=1)
    assert row(queue, 1)["state"] == "failed"
    assert row(queue, 1)["last_error"] == "still broken"


def test_a_rows_own_max_attempts_overrides_the_queue_default(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "x", "max_attempts": 3}])
    queue.consuming.claim("c", 1, 1, order=engine.order)
    ack(queue, [Ack((1,), "retry", "e")], max_attempts=1)
    assert row(queue, 1)["state"] == "ready"


def test_done_and_failed_outcomes(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": p} for p in "abc"])
    a, b, c = ids(queue)
    queue.consuming.claim("c", 1, 3, order=engine.order)
    ack(queue, [Ack((a,), "done"), Ack((b,), "failed", "bad input"), Ack((c,), "done")], keep=True)
    assert [row(queue, i)["state"] for i in (a, b, c)] == ["done", "failed", "done"]
    assert row(queue, b)["last_error"] == "bad input"


def test_acknowledging_twice_changes_nothing_the_second_time(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "x"}])
    queue.consuming.claim("c", 1, 1, order=engine.order)
    ack(queue, [Ack((1,), "retry", "e")])
    queue.consuming.claim("other", 1, 1, order=engine.order)  # someone else holds it now
    ack(queue, [Ack((1,), "retry", "e")])  # a replay of the first acknowledgement
    assert row(queue, 1)["consumer"] is None or row(queue, 1)["consumer"] == "other"
    assert row(queue, 1)["state"] == "ready"


def test_ack_completion_leaves_committed_rows_claimed_until_acknowledged(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "x"}])
    consumer = engine.consumer(queue, "c", ClaimPolicy(order=engine.order, complete_on_commit=False))
    assert consumer.advance(0, 5) == 1
    assert consumer.advance(1, 5) == 1
    assert queue.inspection.stats()["claimed"]["rows"] == 1


def test_purge_deletes_finished_rows_older_than_the_cutoff_in_chunks(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": str(i)} for i in range(25)])
    queue.consuming.claim("c", 1, 25, order=engine.order)
    queue.consuming.complete("c", 1, keep=True)
    assert queue.upkeep.purge("done", ago(-60), chunk=10) == 25
    assert_queue_holds(queue)


def test_purge_keeps_rows_completed_after_the_cutoff(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "x"}])
    queue.consuming.claim("c", 1, 1, order=engine.order)
    queue.consuming.complete("c", 1, keep=True)
    assert queue.upkeep.purge("done", ago(3600)) == 0


def test_requeue_failed_rows_by_id_by_key_or_all(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": p, "dedup_key": f"k{p}"} for p in "abcd"])
    a, *_ = every = ids(queue)
    queue.consuming.claim("c", 1, 4, order=engine.order)
    ack(queue, [Ack((i,), "failed", "boom") for i in every])
    assert queue.upkeep.requeue_failed(ids=[a]) == 1
    assert queue.upkeep.requeue_failed(dedup_keys=["kb"]) == 1
    assert queue.upkeep.requeue_failed() == 2
    assert queue.inspection.stats()["ready"]["rows"] == 4
    assert row(queue, a)["attempts"] == 0


@pytest.mark.babelfish_gap("update_cte", "table_hints")
def test_strict_order_waits_for_a_locked_row_instead_of_skipping_it(engine):
    if engine.name == "sqlite":
        pytest.skip("SQLite has one writer at a time: every claim is already serialised")
    queue = engine.new_queue()
    queue.enqueue([{"payload": p} for p in "ab"])
    holder = engine.queue(str(queue.table))
    got: dict[str, list] = {}
    with holder.transaction() as cur:  # another claimer is mid-claim on row 1
        cur.execute(f"UPDATE {holder.engine.table(holder.table)} SET priority = 1 WHERE id = 1")
        skipping = engine.queue(str(queue.table))
        skipping.consuming.claim("skip", 1, 1, order="fifo")
        got["skip"] = claimed(skipping, "skip", 1)
        strict = engine.queue(str(queue.table))
        waiter = threading.Thread(target=lambda: strict.consuming.claim("strict", 1, 1, order="fifo", strict=True))
        waiter.start()
        waiter.join(timeout=1.0)
        assert waiter.is_alive()  # blocked behind the lock
    waiter.join(timeout=30)
    assert got["skip"] == ["b"]
    assert claimed(queue, "strict", 1) == ["a"]
