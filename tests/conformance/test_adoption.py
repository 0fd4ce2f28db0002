"""A queue table sqlqueue did not create, consumed as it is through its profile, on every engine."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from sqlqueue.errors import ConfigError, SchemaError
from sqlqueue.identifiers import TableName
from sqlqueue.kinds.catalog import unique_keys
from sqlqueue.profile import Profile
from sqlqueue.queue import Queue
from sqlqueue.testing import designs
from tests.support import user_tables


def held(queue: Queue, consumer: str, after: int, upto: int, columns: list[str]) -> list[tuple]:
    rows: list[tuple] = []
    for lo, hi in queue.consuming.partition_bounds(consumer, after, upto, 2):
        for chunk in queue.consuming.read_claimed(consumer, after, upto, lo, hi, columns):
            rows += chunk
    return sorted(rows)


def by_status(queue: Queue) -> dict[str, int]:
    rows = queue.fetch(queue.engine.compile(f"SELECT Status, COUNT(*) FROM {queue.table} GROUP BY Status"), {})
    return {status: count for status, count in rows}


def test_a_claim_marks_rows_the_tables_way_and_completion_marks_them_done(engine):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 5)
    assert queue.consuming.claim("etl", 1, 3) == 3
    assert by_status(queue) == {"Processing": 3, "Pending": 2}
    assert queue.consuming.complete("etl", 1) == 3
    assert by_status(queue) == {"Completed": 3, "Pending": 2}
    done = queue.fetch(
        queue.engine.compile(f"SELECT AttemptNum, Duration FROM {queue.table} WHERE Status = 'Completed'"), {}
    )
    assert all(attempts == 1 and duration is not None and duration >= 0 for attempts, duration in done)
    assert queue.consuming.count_claimed("etl", 1) == 0


@pytest.mark.babelfish_gap("update_cte")
def test_a_claim_follows_the_profiles_order(engine):
    queue = user_tables.relational(engine, keep_order=True)
    user_tables.enqueue_relational(queue, 6)
    queue.consuming.claim("etl", 1, 2)
    assert [p for (p,) in held(queue, "etl", 0, 1, ["Payload"])] == ["p0", "p1"]


def test_a_replayed_claim_returns_the_rows_it_returned_before_whatever_the_table_holds_now(engine):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 4)
    queue.consuming.claim("etl", 1, 4)
    first = held(queue, "etl", 0, 1, ["Payload", "AttemptNum"])
    user_tables.run(queue, f"UPDATE {queue.table} SET Payload = 'changed by the worker'")
    assert queue.consuming.count_claimed("etl", 1) == 4  # what the consumer finds after a crash: serve these again
    assert held(queue, "etl", 0, 1, ["Payload", "AttemptNum"]) == first


def test_the_filter_takes_one_job_type(engine):
    queue = user_tables.relational(engine, filter="Type = 'Sync'")
    user_tables.enqueue_relational(queue, 3, type_="Sync")
    user_tables.enqueue_relational(queue, 3, type_="Mail", start=100)
    assert queue.consuming.claim("etl", 1, 10) == 3
    assert queue.inspection.backlog().ready_rows == 0


def filtered(engine, queue: Queue, condition: str) -> Queue:
    """``queue``'s table through its profile with another filter."""
    other = Queue(queue.spec, queue.table, replace(queue.declared, filter=condition))
    engine.created.append(other)
    return other


@pytest.mark.parametrize(
    "condition", ["1=1) OR (1=1", "Type = 'Sync'; DELETE FROM x", "Type = 'Sync' -- x", "/* */", "SELECT 1"]
)
def test_a_filter_that_is_not_one_expression_is_refused_in_one_line_before_anything_is_claimed(engine, condition):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 2)
    user_tables.run(queue, f"UPDATE {queue.table} SET Status = 'Completed' WHERE Payload = 'p0'")
    with pytest.raises(ConfigError) as refused:
        filtered(engine, queue, condition).consuming.claim("etl", 1, 10)
    assert str(refused.value).startswith("option 'profile.filter'") and "\n" not in str(refused.value)
    assert by_status(queue) == {"Completed": 1, "Pending": 1}
    assert queue.inspection.held_rows() == 0


def test_a_filter_naming_a_column_the_table_lacks_is_refused_in_one_line_at_the_profiles_check(engine):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 1)
    with pytest.raises(ConfigError) as refused:
        filtered(engine, queue, "Kind = 'Sync'").profile  # noqa: B018
    message = str(refused.value)
    assert message.startswith("option 'profile.filter' = \"Kind = 'Sync'\" is not allowed: the database refuses it")
    assert "kind" in message.lower() and "\n" not in message
    assert by_status(queue) == {"Pending": 1}


@pytest.mark.babelfish_gap("type_clash")
def test_a_filter_comparing_a_time_with_a_number_is_refused_at_the_profiles_check(engine):
    if engine.name == "sqlite":
        pytest.skip("SQLite compares any two values: a type clash is no error there")
    queue = user_tables.relational(engine)
    with pytest.raises(ConfigError, match="the database refuses it on table"):
        filtered(engine, queue, "StartedAt = 1").profile  # noqa: B018


def test_a_filter_takes_its_rows_whatever_its_literals_hold(engine):
    # A colon before a word and a % in literals: compile's parameters and psycopg's markers look alike.
    queue = user_tables.relational(engine, filter="Type LIKE '%:orders' OR Type IN ('sync:mail')")
    user_tables.enqueue_relational(queue, 2, type_="sync:orders")
    user_tables.enqueue_relational(queue, 1, type_="sync:mail", start=10)
    user_tables.enqueue_relational(queue, 3, type_="Mail", start=20)
    assert queue.consuming.claim("etl", 1, 10) == 3
    assert sorted(t for (t,) in held(queue, "etl", 0, 1, ["Type"])) == ["sync:mail", "sync:orders", "sync:orders"]
    assert queue.inspection.backlog().ready_rows == 0


def test_a_row_abandoned_past_its_lease_is_claimed_again_and_counts_an_attempt(engine):
    queue = user_tables.relational(engine, lease_seconds=60)
    user_tables.enqueue_relational(queue, 1)
    queue.consuming.claim("dead-worker", 1, 1)
    assert queue.consuming.claim("etl", 1, 1) == 0  # its lease holds
    started = user_tables._plus_ms(engine.name, user_tables.NOW[engine.name], -61_000)
    user_tables.run(queue, f"UPDATE {queue.table} SET StartedAt = {started}")
    assert queue.consuming.claim("etl", 1, 1) == 1
    assert held(queue, "etl", 0, 1, ["AttemptNum"]) == [(2,)]


def test_a_row_the_tables_worker_took_after_our_lease_ran_out_is_not_completed_by_us(engine):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 1)
    queue.consuming.claim("etl", 1, 1)
    # The table's own worker took it over (Next_ sets StartedAt and UpdatedAt), and is still at it.
    later = user_tables._plus_ms(engine.name, user_tables.NOW[engine.name], 5_000)
    user_tables.run(queue, f"UPDATE {queue.table} SET StartedAt = {later}, UpdatedAt = {later}")
    assert queue.consuming.complete("etl", 1) == 0
    assert by_status(queue) == {"Processing": 1}
    assert queue.consuming.count_claimed("etl", 1) == 0


def test_rows_out_of_attempts_past_their_lease_become_failed(engine):
    queue = user_tables.relational(engine, lease_seconds=60, max_attempts=1)
    user_tables.enqueue_relational(queue, 2)
    queue.consuming.claim("dead-worker", 1, 2)
    started = user_tables._plus_ms(engine.name, user_tables.NOW[engine.name], -61_000)
    user_tables.run(queue, f"UPDATE {queue.table} SET StartedAt = {started}")
    assert queue.consuming.claim("etl", 1, 2) == 0
    assert queue.consuming.rescue_expired(1) == 2
    assert by_status(queue) == {"Failed": 2}


def test_the_audit_trigger_sees_every_transition(engine):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 2)
    queue.consuming.claim("etl", 1, 2)
    queue.consuming.complete("etl", 1)
    audit = queue.fetch(queue.engine.compile(f"SELECT Status FROM {queue.table}_Audit"), {})
    assert sorted(s for (s,) in audit) == ["Completed", "Completed", "Processing", "Processing"]


def test_a_dequeue_takes_rows_out_of_the_table_and_a_replay_reads_them_from_the_copy(engine):
    queue = user_tables.dequeue(engine)
    user_tables.insert_payloads(queue, 5)
    assert queue.consuming.claim("etl", 1, 3) == 3
    assert queue.inspection.backlog().ready_rows == 2
    assert [p for _, p in held(queue, "etl", 0, 1, ["Id", "Payload"])] == ["p0", "p1", "p2"]
    queue.consuming.complete("etl", 1)
    assert queue.consuming.count_claimed("etl", 1) == 0
    assert queue.consuming.claim("etl", 2, 10) == 2


def test_a_started_mark_is_set_by_the_claim_and_done_deletes_the_row(engine):
    queue = user_tables.started_mark(engine)
    user_tables.insert_payloads(queue, 3)
    assert queue.consuming.claim("etl", 1, 2) == 2
    assert queue.inspection.backlog().ready_rows == 1
    assert queue.consuming.complete("etl", 1) == 2
    assert queue.fetch(queue.engine.compile(f"SELECT COUNT(*) FROM {queue.table}"), {})[0][0] == 1


def in_process(queue: Queue) -> list[tuple]:
    """(Payload, in_process as 0 or 1, end_date is set) of each row of a seed-003 table, by payload."""
    rows = queue.fetch(queue.engine.compile(f"SELECT Payload, in_process, end_date FROM {queue.table}"), {})
    return sorted((payload, int(flag), end is not None) for payload, flag, end in rows)


def test_a_claim_on_seed_003_sets_in_process_so_the_tables_own_worker_skips_the_row(engine):
    queue = user_tables.claimer(engine)
    user_tables.insert_payloads(queue, 3, "claimer")  # end_date takes its default, as the seed's inserts do
    assert queue.consuming.claim("etl", 1, 2) == 2
    # the seed's worker takes WHERE in_process = 0: only the row sqlqueue did not claim
    assert in_process(queue) == [("p0", 1, False), ("p1", 1, False), ("p2", 0, True)]


def test_rows_per_status_of_a_flag_are_counted_under_the_values_the_profile_spells(engine):
    queue = user_tables.claimer(engine)
    user_tables.insert_payloads(queue, 3, "claimer")
    queue.consuming.claim("etl", 1, 1)
    # as profile.ready and in_flight say them, on every engine
    assert {k: v["rows"] for k, v in queue.inspection.stats().items()} == {"0": 2, "1": 1}


def test_a_seed_003_row_done_has_its_end_date_and_is_not_claimed_again(engine):
    queue = user_tables.claimer(engine, lease_seconds=1)
    user_tables.insert_payloads(queue, 2, "claimer")
    queue.consuming.claim("etl", 1, 1)
    queue.consuming.complete("etl", 1)
    past_lease = user_tables._plus_ms(engine.name, user_tables.NOW[engine.name], -5_000)
    user_tables.run(queue, f"UPDATE {queue.table} SET start_date = {past_lease}")
    assert queue.consuming.claim("etl", 2, 10) == 1  # p1; p0 is done, however old its start
    assert in_process(queue) == [("p0", 1, True), ("p1", 1, False)]


def utc_table_in_tokyo(engine, monkeypatch) -> tuple[Queue, dt.datetime]:
    """A relational table of UTC times (profile.clock=utc) reached by sessions whose time zone is Tokyo's
    (PGTZ, which libpq sends), with a row due an hour ago and one due in an hour, both in UTC."""
    if engine.name != "postgres":
        pytest.skip("PostgreSQL's session time zone is what the test sets")
    monkeypatch.setenv("PGTZ", "Asia/Tokyo")  # 9 hours ahead of UTC
    queue = user_tables.relational(engine, clock="utc")
    utc = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None, microsecond=0)
    rows = [
        (utc - dt.timedelta(days=1, seconds=h), utc, "Pending", "Sync", utc + dt.timedelta(hours=h), f"p{h}")
        for h in (-1, 1)
    ]
    designs.insert(queue, "EnqueuedAt, UpdatedAt, Status, Type, ScheduledFor, Payload", rows)
    return queue, utc


def test_a_utc_tables_due_times_are_compared_in_utc_whatever_the_sessions_time_zone(engine, monkeypatch):
    queue, _ = utc_table_in_tokyo(engine, monkeypatch)
    assert queue.consuming.claim("etl", 1, 10) == 1
    assert [p for (p,) in held(queue, "etl", 0, 1, ["Payload"])] == ["p-1"]


def test_a_utc_tables_claim_writes_its_started_at_in_utc_whatever_the_sessions_time_zone(engine, monkeypatch):
    queue, utc = utc_table_in_tokyo(engine, monkeypatch)
    queue.consuming.claim("etl", 1, 10)
    (started,) = queue.fetch(queue.engine.compile(f"SELECT StartedAt FROM {queue.table} WHERE Payload = 'p-1'"), {})[0]
    assert abs(started - utc) < dt.timedelta(minutes=5)


def test_an_available_now_bound_leaves_rows_enqueued_after_it(engine):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 3)
    bound = queue.consuming.available_now_bound()
    user_tables.enqueue_relational(queue, 3, start=1_000)  # EnqueuedAt 1,000 s on: past the bound's second
    assert queue.consuming.claim("etl", 1, 100, bound=bound) == 3
    assert sorted(p for (p,) in held(queue, "etl", 0, 1, ["Payload"])) == ["p0", "p1", "p2"]


def test_an_available_now_bound_on_a_table_without_enqueue_times_is_its_identity_key(engine):
    queue = user_tables.claimer(engine)
    user_tables.insert_payloads(queue, 2, "claimer")
    bound = queue.consuming.available_now_bound()
    user_tables.insert_payloads(queue, 2, "claimer")
    assert queue.consuming.bound_column() == "id"
    assert queue.consuming.claim("etl", 1, 100, bound=bound) == 2


def test_an_available_now_bound_taken_when_nothing_is_ready_claims_nothing(engine):
    queue = user_tables.relational(engine)
    bound = queue.consuming.available_now_bound()
    user_tables.enqueue_relational(queue, 2)
    assert queue.consuming.claim("etl", 1, 100, bound=bound) == 0


def test_a_column_added_after_adoption_names_how_to_add_it_to_the_claims_table(engine):
    queue = user_tables.relational(engine)
    user_tables.run(queue, f"ALTER TABLE {queue.table} ADD Region {designs.TYPES[engine.name][3]} NULL")
    later = Queue(queue.spec, queue.table, queue.declared)
    with pytest.raises(SchemaError, match="(?i)column\\(s\\) 'Region' of table .* came after it") as refused:
        later.require_layout()
    user_tables.run(queue, str(refused.value).split("add them to it: ")[1])  # the ALTER TABLE it names
    later.require_layout()
    user_tables.enqueue_relational(queue, 1)
    assert later.consuming.claim("etl", 1, 10) == 1


def test_each_chunk_of_completion_takes_rows_not_done_yet_when_done_writes_only_done_at(engine):
    # Seed 003's done writes end_date and leaves in_process 1. Completion repeats a chunk while it comes
    # back full (SQL Server), so a done row still counted as ours would make it repeat for ever.
    queue = user_tables.claimer(engine)
    user_tables.insert_payloads(queue, 5, "claimer")
    assert queue.consuming.claim("etl", 1, 5) == 5
    done, _ = queue.dialect.claims.complete_copies(queue.table, queue.profile, True)
    values = done.bind({"consumer": "etl", "upto_seq": 1, "limit": 2, **queue.bindings()})
    counts = []
    with queue.transaction() as cur:
        for _ in range(5):
            cur.execute(done.sql, values)
            counts.append(cur.rowcount)
    assert counts == [2, 2, 1, 0, 0]
    assert in_process(queue) == [(f"p{i}", 1, True) for i in range(5)]


def test_a_missing_column_is_named_before_any_row_moves(engine):
    queue = user_tables.relational(engine)
    bad = Queue(queue.spec, queue.table, replace(queue.declared, token="Version"))
    with pytest.raises(SchemaError, match="(?i)token column 'Version' is not in table"):
        bad.consuming.claim("etl", 1, 1)


def test_a_column_of_the_wrong_type_is_named(engine):
    queue = user_tables.relational(engine)
    wrong = Queue(queue.spec, queue.table, replace(queue.declared, attempts="Type"))
    with pytest.raises(SchemaError, match="(?i)attempts column 'Type' .* must be int or bigint"):
        wrong.require_layout()


def test_a_key_that_is_not_unique_is_refused(engine):
    queue = user_tables.relational(engine)
    loose = Queue(queue.spec, queue.table, replace(queue.declared, key=("Type",)))
    with pytest.raises(SchemaError, match=r"(?i)key \(Type\) of table .* is not unique"):
        loose.require_layout()


def test_a_table_not_adopted_yet_names_the_command(engine):
    queue = user_tables.dequeue(engine)
    other = Queue(queue.spec, TableName(queue.table.name.replace("fifo", "fifo_x")), queue.declared)
    user_tables.run(queue, f"CREATE TABLE {other.table} (Id INTEGER PRIMARY KEY, Payload TEXT)")
    with pytest.raises(SchemaError, match="is not adopted yet .*: run `sqlqueue adopt"):
        other.require_layout()


def test_a_status_value_the_vocabulary_table_lacks_is_named(engine):
    queue = user_tables.relational(engine)
    unknown = Queue(queue.spec, queue.table, replace(queue.declared, ready=("Pending", "Waiting")))
    with pytest.raises(SchemaError, match="(?i)status value\\(s\\) 'Waiting' are not in the vocabulary"):
        unknown.require_layout()


def table_beside(queue: Queue, suffix: str, profile: Profile, *ddl: str) -> Queue:
    """A table ``ddl`` makes ({t}: its name) beside ``queue``'s and on its connection, seen through ``profile``."""
    table = f"{queue.table}_{suffix}"
    user_tables.run(queue, *(sql.format(t=table) for sql in ddl))
    return Queue(queue.spec, TableName.parse(table), profile)


def test_a_status_value_a_check_constraint_refuses_is_named(engine):
    profile = replace(
        user_tables.PRESETS["relational"], key=("Id",), failed="Failed", attempts=None, due=None, started=None
    )
    profile = replace(profile, error=None, response=None, step=None, duration=None, token=None, enqueued=None)
    profile = replace(profile, order=(), clock="utc")
    checked = table_beside(
        user_tables.started_mark(engine),
        "checked",
        profile,
        "CREATE TABLE {t} (Id INTEGER PRIMARY KEY, "
        "Status VARCHAR(20) CHECK (Status IN ('Pending', 'Processing', 'Completed')), Payload VARCHAR(20))",
    )
    with pytest.raises(SchemaError, match="(?i)status value\\(s\\) 'Error', 'Failed' are refused by the CHECK"):
        checked.require_layout()


def test_unique_keys_list_the_primary_key_first_each_in_its_own_column_order(engine):
    queue = user_tables.dequeue(engine)
    keyed = table_beside(
        queue,
        "keys",
        queue.declared,
        "CREATE TABLE {t} (code INTEGER NOT NULL UNIQUE, a INTEGER NOT NULL, b INTEGER NOT NULL, PRIMARY KEY (b, a))",
    )
    assert [[c.lower() for c in key] for key in unique_keys(keyed)] == [["b", "a"], ["code"]]


def test_a_unique_index_with_included_columns_is_a_key(engine):
    if engine.name == "sqlite":
        pytest.skip("SQLite's indexes include no columns")
    queue = user_tables.dequeue(engine)
    keyed = table_beside(
        queue,
        "included",
        replace(queue.declared, key=("Code",), order=()),
        "CREATE TABLE {t} (Code VARCHAR(20) NOT NULL, Payload VARCHAR(20))",
        "CREATE UNIQUE INDEX ux_{t} ON {t} (Code) INCLUDE (Payload)",
    )
    assert keyed.profile.key[0].lower() == "code"


def test_completion_runs_in_chunks_within_one_transaction_where_the_engine_needs_it(engine):
    if engine.name != "sqlserver":
        pytest.skip("only SQL Server completes in chunks (lock escalation at 5,000 locks a statement)")
    queue = user_tables.relational(engine)
    queue.engine.default_chunk = 2  # chunks of 2 rows: five rows take three statements of each kind
    user_tables.enqueue_relational(queue, 5)
    assert queue.consuming.claim("etl", 1, 5) == 5
    assert queue.consuming.complete("etl", 1) == 5
    assert by_status(queue) == {"Completed": 5}
    assert queue.consuming.count_claimed("etl", 1) == 0


def test_completion_with_a_chunk_size_completes_only_the_rows_of_the_claims_it_names(engine):
    queue = user_tables.relational(engine)
    user_tables.enqueue_relational(queue, 6)
    assert queue.consuming.claim("etl", 1, 2) == 2
    assert queue.consuming.claim("etl", 2, 2) == 2
    assert queue.consuming.complete("etl", 1, chunk=700) == 2
    assert by_status(queue) == {"Completed": 2, "Processing": 2, "Pending": 2}
    assert queue.consuming.count_claimed("etl", 2) == 2


TOUCH = {
    "sqlite": [
        "CREATE TRIGGER {t}_touch AFTER UPDATE OF Status ON {t} BEGIN UPDATE {t} SET UpdatedAt = "
        "strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime', '+1 seconds') WHERE EnqueuedAt = NEW.EnqueuedAt; END"
    ],
    "postgres": [
        "CREATE FUNCTION {t}_touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE {t} SET UpdatedAt = "
        "LOCALTIMESTAMP + INTERVAL '1 second' WHERE EnqueuedAt = NEW.EnqueuedAt; RETURN NULL; END $$",
        "CREATE TRIGGER {t}_touch AFTER UPDATE OF Status ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_touch()",
    ],
}


def rewritten(queue) -> bool:
    """What a claim asks before it settles its copies: whether the table has triggers or rules."""
    return bool(queue.fetch(queue.dialect.schema.rewriters(queue.table), queue.catalog_names())[0][0])


def test_a_claim_settles_its_copies_only_where_a_trigger_or_rule_may_rewrite_the_token(engine):
    queue = user_tables.relational(engine, audit=False)
    if queue.dialect.schema.rewriters(queue.table) is None:
        pytest.skip("the engine cannot tell: every claim settles its copies")
    assert not rewritten(queue)  # its foreign key's own triggers write no row of it
    user_tables.run(queue, *(sql.format(t=queue.table) for sql in TOUCH[engine.name]))
    assert rewritten(queue)
    ruled = user_tables.relational(engine, audit=False)
    user_tables.run(ruled, f"CREATE RULE {ruled.table}_noop AS ON UPDATE TO {ruled.table} WHERE false DO ALSO NOTHING")
    assert rewritten(ruled)
    parent = user_tables.relational(engine, audit=False)  # a child's own trigger is not the parent's
    user_tables.run(parent, f"CREATE TABLE {parent.table}_child () INHERITS ({parent.table})")
    assert rewritten(parent)


def test_a_token_a_trigger_rewrites_after_the_claim_still_identifies_our_rows(engine):
    if engine.name not in TOUCH:
        pytest.skip("the trigger is written for SQLite and PostgreSQL; SQL Server's statement is pinned by goldens")
    queue = user_tables.relational(engine)
    user_tables.run(queue, *(sql.format(t=queue.table) for sql in TOUCH[engine.name]))
    user_tables.enqueue_relational(queue, 3)
    assert queue.consuming.claim("etl", 1, 3) == 3
    assert queue.consuming.complete("etl", 1) == 3
    assert by_status(queue) == {"Completed": 3}
