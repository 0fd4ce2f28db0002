"""Layout versions on real engines: create records the layout, a table an earlier sqlqueue made is
layout 1, and `migrate` brings it to the current layout in place, keeping every row, finishing
when run again after an interruption, and changing nothing when run on a migrated table.

Layout-1 tables come from the DDL earlier sqlqueues emitted (tests/fixtures/layout1) and are
filled with the statements their code ran (tests/support/layouts.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from sqlqueue import layouts
from sqlqueue.consumer import ClaimPolicy, Consumer
from sqlqueue.errors import DatabaseError, SchemaError
from sqlqueue.producer import Producer
from sqlqueue.queue import Queue
from sqlqueue.schema import LAYOUT, Column, QueueSpec
from sqlqueue.testing import assert_queue_holds
from tests.support.engines import fresh_name
from tests.support.layouts import OLDEST, SHAPES, Filled, fill_layout1, layout1_queue, rows_by_state, shape

PLAIN = (Column("payload", "text"),)
KEYED = (Column("payload", "text"), Column("dedup_key", "string"))
# What fill_layout1 leaves once migrated: rows of uncommitted sink batches wait in the staging table.
MIGRATED_ROWS = {
    "ready": ["p1", "p2", "r1", "r2", "r3"],
    "claimed": ["c1", "c2"],
    "failed": ["f1"],
    "staging": ["k1", "k2", "k3", "s1", "s2"],
}


def quietly(line: str) -> None:
    pass


def recorded(queue: Queue) -> list[tuple]:
    e, layouts_table = queue.engine, queue.dialect.schema.layout_table(queue.table)
    return queue.fetch(e.compile(f"SELECT {e.quote('layout')} FROM {e.table(layouts_table)}"), {})


@pytest.mark.babelfish_gap("index_names")
def test_create_records_the_current_layout_once(engine):
    queue = engine.new_queue()
    queue.create()
    assert queue.layout() == LAYOUT and recorded(queue) == [(LAYOUT,)]


@pytest.mark.parametrize("shape_name", SHAPES)
def test_a_queue_table_an_earlier_sqlqueue_made_is_layout_1(engine, shape_name):
    assert layout1_queue(engine, shape_name).layout() == 1


def test_a_table_that_is_not_a_queue_is_named_in_one_line_and_left_alone(engine):
    queue = engine.queue(fresh_name("not_a_queue_"))
    with queue.transaction() as cur:
        cur.execute(f"CREATE TABLE {queue.engine.table(queue.table)} (id INT, state VARCHAR(20))")
    for look in (queue.layout, lambda: layouts.migrate(queue, say=quietly)):
        with pytest.raises(SchemaError) as refused:
            look()
        assert "\n" not in str(refused.value) and "is not a sqlqueue queue table" in str(refused.value)
        assert "stage_tag" not in str(refused.value) and "claim_seq" in str(refused.value)
    schema = queue.dialect.schema
    assert not queue.fetch(
        schema.table_columns(schema.layout_table(queue.table)), queue.catalog_names(schema.layout_table(queue.table))
    )


def test_create_over_a_layout_1_table_is_refused_naming_migrate(engine):
    queue = layout1_queue(engine)
    with pytest.raises(SchemaError) as refused:
        queue.create()
    assert f"has layout 1, older than this sqlqueue's layout {LAYOUT}: run `sqlqueue migrate" in str(refused.value)
    assert queue.layout() == 1


def test_a_newer_layout_is_refused_naming_an_upgrade(engine):
    queue = engine.new_queue()
    e, layouts_table = queue.engine, queue.dialect.schema.layout_table(queue.table)
    with queue.transaction() as cur:
        cur.execute(f"INSERT INTO {e.table(layouts_table)} ({e.quote('layout')}) VALUES ({LAYOUT + 1})")
    for refuse in (queue.require_layout, lambda: layouts.migrate(queue, say=quietly)):
        with pytest.raises(
            SchemaError, match=f"has layout {LAYOUT + 1}, newer than this sqlqueue's .*: upgrade sqlqueue"
        ):
            refuse()


def claimed_payloads(queue: Queue, consumer: str, after: int, upto: int) -> list[str]:
    rows = [
        row[0]
        for lo, hi in queue.consuming.partition_bounds(consumer, after, upto, 1)
        for batch in queue.consuming.read_claimed(consumer, after, upto, lo, hi, ["payload"])
        for row in batch
    ]
    return sorted(rows)


@pytest.mark.babelfish_gap("nocheck", "index_names")
def test_a_migrated_queue_loses_no_row_through_the_claim_and_sink_protocols(engine):
    queue = layout1_queue(engine)
    filled: Filled = fill_layout1(queue)
    layouts.migrate(queue, chunk=2, say=quietly)
    consumer = Consumer(queue, "c1", ClaimPolicy(order=engine.order, rescue_interval_s=3600))
    served: list[list[str]] = []
    committed = 0

    def next_batch() -> list[str]:
        nonlocal committed
        end = consumer.advance(committed, 100)
        served.append(claimed_payloads(queue, "c1", committed, end))
        committed = end
        return served[-1]

    # Claim 1, made by layout 1's code before the upgrade, is served again rather than claimed anew.
    assert next_batch() == sorted(filled.claimed)
    # Ready rows and the published batch are claimed; the batches Spark never committed stay hidden.
    assert next_batch() == sorted(filled.ready + filled.published)
    assert queue.upkeep.requeue_failed() == len(filled.failed)
    assert next_batch() == sorted(filled.failed)
    # Spark replays an uncommitted micro-batch: its writer writes it again, and it is published once,
    # the dedup keys the old rows held not standing in its way.
    keyed = Producer(queue, "w-keyed", "run-2")
    assert keyed.publish(1, KEYED, [keyed.write(1, 0, KEYED, filled.staged_keyed)]) == len(filled.staged_keyed)
    plain = Producer(queue, "w-plain", "run-2")
    rows = [(p,) for p in filled.staged_plain]
    assert plain.publish(5, PLAIN, [plain.write(5, 0, PLAIN, rows)]) == len(filled.staged_plain)
    # The batch layout 1 published is in the ledger: written again, it writes nothing.
    again = Producer(queue, "w-published")
    assert again.publish(0, PLAIN, [again.write(0, 0, PLAIN, [("p1",)])]) is None
    assert queue.inspection.unpublished_rows() == 0
    assert next_batch() == sorted([p for p, _ in filled.staged_keyed] + filled.staged_plain)
    assert next_batch() == []
    consumer.close()
    assert sorted(p for batch in served for p in batch) == sorted(filled.everything)
    assert_queue_holds(queue)  # every row was completed, none is left behind


@pytest.mark.babelfish_gap("nocheck", "index_names")
@pytest.mark.parametrize("shape_name", SHAPES)
def test_migrating_each_layout_1_shape_leaves_the_layout_create_makes(engine, shape_name):
    queue = layout1_queue(engine, shape_name)
    fill_layout1(queue, staged=shape_name == OLDEST)
    assert layouts.migrate(queue, say=quietly) == 1
    assert queue.layout() == LAYOUT and recorded(queue) == [(LAYOUT,)]
    assert shape(queue) == shape(engine.new_queue())


@pytest.mark.babelfish_gap("nocheck", "index_names")
def test_the_ready_index_keeps_the_claim_order_it_served(engine):
    queue = layout1_queue(engine)
    e, name = queue.engine, queue.dialect.schema.ready_index(queue.table)
    old_priority_index = e.create_index_guarded(
        queue.table,
        name,
        f"{e.quote('priority')} DESC, {e.quote('id')} ASC",
        ["due_at"],
        f"{e.quote('state')} = 'ready'",
    )
    with queue.transaction() as cur:
        cur.execute(f"DROP INDEX {e.index_name(queue.table, name)}")
        cur.execute(old_priority_index)
    layouts.migrate(queue, fallback_order="fifo", say=quietly)
    assert shape(queue) == shape(engine.new_queue(order="priority"))


@pytest.mark.babelfish_gap("nocheck", "index_names")
def test_migrate_run_again_changes_nothing(engine, monkeypatch):
    queue = layout1_queue(engine)
    fill_layout1(queue)
    layouts.migrate(queue, say=quietly)
    before = (shape(queue), rows_by_state(queue), recorded(queue))
    ran: list[str] = []
    said: list[str] = []
    with monkeypatch.context() as patched:
        patched.setattr(Queue, "run_step", lambda self, step, chunk: ran.append(step.name))
        assert layouts.migrate(queue, say=said.append) == LAYOUT
    assert ran == [] and said == [
        f"queue {queue.table} at {queue.spec.display} is at layout {LAYOUT}: nothing to migrate"
    ]
    # Each step's own guards hold too: run again on the migrated table, none changes a thing.
    for step in queue.dialect.migrations.migration_steps(QueueSpec(queue.table, queue.domain_columns()), 2):
        queue.run_step(step, 2)
    assert (shape(queue), rows_by_state(queue), recorded(queue)) == before


@pytest.mark.babelfish_gap("nocheck", "index_names")
def test_a_migration_stopped_before_any_of_its_steps_finishes_when_run_again(engine, monkeypatch):
    real_run_step = Queue.run_step
    stop, steps = 0, 1
    while stop < steps:
        queue = layout1_queue(engine)
        fill_layout1(queue)
        plan = queue.dialect.migrations.migration_steps(QueueSpec(queue.table), 2)
        steps, calls = len(plan), iter(range(len(plan)))

        def run_step(self, step, chunk, stop=stop, calls=calls):
            if next(calls) == stop:
                raise DatabaseError("the process was killed")
            return real_run_step(self, step, chunk)

        with monkeypatch.context() as patched:
            patched.setattr(Queue, "run_step", run_step)
            with pytest.raises(DatabaseError) as stopped:
                layouts.migrate(queue, chunk=2, say=quietly)
        assert f"step {stop + 1}/{steps} ({plan[stop].title}) failed: " in str(stopped.value)
        assert "run `sqlqueue migrate` again" in str(stopped.value) and queue.layout() == 1
        layouts.migrate(queue, chunk=2, say=quietly)
        assert queue.layout() == LAYOUT and rows_by_state(queue) == MIGRATED_ROWS, f"stopped before step {stop + 1}"
        assert shape(queue) == shape(engine.new_queue()), f"stopped before step {stop + 1}"
        stop += 1


@pytest.mark.babelfish_gap("nocheck", "index_names")
def test_a_migration_killed_between_two_chunks_of_its_move_finishes_when_run_again(engine, monkeypatch):
    queue = layout1_queue(engine)
    fill_layout1(queue)
    real_run_step, real_transaction = Queue.run_step, Queue.transaction
    chunks: list[int] = []

    def run_step(self, step, chunk):
        if step.name != "move_staged":
            return real_run_step(self, step, chunk)

        @contextmanager
        def second_chunk_dies(queue: Queue) -> Iterator:
            chunks.append(len(chunks))
            if len(chunks) == 2:
                raise DatabaseError("the process was killed")
            with real_transaction(queue) as cur:
                yield cur

        with monkeypatch.context() as patched:
            patched.setattr(Queue, "transaction", second_chunk_dies)
            return real_run_step(self, step, chunk)

    with monkeypatch.context() as patched:
        patched.setattr(Queue, "run_step", run_step)
        with pytest.raises(DatabaseError, match="move rows of uncommitted sink batches"):
            layouts.migrate(queue, chunk=1, say=quietly)
    assert rows_by_state(queue)["staging"] == ["k1"] and len(rows_by_state(queue)["staged"]) == 4
    layouts.migrate(queue, chunk=1, say=quietly)
    assert queue.layout() == LAYOUT and rows_by_state(queue) == MIGRATED_ROWS
