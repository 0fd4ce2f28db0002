"""Ids a sink task names itself (sqlqueue.numbering), where an engine's queue tables hand ids out in blocks
(PostgreSQL): the task's rows keep the order they were sent in, never take an id a default could take, and a
claim held as runs holds exactly the rows it took, rows inserted meanwhile included or left out as taken.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pyarrow as pa
import pytest

from sqlqueue.dialects import dialect_for
from sqlqueue.producer import Producer
from sqlqueue.schema import Column
from sqlqueue.spark.types import ArrowRows
from tests.support.clock import set_times
from tests.support.ids import ids

COLUMNS = (Column("payload", "text"),)
ROWS = 25_000
PER_BATCH = 1_000  # 25 Arrow batches, loaded in a few segments
PAYLOADS = [f"p{i:05}" for i in range(ROWS)]


@pytest.fixture
def queue(engine):
    if dialect_for(engine.name).engine.id_step == 1:
        pytest.skip(f"{engine.name}'s queue tables hand out ids one at a time")
    return engine.new_queue()


def batches(payloads: list[str], between: dict[int, object] | None = None) -> Iterator[pa.RecordBatch]:
    """``payloads`` as Arrow batches of PER_BATCH rows; ``between``: {row: a call made before that row's batch}."""
    for start in range(0, len(payloads), PER_BATCH):
        if between and start in between:
            between[start]()
        yield pa.record_batch([pa.array(payloads[start : start + PER_BATCH])], names=["payload"])


def write(queue, rows: Iterator[pa.RecordBatch], batch_id: int = 0) -> None:
    producer = Producer(queue, "writer")
    written = producer.write(batch_id, 0, COLUMNS, ArrowRows(rows, COLUMNS, native=True))
    producer.publish(batch_id, COLUMNS, [written])


def stored(queue) -> list[tuple[int, str]]:
    """(id, payload) of every row, by id."""
    e = queue.engine
    with queue.transaction() as cur:
        cur.execute(f"SELECT {e.quote('id')}, {e.quote('payload')} FROM {e.table(queue.table)} ORDER BY 1")
        return [(int(i), p) for i, p in cur.fetchall()]


def held(queue, consumer: str, seq: int) -> list[str]:
    """The payloads claim ``seq`` of ``consumer`` holds, read back as a replay reads them."""
    read: list[str] = []
    for lo, hi in queue.consuming.partition_bounds(consumer, seq - 1, seq, 3):
        for chunk in queue.consuming.read_claimed(consumer, seq - 1, seq, lo, hi, ["payload"]):
            read += [r[0] for r in chunk]
    return sorted(read)


def claim_runs(queue, consumer: str, seq: int) -> int:
    return queue.consuming.claim(consumer, seq, 10 * ROWS, order="fifo", runs=True)


def test_a_sink_task_numbers_its_rows_in_the_order_it_sends_them(queue):
    write(queue, batches(PAYLOADS))
    rows = stored(queue)
    assert [p for _, p in rows] == PAYLOADS
    step = queue.identity().step
    assert step > 1 and not [i for i, _ in rows if (i - 1) % step == 0]  # no block's first id: a default's


def test_a_claim_holds_a_sink_tasks_rows_as_one_run_and_counts_them(queue):
    write(queue, batches(PAYLOADS))
    assert claim_runs(queue, "c", 1) == ROWS
    assert queue.consuming.count_claimed("c", 1) == ROWS
    assert queue.inspection.held_rows() == ROWS
    assert held(queue, "c", 1) == PAYLOADS


def test_a_row_inserted_while_a_sink_task_loads_is_held_by_its_own_claim_alone(queue, engine):
    other = engine.queue(str(queue.table))
    between = {5 * PER_BATCH: lambda: other.enqueue([{"payload": "between"}])}
    write(queue, batches(PAYLOADS, between))  # the row is ready before the batch is published
    assert claim_runs(queue, "c", 1) + claim_runs(queue, "c", 2) == ROWS + 1
    claims = {seq: held(queue, "c", seq) for seq in (1, 2)}
    assert sorted(claims[1] + claims[2]) == sorted([*PAYLOADS, "between"])
    assert [queue.consuming.count_claimed("c", seq) for seq in (1, 2)] == [len(claims[1]), len(claims[2])]
    assert len(set(ids(queue))) == ROWS + 1


def test_a_run_does_not_span_a_row_of_a_tasks_block_that_its_claim_did_not_take(queue):
    write(queue, batches(PAYLOADS[:3]))
    _, middle, _ = ids(queue)
    set_times(queue, "due_at", {middle: dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)})
    assert claim_runs(queue, "c", 1) == 2
    assert held(queue, "c", 1) == ["p00000", "p00002"]
    set_times(queue, "due_at", {middle: dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)})
    assert claim_runs(queue, "c", 2) == 1
    assert (held(queue, "c", 1), held(queue, "c", 2)) == (["p00000", "p00002"], ["p00001"])


def test_a_table_whose_identity_steps_by_one_keeps_taking_its_ids_from_it(queue):
    e = queue.engine
    with queue.transaction() as cur:  # as a table made before its engine handed ids out in blocks
        cur.execute(f"ALTER TABLE {e.table(queue.table)} ALTER COLUMN {e.quote('id')} SET INCREMENT BY 1")
    fresh = queue.__class__(queue.spec, queue.table)
    write(fresh, batches(PAYLOADS[:3000]))
    assert fresh.identity().step == 1
    assert [i for i, _ in stored(fresh)] == list(range(1, 3001))
