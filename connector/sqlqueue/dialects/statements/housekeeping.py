"""Housekeeping statements: leases that ran out, per-row acknowledgements, purge, requeue, and
the move of failed rows to the dead-letter table.

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
    """What keeps sqlqueue's own table healthy: expired leases, acknowledgements, purge, requeue, and the
    move of failed rows to the dead-letter table."""

    def __init__(self, engine: Engine, lifecycle: Lifecycle) -> None:
        self.engine, self.lifecycle = engine, lifecycle

    def _in_state(self, state: str) -> str:
        """A row of sqlqueue's own layout in ``state`` (a value of its profile's status)."""
        return self.lifecycle.status_in(NATIVE, (state,))

    def _give_back(self, error: str, failed_at: str) -> str:
        """SET list that returns a claimed row to the queue, or fails it once its attempts are spent.

        A failed row keeps the consumer and claim number that gave up on it, and records when in
        ``completed_at`` (its fail time, ``failed_at`` in the dead-letter table): the SQL expression
        ``failed_at``, read before the SET applies.
        """
        q, literal = self.engine.quote, self.engine.literal
        spent = f"{q('attempts')} >= COALESCE({q('max_attempts')}, :max_attempts)"
        return (
            f"{q(str(NATIVE.status))} = CASE WHEN {spent} THEN {literal(FAILED)} ELSE {literal(READY)} END, "
            f"{q('consumer')} = CASE WHEN {spent} THEN {q('consumer')} ELSE NULL END, "
            f"{q('claim_seq')} = CASE WHEN {spent} THEN {q('claim_seq')} ELSE NULL END, "
            f"{q('completed_at')} = CASE WHEN {spent} THEN {failed_at} ELSE NULL END, "
            f"{q('lease_until')} = NULL, {q('last_error')} = {error}"
        )

    @cached
    def rescue_expired(self, table: TableName, limited: bool) -> Statement:
        """Claimed rows whose lease ran out (their consumer died) go back to the queue, or fail."""
        e = self.engine
        where = f"{self._in_state(CLAIMED)} AND {e.quote('lease_until')} < {e.now()}"
        # A row whose last lease ran out failed then, not when some consumer came to notice: that can
        # be up to a quarter of the lease later, or hours later when no consumer ran meanwhile.
        set_sql = self._give_back("'lease expired'", e.quote("lease_until"))
        return e.compile(e.limited_update(table, set_sql, where, limited))

    def _one_claimed_row(self, fenced: bool) -> str:
        """Only a row still claimed: applying an acknowledgement twice changes nothing the second time.
        ``fenced``: and still under the claim that delivered it, its attempts being the claim's token (every
        claim adds one), so an acknowledgement that comes after the row's lease ran out and another
        claim took it changes nothing (Kleppmann's fencing token)."""
        q = self.engine.quote
        token = f" AND {q('attempts')} = :attempts" if fenced else ""
        return f"{q('id')} = :id AND {self._in_state(CLAIMED)}{token}"

    @cached
    def ack_retry(self, table: TableName, fenced: bool) -> Statement:
        """One claimed row back to the queue after ``:delay_seconds``, with its error, or failed."""
        e = self.engine
        set_sql = self._give_back(":error", e.now()) + f", {e.quote('due_at')} = {e.now_plus('delay_seconds')}"
        return e.compile(e.limited_update(table, set_sql, self._one_claimed_row(fenced), False))

    @cached
    def ack_failed(self, table: TableName, fenced: bool) -> Statement:
        e = self.engine
        q = e.quote
        set_sql = (
            f"{q(str(NATIVE.status))} = {e.literal(FAILED)}, {q('last_error')} = :error, "
            f"{q('completed_at')} = {e.now()}, "
            f"{q('lease_until')} = NULL"
        )
        return e.compile(e.limited_update(table, set_sql, self._one_claimed_row(fenced), False))

    @cached
    def ack_done(self, table: TableName, keep: bool, fenced: bool) -> Statement:
        e, where = self.engine, self._one_claimed_row(fenced)
        if keep:
            return e.compile(e.limited_update(table, self.lifecycle.done_sets(NATIVE), where, False))
        return e.compile(e.limited_delete(table, where, False))

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
