"""SQL Server's layout migrations: every statement checks the catalog first, index builds run online
where the edition can, and the state check is replaced WITH NOCHECK."""

from __future__ import annotations

import textwrap

from ..identifiers import TableName
from ..schema import STAGE_TAG, STAGED, QueueSpec
from .layout import Step
from .sqlserver import SqlServerEngine
from .statements.migrations import MIGRATION_LOCK_TIMEOUT_S, Migrations


class SqlServerMigrations(Migrations):
    """Layout versions and migrate on SQL Server."""

    engine: SqlServerEngine

    # Every statement checks the catalog first, so a script run again changes nothing twice:
    # sys.columns, sys.indexes with sys.index_columns (key and included columns), and
    # sys.check_constraints, whose definition column holds the check's text:
    # https://learn.microsoft.com/sql/relational-databases/system-catalog-views/sys-index-columns-transact-sql
    # https://learn.microsoft.com/sql/relational-databases/system-catalog-views/sys-check-constraints-transact-sql
    # The catalog shows a login only objects it holds a permission on, so the connector sees
    # <q>_layout through its SELECT grant:
    # https://learn.microsoft.com/sql/relational-databases/security/metadata-visibility-configuration
    # ALTER TABLE and offline index operations hold a schema-modification (Sch-M) lock, which waits
    # behind running claims and holds new ones behind it; SET LOCK_TIMEOUT makes the step fail
    # instead, for the whole session, so for the index builds too ("Locks and ALTER TABLE"):
    # https://learn.microsoft.com/sql/t-sql/statements/alter-table-transact-sql
    # https://learn.microsoft.com/sql/t-sql/statements/set-lock-timeout-transact-sql
    how_to_run_script = (
        "-- Run with sqlcmd -I -b: filtered indexes need QUOTED_IDENTIFIER ON, and -b stops at the first",
        "-- error. Consider SET LOCK_TIMEOUT 10000 first: DDL waiting for a lock holds up the claims behind it.",
    )
    migration_lock_timeout = f"SET LOCK_TIMEOUT {MIGRATION_LOCK_TIMEOUT_S * 1000}"
    # SERVERPROPERTY('EngineEdition'): 3 is Enterprise (Developer and Evaluation too), 5 Azure SQL
    # Database, 8 Azure SQL Managed Instance: the editions with online index operations
    # (https://learn.microsoft.com/sql/t-sql/functions/serverproperty-transact-sql;
    # https://learn.microsoft.com/sql/relational-databases/indexes/guidelines-for-online-index-operations).
    ONLINE_EDITIONS = "3, 5, 8"

    def _index(self, table: TableName, index: str) -> str:
        found = f"SELECT 1 FROM sys.indexes WHERE name = N'{index}'"
        return f"{found} AND object_id = OBJECT_ID({self.engine.object_name(table)})"

    def _online(self, create: str, options: tuple[str, ...] = ()) -> str:
        """``create`` (a CREATE INDEX) online where the edition can: readers and writers go on while
        it builds, but for short locks at its start and end. Elsewhere it is built offline and holds
        a shared lock on the table while it reads it, which blocks claims: run migrate when quiet.
        The ready and tag indexes include no LOB column, so they can be built online."""
        online = ", ".join([*options, "ONLINE = ON"])
        offline = f" WITH ({', '.join(options)})" if options else ""
        return (
            f"BEGIN\n  IF CAST(SERVERPROPERTY('EngineEdition') AS INT) IN ({self.ONLINE_EDITIONS})\n"
            f"    {create} WITH ({online})\n  ELSE\n    {create}{offline}\nEND"
        )

    @staticmethod
    def _create_of(guarded: str) -> str:
        """The CREATE INDEX of a guarded statement from index_statements (its line after the IF)."""
        return guarded.split("\n", 1)[1]

    def add_column_sql(self, table: TableName, column: str, name: str) -> str:
        # ALTER TABLE updates the rows only when the change needs it; a nullable column without a
        # default does not, so this changes metadata only, under a brief Sch-M lock (ALTER TABLE, above).
        e = self.engine
        return (
            f"IF NOT EXISTS (SELECT 1 FROM sys.columns WHERE object_id = OBJECT_ID({e.object_name(table)}) "
            f"AND name = N'{name}')\nALTER TABLE {e.table(table)} ADD {column}"
        )

    def staged_rows_todo(self, table: TableName) -> str | None:
        return f"SELECT CASE WHEN EXISTS ({self._index(table, self.staged_index(table))}) THEN 1 ELSE 0 END"

    def move_staged_sql(self, spec: QueueSpec, chunk: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        # One statement a chunk: DELETE ... OUTPUT ... INTO writes the deleted rows to the staging
        # table, which may have no enabled trigger, foreign key or CHECK constraint, and has none
        # (https://learn.microsoft.com/sql/t-sql/queries/output-clause-transact-sql).
        e = self.engine
        q, t, staging = e.quote, e.table(spec.table), e.table(self.schema.staging(spec.table))
        names = self._moved(spec)
        cols, deleted = ", ".join(q(n) for n in names), ", ".join(f"deleted.{q(n)}" for n in names)

        def move(limit: str) -> str:
            return (
                f"DELETE TOP ({limit}) FROM {t}{e.row_lock_hints()}\nOUTPUT {deleted}\nINTO {staging} ({cols})\n"
                f"WHERE {q('state')} = '{STAGED}'"
            )

        # sqlcmd commits each DELETE of the loop on its own.
        loop = (
            f"IF EXISTS ({self._index(spec.table, self.staged_index(spec.table))})\nWHILE 1 = 1\nBEGIN\n"
            f"{textwrap.indent(move(str(chunk)), '  ')}\n  IF @@ROWCOUNT < {chunk} BREAK\nEND"
        )
        return (move(":limit"),), (loop,)

    def drop_staged_index(self, table: TableName) -> str:
        # Nested IFs: T-SQL does not promise to test an AND's left side first, and the staged-row
        # test seeks the index only while it exists.
        return (
            f"IF EXISTS ({self._index(table, self.staged_index(table))})\n"
            f"IF NOT EXISTS ({self._staged(table, self.engine.committed_read_hints())})\n"
            f"DROP INDEX {self.engine.index_name(table, self.staged_index(table))}"
        )

    def _check_exists(self, table: TableName, narrow: bool) -> str:
        found = (
            "SELECT 1 FROM sys.check_constraints WHERE parent_object_id = "
            f"OBJECT_ID({self.engine.object_name(table)}) AND name = N'{self.schema.state_check_name(table)}'"
        )
        return found + (f" AND CHARINDEX(N'{STAGED}', {self.engine.quote('definition')}) = 0" if narrow else "")

    def narrow_state_check(self, table: TableName) -> list[Step]:
        # WITH NOCHECK: checking the existing rows would scan the table under the Sch-M lock, blocking
        # every claim meanwhile. No row is 'staged' once its index is gone (the step before), the old
        # check allowed only this check's states besides it, and new rows are checked either way; the
        # optimizer just does not trust it (is_not_trusted = 1), which no queue statement needs
        # (ALTER TABLE, WITH CHECK | WITH NOCHECK: https://learn.microsoft.com/sql/t-sql/statements/alter-table-transact-sql).
        name = self.schema.state_check_name(table)
        t, check = self.engine.table(table), self.engine.quote(name)
        replace = (
            f"IF NOT EXISTS ({self._index(table, self.staged_index(table))})\n"
            f"IF NOT EXISTS ({self._check_exists(table, narrow=True)})\nBEGIN\n"
            f"  IF EXISTS ({self._check_exists(table, narrow=False)})\n    ALTER TABLE {t} DROP CONSTRAINT {check}\n"
            f"  ALTER TABLE {t} WITH NOCHECK ADD CONSTRAINT {check} {self.schema.state_check(table)}\nEND"
        )
        return [Step("replace_state_check", f"replace {name} by one without '{STAGED}'", (replace,))]

    def migrated(self, table: TableName) -> str:
        return f"EXISTS ({self._check_exists(table, narrow=True)})"

    def ready_index_steps(self, table: TableName, order: str) -> list[Step]:
        # DROP_EXISTING builds the new index while claims keep reading the old one (their INDEX hint
        # names it), and swaps them when done; it fails when the index is missing, hence the plain
        # create after it (CREATE INDEX, DROP_EXISTING: https://learn.microsoft.com/sql/t-sql/statements/create-index-transact-sql).
        name = self.schema.ready_index(table)
        guarded = self.schema.index_statements(table, order)[name]
        covered = (
            "SELECT 1 FROM sys.indexes AS i "
            "JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id "
            "JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id "
            f"WHERE i.object_id = OBJECT_ID({self.engine.object_name(table)}) AND i.name = N'{name}' "
            f"AND c.name = N'{STAGE_TAG.name}'"
        )
        rebuild = f"IF EXISTS ({self._index(table, name)})\nIF NOT EXISTS ({covered})\n" + self._online(
            self._create_of(guarded), ("DROP_EXISTING = ON",)
        )
        return [
            Step(
                "ready_index",
                f"rebuild {name} to cover stage_tag (online where the edition allows)",
                (rebuild, guarded),
                atomic=False,
            )
        ]

    def tag_index_step(self, table: TableName) -> Step:
        index = self.schema.tag_index(table)
        create = f"IF NOT EXISTS ({self._index(table, index)})\n" + self._online(
            self._create_of(self.schema.index_statements(table, "fifo")[index])
        )
        return Step("tag_index", f"create {index} (online where the edition allows)", (create,), atomic=False)
