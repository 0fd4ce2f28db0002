"""Claims held as runs of ids (sqlqueue.dialects.statements.runs), on every engine: the claim writes nothing
on the rows it takes, every claim passes over them, a read shows them as a claim that marked them would,
and completion, renewal and the sweep of leases that ran out settle exactly the rows of the runs.

Time is moved in SQL (tests/support/leases.py), not waited for.
"""

from __future__ import annotations

from sqlqueue.consumer import ClaimPolicy, Consumer
from sqlqueue.dialects.statements.lifecycle import runs_table
from sqlqueue.kinds.holds import spans
from sqlqueue.producer import Producer
from sqlqueue.queue import runs_of
from sqlqueue.schema import Column
from tests.support.ids import ids
from tests.support.leases import LEASE_SECONDS, outage

READ = ["id", "state", "attempts", "consumer", "claim_seq", "payload"]
LONGER_THAN_THE_LEASE = 2 * LEASE_SECONDS


def fill(queue, n: int, start: int = 0) -> None:
    queue.enqueue([{"payload": f"p{i}"} for i in range(start, start + n)])


def claim(engine, queue, consumer: str, seq: int, limit: int, **settings) -> int:
    settings.setdefault("lease_seconds", LEASE_SECONDS)
    return queue.consuming.claim(consumer, seq, limit, order=engine.order, runs=True, **settings)


def held(queue, consumer: str, after: int, upto: int, columns: list[str] = READ) -> list[tuple]:
    """The rows of ``consumer``'s claims (after, upto] as a replay reads them, in id order."""
    rows: list[tuple] = []
    for lo, hi in queue.consuming.partition_bounds(consumer, after, upto, 2):
        for chunk in queue.consuming.read_claimed(consumer, after, upto, lo, hi, columns):
            rows += chunk
    return sorted(rows)


def table_rows(queue) -> dict[int, tuple]:
    """{id: (state, attempts, consumer, claim_seq)} of every row of the queue table itself."""
    e = queue.engine
    names = ", ".join(e.quote(c) for c in ("id", "state", "attempts", "consumer", "claim_seq"))
    with queue.transaction() as cur:
        cur.execute(f"SELECT {names} FROM {e.table(queue.table)}")
        return {int(r[0]): tuple(r[1:]) for r in cur.fetchall()}


def runs(queue) -> list[tuple]:
    """(consumer, claim, first id, last id) of every run, in order."""
    e = queue.engine
    names = ", ".join(
        e.quote(c) for c in ("sqlqueue_consumer", "sqlqueue_claim_seq", "sqlqueue_first_id", "sqlqueue_last_id")
    )
    with queue.transaction() as cur:
        cur.execute(f"SELECT {names} FROM {e.table(runs_table(queue.table))}")
        return sorted(tuple(r) for r in cur.fetchall())


def test_a_claim_held_as_runs_writes_nothing_on_the_rows_it_takes(engine):
    queue = engine.new_queue()
    fill(queue, 10)
    i = ids(queue)
    assert claim(engine, queue, "c1", 1, 4) == 4
    assert set(table_rows(queue).values()) == {("ready", 0, None, None)}
    assert runs(queue) == [("c1", 1, i[0], i[3])]


def test_rows_held_as_runs_count_as_claimed_and_not_as_ready(engine):
    queue = engine.new_queue()
    fill(queue, 10)
    claim(engine, queue, "c1", 1, 4)
    stats = queue.inspection.stats()
    assert (stats["claimed"]["rows"], stats["ready"]["rows"]) == (4, 6)
    assert (queue.inspection.count_ready(), queue.inspection.held_rows()) == (6, 4)
    assert queue.inspection.backlog().ready_rows == 6


def test_every_claim_passes_over_rows_runs_hold(engine):
    queue = engine.new_queue()
    fill(queue, 10)
    i = ids(queue)
    claim(engine, queue, "c1", 1, 4)
    assert queue.consuming.claim("c2", 1, 3, order=engine.order) == 3  # marking its rows
    assert claim(engine, queue, "c3", 1, 10) == 3
    assert held(queue, "c2", 0, 1, ["id"]) == [(i[4],), (i[5],), (i[6],)]
    assert held(queue, "c3", 0, 1, ["id"]) == [(i[7],), (i[8],), (i[9],)]


def test_a_run_holds_only_ids_the_claim_took_one_after_another(engine):
    queue = engine.new_queue()
    fill(queue, 10)
    i = ids(queue)
    assert queue.consuming.claim("c2", 1, 2, order=engine.order) == 2  # the first two rows, marked
    assert claim(engine, queue, "c1", 1, 3) == 3
    assert queue.consuming.complete("c2", 1) == 2
    assert claim(engine, queue, "c1", 2, 4) == 4
    assert runs(queue) == [("c1", 1, i[2], i[4]), ("c1", 2, i[5], i[8])]
    assert [r[0] for r in held(queue, "c1", 0, 2)] == i[2:9]


def test_a_sink_batch_published_between_held_runs_is_not_theirs(engine):
    queue = engine.new_queue()
    fill(queue, 3)
    producer = Producer(queue, "writer")
    columns = (Column("payload", "text"),)
    written = producer.write(0, 0, columns, [("batch",)])  # the fourth id, not published yet
    fill(queue, 3, 3)
    i = ids(queue)
    assert claim(engine, queue, "c1", 1, 10) == 6
    producer.publish(0, columns, [written])
    assert [r[0] for r in held(queue, "c1", 0, 1)] == i[:3] + i[4:]
    assert runs(queue) == [("c1", 1, i[0], i[2]), ("c1", 1, i[4], i[6])]
    assert claim(engine, queue, "c2", 1, 10) == 1


def test_a_read_shows_held_rows_as_a_claim_that_marked_them_would(engine):
    queue = engine.new_queue()
    fill(queue, 2)
    i = ids(queue)
    claim(engine, queue, "c1", 7, 2)
    assert held(queue, "c1", 6, 7) == [(i[0], "claimed", 1, "c1", 7, "p0"), (i[1], "claimed", 1, "c1", 7, "p1")]
    assert queue.consuming.count_claimed("c1", 7) == 2
    assert type(queue.consuming.count_claimed("c1", 7)) is int  # a stream's progress shows it as JSON
    assert queue.inspection.claim_waits("c1", 7).rows == 2


def test_completion_deletes_the_rows_of_the_runs_and_forgets_the_runs(engine):
    queue = engine.new_queue()
    fill(queue, 6)
    i = ids(queue)
    claim(engine, queue, "c1", 1, 2)
    claim(engine, queue, "c1", 2, 2)
    assert queue.consuming.complete("c1", 1) == 2
    assert sorted(table_rows(queue)) == i[2:]
    assert runs(queue) == [("c1", 2, i[2], i[3])]


def test_completion_that_keeps_rows_marks_them_done_as_a_claim_that_marked_them_would(engine):
    queue = engine.new_queue()
    fill(queue, 3)
    i = ids(queue)
    claim(engine, queue, "c1", 4, 2)
    assert queue.consuming.complete("c1", 4, keep=True) == 2
    done, ready = ("done", 1, "c1", 4), ("ready", 0, None, None)
    assert table_rows(queue) == {i[0]: done, i[1]: done, i[2]: ready}
    assert runs(queue) == []


def test_a_run_whose_lease_ran_out_goes_back_to_the_queue_with_its_attempt_counted(engine):
    queue = engine.new_queue()
    fill(queue, 3)
    claim(engine, queue, "c1", 1, 2)
    outage(queue, LONGER_THAN_THE_LEASE)
    assert queue.consuming.rescue_expired(max_attempts=5) == 2
    assert runs(queue) == []
    assert set(table_rows(queue).values()) == {("ready", 1, None, None), ("ready", 0, None, None)}
    assert claim(engine, queue, "c2", 1, 10) == 3


def test_a_run_whose_lease_ran_out_on_a_rows_last_attempt_fails_it_as_its_claim(engine):
    queue = engine.new_queue()
    fill(queue, 2)
    claim(engine, queue, "c1", 3, 2)
    outage(queue, LONGER_THAN_THE_LEASE)
    assert queue.consuming.rescue_expired(max_attempts=1) == 2
    assert set(table_rows(queue).values()) == {("failed", 1, "c1", 3)}
    assert queue.inspection.stats()["failed"]["rows"] == 2


def test_completion_after_a_sweep_gave_the_runs_back_completes_nothing(engine):
    queue = engine.new_queue()
    fill(queue, 2)
    claim(engine, queue, "c1", 1, 2)
    outage(queue, LONGER_THAN_THE_LEASE)
    queue.consuming.rescue_expired(max_attempts=5)
    claim(engine, queue, "c2", 1, 2)
    assert queue.consuming.complete("c1", 1) == 0
    assert queue.consuming.complete("c2", 1) == 2


def test_a_renewed_run_is_not_swept(engine):
    queue = engine.new_queue()
    fill(queue, 2)
    i = ids(queue)
    claim(engine, queue, "c1", 1, 2)
    outage(queue, LEASE_SECONDS - 1)  # less than half of it left
    assert queue.consuming.renew("c1", 0, LEASE_SECONDS) == 1  # one run
    outage(queue, LEASE_SECONDS - 1)
    assert queue.consuming.rescue_expired(max_attempts=5) == 0
    assert runs(queue) == [("c1", 1, i[0], i[1])]


def test_a_consumer_that_holds_runs_replays_a_claim_after_a_restart_exactly(engine):
    queue = engine.new_queue()
    fill(queue, 10)
    first = Consumer(queue, "etl", ClaimPolicy(order=engine.order, runs=True, partitions=2))
    assert first.advance(0, 4) == 1
    served = held(queue, "etl", 0, 1)
    first.close()
    again = Consumer(engine.queue(str(queue.table)), "etl", ClaimPolicy(order=engine.order, partitions=2))
    again.replay(0, 1)  # a stream restarted under options that would mark rows
    assert again.held_as_runs(0, 1)
    bounds = again.partition_bounds(0, 1)
    replayed = sorted(
        r for lo, hi in bounds for rows in again.queue.consuming.read_claimed("etl", 0, 1, lo, hi, READ) for r in rows
    )
    assert replayed == served
    again.close()


def test_runs_of_ids_are_the_stretches_of_consecutive_ids():
    assert runs_of([7, 3, 4, 5, 9, 10]) == [(3, 5), (7, 7), (9, 10)]


def test_runs_of_ids_handed_out_in_blocks_span_the_ids_no_row_can_hold():
    # Blocks of 10: 1-10, 11-20, ... A default fills a block's first id alone (1, 11, 31, 51); a sink task
    # fills ids after a block's first (22-30, 42-45). No row can be between the two sides of a block's start;
    # 44 may hold a row another claim took, the rest of 45's block rows of its task, and 1 to 21 spans a block.
    block = list(range(22, 31))
    assert runs_of([1, 11, *block, 31, 42, 43, 45, 51], 10) == [(1, 43), (45, 45), (51, 51)]
    assert runs_of([1, 21], 10) == [(1, 1), (21, 21)]
    assert runs_of([25, 32], 10) == [(25, 25), (32, 32)]
    assert runs_of([1, 11], 1) == [(1, 1), (11, 11)]


def test_a_run_is_settled_in_spans_no_larger_than_a_statement_may_lock():
    assert spans(1, 10, 4) == [(1, 4), (5, 8), (9, 10)]
    assert spans(1, 10, None) == [(1, 10)]
