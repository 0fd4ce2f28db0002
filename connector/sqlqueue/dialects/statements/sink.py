"""Sink statements: unpublished and staged batches, and the ledger.

A sink task writes its rows into the queue table under a stage tag of writer, batch, run and task,
and lists the tag as unpublished; the commit deletes the batch's tags from that list in one
transaction that also records the batch in the ledger. Batches with dedup keys are staged in the
staging table instead and copied into the queue by the commit. Stage tags of one batch share a
prefix; ``:lo``/``:hi`` bounds select a prefix as a range, which seeks the tag index (a LIKE would
not on every engine and collation).
"""

from __future__ import annotations

from ...identifiers import TableName
from ...schema import (
    STAGE_TAG,
)
from ..engine import Statement, cached
from .schema import Schema


class Sink(Schema):
    def _writer_batches(self, table: TableName, batch: str) -> str:
        """FROM the ledger, WHERE: one writer's batches into one queue, ``batch`` picking which."""
        q = self.quote
        return (
            f"{self.table(self.ledger(table))} "
            f"WHERE {q('queue_name')} = :queue AND {q('writer_id')} = :writer AND {q('batch_id')} {batch}"
        )

    @cached
    def ledger_contains(self, table: TableName) -> Statement:
        return self.compile(f"SELECT COUNT(*) FROM {self._writer_batches(table, '= :batch')}")

    @cached
    def ledger_record(self, table: TableName) -> Statement:
        q = self.quote
        return self.compile(
            f"INSERT INTO {self.table(self.ledger(table))} "
            f"({q('queue_name')}, {q('writer_id')}, {q('batch_id')}, {q('row_count')}) "
            "VALUES (:queue, :writer, :batch, :row_count)"
        )

    @cached
    def ledger_prune(self, table: TableName) -> Statement:
        return self.compile(f"DELETE FROM {self._writer_batches(table, '< :before')}")

    @cached
    def ledger_last(self, table: TableName) -> Statement:
        """One writer's highest batch in the ledger (a redrive publishes its chunks in order)."""
        return self.compile(f"SELECT MAX({self.quote('batch_id')}) FROM {self._writer_batches(table, '>= 0')}")

    @cached
    def last_id(self, table: TableName) -> Statement:
        """The highest id so far: the rows a task inserts after reading it have higher ones.

        Rows other writers hold locked are skipped rather than waited for; they are older anyway.
        """
        return self.compile(
            f"SELECT COALESCE(MAX({self.quote('id')}), 0) FROM {self.table(table)}{self.skip_locked_hints()}"
        )

    @cached
    def register_unpublished(self, table: TableName) -> Statement:
        q = self.quote
        return self.compile(
            f"INSERT INTO {self.table(self.unpublished(table))} "
            f"({q(STAGE_TAG.name)}, {q('id_after')}, {q('id_upto')}, {q('row_count')}) "
            "VALUES (:tag, :id_after, :id_upto, :row_count)"
        )

    def _tag_range(self, table: TableName, hints: str = "") -> str:
        tag = self.quote(STAGE_TAG.name)
        return f"{self.table(table)}{hints} WHERE {tag} >= :lo AND {tag} <= :hi"

    @cached
    def unpublished_in(self, table: TableName) -> Statement:
        """The unpublished tags in [lo, hi], with where their rows are and how many."""
        q = self.quote
        return self.compile(
            f"SELECT {q(STAGE_TAG.name)}, {q('id_after')}, {q('id_upto')}, {q('row_count')} "
            f"FROM {self._tag_range(self.unpublished(table))}"
        )

    @cached
    def delete_unpublished_rows(self, table: TableName, ranged: bool) -> Statement:
        """The queue rows of one unpublished tag (a batch that will not be published): ``ranged``,
        those in the id range the tag recorded, a primary-key seek; else wherever they are."""
        q = self.quote
        where = f"{q(STAGE_TAG.name)} = :tag"
        if ranged:
            where = f"{q('id')} > :id_after AND {q('id')} <= :id_upto AND {where}"
        return self.compile(f"DELETE FROM {self.table(table)}{self.row_lock_hints()} WHERE {where}")

    @cached
    def delete_unpublished(self, table: TableName) -> Statement:
        """One unpublished tag: its rows become claimable, unless deleted first."""
        return self.compile(
            f"DELETE FROM {self.table(self.unpublished(table))}{self.row_lock_hints()} "
            f"WHERE {self.quote(STAGE_TAG.name)} = :tag"
        )

    @cached
    def delete_staged(self, staging: TableName) -> Statement:
        """Rows of the staging table ``staging`` whose tag lies in [lo, hi]."""
        return self.compile(f"DELETE FROM {self._tag_range(staging, self.row_lock_hints())}")

    @cached
    def count_staged(self, staging: TableName) -> Statement:
        """Rows one task staged in ``staging``, all of which publish must find."""
        tag = self.quote(STAGE_TAG.name)
        return self.compile(f"SELECT COUNT(*) FROM {self.table(staging)} WHERE {tag} = :tag")

    @cached
    def count_unpublished(self, table: TableName) -> Statement:
        """Rows of sink batches not published into sqlqueue's own table: in it under listed tags, and staged."""
        return self.compile(
            f"SELECT (SELECT COUNT(*) FROM {self.table(self.staging(table))}) + "
            f"(SELECT COALESCE(SUM({self.quote('row_count')}), 0) FROM {self.table(self.unpublished(table))})"
        )
