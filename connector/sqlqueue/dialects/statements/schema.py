"""Schema statements: the queue table, its indexes and side tables, and its recorded layout.

The layout lives beside the queue in <queue>_layout, a row per layout the table reached (the highest
is its layout), like <queue>_unpublished and <queue>_staging: it goes wherever the queue goes (its
schema, its grants, dropping it), and checking it reads one tiny table the connector's login is
granted SELECT on (sql/<engine>/grants.sql). A table shared by every queue would mix queues of
different schemas and owners, and each queue's login would need rights on all of it. Rows per layout
keep when each migration finished; recording is an insert guarded by NOT EXISTS.
"""

from __future__ import annotations

from ...identifiers import TableName
from ...schema import (
    CLAIMED,
    DONE,
    LAYOUT,
    LIFECYCLE,
    LIFECYCLE_TYPES,
    READY,
    READY_INDEX_KEY,
    STAGE_TAG,
    STATES,
    WRITABLE_LIFECYCLE,
    Column,
    QueueSpec,
)
from ..engine import Engine, Statement, cached
from .lifecycle import CONSUMER, FIRST, LAST, LEASE, SEQ, TAKEN, runs_table

LEDGER_TABLE = "sqlqueue_sink_ledger"


class Schema:
    """sqlqueue's own tables: the queue table, its indexes, staging and unpublished tables, the sink ledger
    and the layout table, as DDL and the catalog queries about them."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create_statements(self, spec: QueueSpec) -> list[str]:
        """Idempotent DDL for a queue table, its indexes, its staging table and the sink ledger.

        The layout is recorded first, and only when the queue table does not exist yet: running this
        over a table an earlier sqlqueue made leaves it unrecorded, for ``sqlqueue migrate``.
        """
        t, e = spec.table, self.engine
        q = e.quote
        lines = [e.column_sql(column, default) for column, default in LIFECYCLE]
        lines += [e.column_sql(c) for c in spec.domain]
        lines.append(f"CONSTRAINT {q(self.state_check_name(t))} {self.state_check(t)}")
        if e.separate_primary_key:
            lines.append(f"CONSTRAINT {q('pk_' + t.name)} PRIMARY KEY ({q('id')})")
        body = ",\n  ".join(lines)
        statements = [self.create_layout_table(t), self.record_layout(t, e.table_absent(t))]
        statements.append(e.create_table_guarded(t, body))
        statements += e.table_options(t)
        statements += self.index_statements(t, spec.order).values()
        if spec.group is not None:
            statements += self.group_indexes(t, spec.group)
        statements += self.create_staging(spec)
        statements.append(self.create_unpublished(t))
        statements.append(self.create_ledger(t))
        statements += self.create_claims(t)
        return statements

    def staging(self, table: TableName) -> TableName:
        """Where the sink's tasks stage a batch until Spark commits it (beside the queue table)."""
        return TableName(f"{table.name}_staging", table.schema)

    def create_staging(self, spec: QueueSpec) -> list[str]:
        # The columns a producer may write, all nullable: publish inserts only the columns a batch
        # has, so the queue's defaults and NOT NULL checks apply then. Nothing is claimed from it.
        columns = [STAGE_TAG, *(Column(n, LIFECYCLE_TYPES[n].type) for n in WRITABLE_LIFECYCLE)]
        return self.staging_statements(
            self.staging(spec.table), [self.engine.column_sql(c) for c in [*columns, *spec.domain]]
        )

    def staging_statements(self, staging: TableName, lines: list[str]) -> list[str]:
        """A staging table of column definitions ``lines`` (the tag's first): unlogged where the engine can,
        since publish checks every staged row is there, and clustered on the tag."""
        e = self.engine
        return [
            e.create_table_guarded(staging, ",\n  ".join(lines), unlogged=True),
            *e.table_options(staging),
            e.create_index_guarded(
                staging, f"ix_{staging.name}_tag", e.quote(STAGE_TAG.name), [], None, clustered=True
            ),
        ]

    def unpublished(self, table: TableName) -> TableName:
        """The tags of sink batches written into the queue table but not committed by Spark yet."""
        return TableName(f"{table.name}_unpublished", table.schema)

    def create_unpublished(self, table: TableName) -> str:
        # Logged like the queue table, whose rows it hides: a crash must not publish them. Each tag
        # records the id range its rows lie in, so dropping them seeks the primary key.
        q = self.engine.quote
        bigints = [Column(n, "bigint", False) for n in ("id_after", "id_upto", "row_count")]
        lines = [self.engine.column_sql(c) for c in (STAGE_TAG, *bigints)]
        lines.append(f"CONSTRAINT {q('pk_' + self.unpublished(table).name)} PRIMARY KEY ({q(STAGE_TAG.name)})")
        return self.engine.create_table_guarded(self.unpublished(table), ",\n  ".join(lines))

    def runs_index(self, table: TableName) -> str:
        return f"ux_{runs_table(table).name}_first"

    def create_claims(self, table: TableName) -> list[str]:
        """The claims table: a row per run of ids a claim holds, keyed by consumer, claim and the run's first
        id, which a claim's read and completion seek; and a unique index on the first id with the last, which
        every claim's test of a row against the runs seeks. Runs never overlap, so no two start at one id."""
        e = self.engine
        q, claims = e.quote, runs_table(table)
        columns = (
            Column(CONSUMER, "string", False),
            Column(SEQ, "bigint", False),
            Column(FIRST, "bigint", False),
            Column(LAST, "bigint", False),
        )
        lines = [e.column_sql(c) for c in columns]
        lines.append(e.column_sql(Column(TAKEN, "timestamp", False), "now"))
        lines.append(e.column_sql(Column(LEASE, "timestamp", False)))
        key = ", ".join(q(c) for c in (CONSUMER, SEQ, FIRST))
        lines.append(f"CONSTRAINT {q('pk_' + claims.name)} PRIMARY KEY ({key})")
        return [
            e.create_table_guarded(claims, ",\n  ".join(lines)),
            e.create_index_guarded(claims, self.runs_index(table), q(FIRST), [LAST], None, unique=True),
        ]

    def ready_index(self, table: TableName) -> str:
        """The filtered index of ready rows, in the order the queue was created for."""
        return f"ix_{table.name}_ready"

    def index_statements(self, table: TableName, order: str) -> dict[str, str]:
        """{index name: idempotent CREATE INDEX} for every index a queue table needs (see the README)."""
        t, q = table, self.engine.quote
        key = ", ".join(f"{q(c)} {d}" for c, d in READY_INDEX_KEY[order])
        # The ready index covers every column the claim's WHERE reads, stage_tag too where a claim judges
        # rows from the index (Engine.ready_index_covers_tag), so rows a claim passes over are judged
        # without a lookup that locks the base row.
        include = [c for c in ("due_at", "priority") if c not in dict(READY_INDEX_KEY[order])]
        if self.engine.ready_index_covers_tag:
            include.append(STAGE_TAG.name)
        indexes: tuple[tuple[str, str, list[str], str, bool], ...] = (
            (self.ready_index(t), key, include, f"{q('state')} = '{READY}'", False),
            (
                f"ix_{t.name}_claimed",
                f"{q('consumer')}, {q('claim_seq')}",
                ["lease_until"],
                f"{q('state')} = '{CLAIMED}'",
                False,
            ),
            (f"ix_{t.name}_done", q("completed_at"), [], f"{q('state')} = '{DONE}'", False),
            (f"ux_{t.name}_dedup", q("dedup_key"), [], f"{q('dedup_key')} IS NOT NULL", True),
        )
        if self.engine.indexes_row_tags:
            # Rows still carrying a sink tag (unpublished, or published and not yet claimed): dropping
            # a tag's rows outside its recorded id range seeks here instead of scanning the table.
            indexes += ((f"ix_{t.name}_tag", q(STAGE_TAG.name), [], f"{q(STAGE_TAG.name)} IS NOT NULL", False),)
        return {
            name: self.engine.create_index_guarded(t, name, key, inc, where, unique)
            for name, key, inc, where, unique in indexes
        }

    def group_indexes(self, table: TableName, group: str) -> list[str]:
        """The indexes a grouped claim reads (Claims.grouped): a group's ready rows in id order, which the
        claim ranks; and the rows that may hold a group back, found by group (the filter is the busy test's
        lead word for word: only rows with an attempt, so a new row, a sink's maybe uncommitted, is not in it)."""
        q, e = self.engine.quote, self.engine
        busy = f"{q('attempts')} > 0 AND {q('state')} IN ('{READY}', '{CLAIMED}')"
        return [
            e.create_index_guarded(
                table, f"ix_{table.name}_group", f"{q(group)}, {q('id')}", ["due_at", STAGE_TAG.name],
                f"{q('state')} = '{READY}'", False,
            ),
            e.create_index_guarded(table, f"ix_{table.name}_group_busy", q(group), ["state", "due_at"], busy, False),
        ]  # fmt: skip

    def ledger(self, table: TableName) -> TableName:
        """The sink ledger of a queue lives in the queue table's schema."""
        return TableName(LEDGER_TABLE, table.schema)

    def create_ledger(self, table: TableName) -> str:
        # The key stays within SQL Server's 900-byte clustered key: queue names have at most 201
        # characters and writer ids (option writerId, or a query id) at most 200.
        e = self.engine
        q, ledger = e.quote, self.ledger(table)
        body = (
            f"{q('queue_name')} {e.type_sql(Column('queue_name', 'string'))} NOT NULL,\n"
            f"  {q('writer_id')} {e.type_sql(Column('writer_id', 'string'))} NOT NULL,\n"
            f"  {q('batch_id')} {e.type_sql(Column('batch_id', 'bigint'))} NOT NULL,\n"
            f"  {q('row_count')} {e.type_sql(Column('row_count', 'bigint'))} NOT NULL,\n"
            f"  {q('committed_at')} {e.type_sql(Column('committed_at', 'timestamp'))} NOT NULL"
            f" DEFAULT {e.default_sql('now')},\n"
            f"  CONSTRAINT {q('pk_' + LEDGER_TABLE)} PRIMARY KEY ({q('queue_name')}, {q('writer_id')}, {q('batch_id')})"
        )
        return e.create_table_guarded(ledger, body)

    def state_check_name(self, table: TableName) -> str:
        return f"ck_{table.name}_state"

    def state_check(self, table: TableName) -> str:
        states = ", ".join(f"'{s}'" for s in STATES)
        return f"CHECK ({self.engine.quote('state')} IN ({states}))"

    def tag_index(self, table: TableName) -> str:
        return f"ix_{table.name}_tag"

    @cached
    def table_columns(self, table: TableName) -> Statement:
        return self.engine.compile(self.engine.columns_sql(table))

    def layout_table(self, table: TableName) -> TableName:
        return TableName(f"{table.name}_layout", table.schema)

    def create_layout_table(self, table: TableName) -> str:
        e, layouts = self.engine, self.layout_table(table)
        q = e.quote
        body = (
            f"{q('layout')} {e.type_sql(Column('layout', 'int'))} NOT NULL,\n"
            f"  {q('recorded_at')} {e.type_sql(Column('recorded_at', 'timestamp'))} NOT NULL"
            f" DEFAULT {e.default_sql('now')},\n"
            f"  CONSTRAINT {q('pk_' + layouts.name)} PRIMARY KEY ({q('layout')})"
        )
        return e.create_table_guarded(layouts, body)

    def record_layout(self, table: TableName, when: str) -> str:
        """Record the current layout, once, if the SQL condition ``when`` holds."""
        q, layouts = self.engine.quote, self.engine.table(self.layout_table(table))
        recorded = f"SELECT 1 FROM {layouts} WHERE {q('layout')} = {LAYOUT}"
        return f"INSERT INTO {layouts} ({q('layout')}) SELECT {LAYOUT} WHERE NOT EXISTS ({recorded}) AND {when}"

    @cached
    def plain_table(self, table: TableName) -> Statement | None:
        """One row of one flag: whether ``table``'s rows each have an address of their own, which a claim in
        place may fetch them by (Claims.claim's ``addressed``); None where no claim fetches rows by address."""
        sql = self.engine.plain_table_sql()
        return self.engine.compile(sql) if sql is not None else None

    @cached
    def rewriters(self, table: TableName) -> Statement | None:
        """One row of one flag: whether ``table`` has triggers or rules that may rewrite a claimed row's guard
        column after the claim returned it (Engine.rewriters_sql); None where the engine cannot tell."""
        sql = self.engine.rewriters_sql()
        return self.engine.compile(sql) if sql is not None else None

    @cached
    def has_layout_table(self, table: TableName) -> Statement:
        """1 when the queue's layout table exists. From the catalog every login reads (on PostgreSQL
        information_schema lists only the tables a login may use)."""
        absent = self.engine.table_absent(self.layout_table(table))
        return self.engine.compile(f"SELECT CASE WHEN {absent} THEN 0 ELSE 1 END")

    @cached
    def recorded_layout(self, table: TableName) -> Statement:
        """The highest layout recorded for the queue; NULL when none is."""
        e = self.engine
        return e.compile(f"SELECT MAX({e.quote('layout')}) FROM {e.table(self.layout_table(table))}")
