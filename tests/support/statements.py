"""Every SQL statement a dialect can emit, under a readable name.

One catalog feeds the T-SQL parse test and the golden files of every engine, so a statement is
checked wherever it is pinned. ``catalog`` records which method of the dialect's parts (or its
engine) built each entry, as ``part.method``; the completeness test compares that with the statement
builders of every part, so a new builder cannot slip past the parse test unnoticed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from sqlqueue import layouts
from sqlqueue.dialects import Dialect, dialect_for
from sqlqueue.dialects.engine import Statement
from sqlqueue.dialects.layout import Step
from sqlqueue.dialects.statements.outcomes import Outcomes
from sqlqueue.identifiers import TableName
from sqlqueue.profile import NATIVE, PRESETS, Profile, native
from sqlqueue.schema import LIFECYCLE_TYPES, ORDERS, STAGE_TAG, Column, QueueSpec
from sqlqueue.testing import designs

DIALECTS = ("sqlserver", "postgres", "sqlite")
EXAMPLE_DOMAIN = (Column("payload", "text"),)
EXAMPLE_ORDER = "fifo"
READ_COLUMNS = ("id", "enqueued_at", "attempts", "payload")
PARTS = 4
# What a move reads of each failed row (sqlqueue.deadletters): id, domain, kept lifecycle columns.
DEAD_LETTER_COLUMNS = ("id", "payload", "attempts", "last_error", "enqueued_at", "completed_at", "consumer")
INSERT_COLUMNS = (Column("payload", "text"),)
# With a dedup key, the insert skips keys the table has: through a scratch table, in these steps
# (SQL Server reads the rows from one JSON parameter instead, in one statement).
DEDUP_INSERT_COLUMNS = (Column("payload", "text"), Column("dedup_key", "string"))
DEDUP_INSERT_STEPS = {"sqlserver": ("insert_new_keys",)}
SCRATCH_INSERT_STEPS = ("create_scratch", "load_scratch", "insert_new_keys", "drop_scratch")
# Engine-specific doctor queries and the fixes it prints, per engine: (part, builder, example arguments).
DOCTOR: dict[str, tuple[tuple[str, str, tuple[Any, ...]], ...]] = {
    "sqlserver": (
        ("doctor", "database_settings", ()),
        ("doctor", "server_version", ()),
        ("doctor", "session_isolation", ()),
        ("doctor", "enabled_triggers", ()),
        ("doctor", "disable_trigger", ("trg_jobs_audit",)),
        ("doctor", "read_committed_snapshot_off", ()),
        ("doctor", "compatibility_level_fix", ()),
        ("engine", "session_setup", ()),
    ),
    "postgres": (("doctor", "vacuum_stats", ()), ("doctor", "vacuum", ()), ("doctor", "eager_autovacuum", ())),
    "sqlite": (("doctor", "journal_mode", ()), ("doctor", "wal_on", ())),
}
# Statements an engine sends on its own, per engine: their builders, which take no arguments.
ENGINE: dict[str, tuple[str, ...]] = {"sqlserver": ("begin",), "postgres": (), "sqlite": ()}
DDL_BUILDER = "schema.create_statements"
ADOPTION_BUILDER = "adoption.create_claims_table"
MIGRATION_BUILDER = "migrations.migration_steps"
# The chunk printed scripts loop over (sqlqueue migrate's default on SQL Server).
EXAMPLE_CHUNK = 4000
INSERT_BUILDER = "engine.insert_many"
STAGE_BUILDER = "engine.load"
_DDL_OBJECT = re.compile(
    r"\b(CREATE TABLE|CREATE UNLOGGED TABLE|ALTER TABLE|CREATE UNIQUE INDEX|CREATE CLUSTERED INDEX|CREATE INDEX"
    r"|INSERT INTO)\s+(?:IF NOT EXISTS\s+)?(\S+)"
)


@dataclass(frozen=True)
class Entry:
    name: str
    builder: str  # where the method whose output ``sql`` is lives on the dialect: ``part.method``
    sql: str


def built_by(dialect: Dialect, builder: Callable[..., Any]) -> str:
    """A bound builder of ``dialect`` as ``part.method`` (``claims.claim``), the part found by identity."""
    part = next(name for name, held in vars(dialect).items() if held is getattr(builder, "__self__", None))
    return f"{part}.{builder.__name__}"


def made(dialect: Dialect, name: str, builder: Callable[..., Statement], *args: Any) -> Entry:
    """The entry ``name`` of what the bound ``builder`` makes of ``args``."""
    return Entry(name, built_by(dialect, builder), builder(*args).sql)


def example_table(dialect: Dialect) -> TableName:
    """``dbo.jobs`` on SQL Server (schemas are the norm there), plain ``jobs`` elsewhere."""
    return TableName("jobs", "dbo") if dialect.engine.name == "sqlserver" else TableName("jobs")


def example_spec(dialect: Dialect, order: str = EXAMPLE_ORDER) -> QueueSpec:
    return QueueSpec(example_table(dialect), EXAMPLE_DOMAIN, order)


def native_claim(
    dialect: Dialect, t: TableName, order: str, strict: bool, bounded: bool, addressed: bool = True
) -> str:
    """The claim of sqlqueue's own table; ``addressed``: a plain table, as `sqlqueue create` makes it."""
    return dialect.claims.claim(t, native(order), (), strict, "id" if bounded else None, addressed=addressed).claim.sql


def claim_name(order: str, strict: bool, bounded: bool) -> str:
    return f"claim_{order}" + ("_strict" if strict else "") + ("_bounded" if bounded else "")


def complete_name(keep: bool, limited: bool) -> str:
    return "complete_" + ("keep" if keep else "delete") + ("_chunked" if limited else "")


def ddl_label(sql: str) -> str:
    """``create_table_jobs``, ``alter_table_jobs``, ``create_index_ix_jobs_ready`` ..."""
    match = _DDL_OBJECT.search(sql)
    if match is None:
        raise ValueError(f"cannot name this DDL statement:\n{sql}")
    verb = match.group(1).lower().replace(" ", "_")
    obj = re.sub(r"[\[\]\"`]", "", match.group(2)).split(".")[-1]
    return f"{verb}_{obj}"


class RecordingConnection:
    """Stands in for a pyodbc connection: reports ``driver`` and records what its cursors are sent."""

    def __init__(self, driver: str = "libmsodbcsql-18.3.so.3.1", version: str = "18.03.0003") -> None:
        self.info = {"driver": driver, "version": version}
        self.sent: list[tuple[str, Any]] = []  # (what, argument): sql, params, input sizes

    def getinfo(self, key: int) -> str:
        import pyodbc

        return self.info["driver" if key == pyodbc.SQL_DRIVER_NAME else "version"]

    def cursor(self) -> RecordingCursor:
        return RecordingCursor(self)


class RecordingCursor:
    """Stands in for a driver cursor so insert_many's SQL is captured without a database."""

    def __init__(self, connection: RecordingConnection | None = None) -> None:
        self.connection = connection or RecordingConnection()

    def execute(self, sql: str, params: Any = None) -> None:
        self.connection.sent += [("sql", sql), ("params", params)]

    def executemany(self, sql: str, rows: Any) -> None:
        self.connection.sent += [("sql", sql), ("rows", list(rows))]

    def setinputsizes(self, sizes: Any) -> None:
        self.connection.sent.append(("input sizes", sizes))

    def close(self) -> None:
        pass

    @property
    def statements(self) -> list[str]:
        """Every statement sent on this cursor's connection, by any of its cursors."""
        return [arg for what, arg in self.connection.sent if what == "sql"]

    @contextmanager
    def copy(self, sql: str) -> Iterator[Any]:
        self.connection.sent.append(("sql", sql))
        yield self

    def write_row(self, row: Any) -> None:
        pass

    def write(self, chunk: bytes) -> None:
        pass


def _ddl(dialect: Dialect) -> Iterator[Entry]:
    # Only the ready index depends on the order: statements equal for every order appear once,
    # the others once per order, named with it.
    per_order = {order: dialect.schema.create_statements(example_spec(dialect, order)) for order in ORDERS}
    counts = {len(statements) for statements in per_order.values()}
    assert len(counts) == 1, f"{dialect.engine.name}: create_statements returns a different count per order"
    for i in range(counts.pop()):
        variants = {order: statements[i] for order, statements in per_order.items()}
        label = f"ddl_{i + 1:02d}_{ddl_label(variants[EXAMPLE_ORDER])}"
        if len(set(variants.values())) == 1:
            yield Entry(label, DDL_BUILDER, variants[EXAMPLE_ORDER])
        else:
            yield from (Entry(f"{label}_{order}", DDL_BUILDER, sql) for order, sql in variants.items())


# The adopted tables of the catalog: each preset over the seed's columns, and the relational one as a
# stream of one job type claimed in no order.
SEED_COLUMNS = {name: design.columns for name, design in designs.DESIGNS.items()}
ADOPTED: dict[str, tuple[Profile, tuple[str, ...]]] = {
    name.replace("-", "_"): (profile, SEED_COLUMNS[name]) for name, profile in PRESETS.items()
}
ADOPTED["relational_heap_filtered"] = (
    replace(PRESETS["relational"], order=(), filter="Type = 'Sync'"),
    SEED_COLUMNS["relational"],
)
ADOPTED["dequeue_heap"] = (replace(PRESETS["dequeue"], order=()), SEED_COLUMNS["dequeue"])
# A relational queue with a subtype table (profile.include), its columns (the key first).
SUBTYPED = replace(PRESETS["relational"], include=("Notification_Email",))
SUBTYPE_COLUMNS = ("EnqueuedAt", "Address", "Subject")
# A filter whose literal holds what drivers and compile read as markers: a colon before a word, a %.
PROBED_FILTER = "Type LIKE '%:orders'"
# Exact column types as the catalog reports them, for the claims table's DDL.
CLAIMS_COLUMNS = (("Id", "bigint"), ("Payload", "nvarchar(max)"), ("ProcessingStartedAt", "datetime2(7)"))


def _adopted(dialect: Dialect, t: TableName) -> Iterator[Entry]:
    for name, (profile, columns) in ADOPTED.items():
        plan = dialect.claims.claim(t, profile, columns)
        yield Entry(f"adopted_{name}_claim", "claims.claim", plan.claim.sql)
        addressed = dialect.claims.claim(t, profile, columns, addressed=True).claim.sql
        if addressed != plan.claim.sql:  # a plain table's rows fetched by their address
            yield Entry(f"adopted_{name}_claim_addressed", "claims.claim", addressed)
        if plan.record is not None:
            yield Entry(f"adopted_{name}_claim_record", "claims.claim", plan.record.sql)
        if plan.settle is not None:
            yield Entry(f"adopted_{name}_claim_settle", "claims.claim", plan.settle.sql)
        completing = dialect.claims.complete_copies(t, profile, dialect.engine.default_chunk is not None)
        for i, statement in enumerate(completing, 1):
            yield Entry(f"adopted_{name}_complete_{i}", "claims.complete_copies", statement.sql)
        yield made(dialect, f"adopted_{name}_peek", dialect.inspection.peek, t, profile, columns)
        waits = dialect.claims.claim_waits(dialect.lifecycle.holding(t, profile))
        if waits is not None:
            yield Entry(f"adopted_{name}_claim_waits", "claims.claim_waits", waits.sql)
        if profile.expires:
            yield made(dialect, f"adopted_{name}_renewable", dialect.leases.renewable, t, profile)
            yield made(dialect, f"adopted_{name}_renew", dialect.leases.renew, t, profile, 2)
            settle = dialect.leases.settle_renewed(t, profile, 2)
            yield Entry(f"adopted_{name}_settle_renewed", "leases.settle_renewed", settle.sql)
        if not profile.take and profile.guard is not None:
            yield made(dialect, f"adopted_{name}_drop_fenced", dialect.leases.drop_fenced, t, profile)
        for builder in (
            dialect.adoption.adopted_fail_expired,
            dialect.claims.backlog,
            dialect.inspection.adopted_by_status,
            dialect.inspection.adopted_errors,
        ):
            statement = builder(t, profile)
            if statement is not None:
                yield Entry(
                    f"adopted_{name}_{builder.__name__.removeprefix('adopted_')}",
                    built_by(dialect, builder),
                    statement.sql,
                )
    relational, relational_columns = ADOPTED["relational"]
    for outcome in (dialect.outcomes.ack_done, dialect.outcomes.ack_retry, dialect.outcomes.ack_failed):
        yield made(dialect, f"adopted_relational_{outcome.__name__}", outcome, t, relational)
    yield made(dialect, "adopted_relational_forget_acked", dialect.outcomes.forget_acked, t, relational)
    lock = dialect.outcomes.lock_acked(t, relational)
    if lock is not None:  # SQLite's one writer needs none
        yield Entry("adopted_relational_lock_acked", built_by(dialect, dialect.outcomes.lock_acked), lock.sql)
    bounded = dialect.claims.claim(t, relational, relational_columns, bound="EnqueuedAt").claim
    yield Entry("adopted_relational_claim_bounded", "claims.claim", bounded.sql)
    yield made(dialect, "adopted_max_ready", dialect.claims.max_ready, t, relational, "EnqueuedAt")
    yield made(dialect, "adopted_filter_probe", dialect.adoption.filter_probe, t, PROBED_FILTER)
    held = dialect.lifecycle.holding(t, PRESETS["started-mark"])
    yield made(dialect, "adopted_count_held", dialect.claims.count_held, held)
    yield made(dialect, "adopted_count_held_through", dialect.claims.count_held, held, "upto")
    yield made(dialect, "adopted_count_all_held", dialect.claims.count_all_held, held)
    yield made(dialect, "local_offset", dialect.sink.local_offset)
    yield made(dialect, "count_rows", dialect.inspection.count_rows, t)
    yield made(dialect, "adopted_partition_bounds", dialect.claims.partition_bounds, held, PARTS)
    started_mark = PRESETS["started-mark"]
    yield made(dialect, "adopted_read_claimed", dialect.claims.read_claimed, held, started_mark, ("Id", "Payload"))
    yield from _subtypes(dialect, t)
    for builder in (
        dialect.adoption.unique_keys,
        dialect.adoption.exact_columns,
        dialect.adoption.referenced,
        dialect.adoption.referencing,
        dialect.adoption.check_constraints,
        dialect.sink.defaults,
    ):
        yield Entry(builder.__name__, built_by(dialect, builder), builder(t).sql)
    adoption = [
        *((ADOPTION_BUILDER, sql) for sql in dialect.adoption.create_claims_table(t, CLAIMS_COLUMNS, ("Id",))),
        *(("sink.create_adopted_staging", sql) for sql in dialect.sink.create_adopted_staging(t, CLAIMS_COLUMNS[1:])),
    ]
    for i, (builder, sql) in enumerate(adoption, 1):
        yield Entry(f"adopt_{i:02d}_{ddl_label(sql)}", builder, sql)
    for name, (profile, columns) in ADOPTED.items():
        given = tuple(c for c in columns if c not in {*profile.lifecycle(), "Id", "id", "duration_milliseconds"})
        new_row = tuple(dialect.sink.new_row(profile, given).items())
        staging = dialect.sink.staging_beside(t)
        yield made(dialect, f"adopted_{name}_publish", dialect.sink.publish, t, staging, given, False, new_row)


def _subtypes(dialect: Dialect, t: TableName) -> Iterator[Entry]:
    """What only a profile with subtype tables emits: their rows copied with a claim's, forgotten with its
    copies, read beside them."""
    (subtype,) = SUBTYPED.subtypes(t)
    yield made(dialect, "adopted_subtype_copy", dialect.claims.copy_subtype, t, SUBTYPED, subtype, SUBTYPE_COLUMNS)
    (forget,) = dialect.claims.forget_subtype_copies(t, SUBTYPED, dialect.engine.default_chunk is not None)
    yield Entry("adopted_subtype_forget_copies", "claims.forget_subtype_copies", forget.sql)
    held = dialect.lifecycle.holding(t, SUBTYPED)
    shape = ((subtype, SUBTYPE_COLUMNS[1:]),)
    read = dialect.claims.read_claimed(held, SUBTYPED, ("EnqueuedAt", "Payload"), SUBTYPED.key, shape)
    yield Entry("adopted_subtype_read_claimed", "claims.read_claimed", read.sql)
    yield made(dialect, "adopted_subtype_publish", dialect.sink.publish_subtype, subtype, SUBTYPE_COLUMNS)


def migration_parts(step: Step) -> dict[str, str]:
    """A migration step's SQL by part: its statements, how a script says them, its todo query."""
    parts = {f"{i}": sql for i, sql in enumerate(step.statements, 1)}
    parts |= {f"script_{i}": sql for i, sql in enumerate(step.script or (), 1)}
    return parts | ({"todo": step.todo} if step.todo else {})


def _migration(dialect: Dialect) -> Iterator[Entry]:
    # Only the ready index depends on the order, as in _ddl.
    per_order = {
        order: dialect.migrations.migration_steps(example_spec(dialect, order), EXAMPLE_CHUNK) for order in ORDERS
    }
    names = {tuple(step.name for step in steps) for steps in per_order.values()}
    assert len(names) == 1, f"{dialect.engine.name}: migration_steps returns different steps per order"
    for i, step in enumerate(per_order[EXAMPLE_ORDER]):
        for part in migration_parts(step):
            variants = {
                order: dialect.engine.compile(migration_parts(steps[i])[part]).sql for order, steps in per_order.items()
            }
            label = f"migrate_{i + 1:02d}_{step.name}_{part}"
            if len(set(variants.values())) == 1:
                yield Entry(label, MIGRATION_BUILDER, variants[EXAMPLE_ORDER])
            else:
                yield from (Entry(f"{label}_{order}", MIGRATION_BUILDER, sql) for order, sql in variants.items())


GROUP = "customer_id"


def _groups(dialect: Dialect, t: TableName) -> Iterator[Entry]:
    """What a queue with message groups emits: its grouped claim in each order, from the first group and
    resumed after the last one taken, the turn it takes first, and how its claims are read."""
    for order in ORDERS:
        for resume in (False, True):
            plan = dialect.claims.claim(t, replace(native(order), group=GROUP), resume=resume, addressed=True)
            yield Entry(f"claim_grouped_{order}" + ("_resumed" if resume else ""), "claims.claim", plan.claim.sql)
    if plan.lock is not None:  # SQLite's BEGIN IMMEDIATE is the turn
        yield Entry("claim_grouped_turn", "claims.claim", plan.lock.sql)
    relational, columns = ADOPTED["relational"]
    grouped = dialect.claims.claim(t, replace(relational, group="Type"), columns, resume=True).claim
    yield Entry("adopted_relational_claim_grouped", "claims.claim", grouped.sql)
    held = dialect.lifecycle.holding(t, NATIVE)
    yield made(dialect, "last_group", dialect.claims.last_group, held, GROUP)
    yield made(dialect, "partition_groups", dialect.claims.partition_groups, held, GROUP, PARTS)
    order = ORDERS["priority"]
    yield made(dialect, "read_grouped", dialect.claims.read_grouped, held, READ_COLUMNS, GROUP, order, False)
    yield made(dialect, "read_grouped_loose", dialect.claims.read_grouped, held, READ_COLUMNS, GROUP, order, True)
    for step in dialect.migrations.group_steps(t, Column(GROUP, "bigint")):
        for part, sql in migration_parts(step).items():
            yield Entry(f"migrate_group_{step.name}_{part}", "migrations.group_steps", dialect.engine.compile(sql).sql)
    domain = (*EXAMPLE_DOMAIN, Column(GROUP, "bigint"))
    plain = dialect.schema.create_statements(QueueSpec(t, domain, EXAMPLE_ORDER))
    grouped_ddl = dialect.schema.create_statements(QueueSpec(t, domain, EXAMPLE_ORDER, GROUP))
    for i, sql in enumerate((sql for sql in grouped_ddl if sql not in plain), 1):
        yield Entry(f"ddl_group_index_{i}", DDL_BUILDER, sql)


def _runs(dialect: Dialect, t: TableName) -> Iterator[Entry]:
    """What a claim that holds its rows as runs of ids emits (Claims.runs), and the turn every claim of
    sqlqueue's own layout takes."""
    claims, runs = dialect.claims, dialect.runs
    for order in ORDERS:
        yield made(dialect, f"runs_pick_{order}", runs.pick, t, native(order))
    yield made(dialect, "runs_pick_fifo_bounded", runs.pick, t, native("fifo"), "id")
    yield made(dialect, "runs_record", runs.record, t)
    turn = claims.claim(t, native("fifo"), (), False, None, addressed=True).lock
    if turn is not None:  # SQLite's BEGIN IMMEDIATE is the turn
        yield Entry("claim_turn", "claims.claim", turn.sql)
    held = dialect.lifecycle.runs_holding(t, NATIVE)
    yield made(dialect, "runs_count_held", claims.count_held, held)
    yield made(dialect, "runs_count_held_through", claims.count_held, held, "upto")
    yield made(dialect, "runs_count_held_range", claims.count_held, held, "range")
    yield made(dialect, "runs_count_all_held", claims.count_all_held, held)
    yield made(dialect, "runs_partition_bounds", claims.partition_bounds, held, PARTS)
    yield made(dialect, "runs_read_claimed", claims.read_claimed, held, NATIVE, READ_COLUMNS)
    waits = claims.claim_waits(held)
    assert waits is not None, "runs record when they were taken"
    yield Entry("runs_claim_waits", "claims.claim_waits", waits.sql)
    yield made(dialect, "runs_lock", runs.lock, t)
    yield made(dialect, "runs_complete_delete", runs.complete, t, NATIVE.deleting())
    yield made(dialect, "runs_complete_keep", runs.complete, t, NATIVE)
    yield made(dialect, "runs_forget", runs.forget, t)
    yield made(dialect, "runs_renew", runs.renew, t)
    yield made(dialect, "runs_expired", runs.expired, t)
    yield made(dialect, "runs_give_back", runs.give_back, t)
    yield made(dialect, "runs_forget_one", runs.forget_one, t)


def catalog(dialect: Dialect) -> list[Entry]:
    """Every statement ``dialect`` emits, each variant once, in a stable order."""
    t = example_table(dialect)
    entries: list[Entry] = []

    def add(name: str, builder: Callable[..., Statement], *args: Any) -> None:
        entries.append(Entry(name, built_by(dialect, builder), builder(t, *args).sql))

    for order in ORDERS:
        for strict in (False,) if order == "heap" else (False, True):  # options refuse strict heap
            for bounded in (False, True):
                entries.append(
                    Entry(
                        claim_name(order, strict, bounded),
                        "claims.claim",
                        native_claim(dialect, t, order, strict, bounded),
                    )
                )
    # A partitioned table (or one with inheritance children) numbers addresses per partition: by the key,
    # where an engine claims by address at all.
    unaddressed = native_claim(dialect, t, "fifo", strict=False, bounded=False, addressed=False)
    if unaddressed != native_claim(dialect, t, "fifo", strict=False, bounded=False):
        entries.append(Entry("claim_fifo_unaddressed", "claims.claim", unaddressed))
    if dialect.schema.plain_table(t) is not None:
        entries.append(made(dialect, "plain_table", dialect.schema.plain_table, t))
    if dialect.schema.rewriters(t) is not None:
        entries.append(made(dialect, "rewriters", dialect.schema.rewriters, t))
    held = dialect.lifecycle.holding(t, NATIVE)
    entries.append(made(dialect, "count_held", dialect.claims.count_held, held))
    entries.append(made(dialect, "count_held_through", dialect.claims.count_held, held, "upto"))
    entries.append(made(dialect, "count_all_held", dialect.claims.count_all_held, held))
    entries.append(made(dialect, "partition_bounds", dialect.claims.partition_bounds, held, PARTS))
    entries.append(made(dialect, "read_claimed", dialect.claims.read_claimed, held, NATIVE, READ_COLUMNS))
    entries += _runs(dialect, t)
    for keep in (False, True):
        for limited in (False, True):
            done = NATIVE if keep else NATIVE.deleting()
            (statement,) = dialect.claims.complete_held(t, done, limited)
            entries.append(Entry(complete_name(keep, limited), "claims.complete_held", statement.sql))
    for limited in (False, True):
        add("rescue_expired" + ("_chunked" if limited else ""), dialect.housekeeping.rescue_expired, limited)
    for limited in (False, True):
        add("renew_held" + ("_chunked" if limited else ""), dialect.leases.renew_held, limited)
    add("ack_retry", dialect.outcomes.ack_retry, NATIVE)
    add("ack_failed", dialect.outcomes.ack_failed, NATIVE)
    for keep in (False, True):
        done = NATIVE if keep else NATIVE.deleting()
        add("ack_done_" + ("keep" if keep else "delete"), dialect.outcomes.ack_done, done)
    fields = dialect.outcomes.fields(NATIVE)
    staged = tuple((f, dialect.engine.type_sql(LIFECYCLE_TYPES[c] if c else Outcomes.own_type(f))) for f, c in fields)
    entries.append(made(dialect, "ack_stage", dialect.outcomes.stage, staged, 1))
    entries.append(made(dialect, "ack_unstage", dialect.outcomes.unstage))
    for state in ("done", "failed"):
        add(f"purge_{state}_chunked", dialect.housekeeping.purge, state, True)
    for by in ("id", "dedup_key", "all"):
        add(f"requeue_failed_by_{by}", dialect.housekeeping.requeue_failed, by)
    add("count_ready", dialect.claims.count_ready, NATIVE)
    add("max_ready_id", dialect.claims.max_ready, NATIVE, "id")
    add("count_by_state", dialect.inspection.count_by_state)
    add("ping", dialect.inspection.ping)
    add("table_columns", dialect.schema.table_columns)
    for order in ORDERS:
        add(f"peek_{order}", dialect.inspection.peek, native(order), READ_COLUMNS)
    add("count_done_since", dialect.inspection.count_done_since)
    waits = dialect.claims.claim_waits(held)
    assert waits is not None, "sqlqueue's own layout records enqueue and claim times"
    entries.append(Entry("claim_waits", "claims.claim_waits", waits.sql))
    add("recent_waits", dialect.inspection.recent_waits)
    add("backlog", dialect.claims.backlog, NATIVE)
    add("table_indexes", dialect.doctor.table_indexes)
    for part, builder, args in DOCTOR[dialect.engine.name]:
        add(f"doctor_{builder}", getattr(getattr(dialect, part), builder), *args)
    for builder in ENGINE[dialect.engine.name]:
        entries.append(Entry(f"engine_{builder}", f"engine.{builder}", getattr(dialect.engine, builder)().sql))
    for sink in (
        dialect.sink.ledger_contains,
        dialect.sink.ledger_record,
        dialect.sink.ledger_prune,
        dialect.sink.last_id,
        dialect.sink.register_unpublished,
        dialect.sink.unpublished_in,
        dialect.sink.delete_unpublished,
        dialect.sink.count_unpublished,
    ):
        add(sink.__name__, sink)
    for numbering in (dialect.sink.identity, dialect.sink.identity_blocks):  # where ids come in blocks
        if (statement := numbering(t)) is not None:
            entries.append(Entry(numbering.__name__, built_by(dialect, numbering), statement.sql))
    for staged in (dialect.sink.delete_staged, dialect.sink.count_staged):
        entries.append(Entry(staged.__name__, built_by(dialect, staged), staged(dialect.schema.staging(t)).sql))
    add("delete_unpublished_rows", dialect.sink.delete_unpublished_rows, True)
    add("delete_unpublished_rows_anywhere", dialect.sink.delete_unpublished_rows, False)
    staging = dialect.schema.staging(t)
    add("publish_staged", dialect.sink.publish, staging, tuple(c.name for c in INSERT_COLUMNS), False)
    add("publish_staged_dedup", dialect.sink.publish, staging, tuple(c.name for c in DEDUP_INSERT_COLUMNS), True)
    for name, target in (("write_unpublished", t), ("stage", dialect.schema.staging(t))):
        cursor = RecordingCursor()
        dialect.engine.load(cursor, dialect.engine.table(target), [*INSERT_COLUMNS, STAGE_TAG], [("p", "tag")])
        entries += [Entry(name, STAGE_BUILDER, sql) for sql in cursor.statements]
        if dialect.engine.loads_text:  # the same rows as text (sqlqueue.textrows)
            cursor = RecordingCursor()
            dialect.engine.load_text(cursor, dialect.engine.table(target), [*INSERT_COLUMNS, STAGE_TAG], [b"p\tt\n"])
            entries += [Entry(f"{name}_text", STAGE_BUILDER, sql) for sql in cursor.statements]
    cursor = RecordingCursor()
    dialect.engine.insert_many(cursor, t, INSERT_COLUMNS, [("p",)])
    entries += [Entry("insert", INSERT_BUILDER, sql) for sql in cursor.statements]
    cursor = RecordingCursor()
    dialect.engine.insert_many(cursor, t, DEDUP_INSERT_COLUMNS, [("p", "k")], skip_duplicates=True)
    steps = DEDUP_INSERT_STEPS.get(dialect.engine.name, SCRATCH_INSERT_STEPS)
    assert len(cursor.statements) == len(steps), f"{dialect.engine.name}: the dedup insert has new steps"
    entries += [
        Entry(f"insert_dedup_{i}_{step}", INSERT_BUILDER, sql)
        for i, (step, sql) in enumerate(zip(steps, cursor.statements), 1)
    ]
    entries += _ddl(dialect)
    add("mark_dead_letters", dialect.housekeeping.mark_dead_letters)
    add("pending_dead_letters", dialect.housekeeping.pending_dead_letters)
    add("read_dead_letters", dialect.housekeeping.read_dead_letters, DEAD_LETTER_COLUMNS)
    add("delete_dead_letters", dialect.housekeeping.delete_dead_letters)
    add("ledger_last", dialect.sink.ledger_last)
    add("has_layout_table", dialect.schema.has_layout_table)
    add("recorded_layout", dialect.schema.recorded_layout)
    entries += _migration(dialect)
    entries += _adopted(dialect, t)
    entries += _groups(dialect, t)
    names = [e.name for e in entries]
    assert len(names) == len(set(names)), f"{dialect.engine.name}: duplicate statement names"
    return entries


def statements(dialect: Dialect | str) -> dict[str, str]:
    """{readable name: SQL text} of every statement the dialect can emit."""
    d = dialect_for(dialect) if isinstance(dialect, str) else dialect
    return {e.name: e.sql for e in catalog(d)}


def sqlserver_statements() -> dict[str, str]:
    return statements("sqlserver")


def ddl_script(dialect: Dialect | str) -> str:
    """The example queue's DDL as a runnable script, with a header saying how it was made."""
    d = dialect_for(dialect) if isinstance(dialect, str) else dialect
    spec = example_spec(d)
    header = [
        f"-- Generated from sqlqueue's {d.engine.name} dialect (Dialect.create_statements); do not edit by hand.",
        f"-- Example queue {spec.table}: lifecycle columns, domain column 'payload text', {spec.order} claim"
        " order; plus the sink ledger.",
        "-- Re-runnable (idempotent): each statement creates only what is missing. The layout is recorded",
        "-- only when this creates the queue table: one an earlier sqlqueue made needs `sqlqueue migrate`.",
        "-- Regenerate: SQLQUEUE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_ddl_scripts.py",
    ]
    if d.engine.name == "sqlserver":
        # Filtered indexes need QUOTED_IDENTIFIER ON; sqlcmd's default is OFF (ODBC drivers set ON).
        header.append("-- Run with sqlcmd -I: the filtered indexes need SET QUOTED_IDENTIFIER ON.")
    body = d.engine.script(d.schema.create_statements(spec))
    return "\n".join(header) + "\n\n" + body.rstrip("\n") + "\n"


def migration_script(dialect: Dialect | str) -> str:
    """The example queue's migration from layout 1 as `sqlqueue migrate --print` prints it."""
    d = dialect_for(dialect) if isinstance(dialect, str) else dialect
    header = (
        f"-- Generated from sqlqueue's {d.engine.name} dialect (sqlqueue migrate --print); do not edit by hand.\n"
        "-- Regenerate: SQLQUEUE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_ddl_scripts.py\n"
    )
    return header + layouts.script(d, example_spec(d), EXAMPLE_CHUNK)
