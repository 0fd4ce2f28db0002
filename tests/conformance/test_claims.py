"""The claim protocol's guarantees, on every engine."""

from __future__ import annotations

import datetime as dt
import threading
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager

import pytest

from sqlqueue.consumer import ClaimPolicy, Consumer
from sqlqueue.queue import DONE_OUTCOME, RETRY_OUTCOME, Ack, Queue
from sqlqueue.testing import assert_queue_holds
from tests.support.ids import ids


def fill(queue, n: int) -> None:
    queue.enqueue([{"payload": f"p{i}"} for i in range(n)])


def claimed_ids(queue, consumer: str, after: int, upto: int) -> list[int]:
    ids = []
    for lo, hi in queue.consuming.partition_bounds(consumer, after, upto, 1):
        for rows in queue.consuming.read_claimed(consumer, after, upto, lo, hi, ["id"]):
            ids += [r[0] for r in rows]
    return sorted(ids)


def test_claim_takes_at_most_the_limit(engine):
    queue = engine.new_queue()
    fill(queue, 10)
    assert queue.consuming.claim("c1", 1, 4, order=engine.order) == 4
    assert queue.inspection.stats()["claimed"]["rows"] == 4


def test_a_postgresql_session_compiles_no_jit_code(engine):
    """A large claim's cost estimate crosses jit_above_cost, and compiling cost more than it saved."""
    if engine.name != "postgres":
        pytest.skip("JIT compilation is PostgreSQL's")
    queue = engine.new_queue()
    fill(queue, 1)
    assert queue.conn.execute("SHOW jit").fetchone()[0] == "off"


def test_a_postgresql_queue_table_as_create_makes_it_is_claimed_by_address(engine):
    if engine.name != "postgres":
        pytest.skip("claims fetch rows by address (ctid) on PostgreSQL only")
    queue = engine.new_queue()
    assert queue.consuming.addressed()


def test_a_claim_on_a_table_with_child_tables_takes_only_the_rows_it_locked(engine):
    """A child table (inheritance, as partitions are) numbers its rows' addresses on its own: its rows at
    the parent's ready rows' addresses, held by another claimer, stay with that claimer."""
    if engine.name != "postgres":
        pytest.skip("table inheritance is PostgreSQL's")
    queue = engine.new_queue()
    fill(queue, 10)
    table = str(queue.table)
    with queue.transaction() as cur:
        cur.execute(f"CREATE TABLE {table}_child () INHERITS ({table})")
        cur.execute(
            f"INSERT INTO {table}_child (id, state, consumer, claim_seq, payload) "
            "SELECT 1000000 + i, 'claimed', 'other', 1, 'held' FROM generate_series(1, 10) AS i"
        )
    fresh = engine.queue(table)  # reads what the table is anew
    assert not fresh.consuming.addressed()
    assert fresh.consuming.claim("c1", 1, 5, order=engine.order) == 5
    assert fresh.consuming.count_claimed("other", 1) == 10


def test_claim_in_chunks_takes_the_whole_limit(engine):
    queue = engine.new_queue()
    fill(queue, 30)
    assert queue.consuming.claim("c1", 1, 20, chunk=7, order=engine.order) == 20


class CountingCursor:
    """A cursor that records how many rows each statement it runs returns."""

    def __init__(self, cur, returned: list[int]) -> None:
        self._cur, self._returned = cur, returned

    def fetchall(self):
        rows = self._cur.fetchall()
        self._returned.append(len(rows))
        return rows

    def __getattr__(self, name):
        return getattr(self._cur, name)


def test_a_claim_commits_each_chunk_in_a_transaction_of_its_own(engine, monkeypatch):
    queue = engine.new_queue()
    fill(queue, 30)
    transactions: list[list[int]] = []  # per transaction, the rows each of its statements returned
    real = queue.transaction

    @contextmanager
    def counted():
        transactions.append([])
        with real() as cur:
            yield CountingCursor(cur, transactions[-1])

    monkeypatch.setattr(queue, "transaction", counted)
    assert queue.consuming.claim("c1", 1, 25, chunk=10, order=engine.order) == 25
    assert transactions == [[10], [10], [5]]
    monkeypatch.undo()
    assert claimed_ids(queue, "c1", 0, 1) == ids(queue)[:25]


def test_claimed_rows_are_not_claimed_again(engine):
    queue = engine.new_queue()
    fill(queue, 10)
    first = queue.consuming.claim("c1", 1, 6, order=engine.order)
    second = queue.consuming.claim("c2", 1, 6, order=engine.order)
    assert (first, second) == (6, 4)
    assert set(claimed_ids(queue, "c1", 0, 1)).isdisjoint(claimed_ids(queue, "c2", 0, 1))


@pytest.mark.babelfish_gap("update_cte")
def test_fifo_claim_takes_the_oldest_rows(engine):
    queue = engine.new_queue()
    fill(queue, 10)
    queue.consuming.claim("c1", 1, 3, order="fifo")
    assert claimed_ids(queue, "c1", 0, 1) == ids(queue)[:3]


def test_advance_serves_rows_tagged_before_a_crash_instead_of_claiming_more(engine):
    queue = engine.new_queue()
    fill(queue, 10)
    queue.consuming.claim(
        "c1", 1, 3, order=engine.order
    )  # claimed, then the driver died before Spark logged the offset
    consumer = engine.consumer(queue, "c1", ClaimPolicy(order=engine.order))
    assert consumer.advance(0, 5) == 1
    assert consumer.last_claimed_rows == 3
    assert claimed_ids(queue, "c1", 0, 1) == ids(queue)[:3]


def test_advance_returns_the_start_when_nothing_is_ready(engine):
    queue = engine.new_queue()
    assert engine.consumer(queue, "c1", ClaimPolicy(order=engine.order)).advance(7, 5) == 7


def test_advance_completes_the_committed_claims(engine):
    queue = engine.new_queue()
    fill(queue, 10)
    consumer = engine.consumer(queue, "c1", ClaimPolicy(order=engine.order))
    assert consumer.advance(0, 4) == 1
    assert consumer.advance(1, 4) == 2
    assert queue.inspection.stats()["claimed"]["rows"] == 4
    assert sum(s["rows"] for s in queue.inspection.stats().values()) == 6


def test_completion_can_keep_rows_as_done(engine):
    queue = engine.new_queue()
    before = dt.datetime.now(dt.timezone.utc)
    fill(queue, 5)
    after = dt.datetime.now(dt.timezone.utc)
    consumer = engine.consumer(queue, "c1", ClaimPolicy(order=engine.order, keep_completed=True))
    consumer.advance(0, 5)
    consumer.complete_through(1)
    stats = queue.inspection.stats()
    assert list(stats) == ["done"] and stats["done"]["rows"] == 5
    oldest = queue.engine.decode_timestamp(stats["done"]["oldest_enqueued_at"])
    slack = dt.timedelta(seconds=2)  # the database's clock against this process's
    assert before - slack <= oldest <= after + slack


def test_completion_in_chunks_finishes_every_row(engine):
    queue = engine.new_queue()
    fill(queue, 25)
    queue.consuming.claim("c1", 1, 25, order=engine.order)
    assert queue.consuming.complete("c1", 1, chunk=10) == 25
    assert_queue_holds(queue)


def test_completion_leaves_later_claims_alone(engine):
    queue = engine.new_queue()
    fill(queue, 10)
    queue.consuming.claim("c1", 1, 4, order=engine.order)
    queue.consuming.claim("c1", 2, 4, order=engine.order)
    queue.consuming.complete("c1", 1)
    assert claimed_ids(queue, "c1", 1, 2) == ids(queue)[:4]  # the first four are gone
    assert claimed_ids(queue, "c1", 0, 1) == []


def test_partitions_cover_every_claimed_row_exactly_once(engine):
    queue = engine.new_queue()
    fill(queue, 103)
    every = ids(queue)
    queue.consuming.claim("c1", 1, 50, order=engine.order)
    queue.consuming.claim("c1", 2, 53, order=engine.order)
    bounds = queue.consuming.partition_bounds("c1", 0, 2, 4)
    assert len(bounds) == 4
    read = []
    for lo, hi in bounds:
        for rows in queue.consuming.read_claimed("c1", 0, 2, lo, hi, ["id"]):
            read += [r[0] for r in rows]
    assert sorted(read) == every


def test_bounded_claim_ignores_rows_enqueued_after_the_bound(engine):
    queue = engine.new_queue()
    fill(queue, 5)
    bound = queue.consuming.available_now_bound()
    fill(queue, 5)
    assert queue.consuming.claim("c1", 1, 100, bound=bound, order=engine.order) == 5


def race(engine, table: str, claimer: Callable[[str, Queue], None], errors: list[BaseException]) -> None:
    """Run ``claimer(name, queue)`` in four threads, c0 to c3, each with its own queue of ``table`` (its own
    connection, like a separate consumer); what a thread raises goes into ``errors``."""

    def run(name: str) -> None:
        try:
            claimer(name, engine.queue(table))
        except BaseException as exc:  # surface thread failures in the test
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(f"c{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)


# Which of the four claimers hold their rows as runs of ids (Runs) rather than marking them.
HOLDINGS = {"marks": set(), "runs": {"c0", "c1", "c2", "c3"}, "marks and runs": {"c1", "c3"}}


@pytest.mark.parametrize("holding", HOLDINGS)
def test_four_concurrent_claimers_take_every_row_exactly_once(engine, holding):
    queue = engine.new_queue()
    total = 20_000
    fill(queue, total)
    taken: Counter[int] = Counter()
    lock = threading.Lock()
    errors: list[BaseException] = []

    def claimer(name: str, own: Queue) -> None:
        seq, runs = 0, name in HOLDINGS[holding]
        while True:
            seq += 1
            if not own.consuming.claim(name, seq, 250, order=engine.order, runs=runs):
                return
            ids = claimed_ids(own, name, seq - 1, seq)
            own.consuming.complete(name, seq)
            with lock:
                taken.update(ids)

    race(engine, str(queue.table), claimer, errors)
    assert not errors
    assert len(taken) == total
    assert max(taken.values()) == 1
    assert_queue_holds(queue)


def test_rows_handed_back_while_others_claim_are_held_by_one_claimer_at_a_time(engine):
    """Four claimers hand every row back once (a retry due at once), so rows change while the others'
    claims lock and re-check them: no row is held by two claimers at once, none is lost, and each is done
    once."""
    queue = engine.new_queue()
    total = 2_000
    fill(queue, total)
    held: dict[int, str] = {}
    done: Counter[int] = Counter()
    handed_back: set[int] = set()
    lock = threading.Lock()
    errors: list[BaseException] = []

    def claimer(name: str, own: Queue) -> None:
        seq = 0
        while not errors:
            seq += 1
            if not own.consuming.claim(name, seq, 50, order=engine.order):
                with lock:
                    if len(done) == total:
                        return
                continue
            ids = claimed_ids(own, name, seq - 1, seq)
            with lock:
                twice = {i: held[i] for i in ids if i in held}
                held.update(dict.fromkeys(ids, name))
                back = [i for i in ids if i not in handed_back]
                handed_back.update(back)
            assert not twice, f"{name} claimed rows another claimer holds: {twice}"
            acks = [Ack((i,), RETRY_OUTCOME, "later", delay_seconds=0) for i in back]
            acks += [Ack((i,), DONE_OUTCOME) for i in ids if i not in back]
            with lock:  # out of the set before the database lets another claimer take them
                for i in ids:
                    del held[i]
                done.update(i for i in ids if i not in back)
            with own.transaction() as cur:
                own.consuming.apply_acks(cur, acks, keep=False, max_attempts=5)

    race(engine, str(queue.table), claimer, errors)
    assert not errors
    assert len(done) == total
    assert max(done.values()) == 1
    assert_queue_holds(queue)


def test_prefetch_claims_the_next_batch_while_the_current_one_is_processed(engine):
    queue = engine.new_queue()
    fill(queue, 10)
    every = ids(queue)
    consumer = Consumer(queue, "c1", ClaimPolicy(order=engine.order, prefetch=True))
    assert consumer.advance(0, 4) == 1
    consumer.close()  # waits for the background claim
    assert claimed_ids(queue, "c1", 1, 2) == every[4:8]
    assert consumer.advance(1, 4) == 2
    consumer.close()
    assert claimed_ids(queue, "c1", 1, 2) == every[4:8]
    assert claimed_ids(queue, "c1", 2, 3) == every[8:]


def test_only_a_full_claim_is_followed_by_a_claim_ahead(engine, monkeypatch):
    queue = engine.new_queue()
    fill(queue, 7)
    consumer = Consumer(queue, "c1", ClaimPolicy(order=engine.order, prefetch=True))
    ahead = []
    monkeypatch.setattr(consumer, "_start_prefetch", lambda seq, *rest: ahead.append(seq))
    assert consumer.advance(0, 4) == 1  # 4 of 7: full
    assert consumer.advance(1, 4) == 2  # the 3 left: short, so batch 3 claims when it starts
    assert ahead == [2]
    consumer.close()


def test_a_claim_plans_its_read_ranges_as_the_table_would(engine):
    queue = engine.new_queue()
    fill(queue, 11)
    consumer = engine.consumer(queue, "c1", ClaimPolicy(order=engine.order, partitions=3))
    assert consumer.advance(0, 11) == 1
    assert consumer.partition_bounds(0, 1) == queue.consuming.partition_bounds("c1", 0, 1, 3)


def test_spark_committing_a_batch_the_claim_ahead_completes_does_not_wait_for_it(engine):
    queue = engine.new_queue()
    fill(queue, 12)
    every = ids(queue)
    consumer = Consumer(queue, "c1", ClaimPolicy(order=engine.order, prefetch=True))
    assert consumer.advance(0, 4) == 1
    assert consumer.advance(1, 4) == 2  # the thread that claims ahead completes claim 1, then claims 3
    with consumer._lock:  # as it holds the lock while it claims
        committed = threading.Thread(target=consumer.complete_through, args=(1,))
        committed.start()
        committed.join(timeout=30)
        assert not committed.is_alive()
    consumer.close()
    assert claimed_ids(queue, "c1", 0, 1) == []
    assert claimed_ids(queue, "c1", 2, 3) == every[8:]


def test_reading_a_batch_this_run_claimed_does_not_wait_for_the_claim_ahead(engine):
    queue = engine.new_queue()
    fill(queue, 12)
    consumer = Consumer(queue, "c1", ClaimPolicy(order=engine.order, prefetch=True))
    assert consumer.advance(0, 4) == 1
    with consumer._lock:
        planned = threading.Thread(target=consumer.replay, args=(0, 1))
        planned.start()
        planned.join(timeout=30)
        assert not planned.is_alive()
    consumer.close()


def test_a_claim_ahead_is_served_with_its_row_count_and_read_ranges_as_the_table_plans_them(engine):
    queue = engine.new_queue()
    fill(queue, 20)
    consumer = Consumer(queue, "c1", ClaimPolicy(order=engine.order, prefetch=True, partitions=2))
    assert consumer.advance(0, 8) == 1
    consumer._await_prefetch()  # claim 2, made ahead
    ahead = claimed_ids(queue, "c1", 1, 2)
    assert len(ahead) == len(set(ahead)) == 8 and not set(ahead) & set(claimed_ids(queue, "c1", 0, 1))
    assert consumer.advance(1, 8) == 2 and consumer.last_claimed_rows == 8
    assert consumer.partition_bounds(1, 2) == queue.consuming.partition_bounds("c1", 1, 2, 2)
    consumer.close()
