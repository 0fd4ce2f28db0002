"""Sink statements: unpublished and staged batches, the ledger, and publishing a batch.

A sink task writes its rows into the queue table under a stage tag of writer, batch, run and task
(the rows carry a short hash of it, listed beside it), and lists the tag as unpublished; the commit
deletes the batch's tags from that list in one transaction that also records the batch in the ledger.
Batches with dedup keys are staged in the staging table instead and copied into the queue by the
commit. Stage tags of one batch share a prefix; ``:lo``/``:hi`` bounds select a prefix as a range,
which seeks the tag index (a LIKE would not on every engine and collation).

Into a table sqlqueue adopted, the sink's tasks stage their rows in sqlqueue's staging table beside
the user's table, under stage tags as for sqlqueue's own tables. Publish, in the ledger's transaction,
inserts a task's rows into the table with what the profile gives a new row: the first ready status, no
attempt, due and enqueued now (unless the rows give them), and the token. So the table's own workers
never see a batch Spark did not commit, and no column of sqlqueue's goes on their table.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...identifiers import TableName
from ...profile import Profile
from ...schema import STAGE_TAG
from ..engine import Engine, Statement, cached
from .adoption import Adoption
from .lifecycle import Lifecycle
from .schema import Schema


class Sink:
    """What the sink's tasks and its commit run: staged and unpublished batches, the ledger, publish."""

    def __init__(self, engine: Engine, schema: Schema, lifecycle: Lifecycle, adoption: Adoption) -> None:
        self.engine, self.schema, self.lifecycle, self.adoption = engine, schema, lifecycle, adoption

    def _writer_batches(self, table: TableName, batch: str) -> str:
        """FROM the ledger, WHERE: one writer's batches into one queue, ``batch`` picking which."""
        e = self.engine
        q = e.quote
        return (
            f"{e.table(self.schema.ledger(table))} "
            f"WHERE {q('queue_name')} = :queue AND {q('writer_id')} = :writer AND {q('batch_id')} {batch}"
        )

    @cached
    def ledger_contains(self, table: TableName) -> Statement:
        return self.engine.compile(f"SELECT COUNT(*) FROM {self._writer_batches(table, '= :batch')}")

    @cached
    def ledger_record(self, table: TableName) -> Statement:
        e = self.engine
        q = e.quote
        return e.compile(
            f"INSERT INTO {e.table(self.schema.ledger(table))} "
            f"({q('queue_name')}, {q('writer_id')}, {q('batch_id')}, {q('row_count')}) "
            "VALUES (:queue, :writer, :batch, :row_count)"
        )

    @cached
    def ledger_prune(self, table: TableName) -> Statement:
        return self.engine.compile(f"DELETE FROM {self._writer_batches(table, '< :before')}")

    @cached
    def ledger_last(self, table: TableName) -> Statement:
        """One writer's highest batch in the ledger (a redrive publishes its chunks in order)."""
        e = self.engine
        return e.compile(f"SELECT MAX({e.quote('batch_id')}) FROM {self._writer_batches(table, '>= 0')}")

    @cached
    def last_id(self, table: TableName) -> Statement:
        """The highest id so far: the rows a task inserts after reading it have higher ones.

        Rows other writers hold locked are skipped rather than waited for; they are older anyway.
        """
        e = self.engine
        return e.compile(f"SELECT COALESCE(MAX({e.quote('id')}), 0) FROM {e.table(table)}{e.skip_locked_hints()}")

    @cached
    def identity(self, table: TableName) -> Statement | None:
        """How far apart the table's identity hands out ids and whether this login may reserve blocks of them
        (sqlqueue.numbering.Identity); None where it hands them out one at a time."""
        sql = self.engine.identity_query(table)
        return self.engine.compile(sql) if sql is not None else None

    @cached
    def identity_blocks(self, table: TableName) -> Statement | None:
        """The first ids of :blocks blocks the table's identity hands out, one nextval each; None where it
        hands them out one at a time."""
        sql = self.engine.identity_blocks_sql(table)
        return self.engine.compile(sql) if sql is not None else None

    @cached
    def register_unpublished(self, table: TableName) -> Statement:
        e = self.engine
        q = e.quote
        return e.compile(
            f"INSERT INTO {e.table(self.schema.unpublished(table))} "
            f"({q(STAGE_TAG.name)}, {q('id_after')}, {q('id_upto')}, {q('row_count')}) "
            "VALUES (:tag, :id_after, :id_upto, :row_count)"
        )

    def _tag_range(self, table: TableName, hints: str = "") -> str:
        tag = self.engine.quote(STAGE_TAG.name)
        return f"{self.engine.table(table)}{hints} WHERE {tag} >= :lo AND {tag} <= :hi"

    @cached
    def unpublished_in(self, table: TableName) -> Statement:
        """The unpublished tags in [lo, hi], with where their rows are and how many."""
        e = self.engine
        q = e.quote
        return e.compile(
            f"SELECT {q(STAGE_TAG.name)}, {q('id_after')}, {q('id_upto')}, {q('row_count')} "
            f"FROM {self._tag_range(self.schema.unpublished(table))}"
        )

    @cached
    def delete_unpublished_rows(self, table: TableName, ranged: bool) -> Statement:
        """The queue rows of one unpublished tag (a batch that will not be published): ``ranged``,
        those in the id range the tag recorded, a primary-key seek; else wherever they are."""
        e = self.engine
        q = e.quote
        where = f"{q(STAGE_TAG.name)} = :tag"
        if ranged:
            where = f"{q('id')} > :id_after AND {q('id')} <= :id_upto AND {where}"
        return e.compile(f"DELETE FROM {e.table(table)}{e.row_lock_hints()} WHERE {where}")

    @cached
    def delete_unpublished(self, table: TableName) -> Statement:
        """One unpublished tag: its rows become claimable, unless deleted first."""
        e = self.engine
        return e.compile(
            f"DELETE FROM {e.table(self.schema.unpublished(table))}{e.row_lock_hints()} "
            f"WHERE {e.quote(STAGE_TAG.name)} = :tag"
        )

    @cached
    def delete_staged(self, staging: TableName) -> Statement:
        """Rows of the staging table ``staging`` whose tag lies in [lo, hi]."""
        return self.engine.compile(f"DELETE FROM {self._tag_range(staging, self.engine.row_lock_hints())}")

    @cached
    def count_staged(self, staging: TableName) -> Statement:
        """Rows one task staged in ``staging``, all of which publish must find."""
        e = self.engine
        return e.compile(f"SELECT COUNT(*) FROM {e.table(staging)} WHERE {e.quote(STAGE_TAG.name)} = :tag")

    @cached
    def count_unpublished(self, table: TableName) -> Statement:
        """Rows of sink batches not published into sqlqueue's own table: in it under listed tags, and staged."""
        e = self.engine
        return e.compile(
            f"SELECT (SELECT COUNT(*) FROM {e.table(self.schema.staging(table))}) + "
            f"(SELECT COALESCE(SUM({e.quote('row_count')}), 0) FROM {e.table(self.schema.unpublished(table))})"
        )

    # ---- publish, into either kind of table ------------------------------------------------------------
    def staging_beside(self, table: TableName) -> TableName:
        """sqlqueue's staging table beside an adopted ``table`` (its name says whose it is, as the claims
        table's does); sqlqueue's own layout has its own (Schema.staging): the kind picks (TableKind.staging)."""
        return self.lifecycle.beside(table, "staging")

    def create_adopted_staging(self, table: TableName, columns: Sequence[tuple[str, str]]) -> list[str]:
        """The staging table for ``table``: the tag, then ``columns`` (name, exact type as the table has it),
        nullable: publish inserts only the columns a batch has, so the table's defaults and checks apply."""
        lines = [self.engine.column_sql(STAGE_TAG), *self.adoption.copied_columns(columns)]
        return self.schema.staging_statements(self.lifecycle.beside(table, "staging"), lines)

    @cached
    def defaults(self, table: TableName) -> Statement:
        return self.engine.compile(self.engine.defaults_sql(table))

    @cached
    def local_offset(self) -> Statement:
        return self.engine.compile(self.engine.local_offset_sql())

    def new_row(self, profile: Profile, given: Sequence[str]) -> dict[str, str]:
        """{column: SQL value} the profile writes into a new row besides the ``given`` columns: the first
        ready status, no attempt, the token now, due and enqueued now where the rows leave them NULL or
        out, and NULL where the profile reads NULL as ready (done-at; the claimer, or the started-at mark,
        without a status), whatever the table's defaults say. A key column is never filled: rows enqueued
        together would share its value. (sqlqueue's own table gives a new row all that by its defaults:
        its kind asks none, TableKind.new_row.)"""
        q, now = self.engine.quote, self.lifecycle.clock(profile)
        named = {c.lower(): c for c in given}
        keys = {k.lower() for k in profile.key}
        values: dict[str, str] = {}
        for column in (profile.due, profile.enqueued):
            if column is not None and column.lower() not in keys:
                spelled = named.get(column.lower())
                values[spelled or column] = f"COALESCE({q(spelled)}, {now})" if spelled else now
        if profile.status is not None and profile.ready:
            values[profile.status] = self.engine.literal(profile.ready[0])
        if profile.attempts is not None:
            values[profile.attempts] = "0"
        if profile.token is not None:
            values[profile.token] = now
        for column in self._open_marks(profile):
            values[column] = "NULL"
        return values

    @staticmethod
    def _open_marks(profile: Profile) -> list[str]:
        """The columns whose NULL the profile's ready predicate reads (Claims.ready)."""
        if profile.take:
            return [profile.done_at] if profile.done_at else []
        marks = [profile.done_at]
        if profile.status is None:
            marks.append(profile.claimer if profile.claimer is not None else profile.started)
        return [c for c in marks if c is not None]

    @cached
    def publish_subtype(self, subtype: TableName, columns: tuple[str, ...]) -> Statement:
        """Insert one task's staged rows (:tag) of a subtype table (Profile.include), ``columns`` of them (its
        key among them), in the transaction that publishes their base rows, after them: the foreign key
        finds each base row, and no reader sees a base row without its subtype rows."""
        e = self.engine
        q = e.quote
        names, staging = ", ".join(q(c) for c in columns), e.table(self.staging_beside(subtype))
        return e.compile(
            f"INSERT INTO {e.table(subtype)} ({names}) SELECT {names} FROM {staging} WHERE {q(STAGE_TAG.name)} = :tag"
        )

    @cached
    def publish(
        self,
        table: TableName,
        staging: TableName,
        columns: tuple[str, ...],
        dedup: bool,
        new_row: tuple[tuple[str, str], ...] = (),
    ) -> Statement:
        """Insert one task's staged rows (:tag) of ``columns`` from ``staging`` into the table, as new ready
        rows: ``new_row`` (column, SQL value) pairs fill what the profile writes into a new row (Sink.new_row;
        none where the table's defaults do); with ``dedup`` (a table with dedup keys, rows that carry one),
        keyed rows with a dedup key it does not hold yet only (a batch's keys are checked when it is
        published)."""
        e = self.engine
        q = e.quote
        where = f"{q(STAGE_TAG.name)} = :tag"
        if dedup:
            return e.compile(e.insert_new_keys(table, columns, e.table(staging), where))
        values = {**{c: q(c) for c in columns}, **dict(new_row)}
        names = ", ".join(q(c) for c in values)
        return e.compile(
            f"INSERT INTO {e.table(table)} ({names}) SELECT {', '.join(values.values())} FROM {e.table(staging)} "
            f"WHERE {where}"
        )
