"""Claim statements: which rows are claimable, the claim itself, reading and completing a claim,
the backlog, and the queue wait of a claim's rows."""

from __future__ import annotations

from collections.abc import Sequence

from ...identifiers import TableName
from ...profile import NATIVE
from ...schema import (
    ORDERS,
    STAGE_TAG,
)
from ..engine import Statement, cached
from .lifecycle import RANGE, UPTO, Holding, Lifecycle
from .schema import Schema


class Claims(Schema, Lifecycle):
    def ready_predicate(self, table: TableName, bounded: bool) -> str:
        """Rows a claim may take: ready, due, and not part of a sink batch Spark has yet to commit.

        Rows of unpublished batches sit in the ready index like any other; the tag test skips them
        with one primary-key probe each, and only rows a sink wrote carry a tag until claimed.
        """
        q, ready = self.quote, NATIVE.ready[0]
        where = (
            f"{q(str(NATIVE.status))} = '{ready}' AND {q(str(NATIVE.due))} <= {self.now()} "
            f"AND ({self._row_tag(table)} IS NULL OR NOT EXISTS ({self._listed_tag(table)}))"
        )
        return where + (f" AND {q('id')} <= :max_id" if bounded else "")

    def _row_tag(self, table: TableName) -> str:
        """A table's tag column, qualified: the queue and its unpublished list both have one."""
        return f"{self.quote(table.name)}.{self.quote(STAGE_TAG.name)}"

    def _listed_tag(self, table: TableName) -> str:
        """A subquery with a row when the current row of ``table`` belongs to an unpublished batch.

        No alias: the two table names differ by construction, where an alias could equal the
        queue's name. The list is read as last committed, like the queue rows it hides.
        """
        unpublished = self.unpublished(table)
        return (
            f"SELECT 1 FROM {self.table(unpublished)}{self.committed_read_hints()} "
            f"WHERE {self._row_tag(unpublished)} = {self._row_tag(table)}"
        )

    @cached
    def claim(self, table: TableName, order: str, strict: bool, bounded: bool) -> Statement:
        """What the profile's claim writes, then the lease's end and the tag cleared: a claimed row
        belongs to no sink batch any more."""
        q = self.quote
        set_sql = (
            f"{self.claim_sets(NATIVE)}, {q('lease_until')} = {self.now_plus('lease_seconds')}, "
            f"{q(STAGE_TAG.name)} = NULL"
        )
        return self.compile(self.claim_sql(table, set_sql, self.ready_predicate(table, bounded), order, strict))

    def ordered_by(self, order: str) -> str:
        """The ORDER BY list of a native claim order."""
        return self.order_by(ORDERS[order])

    @cached
    def count_held(self, holding: Holding) -> Statement:
        return self.compile(f"SELECT COUNT(*) FROM {self.table(holding.table)} WHERE {self.held(holding)}")

    @cached
    def partition_bounds(self, holding: Holding, parts: int) -> Statement:
        """Split the rows of claims (after_seq, upto_seq] into ``parts`` row ranges of equal size.

        ``parts`` is a validated int written as a literal: NTILE takes no parameter marker in every
        engine's parser.
        """
        q, row = self.quote, self.quote(holding.row)
        inner = (
            f"SELECT {row}, NTILE({int(parts)}) OVER (ORDER BY {row}) AS {q('part')} "
            f"FROM {self.table(holding.table)} WHERE {self.held(holding, RANGE)}"
        )
        return self.compile(
            f"SELECT MIN(t.{row}) AS {q('lo')}, MAX(t.{row}) AS {q('hi')} FROM ({inner}) AS t "
            f"GROUP BY t.{q('part')} ORDER BY {q('lo')}"
        )

    @cached
    def read_claimed(self, holding: Holding, columns: Sequence[str]) -> Statement:
        cols = ", ".join(self.quote(c) for c in columns)
        return self.compile(
            f"SELECT {cols} FROM {self.table(holding.table)} WHERE {self.held(holding, RANGE)} "
            f"AND {self.quote(holding.row)} BETWEEN :lo AND :hi"
        )

    @cached
    def complete(self, table: TableName, keep: bool, limited: bool) -> Statement:
        """Finish the rows of claims up to ``:upto_seq``: delete them, or mark them done."""
        q, where = self.quote, self.held(self.holding(table, NATIVE), UPTO)
        if keep:
            set_sql = f"{self.done_sets(NATIVE)}, {q('lease_until')} = NULL"
            return self.compile(self.limited_update(table, set_sql, where, limited))
        return self.compile(self.limited_delete(table, where, limited))

    @cached
    def count_ready(self, table: TableName) -> Statement:
        """The backlog; rows being claimed or written are skipped rather than waited for."""
        return self.compile(
            f"SELECT COUNT(*) FROM {self.table(table)}{self.skip_locked_hints()} "
            f"WHERE {self.ready_predicate(table, False)}"
        )

    @cached
    def max_ready_id(self, table: TableName) -> Statement:
        return self.compile(
            f"SELECT MAX({self.quote('id')}) FROM {self.table(table)}{self.skip_locked_hints()} "
            f"WHERE {self.ready_predicate(table, False)}"
        )

    @cached
    def backlog(self, table: TableName) -> Statement:
        """The ready rows a claim could take now, and the age in ms of the oldest (NULL when none),
        in the one pass over the ready rows that ``count_ready`` makes. Exact where a probe of the
        lowest ready id is not: with 1M done rows kept, that probe walked the primary key for
        130-180 ms on a queue whose ready index is by priority or due time, against 6-9 ms more than
        the count for the minimum here (PostgreSQL, JIT off)."""
        age = self.millis_between(f"MIN({self.quote('enqueued_at')})", self.now())
        return self.compile(
            f"SELECT COUNT(*), {age} FROM {self.table(table)}{self.skip_locked_hints()} "
            f"WHERE {self.ready_predicate(table, False)}"
        )

    # A row's wait is claimed_at - enqueued_at, both from the database's clock. The percentiles are
    # ranked in the database and come back as one row: the nearest rank, the value at rank
    # ceil(p * n) in wait order (what PostgreSQL's percentile_disc returns). On a 50,000-row
    # PostgreSQL claim, ranking took 30 ms with percentile_disc and 53-56 ms with ROW_NUMBER, and
    # fetching the waits to rank them in Python 66 ms; a claim returning each wait beside its id took
    # 29-40 ms longer than the claim (benchmarks/bench_wait.py). So the claim statement stays as it
    # was, and a claim made ahead ranks its waits in the prefetch thread, off the batch's path.
    def _wait_figures(self, table: TableName, enqueued: str, claimed: str, where: str, hints: str = "") -> str:
        """One row for the rows ``where`` selects: how many, the p50 and p95 of their waits (``claimed``
        minus ``enqueued``) and the longest (ms; NULL when no row matches)."""
        wait = self.millis_between(self.quote(enqueued), self.quote(claimed))
        return self.rank_waits(
            f"SELECT {wait} AS {self.quote('wait_ms')} FROM {self.table(table)}{hints} WHERE {where}"
        )

    def rank_waits(self, waits: str) -> str:
        """(count, p50, p95, max) of the column wait_ms of the query ``waits``, with ROW_NUMBER and
        COUNT(*) OVER (), which every engine has: SQLite has no percentile function, and SQL Server
        documents PERCENTILE_DISC as an analytic function, PERCENTILE_DISC (p) WITHIN GROUP (ORDER BY
        ...) OVER (...), one value per input row (learn.microsoft.com/sql/t-sql/functions/percentile-disc-transact-sql).
        Ranks ceil(n / 2) and ceil(19 n / 20) are integer arithmetic, the same in every engine."""
        q = self.quote
        ranked = (
            f"SELECT v.{q('wait_ms')}, ROW_NUMBER() OVER (ORDER BY v.{q('wait_ms')}) AS {q('wait_rank')}, "
            f"COUNT(*) OVER () AS {q('n')} FROM ({waits}) AS v"
        )
        w, r, n = f"w.{q('wait_ms')}", f"w.{q('wait_rank')}", f"w.{q('n')}"
        return (
            f"SELECT MAX({n}), MAX(CASE WHEN {r} = ({n} + 1) / 2 THEN {w} END), "
            f"MAX(CASE WHEN {r} = (19 * {n} + 19) / 20 THEN {w} END), MAX({w}) FROM ({ranked}) AS w"
        )

    @cached
    def claim_waits(self, holding: Holding) -> Statement | None:
        """The wait figures of the rows one consumer holds under one claim (a micro-batch), read
        through the index of claimed rows; None where the holding records no enqueue or claim time."""
        if holding.enqueued is None or holding.claimed is None:
            return None
        return self.compile(self._wait_figures(holding.table, holding.enqueued, holding.claimed, self.held(holding)))
