"""Fenced leases, on every engine: a stream never takes back a row it still holds, keeps the leases of
the claims it holds alive, and leaves (and counts) the rows another claimer took once a lease ran out.

The designs are those whose claims expire: sqlqueue's own layout (a lease column, swept back to ready
by any consumer) and the adopted tables whose claims take back rows abandoned past the lease
(relational, claimer). Time is moved in SQL (tests/support/leases.py), not waited for, except where
the heartbeat itself is the subject.
"""

from __future__ import annotations

import time
from collections import Counter

import pytest
from pyspark.sql.streaming.datasource import ReadMaxRows

from sqlqueue.consumer import ClaimPolicy, Consumer
from sqlqueue.options import SourceOptions
from sqlqueue.queue import DONE_OUTCOME, FAILED_OUTCOME, RETRY_OUTCOME, Ack
from sqlqueue.spark.reader import QueueStreamReader
from tests.support.leases import LEASE_SECONDS, Leased, held_payloads, leased, outage

EXPIRING = ["native", "relational", "claimer"]
ADOPTED = ["relational", "claimer"]
LONGER_THAN_THE_LEASE = 2 * LEASE_SECONDS


def policy(engine, **settings) -> ClaimPolicy:
    return ClaimPolicy(order=engine.order, lease_seconds=LEASE_SECONDS, **settings)


def reader(engine, made: Leased) -> QueueStreamReader:
    """The source's reader as Spark's driver calls it (no Spark needed), making claims ahead."""
    raw = engine.source_options(
        made.queue, consumer="etl", emptyPollIntervalMs=1, prefetch=True, leaseSeconds=LEASE_SECONDS
    )
    if made.payload != "payload":  # an adopted table: its profile, as the seeds' tables were adopted
        profile = made.queue.declared  # type: ignore[attr-defined]
        raw |= {"profile": profile.name, "profile.order": ", ".join(f"{c} {d}" for c, d in profile.order)}
        raw = {k: v for k, v in raw.items() if k != "order"}
    return QueueStreamReader(SourceOptions.parse(raw), None)


def batch(source: QueueStreamReader, made: Leased, start: dict, end: dict) -> list[str]:
    """What Spark reads for the batch (start, end]: the partitions planned on the driver, each read.
    Spark then spends seconds on the batch, by which time the claim made ahead is done: waited for
    here, so the test sees what a job sees rather than a race."""
    payloads = []
    for part in source.partitions(start, end):
        for rows in made.queue.consuming.read_claimed(
            part.consumer, part.after_seq, part.upto_seq, part.lo, part.hi, [made.payload]
        ):
            payloads += [str(r[0]) for r in rows]
    source._consumer_for(end["consumer"])._await_prefetch()
    return payloads


@pytest.mark.parametrize("design", ADOPTED)
def test_a_claim_never_takes_back_a_row_its_own_consumer_holds(engine, design):
    made = leased(engine, design, 5)
    assert made.queue.consuming.claim("etl", 1, 3, order=engine.order, lease_seconds=LEASE_SECONDS) == 3
    outage(made.queue, LONGER_THAN_THE_LEASE)
    assert made.queue.consuming.claim("etl", 2, 5, order=engine.order, lease_seconds=LEASE_SECONDS) == 2
    assert set(held_payloads(made.queue, made.payload, "etl", 1, 2)).isdisjoint(
        held_payloads(made.queue, made.payload, "etl", 0, 1)
    )
    # Abandoned to any other claimer all the same: its lease ran out.
    assert made.queue.consuming.claim("other", 1, 5, order=engine.order, lease_seconds=LEASE_SECONDS) == 3


@pytest.mark.parametrize("design", EXPIRING)
def test_a_restart_after_an_outage_longer_than_the_lease_serves_each_row_once(engine, design):
    made = leased(engine, design, 30)
    limit = ReadMaxRows(10)
    first = reader(engine, made)
    start = first.initialOffset()
    end = first.latestOffset(start, limit)  # claim 1, and claim 2 made ahead in the background
    served = batch(first, made, start, end)
    first.stop()  # the job dies before Spark commits batch 1, holding claims 1 and 2
    outage(made.queue, LONGER_THAN_THE_LEASE)

    again = reader(engine, made)
    served = batch(again, made, start, end)  # Spark replays the logged batch 1 first
    while (nxt := again.latestOffset(end, limit)) != end:
        served += batch(again, made, end, nxt)
        end = nxt
    again.stop()
    assert max(Counter(served).values()) == 1
    assert sorted(served) == sorted(f"p{i}" for i in range(30))


@pytest.mark.parametrize("design", EXPIRING)
def test_a_restart_renews_held_claims_before_another_claimer_can_take_them(engine, design):
    made = leased(engine, design, 10)
    gone = Consumer(made.queue.twin(), "etl", policy(engine))
    assert gone.advance(0, 6) == 1
    gone.close()
    outage(made.queue, LONGER_THAN_THE_LEASE)

    back = Consumer(made.queue.twin(), "etl", policy(engine))
    back.replay(0, 1)  # Spark's first call after the restart: planning the logged batch again
    rival = Consumer(made.queue.twin(), "rival", policy(engine, rescue_interval_s=0))
    assert rival.advance(0, 10) == 1
    assert rival.last_claimed_rows == 4
    assert held_payloads(made.queue, made.payload, "etl", 0, 1) == sorted(f"p{i}" for i in range(6))
    back.close()
    rival.close()


def taken_while_away(engine, design) -> tuple[Leased, Consumer]:
    """etl claimed 6 of 10 rows under claim 1 and died; it stayed away past the lease, and a rival took
    every row, claim 1's among them: the table and the rival."""
    made = leased(engine, design, 10)
    gone = Consumer(made.queue.twin(), "etl", policy(engine))
    assert gone.advance(0, 6) == 1
    gone.close()
    outage(made.queue, LONGER_THAN_THE_LEASE)
    rival = Consumer(made.queue.twin(), "rival", policy(engine, rescue_interval_s=0))
    assert rival.advance(0, 10) == 1 and rival.last_claimed_rows == 10
    return made, rival


@pytest.mark.parametrize("design", ADOPTED)
def test_a_batch_replayed_after_a_restart_serves_none_of_the_rows_another_claimer_took_meanwhile(engine, design):
    """The job died holding claim 1, before its sink made the batch visible, and stayed away past the
    lease: another claimer took the rows and works on them. Spark replays the logged batch; serving those
    rows again would deliver them twice. A sink idempotent per batch discards a replay's rows anyway where
    the first attempt became visible, so the replay serves only the rows still this stream's."""
    made, rival = taken_while_away(engine, design)

    back = Consumer(made.queue.twin(), "etl", policy(engine))
    back.replay(0, 1)  # Spark's first call after the restart: planning the logged batch again
    assert held_payloads(made.queue, made.payload, "etl", 0, 1) == []
    assert back.fenced_rows == 6
    back.close()
    rival.close()


@pytest.mark.parametrize("design", ADOPTED)
def test_a_restarts_first_completion_counts_the_rows_another_claimer_took_from_claims_served_before_it(engine, design):
    """Spark committed batch 1, and the job died before completing it; it stayed away past the lease and
    another claimer took the rows. The restarted stream's completion of claim 1 counts them as fenced out,
    though this run never served claim 1."""
    made, rival = taken_while_away(engine, design)

    back = Consumer(made.queue.twin(), "etl", policy(engine))
    assert back.advance(1, 10) == 1  # completes claim 1 first: none of its rows is still ours
    assert back.fenced_rows == 6
    back.close()
    rival.close()


@pytest.mark.parametrize("design", EXPIRING)
def test_the_heartbeat_keeps_a_held_claims_lease_alive_while_the_batch_runs(engine, design):
    made = leased(engine, design, 4)
    short = ClaimPolicy(order=engine.order, lease_seconds=2)
    holder = Consumer(made.queue.twin(), "etl", short)
    assert holder.advance(0, 4) == 1  # claim 1 held: Spark is still working on it
    rival = Consumer(made.queue.twin(), "rival", ClaimPolicy(order=engine.order, lease_seconds=2, rescue_interval_s=0))
    deadline = time.monotonic() + 3 * short.lease_seconds
    while time.monotonic() < deadline:  # three leases long, a rival keeps trying
        assert rival.advance(0, 4) == 0
    assert held_payloads(made.queue, made.payload, "etl", 0, 1) == ["p0", "p1", "p2", "p3"]
    holder.close()
    rival.close()


@pytest.mark.parametrize("design", EXPIRING)
def test_a_stream_paused_past_its_lease_leaves_the_rows_another_claimer_took_and_counts_them(engine, design):
    made = leased(engine, design, 3)
    paused = Consumer(made.queue.twin(), "etl", policy(engine))
    assert paused.advance(0, 3) == 1
    paused.close()  # a pause past the lease (a GC pause, a frozen VM): no heartbeat renews claim 1
    outage(made.queue, LONGER_THAN_THE_LEASE)
    rival = Consumer(made.queue.twin(), "rival", policy(engine, rescue_interval_s=0))
    assert rival.advance(0, 3) == 1 and rival.last_claimed_rows == 3

    assert paused.complete_through(1) == 0  # Spark committed batch 1 when the stream woke
    assert paused.fenced_rows == 3
    assert made.queue.consuming.count_claimed("rival", 1) == 3  # the rival's claim is untouched
    rival.close()
    paused.close()


@pytest.mark.parametrize("design", ADOPTED)
def test_a_claim_made_ahead_serves_only_the_rows_still_its_own(engine, design):
    made = leased(engine, design, 6)
    assert made.queue.consuming.claim("etl", 1, 6, order=engine.order, lease_seconds=LEASE_SECONDS) == 6
    outage(made.queue, LONGER_THAN_THE_LEASE)  # the claim was made ahead; the job was down since
    rival = Consumer(made.queue.twin(), "rival", policy(engine))
    assert rival.advance(0, 2) == 1

    back = Consumer(made.queue.twin(), "etl", policy(engine))
    assert back.advance(0, 6) == 1  # claim 1 was never logged by Spark: it is served now
    assert back.last_claimed_rows == 4
    assert back.fenced_rows == 2
    taken = set(held_payloads(made.queue, made.payload, "rival", 0, 1))
    assert taken.isdisjoint(held_payloads(made.queue, made.payload, "etl", 0, 1))
    back.close()
    rival.close()


def acked(queue, acks) -> int:
    with queue.transaction() as cur:
        return queue.consuming.apply_acks(cur, acks, keep=False, max_attempts=5)


def test_an_acknowledgement_carrying_the_claims_attempts_settles_the_row(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "p0"}, {"payload": "p1"}])
    queue.consuming.claim("etl", 1, 2, order=engine.order, lease_seconds=LEASE_SECONDS)
    ids = sorted(r[0] for r in queue.fetch(queue.engine.compile(f"SELECT id FROM {queue.table}"), {}))
    assert (
        acked(queue, [Ack((ids[0],), DONE_OUTCOME, attempts=1), Ack((ids[1],), FAILED_OUTCOME, "bad", attempts=1)]) == 0
    )
    assert set(queue.inspection.stats()) == {"failed"}


def test_an_acknowledgement_after_another_claim_took_the_row_changes_nothing_and_is_counted(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "p0"}, {"payload": "p1"}])
    queue.consuming.claim("etl", 1, 2, order=engine.order, lease_seconds=LEASE_SECONDS)
    outage(queue, LONGER_THAN_THE_LEASE)
    assert queue.consuming.rescue_expired(5) == 2
    assert queue.consuming.claim("rival", 1, 2, order=engine.order, lease_seconds=LEASE_SECONDS) == 2
    ids = [r[0] for r in queue.fetch(queue.engine.compile(f"SELECT id FROM {queue.table}"), {})]
    late = [Ack((ids[0],), DONE_OUTCOME, attempts=1), Ack((ids[1],), RETRY_OUTCOME, "again", 5, attempts=1)]
    assert acked(queue, late) == 2
    assert queue.consuming.count_claimed("rival", 1) == 2


@pytest.mark.parametrize("design", EXPIRING)
@pytest.mark.parametrize("prefetch", [False, True])
def test_a_committed_claim_whose_lease_ran_out_while_the_job_was_down_is_completed_not_served_again(
    engine, design, prefetch
):
    """Spark committed claim 1, then the job died before it completed it, and stayed down past the lease.
    The restarted stream completes claim 1 before it sweeps expired rows back or claims: a sweep first
    would give those rows back and the next claim would deliver them a second time."""
    made = leased(engine, design, 6)
    first = engine.consumer(made.queue, "etl", policy(engine, prefetch=prefetch))
    assert first.advance(0, 3) == 1
    first.close()  # died: claim 1 committed by Spark, not completed
    outage(made.queue, LONGER_THAN_THE_LEASE)
    restarted = engine.consumer(made.queue.twin(), "etl", policy(engine, prefetch=prefetch, rescue_interval_s=0))
    assert restarted.advance(1, 3) == 2
    restarted.close()
    assert held_payloads(made.queue, made.payload, "etl", 1, 2) == ["p3", "p4", "p5"]
