"""Claim statements: which rows are claimable, the claim itself, reading and completing a claim,
the backlog, and the queue wait of a claim's rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...identifiers import TableName
from ...profile import NATIVE, Profile
from ...schema import (
    ORDERS,
    STAGE_TAG,
)
from ..engine import Statement, cached
from .schema import Schema

# The claims table's own columns; an adopted table's columns follow them under their own names.
ROW, CONSUMER, SEQ = "sqlqueue_row", "sqlqueue_consumer", "sqlqueue_claim_seq"

# Which claims a held-rows condition selects: one claim number, a range (after, upto], or every one up
# to a number.
ONE, RANGE, UPTO = "one", "range", "upto"


@dataclass(frozen=True)
class Holding:
    """Where the rows of a table's claims are held. A claim records (consumer, claim number) with each
    row it takes: on the row itself in sqlqueue's own layout, in a copy of the row in the claims table
    beside an adopted table. Reading a claim, its queue wait and its completion find the rows here."""

    table: TableName
    consumer: str
    seq: str
    # An integer column that orders the held rows, so that a read splits them into ranges.
    row: str
    # (column, value) every held row has too, where that lets the engine seek an index of them.
    state: tuple[str, str] | None
    # When the row was enqueued and when it was claimed, for the queue wait (None: not recorded).
    enqueued: str | None
    claimed: str | None


class Claims(Schema):
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

    def clock(self, profile: Profile) -> str:
        """The current time in the clock the table's times are written in."""
        return self.local_now() if profile.clock == "local" else self.now()

    def claim_sets(self, profile: Profile) -> str:
        """What a claim writes on a row: in flight, started now, one more attempt, by whom."""
        q, now = self.quote, self.clock(profile)
        sets = []
        if profile.status is not None:
            sets.append(f"{q(profile.status)} = {self.literal(profile.in_flight or '')}")
        if profile.started is not None:
            sets.append(f"{q(profile.started)} = {now}")
        if profile.attempts is not None:
            sets.append(f"{q(profile.attempts)} = {q(profile.attempts)} + 1")
        if profile.claimer is not None:
            sets.append(f"{q(profile.claimer)} = :consumer")
        if profile.claim_seq is not None:
            sets.append(f"{q(profile.claim_seq)} = :seq")
        if profile.token is not None:
            sets.append(f"{q(profile.token)} = {now}")
        return ", ".join(sets)

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

    def order_by(self, order: str) -> str:
        return ", ".join(f"{self.quote(c)} {d}" for c, d in ORDERS[order])

    def claims_table(self, table: TableName) -> TableName:
        return TableName(f"{table.name}_sqlqueue_claims", table.schema)

    def holding(self, table: TableName, profile: Profile) -> Holding:
        """Where ``profile`` holds a claim's rows. Rows that carry their bookkeeping (sqlqueue's own
        layout) are held in place, in flight with the consumer and claim number. An adopted table's are
        copies in its claims table, under sqlqueue's own columns; the copies keep the table's enqueue
        time and the started-at the claim wrote."""
        if profile.claim_seq is not None:
            in_flight = (str(profile.status), str(profile.in_flight)) if profile.status else None
            return Holding(
                table, str(profile.claimer), profile.claim_seq, profile.key[0], in_flight, profile.enqueued,
                profile.started,
            )  # fmt: skip
        return Holding(self.claims_table(table), CONSUMER, SEQ, ROW, None, profile.enqueued, profile.started)

    def held(self, holding: Holding, claims: str = ONE) -> str:
        """Rows a consumer holds under the claims ``claims`` names (ONE, RANGE or UPTO).

        A state test first lets the engine seek the filtered index of claimed rows.
        """
        q = self.quote
        state = f"{q(holding.state[0])} = '{holding.state[1]}' AND " if holding.state else ""
        held = f"{state}{q(holding.consumer)} = :consumer AND {q(holding.seq)}"
        if claims == ONE:
            return f"{held} = :seq"
        if claims == UPTO:
            return f"{held} <= :upto_seq"
        return f"{held} > :after_seq AND {q(holding.seq)} <= :upto_seq"

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

    def done_sets(self, profile: Profile) -> str:
        q, now = self.quote, self.clock(profile)
        sets = []
        if profile.status is not None and profile.done is not None:
            sets.append(f"{q(profile.status)} = {self.literal(profile.done)}")
        if profile.done_at is not None:
            sets.append(f"{q(profile.done_at)} = {now}")
        if profile.duration is not None and profile.started is not None:
            sets.append(f"{q(profile.duration)} = {self.millis_between(q(profile.started), now)}")
        if profile.token is not None:
            sets.append(f"{q(profile.token)} = {now}")
        return ", ".join(sets)

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
