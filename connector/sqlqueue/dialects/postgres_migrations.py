"""PostgreSQL's layout migrations: index builds CONCURRENTLY, checks added NOT VALID and validated apart,
and DO blocks for DDL that must check the catalog first."""

from __future__ import annotations

import textwrap

from ..identifiers import TableName
from ..schema import STAGE_TAG, STAGED, QueueSpec
from .layout import Step
from .statements.migrations import MIGRATION_LOCK_TIMEOUT_S, Migrations


class PostgresMigrations(Migrations):
    """Layout versions and migrate on PostgreSQL."""

    # Index builds run CONCURRENTLY, outside a transaction: they wait for the table's writers instead
    # of locking them out. One that fails leaves an INVALID index behind, which the next run drops
    # first (https://www.postgresql.org/docs/current/sql-createindex.html#SQL-CREATEINDEX-CONCURRENTLY).
    # Brief ACCESS EXCLUSIVE locks (ADD COLUMN, constraint and index swaps) give up after lock_timeout.
    how_to_run_script = (
        "-- Run with psql -v ON_ERROR_STOP=1, not in one transaction (no -1): CREATE INDEX CONCURRENTLY and",
        "-- the chunked move commit on their own. Consider SET lock_timeout = '10s' first.",
    )
    migration_lock_timeout = f"SET LOCAL lock_timeout = '{MIGRATION_LOCK_TIMEOUT_S}s'"

    def _index(self, table: TableName, index: str, valid: bool = False) -> str:
        """A query with a row when ``index`` of ``table`` exists (and is valid)."""
        e = self.engine
        found = f"SELECT 1 FROM pg_index WHERE indexrelid = to_regclass({e.literal(e.index_name(table, index))})"
        return found + (" AND indisvalid" if valid else "")

    def _do(self, body: str, declare: str = "") -> str:
        """A DO block: PL/pgSQL, for DDL that must check the catalog first."""
        declared = f"DECLARE\n  {declare};\n" if declare else ""
        return f"DO $$\n{declared}BEGIN\n{textwrap.indent(body, '  ')}\nEND $$"

    def add_column_sql(self, table: TableName, column: str, name: str) -> str:
        return f"ALTER TABLE {self.engine.table(table)} ADD COLUMN IF NOT EXISTS {column}"

    def column_todo(self, table: TableName, column: str) -> str | None:
        # ADD COLUMN IF NOT EXISTS takes its lock before it looks: look first.
        e = self.engine
        return (
            "SELECT NOT EXISTS (SELECT 1 FROM pg_attribute "
            f"WHERE attrelid = to_regclass({e.literal(e.table(table))}) AND attname = {e.literal(column)} "
            "AND NOT attisdropped)"
        )

    def staged_rows_todo(self, table: TableName) -> str | None:
        return f"SELECT EXISTS ({self._index(table, self.staged_index(table))})"

    def move_staged_sql(self, spec: QueueSpec, chunk: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        # One statement a chunk: the CTE deletes the rows and the INSERT takes what it returns.
        e = self.engine
        q, t, staging = e.quote, e.table(spec.table), e.table(self.schema.staging(spec.table))
        i, cols = q("id"), ", ".join(q(n) for n in self._moved(spec))

        def move(limit: str) -> str:
            return (
                f"WITH {q('moved')} AS (\n  DELETE FROM {t} WHERE {i} IN (SELECT {i} FROM {t} "
                f"WHERE {q('state')} = '{STAGED}' ORDER BY {i} LIMIT {limit})\n  RETURNING {cols}\n)\n"
                f"INSERT INTO {staging} ({cols}) SELECT {cols} FROM {q('moved')}"
            )

        # A DO block at top level may COMMIT (PostgreSQL 11 and later): each chunk commits on its own.
        loop = self._do(
            f"IF NOT EXISTS ({self._index(spec.table, self.staged_index(spec.table))}) THEN\n  RETURN;\nEND IF;\n"
            f"LOOP\n{textwrap.indent(move(str(chunk)), '  ')};\n"
            f"  GET DIAGNOSTICS moved_rows = ROW_COUNT;\n  COMMIT;\n  EXIT WHEN moved_rows < {chunk};\nEND LOOP;",
            declare="moved_rows bigint",
        )
        return (move(":limit"),), (loop,)

    def drop_staged_index(self, table: TableName) -> str:
        # Inside a DO block, so not CONCURRENTLY: the index is empty by then, and lock_timeout bounds the wait.
        return self._do(
            f"IF EXISTS ({self._index(table, self.staged_index(table))}) THEN\n"
            f"  IF NOT EXISTS ({self._staged(table)}) THEN\n"
            f"    DROP INDEX {self.engine.index_name(table, self.staged_index(table))};\n  END IF;\nEND IF;"
        )

    def _narrow_check(self, table: TableName, validated: bool = False) -> str:
        """A query with a row when the state check exists without 'staged' (and is validated)."""
        e = self.engine
        return (
            f"SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass({e.literal(e.table(table))}) "
            f"AND conname = {e.literal(self.schema.state_check_name(table))}"
            + (" AND convalidated" if validated else "")
            + f" AND position('{STAGED}' in pg_get_constraintdef(oid)) = 0"
        )

    def narrow_state_check(self, table: TableName) -> list[Step]:
        # Added NOT VALID (no scan under the ACCESS EXCLUSIVE lock), then validated in a transaction of
        # its own, which reads the table under SHARE UPDATE EXCLUSIVE and so blocks no writer
        # (https://www.postgresql.org/docs/current/sql-altertable.html#SQL-ALTERTABLE-DESC-VALIDATE-CONSTRAINT).
        name = self.schema.state_check_name(table)
        t, check = self.engine.table(table), self.engine.quote(name)
        replace = self._do(
            f"IF NOT EXISTS ({self._index(table, self.staged_index(table))}) "
            f"AND NOT EXISTS ({self._narrow_check(table)}) THEN\n"
            f"  ALTER TABLE {t} DROP CONSTRAINT IF EXISTS {check};\n"
            f"  ALTER TABLE {t} ADD CONSTRAINT {check} {self.schema.state_check(table)} NOT VALID;\nEND IF;"
        )
        return [
            Step("replace_state_check", f"replace {name} by one without '{STAGED}'", (replace,)),
            Step(
                "validate_state_check",
                f"validate {name} (reads the table, blocks no writer)",
                (f"ALTER TABLE {t} VALIDATE CONSTRAINT {check}",),
            ),
        ]

    def migrated(self, table: TableName) -> str:
        return f"EXISTS ({self._narrow_check(table, validated=True)})"

    def ready_index_steps(self, table: TableName, order: str) -> list[Step]:
        # Built beside the old index under another name, then swapped in one short transaction, so
        # claims always have a ready index to read. Only where the table has none, or one that covers
        # stage_tag (layout 2's, and 1's last shape): PostgreSQL's leaves the tag to the row
        # (PostgresEngine.ready_index_covers_tag), as layout 1's first shapes did.
        e, name = self.engine, self.schema.ready_index(table)
        building = f"{name}_next"
        covered = (
            "SELECT 1 FROM pg_index AS i "
            "JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) "
            f"WHERE i.indexrelid = to_regclass({e.literal(e.index_name(table, name))}) "
            f"AND a.attname = {e.literal(STAGE_TAG.name)}"
        )
        # The create statement is the one `create` runs, renamed and made CONCURRENTLY.
        create = self.schema.index_statements(table, order)[name].replace(
            f"INDEX IF NOT EXISTS {e.quote(name)} ", f"INDEX CONCURRENTLY IF NOT EXISTS {e.quote(building)} ", 1
        )
        swap = self._do(
            f"IF EXISTS ({self._index(table, building, valid=True)}) THEN\n"
            f"  DROP INDEX IF EXISTS {e.index_name(table, name)};\n"
            f"  ALTER INDEX {e.index_name(table, building)} RENAME TO {e.quote(name)};\nEND IF;"
        )
        return [
            Step(
                "build_ready_index",
                f"build {building}: {name} without stage_tag, beside the old one (CONCURRENTLY)",
                (f"DROP INDEX CONCURRENTLY IF EXISTS {e.index_name(table, building)}", create),
                atomic=False,
                todo=f"SELECT (NOT EXISTS ({self._index(table, name)}) OR EXISTS ({covered})) "
                f"AND NOT EXISTS ({self._index(table, building, valid=True)})",
            ),
            Step("swap_ready_index", f"replace {name} by {building}", (swap,)),
        ]

    def tag_index_step(self, table: TableName) -> Step:
        index = self.schema.tag_index(table)
        return Step(
            "tag_index",
            f"drop {index}",
            (f"DROP INDEX CONCURRENTLY IF EXISTS {self.engine.index_name(table, index)}",),
            atomic=False,
        )
