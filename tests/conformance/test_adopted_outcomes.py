"""Per-row outcomes on an adopted relational queue (a status table with Pending, Processing, Error, Failed,
Completed): each acknowledgement writes the table's own way, as its Modify_ procedure does, and only
while the claim that delivered the row still holds it."""

from __future__ import annotations

import threading
import time

import pytest

from sqlqueue.queue import DONE_OUTCOME, FAILED_OUTCOME, RETRY_OUTCOME, Ack, Queue
from sqlqueue.testing import wait_until
from tests.support import user_tables

COLUMNS = ("Status", "AttemptNum", "Error", "Response", "Step", "Duration")


def claimed_keys(queue: Queue, consumer: str = "etl", seq: int = 1) -> dict[str, tuple]:
    """{payload: key} of the rows ``consumer`` holds under claim ``seq``, the key as the claim copied it."""
    keys = {}
    for lo, hi in queue.consuming.partition_bounds(consumer, seq - 1, seq, 1):
        for chunk in queue.consuming.read_claimed(consumer, seq - 1, seq, lo, hi, ["Payload", "EnqueuedAt"]):
            keys |= {payload: (key,) for payload, key in chunk}
    return keys


def acked(queue: Queue, acks: list[Ack]) -> int:
    """Apply ``acks`` in one transaction; how many changed nothing."""
    with queue.transaction() as cur:
        return queue.consuming.apply_acks(cur, acks, keep=False, max_attempts=5)


def row(queue: Queue, payload: str) -> dict:
    sql = f"SELECT {', '.join(COLUMNS)} FROM {queue.table} WHERE Payload = :payload"
    (found,) = queue.fetch(queue.engine.compile(sql), {"payload": payload})
    return dict(zip(COLUMNS, found))


def one_claimed(engine, **settings) -> tuple[Queue, tuple]:
    """A relational queue holding one row, p0, that etl claimed under claim 1: the queue and p0's key."""
    queue = user_tables.relational(engine, **settings)
    user_tables.enqueue_relational(queue, 1)
    queue.consuming.claim("etl", 1, 1)
    return queue, claimed_keys(queue)["p0"]


def test_done_writes_completed_with_the_response_the_duration_and_the_step(engine):
    queue, key = one_claimed(engine)
    assert acked(queue, [Ack(key, DONE_OUTCOME, response="250 OK", step="Confirm")]) == 0
    done = row(queue, "p0")
    assert (done["Status"], done["Response"], done["Step"]) == ("Completed", "250 OK", "Confirm")
    assert done["Duration"] is not None and done["Duration"] >= 0
    assert queue.consuming.count_claimed("etl", 1) == 0  # the claim's copy is forgotten


def test_retry_writes_error_and_the_row_is_claimed_again_once_its_delay_has_passed(engine):
    queue, key = one_claimed(engine)
    acked(queue, [Ack(key, RETRY_OUTCOME, "SMTP 451", delay_seconds=600, step="Send")])
    retried = row(queue, "p0")
    assert (retried["Status"], retried["Error"], retried["Step"]) == ("Error", "SMTP 451", "Send")
    assert queue.consuming.claim("etl", 2, 1) == 0  # not due for ten minutes
    ago = user_tables._plus_ms(engine.name, user_tables.NOW[engine.name], -1_000)
    user_tables.run(queue, f"UPDATE {queue.table} SET ScheduledFor = {ago}")  # the ten minutes have passed
    assert queue.consuming.claim("etl", 2, 1) == 1
    assert row(queue, "p0")["AttemptNum"] == 2


def test_retry_on_the_last_attempt_writes_failed(engine):
    queue, key = one_claimed(engine, max_attempts=1)
    acked(queue, [Ack(key, RETRY_OUTCOME, "SMTP 550")])
    assert (row(queue, "p0")["Status"], row(queue, "p0")["Error"]) == ("Failed", "SMTP 550")


def test_failed_writes_failed_with_the_error(engine):
    queue, key = one_claimed(engine)
    acked(queue, [Ack(key, FAILED_OUTCOME, "no such mailbox")])
    assert (row(queue, "p0")["Status"], row(queue, "p0")["Error"]) == ("Failed", "no such mailbox")


def test_a_step_the_acknowledgement_does_not_name_keeps_the_rows_own(engine):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 1)
    user_tables.run(queue, f"UPDATE {queue.table} SET Step = 'Render'")
    queue.consuming.claim("etl", 1, 1)
    acked(queue, [Ack(claimed_keys(queue)["p0"], RETRY_OUTCOME, "timeout")])
    assert row(queue, "p0")["Step"] == "Render"


def test_an_ack_for_a_row_the_tables_worker_took_after_our_lease_ran_out_changes_nothing_and_is_counted(engine):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 2)
    queue.consuming.claim("etl", 1, 2)
    keys = claimed_keys(queue)
    # The table's own worker took p0 over (Next_ writes StartedAt and the UpdatedAt token), and is still at it.
    later = user_tables._plus_ms(engine.name, user_tables.NOW[engine.name], 5_000)
    user_tables.run(queue, f"UPDATE {queue.table} SET StartedAt = {later}, UpdatedAt = {later} WHERE Payload = 'p0'")
    assert acked(queue, [Ack(keys["p0"], DONE_OUTCOME), Ack(keys["p1"], DONE_OUTCOME)]) == 1
    assert (row(queue, "p0")["Status"], row(queue, "p1")["Status"]) == ("Processing", "Completed")
    assert queue.consuming.count_claimed("etl", 1) == 0  # the copy of the row it lost is forgotten too


def test_applying_the_same_acks_twice_changes_nothing_the_second_time(engine):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 1)
    queue.consuming.claim("etl", 1, 1)
    acks = [Ack(claimed_keys(queue)["p0"], RETRY_OUTCOME, "timeout", delay_seconds=0)]
    assert acked(queue, acks) == 0
    assert acked(queue, acks) == 1  # a replay: the row is no longer in flight under that claim
    assert (row(queue, "p0")["Status"], row(queue, "p0")["AttemptNum"]) == ("Error", 1)


def test_a_second_ack_of_a_row_in_the_same_batch_changes_nothing_and_is_counted(engine):
    queue, key = one_claimed(engine)
    acks = [Ack(key, DONE_OUTCOME, response="first"), Ack(key, FAILED_OUTCOME, "second")]
    assert acked(queue, acks) == 1
    assert (row(queue, "p0")["Status"], row(queue, "p0")["Response"]) == ("Completed", "first")


def test_acks_applied_a_chunk_at_a_time_settle_every_row_of_every_outcome(engine, monkeypatch):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 7)
    queue.consuming.claim("etl", 1, 7)
    monkeypatch.setattr(queue.engine, "default_chunk", 2)  # SQL Server's 4,000, made small: four chunks
    outcomes = [DONE_OUTCOME, RETRY_OUTCOME, FAILED_OUTCOME] * 3
    acks = [
        Ack(key, outcome, "e", delay_seconds=600)
        for (_, key), outcome in zip(sorted(claimed_keys(queue).items()), outcomes)
    ]
    assert acked(queue, acks) == 0
    assert sorted(row(queue, f"p{i}")["Status"] for i in range(7)) == sorted(
        ["Completed", "Error", "Failed"] * 2 + ["Completed"]
    )
    assert queue.consuming.count_claimed("etl", 1) == 0


def test_acknowledging_a_claim_beside_another_as_large_in_flight_costs_what_it_costs_alone(engine):
    """Forgetting the acknowledged rows' copies finds each row by its key, whatever the table's statistics say
    of the rows in flight: taken while every row was pending, they put those near one, and PostgreSQL then
    compared each acknowledged copy with every row in flight (4,000 by 4,000: half a second against 40 ms)."""
    rows = 4_000
    queue = user_tables.relational(engine, audit=False)
    user_tables.enqueue_relational(queue, 5 * rows + 1)
    if engine.name == "postgres":  # statistics taken while every row is pending, and kept so (no autoanalyze)
        user_tables.run(queue, f"ALTER TABLE {queue.table} SET (autovacuum_enabled = off)", f"ANALYZE {queue.table}")

    def ack_seconds(seq: int) -> float:
        queue.consuming.claim("etl", seq, rows)
        acks = [Ack(key, DONE_OUTCOME) for key in claimed_keys(queue, "etl", seq).values()]
        started = time.perf_counter()
        assert acked(queue, acks) == 0
        return time.perf_counter() - started

    queue.consuming.claim("etl", 1, 1)
    acked(queue, [Ack(key, DONE_OUTCOME) for key in claimed_keys(queue, "etl", 1).values()])  # learns the columns
    alone = min(ack_seconds(2), ack_seconds(3))
    queue.consuming.claim("other", 1, rows)  # as many rows in flight, another consumer's
    beside = min(ack_seconds(4), ack_seconds(5))
    assert beside < 3 * alone + 0.15, (beside, alone)
    assert queue.consuming.count_claimed("other", 1) == rows


def test_acknowledgements_beside_the_tables_own_worker_complete_every_row_once_and_reject_none_of_its_rows(engine):
    """The table's Next_/Modify_ worker (stored procedures on SQL Server) takes rows one at a time while a
    stream claims batches and acknowledges them done: each row is completed by one of them, and neither's
    token check turns the other's rows away."""
    if engine.babelfish:
        pytest.skip(
            "Babelfish ignores READPAST and UPDLOCK (tests/support/babelfish.py, table_hints): the worker's pick "
            "takes no lock there, so whether it takes a row the stream holds is a race's luck, not the subject"
        )
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 200)
    worker, acked_by_stream, finished = user_tables.TableWorker(queue, engine.name), [], threading.Event()
    working = threading.Thread(target=worker.work, args=(finished.is_set,))
    seq = 1
    assert queue.consuming.claim("etl", seq, 10)  # the stream holds a claim before the worker starts, and
    working.start()
    try:
        assert wait_until(lambda: worker.done, 30)  # the worker is at it before the stream goes on
        while True:
            keys = claimed_keys(queue, seq=seq)
            assert acked(queue, [Ack(key, DONE_OUTCOME) for key in keys.values()]) == 0
            acked_by_stream += keys
            seq += 1
            if not queue.consuming.claim("etl", seq, 10):
                break
    finally:
        finished.set()
        working.join(60)
    assert sorted(acked_by_stream + worker.done) == sorted(f"p{n}" for n in range(200))
    assert worker.rejected == 0 and acked_by_stream and worker.done
    statuses = queue.fetch(queue.engine.compile(f"SELECT Status, COUNT(*) FROM {queue.table} GROUP BY Status"), {})
    assert dict(statuses) == {"Completed": 200}


def test_stats_counts_the_retried_rows_waiting_for_their_delay_and_groups_the_failed_rows_by_error(engine):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 4)
    queue.consuming.claim("etl", 1, 4)
    keys = claimed_keys(queue)
    retry = Ack(keys["p0"], RETRY_OUTCOME, "SMTP 451", delay_seconds=600)
    refusals = [
        Ack(keys[p], FAILED_OUTCOME, e) for p, e in (("p1", "no mailbox"), ("p2", "no mailbox"), ("p3", "spam"))
    ]
    acked(queue, [retry, *refusals])
    retried = queue.inspection.stats()["Error"]
    assert retried["rows"] == retried["waiting"] == 1 and 500_000 < retried["next_due_ms"] <= 600_000
    assert queue.inspection.failed_errors() == [("no mailbox", 2), ("spam", 1)]


# Sessions waiting on a lock another holds: what the test waits for before the renewal commits.
BLOCKED = {
    "postgres": "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
    "sqlserver": "SELECT COUNT(*) FROM sys.dm_exec_requests WHERE blocking_session_id <> 0",
}


@pytest.mark.babelfish_gap("dmv")
def test_an_acknowledgement_that_waits_on_a_lease_renewal_applies_once_the_renewal_commits(engine):
    """The stream's heartbeat renews a held row (its started-at, so the table's trigger rewrites the token,
    and the copy takes the new token) while the sink acknowledges the row from another session. Read
    committed lets an UPDATE that waited on the row see the row's new token but the copy's old one: the
    acknowledgement must not take its own stream's renewal for another claimer's."""
    if engine.name not in BLOCKED:
        pytest.skip("one writer at a time: an acknowledgement cannot start while a renewal writes")
    queue, key = one_claimed(engine)
    renewal, probe = queue.twin(), queue.twin()
    copies = queue.dialect.lifecycle.claims_table(queue.table)
    result: list[int] = []
    acking = threading.Thread(target=lambda: result.append(acked(queue, [Ack(key, DONE_OUTCOME)])))
    try:
        with renewal.transaction() as cur:
            later = user_tables._plus_ms(engine.name, "UpdatedAt", 1)  # as the table's token trigger writes it
            cur.execute(f"UPDATE {queue.table} SET StartedAt = StartedAt, UpdatedAt = {later}")
            cur.execute(f"UPDATE {copies} SET UpdatedAt = (SELECT t.UpdatedAt FROM {queue.table} AS t)")
            acking.start()
            assert wait_until(lambda: probe.fetch(probe.engine.compile(BLOCKED[engine.name]), {})[0][0] > 0, 30)
    finally:
        # Joined also when the wait fails (Babelfish: no DMV), before the engine closes the connection the
        # acknowledgement still uses: FreeTDS crashed the process when it was closed under it.
        if acking.ident is not None:
            acking.join(60)
        probe.close()
    assert result == [0]
    assert row(queue, "p0")["Status"] == "Completed"
