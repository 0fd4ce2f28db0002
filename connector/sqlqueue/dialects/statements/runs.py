"""Runs: a claim of sqlqueue's own layout that writes nothing on the rows it takes.

Such a claim holds its rows as runs of consecutive ids in the claims table beside the queue
(lifecycle.runs_table) instead of marking each row: it reads the ids of up to :limit ready rows, then
records a row per run of consecutive ids. A claim that marks its rows rewrites every row it takes (a new
row version, its entries in the primary key and the index of claimed rows: five WAL records a row on
PostgreSQL), which made the claim the slowest stage of a drain into Delta (docs/evidence.md). The rows of
a run stay ready in the table; every claim passes over them (Claims.ready), and reading, completing and
sweeping a claim find them by its runs. No other row can ever be inside a run: ids are an identity that
never hands a number out twice, and a run holds only ids the claim took one after another.

Nothing locks the rows, so the claims of a table take turns (Engine.claim_turn, as grouped claims do): a
claim's read starts after the claim before it committed its runs, so it passes over them. Claims that
mark rows (Claims.claim) take the same turn, or one could mark a row a claim of runs has just read.
"""

from __future__ import annotations

from ...identifiers import TableName
from ...profile import NATIVE, Profile
from ..engine import Engine, Statement, cached
from .claims import Claims
from .lifecycle import CONSUMER, FIRST, LAST, LEASE, SEQ, TAKEN, Lifecycle, runs_table
from .schema import Schema


class Runs:
    """The statements of claims held as runs: the claim's read and its record, then completion, renewal
    and the sweep of runs whose lease ran out."""

    def __init__(self, engine: Engine, schema: Schema, lifecycle: Lifecycle, claims: Claims) -> None:
        self.engine, self.schema, self.lifecycle, self.claims = engine, schema, lifecycle, claims

    @cached
    def turn(self, table: TableName) -> Statement | None:
        """What a claim of ``table`` runs first in its transaction (Engine.claim_turn); None where the
        transaction itself excludes every other claim."""
        sql = self.engine.claim_turn(table)
        return self.engine.compile(sql) if sql is not None else None

    @cached
    def pick(self, table: TableName, profile: Profile, bound: str | None = None) -> Statement:
        """The ids of up to :limit ready rows (within ``bound``, as Claims.ready) in the profile's claim order,
        and each one's queue wait in ms, locking none of them."""
        e, lifecycle = self.engine, self.lifecycle
        q, now = e.quote, lifecycle.clock(profile)
        wait = e.millis_between(q(str(profile.enqueued)), now)
        order = lifecycle.order_by(profile.order)
        columns = f"{q(profile.key[0])}, {wait}"
        where = self.claims.ready(table, profile, bound)
        return e.compile(e.read_first(table, columns, where, order, self.schema.ready_index(table)))

    @cached
    def record(self, table: TableName) -> Statement:
        """A run of ids [:first, :last] :consumer's claim :seq holds, leased for :lease_seconds."""
        e = self.engine
        names = ", ".join(e.quote(c) for c in (CONSUMER, SEQ, FIRST, LAST, LEASE))
        return e.compile(
            f"INSERT INTO {e.table(runs_table(table))} ({names}) "
            f"VALUES (:consumer, :seq, :first, :last, {e.now_plus('lease_seconds')})"
        )

    @cached
    def lock(self, table: TableName) -> Statement:
        """The runs of :consumer's claims up to :upto_seq (their claim, first and last id, and when it took
        them), locked to the end of the transaction, waiting for a sweep that holds one: a run the sweep gave
        back is gone when the lock is granted, and its rows are no longer this claim's to complete."""
        e = self.engine
        q = e.quote
        where = f"{q(CONSUMER)} = :consumer AND {q(SEQ)} <= :upto_seq"
        columns = ", ".join(q(c) for c in (SEQ, FIRST, LAST, TAKEN))
        return e.compile(e.lock_waiting(runs_table(table), columns, where, f"{q(SEQ)}, {q(FIRST)}"))

    @cached
    def complete(self, table: TableName, profile: Profile) -> Statement:
        """The done transition on the rows with ids in [:first, :last] (a run, or a part of one no larger than
        a statement may lock): a delete, or the update done makes, as the row would carry it had the claim
        marked it (by :consumer under :seq, taken at :taken, one more attempt, no sink tag)."""
        e, lifecycle = self.engine, self.lifecycle
        q = e.quote
        where = f"{q(profile.key[0])} BETWEEN :first AND :last"
        if profile.deletes_on_done:
            return e.compile(e.limited_delete(table, where, False))
        attempts = q(str(profile.attempts))
        marked = [f"{q(str(profile.claimer))} = :consumer", f"{q(str(profile.claim_seq))} = :seq"]
        marked += [f"{q(str(profile.started))} = :taken", f"{attempts} = {attempts} + 1"]
        if profile.tag is not None:
            marked.append(f"{q(profile.tag)} = NULL")
        return e.compile(e.limited_update(table, ", ".join([lifecycle.done_sets(profile), *marked]), where, False))

    @cached
    def forget(self, table: TableName) -> Statement:
        """The runs of :consumer's claims up to :upto_seq, once their rows are done."""
        q = self.engine.quote
        return self._delete(table, f"{q(CONSUMER)} = :consumer AND {q(SEQ)} <= :upto_seq")

    @cached
    def renew(self, table: TableName) -> Statement:
        """The runs :consumer holds under claims after :after_seq with less than :half_seconds of their lease
        left are leased for :lease_seconds from now again: one row a run, however many rows it holds."""
        e = self.engine
        q, lease = e.quote, e.quote(LEASE)
        where = f"{q(CONSUMER)} = :consumer AND {q(SEQ)} > :after_seq AND {lease} < {e.now_plus('half_seconds')}"
        runs = e.table(runs_table(table))
        return e.compile(f"UPDATE {runs}{e.row_lock_hints()} SET {lease} = {e.now_plus('lease_seconds')} WHERE {where}")

    @cached
    def expired(self, table: TableName) -> Statement:
        """Up to :limit runs whose lease ran out (their consumer is gone, or was away longer than its lease),
        locked, past those a completion or another sweep holds: (consumer, claim, first id, last id, when taken,
        lease end)."""
        e = self.engine
        columns = ", ".join(e.quote(c) for c in (CONSUMER, SEQ, FIRST, LAST, TAKEN, LEASE))
        return e.compile(e.lock_first(runs_table(table), columns, f"{e.quote(LEASE)} < {e.now()}"))

    @cached
    def give_back(self, table: TableName) -> Statement:
        """The rows with ids in [:first, :last] (a run whose lease ran out, or a part of it no larger than a
        statement may lock) back to the queue with one more attempt, or failed once their attempts are
        spent, as of :lease_until (Lifecycle.give_back)."""
        e, profile = self.engine, NATIVE
        sets = self.lifecycle.give_back(profile, "'lease expired'", ":lease_until", run=True)
        where = f"{e.quote(profile.key[0])} BETWEEN :first AND :last"
        return e.compile(e.limited_update(table, sets, where, False))

    @cached
    def forget_one(self, table: TableName) -> Statement:
        """One run, once its rows went back to the queue."""
        q = self.engine.quote
        return self._delete(table, f"{q(CONSUMER)} = :consumer AND {q(SEQ)} = :seq AND {q(FIRST)} = :first")

    def _delete(self, table: TableName, where: str) -> Statement:
        e = self.engine
        return e.compile(f"DELETE FROM {e.table(runs_table(table))}{e.row_lock_hints()} WHERE {where}")
