"""Subtype tables (profile.include): tables that extend an adopted queue table by its key, read with the
rows a claim takes, as the claim found them, and forgotten with them."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from sqlqueue.errors import ConfigError, SchemaError
from sqlqueue.identifiers import TableName
from sqlqueue.producer import Producer
from sqlqueue.profile import PRESETS
from sqlqueue.queue import DONE_OUTCOME, Ack, Queue
from sqlqueue.testing import designs
from tests.support import user_tables
from tests.support.engines import fresh_name

DAY_AGO = dt.datetime.now().replace(microsecond=0) - dt.timedelta(days=1)


def claimed(queue: Queue, columns: list[str], upto: int = 1) -> list[tuple]:
    """The rows of claims up to ``upto``, by payload; a struct's field names lower case (PostgreSQL folds them)."""
    rows: list[tuple] = []
    for lo, hi in queue.consuming.partition_bounds("etl", 0, upto, 2):
        for chunk in queue.consuming.read_claimed("etl", 0, upto, lo, hi, columns):
            rows += chunk
    lowered = [tuple({k.lower(): v for k, v in c.items()} if isinstance(c, dict) else c for c in r) for r in rows]
    return sorted(lowered, key=lambda row: row[0])


def email(queue: Queue) -> str:
    return f"{queue.table.name}_email"


def reset(queue: Queue) -> str:
    return f"{queue.table.name}_reset"


def notifications_with_an_email(engine) -> Queue:
    """Two Pending notifications: p0 with an email row, p1 with none."""
    queue = user_tables.notifications(engine)
    user_tables.enqueue_relational(queue, 2)
    user_tables.add_subtype_rows(queue, "email", "Address, Subject", {"p0": ("a@example.com", "Hello")})
    return queue


def copies(queue: Queue, subtype: str) -> int:
    claims = queue.dialect.lifecycle.claims_table(TableName(f"{queue.table.name}_{subtype}", queue.table.schema))
    return queue.fetch(queue.dialect.inspection.count_rows(claims), {})[0][0]


def test_a_claimed_row_is_read_with_its_subtype_row_as_a_struct(engine):
    queue = notifications_with_an_email(engine)
    assert queue.consuming.claim("etl", 1, 10) == 2
    rows = claimed(queue, ["Payload", email(queue)])
    assert rows[0] == ("p0", {"address": "a@example.com", "subject": "Hello"})


def test_a_claimed_row_without_a_subtype_row_reads_none_there(engine):
    queue = notifications_with_an_email(engine)
    queue.consuming.claim("etl", 1, 10)
    assert claimed(queue, ["Payload", email(queue), reset(queue)]) == [
        ("p0", {"address": "a@example.com", "subject": "Hello"}, None),
        ("p1", None, None),
    ]


def test_a_replay_returns_the_subtype_rows_as_the_claim_found_them(engine):
    queue = notifications_with_an_email(engine)
    queue.consuming.claim("etl", 1, 10)
    first = claimed(queue, ["Payload", email(queue)])
    user_tables.run(queue, f"UPDATE {email(queue)} SET Subject = 'changed by the worker'")
    assert claimed(queue, ["Payload", email(queue)]) == first


def test_a_claim_in_chunks_copies_each_subtype_row_once(engine):
    queue = notifications_with_an_email(engine)
    assert queue.consuming.claim("etl", 1, 10, chunk=1) == 2
    assert copies(queue, "email") == 1


def test_completion_leaves_no_subtype_copies(engine):
    queue = notifications_with_an_email(engine)
    queue.consuming.claim("etl", 1, 10)
    assert copies(queue, "email") == 1
    assert queue.consuming.complete("etl", 1) == 2
    assert copies(queue, "email") == 0


def test_rows_another_claimer_took_are_dropped_with_their_subtype_copies(engine):
    queue = notifications_with_an_email(engine)
    queue.consuming.claim("etl", 1, 10)
    user_tables.run(queue, f"UPDATE {queue.table} SET UpdatedAt = ScheduledFor")
    assert queue.consuming.drop_fenced("etl", 1) == 2
    assert copies(queue, "email") == 0


def test_an_acknowledged_row_leaves_no_subtype_copy(engine):
    queue = notifications_with_an_email(engine)
    queue.consuming.claim("etl", 1, 10)
    (key,) = [(k,) for p, k in claimed(queue, ["Payload", "EnqueuedAt"]) if p == "p0"]
    with queue.transaction() as cur:
        assert queue.consuming.apply_acks(cur, [Ack(key, DONE_OUTCOME)], keep=False, max_attempts=5) == 0
    assert copies(queue, "email") == 0


def test_an_include_table_that_does_not_exist_is_refused(engine):
    queue = user_tables.relational(engine, adopt=False, include=("no_such_table",))
    with pytest.raises(SchemaError, match=r"^profile.include table no_such_table does not exist at "):
        queue.require_layout()


def test_an_include_table_that_does_not_reference_the_key_is_refused(engine):
    queue = user_tables.relational(engine, adopt=False)
    loose = fresh_name("loose")
    t = designs.TYPES[engine.name]
    user_tables.run(queue, f"CREATE TABLE {loose} (EnqueuedAt {t.time} NOT NULL PRIMARY KEY, Address {t.short} NULL)")
    queue = user_tables._queue(engine, str(queue.table), replace(queue.declared, include=(loose,)))  # type: ignore[arg-type]
    with pytest.raises(SchemaError) as refused:
        queue.require_layout()
    assert (
        str(refused.value)
        .lower()
        .startswith(f"profile.include table {loose} does not reference the key (enqueuedat) of table {queue.table}: ")
    )


def test_an_include_table_named_twice_is_refused(engine):
    queue = user_tables.notifications(engine, adopt=False)
    email = queue.declared.include[0]  # type: ignore[union-attr]
    queue = user_tables._queue(engine, str(queue.table), replace(queue.declared, include=(email, email)))  # type: ignore[arg-type]
    with pytest.raises(
        SchemaError, match=rf"(?i)^profile.include tables {email} and {email} would both be the struct "
    ):
        queue.require_layout()


def test_an_include_table_named_as_a_column_of_the_queue_table_is_refused(engine):
    queue = user_tables.notifications(engine, adopt=False)
    email = queue.declared.include[0]  # type: ignore[union-attr]
    user_tables.run(queue, f"ALTER TABLE {queue.table} ADD {email} INT NULL")
    with pytest.raises(
        SchemaError, match=rf"(?i)^profile.include table {email} would be the struct column '{email}', "
    ):
        queue.require_layout()


def test_a_table_whose_subtype_copies_are_missing_is_not_adopted_yet(engine):
    queue = user_tables.notifications(engine, adopt=False)
    base = user_tables._queue(engine, str(queue.table), replace(queue.declared, include=()))  # type: ignore[arg-type]
    base.adopt()  # adopted before its subtype tables were included
    with pytest.raises(
        SchemaError, match=r"is not adopted yet \(.*_email_sqlqueue_claims is missing\): run `sqlqueue adopt"
    ):
        queue.require_layout()


@pytest.mark.parametrize(
    ("preset", "why"),
    [("dequeue", "takes the rows it claims"), ("started-mark", "deletes a row when done")],
)
def test_include_is_refused_where_the_base_row_goes(preset, why):
    with pytest.raises(ConfigError, match=rf"^option 'profile.include' is not allowed on profile '{preset}': it {why}"):
        replace(PRESETS[preset], include=("t_email",))


# ---- the sink ------------------------------------------------------------------------------------------
BASE = ["EnqueuedAt", "Type", "Payload"]


def sink_rows(n: int, email_for: tuple[int, ...] = (), reset_for: tuple[int, ...] = ()) -> list[tuple]:
    """(EnqueuedAt, Type, Payload, email struct, reset struct) rows with keys of their own."""
    return [
        (
            DAY_AGO + dt.timedelta(seconds=i),
            "Sync",
            f"s{i}",
            {"address": f"u{i}@example.com", "subject": "Hi"} if i in email_for else None,
            {"token": f"t{i}"} if i in reset_for else None,
        )
        for i in range(n)
    ]


def included(queue: Queue, names: list[str] = BASE):
    return queue.producing.included(names, {email(queue): ["Address", "Subject"], reset(queue): ["Token"]})


def count(queue: Queue, table: str) -> int:
    return queue.fetch(queue.engine.compile(f"SELECT COUNT(*) FROM {table}"), {})[0][0]


def test_the_sink_publishes_base_and_subtype_rows_together(engine):
    queue = user_tables.notifications(engine)
    producer, columns, subtypes = Producer(queue, "w"), queue.producing.writable(BASE), included(queue)
    task = producer.write(0, 0, columns, sink_rows(3, email_for=(0,), reset_for=(1,)), included=subtypes)
    assert (count(queue, str(queue.table)), count(queue, email(queue)), count(queue, reset(queue))) == (0, 0, 0)
    assert producer.publish(0, columns, [task], subtypes) == 3
    assert (count(queue, str(queue.table)), count(queue, email(queue)), count(queue, reset(queue))) == (3, 1, 1)
    queue.consuming.claim("etl", 1, 10)
    assert claimed(queue, ["Payload", email(queue), reset(queue)]) == [
        ("s0", {"address": "u0@example.com", "subject": "Hi"}, None),
        ("s1", None, {"token": "t1", "expiresat": None}),
        ("s2", None, None),
    ]


def test_a_row_with_two_subtype_rows_is_refused_where_they_are_exclusive_and_nothing_is_written(engine):
    queue = user_tables.notifications(engine)
    producer, columns, subtypes = Producer(queue, "w"), queue.producing.writable(BASE), included(queue)
    with pytest.raises(SchemaError, match=r"^the row with key .* has rows for \w+_email and \w+_reset, but a row of "):
        producer.write(0, 0, columns, sink_rows(2, email_for=(0, 1), reset_for=(1,)), included=subtypes)
    assert queue.inspection.unpublished_rows() == 0
    assert count(queue, str(queue.producing.subtype_staging(queue.subtypes()[0]))) == 0


def test_a_row_may_have_several_subtype_rows_where_they_are_not_exclusive(engine):
    queue = user_tables.notifications(engine, exclusive=False)
    producer, columns, subtypes = Producer(queue, "w"), queue.producing.writable(BASE), included(queue)
    task = producer.write(0, 0, columns, sink_rows(1, email_for=(0,), reset_for=(0,)), included=subtypes)
    producer.publish(0, columns, [task], subtypes)
    assert (count(queue, email(queue)), count(queue, reset(queue))) == (1, 1)


def test_a_struct_column_naming_no_included_table_is_refused(engine):
    queue = user_tables.notifications(engine)
    with pytest.raises(SchemaError, match=r"^struct column 'sms' names no subtype table of .* \(profile.include: "):
        queue.producing.included(BASE, {"sms": ["Number"]})


def test_a_struct_field_the_subtype_table_lacks_is_refused(engine):
    queue = user_tables.notifications(engine)
    with pytest.raises(SchemaError, match=r"^field 'Body' of struct column '\w+_email' is not a column table "):
        queue.producing.included(BASE, {email(queue): ["Address", "Body"]})


def test_subtype_rows_without_the_key_in_the_rows_are_refused(engine):
    queue = user_tables.notifications(engine)
    with pytest.raises(SchemaError, match=r"(?i)^the rows give no enqueuedat, the key of table .*: give the key in"):
        included(queue, ["Type", "Payload"])


def test_a_struct_column_into_a_table_without_subtype_tables_is_refused(engine):
    queue = engine.new_queue()
    with pytest.raises(
        SchemaError, match=r"^struct column\(s\) 'extra': table \S+ has no subtype tables \(profile.include\)"
    ):
        queue.producing.included(["payload"], {"extra": ["a"]})


def test_a_struct_without_a_not_null_column_of_its_table_is_refused(engine):
    queue = user_tables.notifications(engine)
    with pytest.raises(SchemaError, match=r"(?i)^struct column '\w+_email' has no field 'address', which table "):
        queue.producing.included(BASE, {email(queue): ["Subject"]})
