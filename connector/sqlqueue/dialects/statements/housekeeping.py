"""Housekeeping statements: leases that ran out, purge, requeue, and the move of failed rows to the
dead-letter table.

A move to the dead-letter table tags a chunk of failed rows in one transaction (stage_tag, which
failed rows otherwise never carry: a claim clears it), appends them to Delta under the tag's number,
then deletes them. No index holds failed rows (that would be a layout change), so the mark reads the
table past rows other sessions hold; the tagged rows are then found by id range.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...identifiers import TableName
from ...profile import NATIVE
from ...schema import STAGE_TAG
from ..engine import Engine, Statement, cached
from .lifecycle import Lifecycle

# sqlqueue's own layout's states, as its profile names them.
READY, CLAIMED, FAILED = NATIVE.ready[0], str(NATIVE.in_flight), str(NATIVE.failed)


class Housekeeping:
    """What keeps sqlqueue's own table healthy: expired leases, purge, requeue, and the move of failed rows
    to the dead-letter table."""

    def __init__(self, engine: Engine, lifecycle: Lifecycle) -> None:
        self.engine, self.lifecycle = engine, lifecycle

    def _in_state(self, state: str) -> str:
        """A row of sqlqueue's own layout in ``state`` (a value of its profile's status)."""
        return self.lifecycle.status_in(NATIVE, (state,))

    @cached
    def rescue_expired(self, table: TableName, limited: bool) -> Statement:
        """Claimed rows whose lease ran out (their consumer died) go back to the queue, or fail."""
        e = self.engine
        where = f"{self._in_state(CLAIMED)} AND {e.quote('lease_until')} < {e.now()}"
        # A row whose last lease ran out failed then, not when some consumer came to notice: that can
        # be up to a quarter of the lease later, or hours later when no consumer ran meanwhile.
        set_sql = self.lifecycle.give_back(NATIVE, "'lease expired'", e.quote("lease_until"))
        return e.compile(e.limited_update(table, set_sql, where, limited))

    @cached
    def purge(self, table: TableName, state: str, limited: bool) -> Statement:
        """Finished rows (done or failed) completed before ``:cutoff``, a chunk at a time."""
        e = self.engine
        where = f"{self._in_state(state)} AND {e.quote('completed_at')} < :cutoff"
        return e.compile(e.limited_delete(table, where, limited))

    @cached
    def requeue_failed(self, table: TableName, by: str) -> Statement:
        """Failed rows back to ready with fresh attempts: one by ``id`` or ``dedup_key``, or ``all``."""
        e = self.engine
        q = e.quote
        set_sql = (
            f"{q(str(NATIVE.status))} = {e.literal(READY)}, {q('attempts')} = 0, {q('due_at')} = {e.now()}, "
            f"{q('consumer')} = NULL, "
            f"{q('claim_seq')} = NULL, {q('completed_at')} = NULL"
        )
        # Rows a move to the dead-letter table has tagged are on their way there: redrive them from it.
        where = f"{self._in_state(FAILED)} AND {q(STAGE_TAG.name)} IS NULL" + (
            "" if by == "all" else f" AND {q(by)} = :{by}"
        )
        return e.compile(f"UPDATE {e.table(table)}{e.row_lock_hints()} SET {set_sql} WHERE {where}")

    def _failed_untagged(self) -> str:
        q = self.engine.quote
        return f"{self._in_state(FAILED)} AND {q(STAGE_TAG.name)} IS NULL"

    def _failed_tagged(self) -> str:
        q = self.engine.quote
        return f"{self._in_state(FAILED)} AND {q(STAGE_TAG.name)} = :tag AND {q('id')} BETWEEN :lo AND :hi"

    @cached
    def mark_dead_letters(self, table: TableName) -> Statement:
        """Tag up to ``:limit`` failed rows no move holds with ``:tag``; returns their ids. The heap claim's
        shape, skipping locked rows, naming no index: none holds failed rows."""
        e = self.engine
        set_sql = f"{e.quote(STAGE_TAG.name)} = :tag"
        return e.compile(e.claim_sql(table, set_sql, self._failed_untagged(), "", False, None))

    @cached
    def pending_dead_letters(self, table: TableName) -> Statement:
        """The tags in [lo, hi] of failed rows a move tagged and has not deleted, with their id range and
        count, oldest first. Read as committed, waiting for locked rows: a row skipped here would be
        taken for moved."""
        e = self.engine
        q, tag = e.quote, e.quote(STAGE_TAG.name)
        return e.compile(
            f"SELECT {tag}, MIN({q('id')}), MAX({q('id')}), COUNT(*) FROM {e.table(table)}"
            f"{e.committed_read_hints()} WHERE {self._in_state(FAILED)} AND {tag} >= :lo AND {tag} <= :hi "
            f"GROUP BY {tag} ORDER BY {tag}"
        )

    @cached
    def read_dead_letters(self, table: TableName, columns: Sequence[str]) -> Statement:
        """The rows of one move's tag, in id order."""
        e = self.engine
        cols = ", ".join(e.quote(c) for c in columns)
        return e.compile(f"SELECT {cols} FROM {e.table(table)} WHERE {self._failed_tagged()} ORDER BY {e.quote('id')}")

    @cached
    def delete_dead_letters(self, table: TableName) -> Statement:
        """The rows of one move's tag, once Delta holds them."""
        return self.engine.compile(self.engine.limited_delete(table, self._failed_tagged(), False))
