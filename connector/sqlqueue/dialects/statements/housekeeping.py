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
from ..engine import Statement, cached
from .lifecycle import Lifecycle

# sqlqueue's own layout's states, as its profile names them.
READY, CLAIMED, FAILED = NATIVE.ready[0], str(NATIVE.in_flight), str(NATIVE.failed)


class Housekeeping(Lifecycle):
    def _in_state(self, state: str) -> str:
        """A row of sqlqueue's own layout in ``state`` (a value of its profile's status)."""
        return self.status_in(NATIVE, (state,))

    def _give_back(self, error: str, failed_at: str) -> str:
        """SET list that returns a claimed row to the queue, or fails it once its attempts are spent.

        A failed row keeps the consumer and claim number that gave up on it, and records when in
        ``completed_at`` (its fail time, ``failed_at`` in the dead-letter table): the SQL expression
        ``failed_at``, read before the SET applies.
        """
        q = self.quote
        spent = f"{q('attempts')} >= COALESCE({q('max_attempts')}, :max_attempts)"
        return (
            f"{q(str(NATIVE.status))} = CASE WHEN {spent} THEN {self.literal(FAILED)} ELSE {self.literal(READY)} END, "
            f"{q('consumer')} = CASE WHEN {spent} THEN {q('consumer')} ELSE NULL END, "
            f"{q('claim_seq')} = CASE WHEN {spent} THEN {q('claim_seq')} ELSE NULL END, "
            f"{q('completed_at')} = CASE WHEN {spent} THEN {failed_at} ELSE NULL END, "
            f"{q('lease_until')} = NULL, {q('last_error')} = {error}"
        )

    @cached
    def rescue_expired(self, table: TableName, limited: bool) -> Statement:
        """Claimed rows whose lease ran out (their consumer died) go back to the queue, or fail."""
        q = self.quote
        where = f"{self._in_state(CLAIMED)} AND {q('lease_until')} < {self.now()}"
        # A row whose last lease ran out failed then, not when some consumer came to notice: that can
        # be up to a quarter of the lease later, or hours later when no consumer ran meanwhile.
        set_sql = self._give_back("'lease expired'", q("lease_until"))
        return self.compile(self.limited_update(table, set_sql, where, limited))

    def _one_claimed_row(self, fenced: bool) -> str:
        """Only a row still claimed: applying an acknowledgement twice changes nothing the second time.
        ``fenced``: and still under the claim that delivered it, its attempts being the claim's token (every
        claim adds one), so an acknowledgement that comes after the row's lease ran out and another
        claim took it changes nothing (Kleppmann's fencing token)."""
        q = self.quote
        token = f" AND {q('attempts')} = :attempts" if fenced else ""
        return f"{q('id')} = :id AND {self._in_state(CLAIMED)}{token}"

    @cached
    def ack_retry(self, table: TableName, fenced: bool) -> Statement:
        """One claimed row back to the queue after ``:delay_seconds``, with its error, or failed."""
        set_sql = self._give_back(":error", self.now()) + f", {self.quote('due_at')} = {self.now_plus('delay_seconds')}"
        return self.compile(self.limited_update(table, set_sql, self._one_claimed_row(fenced), False))

    @cached
    def ack_failed(self, table: TableName, fenced: bool) -> Statement:
        q = self.quote
        set_sql = (
            f"{q(str(NATIVE.status))} = {self.literal(FAILED)}, {q('last_error')} = :error, "
            f"{q('completed_at')} = {self.now()}, "
            f"{q('lease_until')} = NULL"
        )
        return self.compile(self.limited_update(table, set_sql, self._one_claimed_row(fenced), False))

    @cached
    def ack_done(self, table: TableName, keep: bool, fenced: bool) -> Statement:
        where = self._one_claimed_row(fenced)
        if keep:
            return self.compile(self.limited_update(table, self.done_sets(NATIVE), where, False))
        return self.compile(self.limited_delete(table, where, False))

    @cached
    def purge(self, table: TableName, state: str, limited: bool) -> Statement:
        """Finished rows (done or failed) completed before ``:cutoff``, a chunk at a time."""
        q = self.quote
        where = f"{self._in_state(state)} AND {q('completed_at')} < :cutoff"
        return self.compile(self.limited_delete(table, where, limited))

    @cached
    def requeue_failed(self, table: TableName, by: str) -> Statement:
        """Failed rows back to ready with fresh attempts: one by ``id`` or ``dedup_key``, or ``all``."""
        q = self.quote
        set_sql = (
            f"{q(str(NATIVE.status))} = {self.literal(READY)}, {q('attempts')} = 0, {q('due_at')} = {self.now()}, "
            f"{q('consumer')} = NULL, "
            f"{q('claim_seq')} = NULL, {q('completed_at')} = NULL"
        )
        # Rows a move to the dead-letter table has tagged are on their way there: redrive them from it.
        where = f"{self._in_state(FAILED)} AND {q(STAGE_TAG.name)} IS NULL" + (
            "" if by == "all" else f" AND {q(by)} = :{by}"
        )
        return self.compile(f"UPDATE {self.table(table)}{self.row_lock_hints()} SET {set_sql} WHERE {where}")

    def _failed_untagged(self) -> str:
        q = self.quote
        return f"{self._in_state(FAILED)} AND {q(STAGE_TAG.name)} IS NULL"

    def _failed_tagged(self) -> str:
        q = self.quote
        return f"{self._in_state(FAILED)} AND {q(STAGE_TAG.name)} = :tag AND {q('id')} BETWEEN :lo AND :hi"

    def dead_letter_mark_sql(self, table: TableName, set_sql: str, where: str) -> str:
        """UPDATE of up to ``:limit`` rows matching ``where`` that skips locked rows and returns the ids:
        the heap claim's shape, which reads no index of ready rows."""
        return self.claim_sql(table, set_sql, where, "", False)

    @cached
    def mark_dead_letters(self, table: TableName) -> Statement:
        """Tag up to ``:limit`` failed rows no move holds with ``:tag``; returns their ids."""
        set_sql = f"{self.quote(STAGE_TAG.name)} = :tag"
        return self.compile(self.dead_letter_mark_sql(table, set_sql, self._failed_untagged()))

    @cached
    def pending_dead_letters(self, table: TableName) -> Statement:
        """The tags in [lo, hi] of failed rows a move tagged and has not deleted, with their id range and
        count, oldest first. Read as committed, waiting for locked rows: a row skipped here would be
        taken for moved."""
        q, tag = self.quote, self.quote(STAGE_TAG.name)
        return self.compile(
            f"SELECT {tag}, MIN({q('id')}), MAX({q('id')}), COUNT(*) FROM {self.table(table)}"
            f"{self.committed_read_hints()} WHERE {self._in_state(FAILED)} AND {tag} >= :lo AND {tag} <= :hi "
            f"GROUP BY {tag} ORDER BY {tag}"
        )

    @cached
    def read_dead_letters(self, table: TableName, columns: Sequence[str]) -> Statement:
        """The rows of one move's tag, in id order."""
        cols = ", ".join(self.quote(c) for c in columns)
        return self.compile(
            f"SELECT {cols} FROM {self.table(table)} WHERE {self._failed_tagged()} ORDER BY {self.quote('id')}"
        )

    @cached
    def delete_dead_letters(self, table: TableName) -> Statement:
        """The rows of one move's tag, once Delta holds them."""
        return self.compile(self.limited_delete(table, self._failed_tagged(), False))
