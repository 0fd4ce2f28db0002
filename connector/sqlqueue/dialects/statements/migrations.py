"""Migration statements: from layout 1 to the current layout, step by step (``sqlqueue migrate``).

Migration statements name tables and indexes as literals (validated identifiers), so a printed
script shows exactly what sqlqueue runs.
"""

from __future__ import annotations

from ...identifiers import TableName
from ...schema import (
    LAYOUT,
    STAGE_TAG,
    STAGED,
    WRITABLE_LIFECYCLE,
    Column,
    QueueSpec,
)
from ..engine import Engine
from ..layout import Step
from .lifecycle import runs_table
from .schema import Schema

# How long a migration's DDL waits for a table lock before it fails (and migrate is run again).
MIGRATION_LOCK_TIMEOUT_S = 10


class Migrations:
    """The steps from layout 1 to the current layout; each engine's subclass says them its own way."""

    # Run first in each migration transaction: DDL that waits for its table lock holds up every
    # claim queued behind it, so it gives up after a while instead (and migrate is run again).
    migration_lock_timeout: str | None = None
    # The comment lines of a printed script that say how to run it with this engine's client.
    how_to_run_script: tuple[str, ...] = ()

    def __init__(self, engine: Engine, schema: Schema) -> None:
        self.engine, self.schema = engine, schema

    def migration_steps(self, spec: QueueSpec, chunk: int) -> list[Step]:
        """Layout 1 to the current layout, in order. ``spec`` gives the domain columns (the staging
        table's) and the order the ready index serves; ``chunk`` sizes the loops of printed scripts.

        Rows were 'staged' only while the index of staged rows existed: it is dropped once none is
        left, the state check loses 'staged' after that, and the layout is recorded last, only when
        no row can be 'staged' any more.
        """
        t, schema = spec.table, self.schema
        sides = (schema.staging(t), schema.unpublished(t), schema.ledger(t), schema.layout_table(t))
        return [
            self.add_tag_column(t),
            Step(
                "side_tables",
                f"create {', '.join(s.name for s in sides)} where missing",
                (*schema.create_staging(spec), schema.create_unpublished(t), schema.create_ledger(t))
                + (schema.create_layout_table(t),),
            ),
            self.move_staged(spec, chunk),
            Step(
                "drop_staged_index",
                f"drop {self.staged_index(t)} once no row is staged",
                (self.drop_staged_index(t),),
                todo=self.staged_index_todo(t),
            ),
            *self.narrow_state_check(t),
            *self.ready_index_steps(t, spec.order),
            self.tag_index_step(t),
            Step(
                "claims_table",
                f"create {runs_table(t).name}, where claims hold runs of ids, where missing",
                tuple(schema.create_claims(t)),
            ),
            Step(
                "record_layout",
                f"record layout {LAYOUT} in {schema.layout_table(t).name}",
                (schema.record_layout(t, self.migrated(t)),),
            ),
        ]

    # Whether a script can say every step conditionally (SQLite has no conditional DDL).
    conditional_ddl = True

    def staged_index(self, table: TableName) -> str:
        """Layout 1's index of staged rows."""
        return f"ix_{table.name}_staged"

    def _staged(self, table: TableName, hints: str = "") -> str:
        """A query with a row while a row of ``table`` is 'staged'."""
        return f"SELECT 1 FROM {self.engine.table(table)}{hints} WHERE {self.engine.quote('state')} = '{STAGED}'"

    def _moved(self, spec: QueueSpec) -> list[str]:
        """What a staged row keeps when it moves to the staging table: what a producer wrote."""
        return [STAGE_TAG.name, *WRITABLE_LIFECYCLE, *(c.name for c in spec.domain)]

    # Where an engine has no conditional DDL, sqlqueue asks these queries first (0: nothing to do).
    def column_todo(self, table: TableName, column: str) -> str | None:
        return None

    def staged_rows_todo(self, table: TableName) -> str | None:
        return None

    def staged_index_todo(self, table: TableName) -> str | None:
        """Whether the index of staged rows exists while no row is staged."""
        return None

    def ready_index_todo(self, table: TableName) -> str | None:
        """Whether the ready index lacks stage_tag."""
        return None

    def add_column_sql(self, table: TableName, column: str, name: str) -> str:
        return f"ALTER TABLE {self.engine.table(table)} ADD COLUMN {column}"

    def add_tag_column(self, table: TableName) -> Step:
        # Tables made while the sink staged in <q>_staging only have no stage_tag.
        return self.add_column_step("add_tag_column", table, Column(STAGE_TAG.name, STAGE_TAG.type))

    def add_column_step(self, name: str, table: TableName, column: Column) -> Step:
        """Add ``column`` (nullable, without a default: no row changes) where the table lacks it."""
        sql = self.add_column_sql(table, self.engine.column_sql(column), column.name)
        todo = self.column_todo(table, column.name)
        script = None if self.conditional_ddl else (f"-- Only if this returns 1: {todo};\n-- {sql}",)
        return Step(name, f"add the {column.name} column where missing", (sql,), todo=todo, script=script)

    def group_steps(self, table: TableName, group: Column) -> list[Step]:
        """Message groups on a queue at the current layout (``sqlqueue migrate --group``): the group column
        where missing (nullable, no default: no row changes), then the indexes grouped claims read."""
        indexes = tuple(self.schema.group_indexes(table, group.name))
        return [
            self.add_column_step("add_group_column", table, group),
            Step("group_indexes", "create the indexes grouped claims read where missing", indexes),
        ]

    def move_staged(self, spec: QueueSpec, chunk: int) -> Step:
        # Layout 1 held a sink batch Spark had not committed as 'staged' rows of the queue table. No
        # layout-2 publish makes them claimable (their tags are not a running writer's), so they go
        # where layout 2 keeps such rows, the staging table: the writer's next publish or abort drops
        # them, stats count them, and the dedup keys they carry stop blocking the batch's replay.
        statements, script = self.move_staged_sql(spec, chunk)
        return Step(
            "move_staged",
            f"move rows of uncommitted sink batches (state '{STAGED}') into {self.schema.staging(spec.table).name}",
            statements,
            chunked=True,
            todo=self.staged_rows_todo(spec.table),
            script=script,
        )

    def move_staged_sql(self, spec: QueueSpec, chunk: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(statements moving a chunk of ``:limit`` rows, a script's statements moving them all)."""
        e = self.engine
        t, staging = e.table(spec.table), e.table(self.schema.staging(spec.table))
        i, cols = e.quote("id"), ", ".join(e.quote(n) for n in self._moved(spec))
        state = f"{e.quote('state')} = '{STAGED}'"
        picked = f"{i} IN (SELECT {i} FROM {t} WHERE {state} ORDER BY {i} LIMIT :limit)"
        return (
            (
                f"INSERT INTO {staging} ({cols}) SELECT {cols} FROM {t} WHERE {picked}",
                f"DELETE FROM {t} WHERE {picked}",
            ),
            (f"INSERT INTO {staging} ({cols}) SELECT {cols} FROM {t} WHERE {state}", f"DELETE FROM {t} WHERE {state}"),
        )

    def drop_staged_index(self, table: TableName) -> str:
        return f"DROP INDEX IF EXISTS {self.engine.index_name(table, self.staged_index(table))}"

    def narrow_state_check(self, table: TableName) -> list[Step]:
        """Steps that take 'staged' out of the state check. SQLite cannot alter a constraint without
        rebuilding the table, so there it keeps allowing 'staged', which nothing writes any more."""
        return []

    def migrated(self, table: TableName) -> str:
        """An SQL condition that holds once the steps a script could skip are done: no row is 'staged'
        and none can be (and, without conditional DDL, the stage_tag column is there)."""
        return f"NOT EXISTS ({self._staged(table)})"

    def ready_index_steps(self, table: TableName, order: str) -> list[Step]:
        # Dropped and built again in one transaction: SQLite writes one database at a time anyway.
        name = self.schema.ready_index(table)
        create = self.schema.index_statements(table, order)[name]
        return [
            Step(
                "ready_index",
                f"rebuild {name} to cover stage_tag",
                (f"DROP INDEX IF EXISTS {self.engine.index_name(table, name)}", create),
                todo=self.ready_index_todo(table),
            )
        ]

    def tag_index_step(self, table: TableName) -> Step:
        # Only SQL Server keeps a tag index (indexes_row_tags); a short-lived earlier layout made it everywhere.
        index = self.schema.tag_index(table)
        return Step("tag_index", f"drop {index}", (f"DROP INDEX IF EXISTS {self.engine.index_name(table, index)}",))
