"""The sink into a table sqlqueue adopted: batches staged beside it, inserted as new ready rows of its
profile at publish, exactly once, and never seen by the table's own workers before that."""

from __future__ import annotations

import datetime as dt
import time

import pytest

from sqlqueue.errors import SchemaError
from sqlqueue.identifiers import TableName
from sqlqueue.producer import Producer
from sqlqueue.profile import profile_from
from sqlqueue.queue import Queue
from sqlqueue.testing import designs
from tests.support import user_tables
from tests.support.engines import fresh_name

DAY_AGO = dt.datetime.now().replace(microsecond=0) - dt.timedelta(days=1)


def rows(n: int, start: int = 0) -> list[tuple]:
    """(EnqueuedAt, Type, Payload) rows, each with a key of its own."""
    return [(DAY_AGO + dt.timedelta(seconds=i), "Sync", f"s{i}") for i in range(start, start + n)]


def written(queue: Queue, batch: int, tasks: list[list[tuple]], writer: str = "w") -> list:
    producer = Producer(queue, writer)
    columns = queue.producing.writable(["EnqueuedAt", "Type", "Payload"])
    return [producer.write(batch, task, columns, task_rows) for task, task_rows in enumerate(tasks)]


def publish(queue: Queue, batch: int, tasks: list, writer: str = "w") -> int | None:
    return Producer(queue, writer).publish(batch, queue.producing.writable(["EnqueuedAt", "Type", "Payload"]), tasks)


def table_rows(queue: Queue) -> list[tuple]:
    sql = f"SELECT Payload, Status, AttemptNum FROM {queue.table} ORDER BY Payload"
    return queue.fetch(queue.engine.compile(sql), {})


def test_a_published_batch_becomes_ready_rows_of_the_profile(engine):
    queue = user_tables.relational(engine)
    assert publish(queue, 0, written(queue, 0, [rows(2), rows(1, start=2)])) == 3
    assert table_rows(queue) == [("s0", "Pending", 0), ("s1", "Pending", 0), ("s2", "Pending", 0)]
    due = queue.fetch(queue.engine.compile(f"SELECT ScheduledFor, UpdatedAt FROM {queue.table}"), {})
    assert all(scheduled is not None and token is not None for scheduled, token in due)
    assert queue.consuming.claim("etl", 1, 10) == 3


def test_a_batch_is_not_in_the_table_until_published(engine):
    queue = user_tables.relational(engine)
    tasks = written(queue, 0, [rows(3)])
    assert table_rows(queue) == []
    assert user_tables.TableWorker(queue, engine.name).next_() is None
    publish(queue, 0, tasks)
    assert len(table_rows(queue)) == 3


def test_a_batch_published_again_is_inserted_once(engine):
    queue = user_tables.relational(engine)
    tasks = written(queue, 0, [rows(2)])
    assert publish(queue, 0, tasks) == 2
    assert publish(queue, 0, tasks) is None
    assert written(queue, 0, [rows(2)])[0].rows == 0  # a replayed task finds its batch in the ledger
    assert len(table_rows(queue)) == 2


def test_only_the_attempt_spark_committed_is_published(engine):
    queue = user_tables.relational(engine)
    producer, columns = Producer(queue, "w"), queue.producing.writable(["EnqueuedAt", "Type", "Payload"])
    producer.write(0, 0, columns, rows(2), attempt=1)  # failed attempt
    committed = producer.write(0, 0, columns, rows(2, start=10), attempt=2)
    assert producer.publish(0, columns, [committed]) == 2
    assert [p for p, _, _ in table_rows(queue)] == ["s10", "s11"]
    assert queue.inspection.unpublished_rows() == 0


def test_a_discarded_batch_leaves_nothing(engine):
    queue = user_tables.relational(engine)
    written(queue, 0, [rows(2)])
    assert Producer(queue, "w").discard(0) == 2
    assert queue.inspection.unpublished_rows() == 0 and table_rows(queue) == []


def test_a_due_time_the_rows_give_is_kept(engine):
    queue = user_tables.relational(engine)
    producer = Producer(queue, "w")
    columns = queue.producing.writable(["EnqueuedAt", "Type", "Payload", "ScheduledFor"])
    later = DAY_AGO + dt.timedelta(days=2)
    task = producer.write(0, 0, columns, [(DAY_AGO, "Sync", "later", later)])
    producer.publish(0, columns, [task])
    assert queue.consuming.claim("etl", 1, 10) == 0  # not due yet


@pytest.mark.parametrize(
    ("names", "error"),
    [
        (["EnqueuedAt", "Type", "Status"], "column 'Status' is written by profile 'relational'"),
        (["EnqueuedAt", "Type", "Colour"], "column 'Colour' is not in table"),
        (["Type", "Payload"], "column 'EnqueuedAt', the key of table .* is missing from the rows"),
        (["EnqueuedAt", "Payload"], r"column\(s\) 'Type' are required"),
    ],
)
def test_columns_that_do_not_fit_the_table_are_refused_before_anything_is_written(engine, names, error):
    queue = user_tables.relational(engine)
    with pytest.raises(SchemaError, match=f"(?i){error}"):  # PostgreSQL folds names to lower case
        queue.producing.writable(names)


def test_a_key_the_table_assigns_need_not_be_given(engine):
    queue = user_tables.dequeue(engine)
    producer, columns = Producer(queue, "w"), queue.producing.writable(["Payload"])
    producer.publish(0, columns, [producer.write(0, 0, columns, [("a",), ("b",)])])
    assert queue.consuming.claim("etl", 1, 10) == 2


def test_an_identity_column_is_refused_since_the_table_generates_it(engine):
    if engine.name == "sqlite":
        pytest.skip("an INTEGER PRIMARY KEY is the rowid, which takes a given value")
    queue = user_tables.dequeue(engine)
    with pytest.raises(SchemaError, match="(?i)column 'Id' is generated by table"):
        queue.producing.writable(["Id", "Payload"])


def table_of(engine, columns: str, preset: str, **settings: str) -> Queue:
    """A table of ``columns`` ({ts}, {text}, {identity}: the engine's types) adopted through ``preset``."""
    t = designs.TYPES[engine.name]
    name = fresh_name("own")
    # Babelfish claims in no order (update_cte), as user_tables._queue does.
    profile = profile_from(preset, {**settings, "order": ""} if engine.babelfish else settings)
    queue = Queue(engine.connection(), TableName(name), profile)
    engine.created.append(queue)
    now = user_tables.NOW[engine.name]
    user_tables.run(
        queue, f"CREATE TABLE {name} ({columns.format(ts=t.time, text=t.text, identity=t.identity, now=now)})"
    )
    queue.adopt()
    return queue


def test_a_key_with_a_plain_default_must_come_with_the_rows(engine):
    # Rows inserted together would all get the default: one batch could never be published.
    queue = table_of(
        engine,
        "EnqueuedAt {ts} DEFAULT ({now}) NOT NULL PRIMARY KEY, Payload {text}, Mark {ts}",
        "started-mark",
        key="EnqueuedAt",
        started="Mark",
        error="",
    )
    with pytest.raises(SchemaError, match="(?i)column 'EnqueuedAt', the key of table .* does not assign it"):
        queue.producing.writable(["Payload"])


def test_a_not_null_lifecycle_column_a_new_row_leaves_empty_is_refused(engine):
    queue = table_of(
        engine, "Id {identity}, Payload {text}, Mark {ts}, Errors {text} NOT NULL", "started-mark", started="Mark"
    )
    with pytest.raises(SchemaError, match="(?i)column 'Errors' of table .* is NOT NULL with no default"):
        queue.producing.writable(["Payload"])


def test_a_new_row_is_ready_whatever_the_defaults_of_the_columns_that_say_so(engine):
    # Seed 003 gives end_date a default; the profile reads a NULL end_date as not done.
    queue = user_tables.claimer(engine)
    producer, columns = Producer(queue, "w"), queue.producing.writable(["Payload"])
    producer.publish(0, columns, [producer.write(0, 0, columns, [("a",), ("b",)])])
    assert queue.consuming.claim("etl", 1, 10) == 2


def test_a_new_row_of_a_claimer_table_without_a_status_flag_is_ready_whatever_its_end_date_default(engine):
    queue = table_of(
        engine,
        "id {identity}, app_server {text}, attempts INT DEFAULT 0 NOT NULL, scheduled_start_date {ts} NOT NULL, "
        "start_date {ts}, end_date {ts} DEFAULT ({now}), Payload {text}",
        "claimer",
        key="id",
        status="",
    )
    producer, columns = Producer(queue, "w"), queue.producing.writable(["Payload"])
    producer.publish(0, columns, [producer.write(0, 0, columns, [("a",), ("b",)])])
    assert queue.consuming.claim("etl", 1, 10) == 2


def test_times_the_rows_give_are_written_in_a_local_clock_tables_zone(engine, monkeypatch):
    if engine.name != "sqlite":
        pytest.skip("SQLite's local time is this process's TZ, which the test sets")
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        queue = user_tables.relational(engine)  # clock local
        producer = Producer(queue, "w")
        columns = queue.producing.writable(["EnqueuedAt", "Type", "Payload", "ScheduledFor"])
        in_an_hour = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)
        producer.publish(0, columns, [producer.write(0, 0, columns, [(DAY_AGO, "Sync", "later", in_an_hour)])])
        assert queue.consuming.claim("etl", 1, 10) == 0  # due in an hour, in Tokyo as in UTC
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_column_added_after_adoption_names_how_to_stage_it(engine):
    queue = user_tables.relational(engine)
    user_tables.run(queue, f"ALTER TABLE {queue.table} ADD Region {designs.TYPES[engine.name][3]} NULL")
    with pytest.raises(SchemaError, match="(?i)column\\(s\\) 'Region' of table .* came after it was adopted.*drop"):
        queue.producing.writable(["EnqueuedAt", "Type", "Region"])


@pytest.mark.babelfish_gap("index_names")  # adopting again re-runs the claims table's guarded index
def test_a_table_adopted_before_the_sink_came_serves_the_source_and_refuses_the_sink_until_adopted_again(engine):
    queue = user_tables.relational(engine)
    user_tables.run(queue, f"DROP TABLE {queue.engine.table(queue.producing.staging)}")
    queue.require_layout()
    with pytest.raises(SchemaError, match="is not adopted yet.*sqlqueue_staging is missing.*--apply"):
        queue.producing.writable(["EnqueuedAt", "Type"])
    queue.adopt()
    queue.producing.writable(["EnqueuedAt", "Type"])
