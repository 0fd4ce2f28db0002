"""Where a kind keeps what its claims took, and how it settles it: on the rows themselves (sqlqueue's own
layout: each row carries the consumer and claim number holding it, and its lease's end) or in copies in
a claims table beside the table (an adopted table: its rows keep only what its own workers read).

A queue's completion, lease renewal, fencing, rescue and acknowledgements differ only here
(``Holds``); the statements themselves come from the dialect, built from the kind's profile.
"""

from __future__ import annotations

from typing import Any

from ..dialects.engine import execute
from .kind import AckWrites, Served

# Rows one renewal statement names by key: two key columns of 500 rows stay under SQL Server's 2,100
# parameters a statement (learn.microsoft.com/sql/sql-server/maximum-capacity-specifications-for-sql-server).
RENEWED_PER_STATEMENT = 500
# Runs whose lease ran out that one sweep transaction gives back.
RUNS_PER_SWEEP = 100


class InPlace:
    """The rows carry their claim: completing, renewing and rescuing are one chunked statement each, and a
    row another claimer took is simply no longer this claim's."""

    def copied(self, queue: Served) -> tuple[str, ...]:
        return ()

    def complete(self, queue: Served, consumer: str, upto_seq: int, keep: bool, chunk: int | None) -> int:
        profile = queue.profile if keep else queue.profile.deleting()
        limit = chunk or queue.engine.default_chunk
        values = {"consumer": consumer, "upto_seq": upto_seq, "limit": limit, **queue.bindings()}
        statements = queue.dialect.claims.complete_held(queue.table, profile, limit is not None)
        return sum(queue.repeat(statement, values, limit) for statement in statements)

    def renew(self, queue: Served, values: dict[str, Any], limit: int | None) -> int:
        return queue.repeat(queue.dialect.leases.renew_held(queue.table, limit is not None), values, limit)

    def drop_fenced(self, queue: Served, consumer: str, seq: int) -> int:
        return 0

    def rescue_expired(self, queue: Served, max_attempts: int, chunk: int | None) -> int:
        chunk = chunk or queue.engine.default_chunk
        statement = queue.dialect.housekeeping.rescue_expired(queue.table, chunk is not None)
        return queue.repeat(statement, {"max_attempts": max_attempts, "limit": chunk}, chunk)

    def ack_writes(self, queue: Served, keep: bool) -> AckWrites:
        # Only done deletes: a failed row keeps its done-at (its fail time).
        return AckWrites(queue.profile if keep else queue.profile.deleting(), None, None)

    def forget_subtype_copies(self, queue: Served, cur: Any) -> None:
        return None


class MarksOrRuns(InPlace):
    """sqlqueue's own layout: a claim marks each row it takes (InPlace), or holds them as runs of ids in the
    claims table beside the table and writes nothing on them (statements.runs; the stream's options choose,
    ClaimPolicy.runs). A consumer's claims of either kind settle here: completion, renewal and the sweep
    of leases that ran out take both, each kind's statements finding nothing of the other."""

    def complete(self, queue: Served, consumer: str, upto_seq: int, keep: bool, chunk: int | None) -> int:
        return super().complete(queue, consumer, upto_seq, keep, chunk) + self._complete_runs(
            queue, consumer, upto_seq, keep
        )

    def _complete_runs(self, queue: Served, consumer: str, upto_seq: int, keep: bool) -> int:
        """In one transaction: the runs of claims up to ``upto_seq`` locked (a run a sweep gave back first is
        gone by then, and its rows left to whoever took them), the done transition on their rows, a run at
        a time, and the runs forgotten."""
        runs, profile = queue.dialect.runs, queue.profile if keep else queue.profile.deleting()
        held = {"consumer": consumer, "upto_seq": upto_seq}
        done = 0
        with queue.transaction() as cur:
            locked = execute(cur, runs.lock(queue.table), **held).fetchall()
            if not locked:
                return 0
            statement = runs.complete(queue.table, profile)
            for seq, first, last, taken in locked:
                for lo, hi in spans(int(first), int(last), queue.engine.default_chunk):
                    values = {**queue.bindings(), "consumer": consumer, "seq": seq, "first": lo, "last": hi}
                    done += max(execute(cur, statement, **values, taken=taken).rowcount, 0)
            execute(cur, runs.forget(queue.table), **held)
        return done

    def renew(self, queue: Served, values: dict[str, Any], limit: int | None) -> int:
        """Rows a consumer marked, then its runs: the count is of both (a run counts once)."""
        renewed = super().renew(queue, values, limit)
        with queue.transaction() as cur:
            return renewed + max(execute(cur, queue.dialect.runs.renew(queue.table), **values).rowcount, 0)

    def rescue_expired(self, queue: Served, max_attempts: int, chunk: int | None) -> int:
        return super().rescue_expired(queue, max_attempts, chunk) + self._sweep_runs(queue, max_attempts)

    def _sweep_runs(self, queue: Served, max_attempts: int) -> int:
        """Runs whose lease ran out, RUNS_PER_SWEEP a transaction, locked past those a completion holds:
        their rows back to the queue with the attempt the claim made counted (or failed once spent), then
        the runs forgotten; how many rows went back."""
        runs, table = queue.dialect.runs, queue.table
        total = 0
        while True:
            with queue.transaction() as cur:
                expired = execute(cur, runs.expired(table), limit=RUNS_PER_SWEEP).fetchall()
                for consumer, seq, first, last, taken, lease_until in expired:
                    run = {"consumer": consumer, "seq": seq, "taken": taken, "lease_until": lease_until}
                    run["max_attempts"] = max_attempts
                    for lo, hi in spans(int(first), int(last), queue.engine.default_chunk):
                        back = execute(cur, runs.give_back(table), **run, first=lo, last=hi)
                        total += max(back.rowcount, 0)
                    execute(cur, runs.forget_one(table), consumer=consumer, seq=seq, first=first)
            if len(expired) < RUNS_PER_SWEEP:
                return total


def spans(first: int, last: int, size: int | None) -> list[tuple[int, int]]:
    """[first, last] in consecutive spans of at most ``size`` ids (one span without a size): a run's ids
    are its rows, so a span is as many rows as one statement may lock (Engine.default_chunk)."""
    if size is None:
        return [(first, last)]
    return [(lo, min(lo + size - 1, last)) for lo in range(first, last + 1, size)]


class Copies:
    """Copies of the claimed rows in the claims table hold the claim: each step settles the row and its copy
    in one transaction, so a row is never done with its copy still taken for held, nor its copy gone while
    the row is still in flight."""

    def copied(self, queue: Served) -> tuple[str, ...]:
        return tuple(c.name for c in queue.columns())

    def complete(self, queue: Served, consumer: str, upto_seq: int, keep: bool, chunk: int | None) -> int:
        # PostgreSQL's and SQLite's limited statement picks rows by sqlqueue's id column, which an adopted
        # table lacks (SQLite reads an unknown "id" as the string 'id' and would touch every row): copies
        # are chunked only where the engine needs it (SQL Server's TOP).
        limit = queue.engine.default_chunk
        values = {"consumer": consumer, "upto_seq": upto_seq, "limit": limit, **queue.bindings()}
        counts = []
        with queue.transaction() as cur:
            for statement in queue.dialect.claims.complete_copies(queue.table, queue.profile, limit is not None):
                total = 0
                while True:
                    count = max(execute(cur, statement, **values).rowcount, 0)
                    total += count
                    if limit is None or count < limit:
                        break
                counts.append(total)
        return counts[0]

    def renew(self, queue: Served, values: dict[str, Any], limit: int | None) -> int:
        """Each chunk of locked rows in one transaction: the rows' started-at (and token) now, what the
        table's own worker reads too, and their copies the new guard (Leases.renewable, renew,
        settle_renewed)."""
        p, leases, each = queue.profile, queue.dialect.leases, values["limit"]  # rows a pick takes at most
        pick, total = leases.renewable(queue.table, p), 0
        while True:
            with queue.transaction() as cur:
                keys = execute(cur, pick, **values).fetchall()
                for start in range(0, len(keys), RENEWED_PER_STATEMENT):
                    rows = keys[start : start + RENEWED_PER_STATEMENT]
                    named = {f"k{c}_{i}": v for i, row in enumerate(rows) for c, v in enumerate(row)}
                    execute(cur, leases.renew(queue.table, p, len(rows)), **values, **named)
                    execute(cur, leases.settle_renewed(queue.table, p, len(rows)), **values, **named)
            total += len(keys)
            if len(keys) < each:
                return total

    def drop_fenced(self, queue: Served, consumer: str, seq: int) -> int:
        p = queue.profile
        if p.take or p.guard is None:
            return 0
        statement = queue.dialect.leases.drop_fenced(queue.table, p)
        with queue.transaction() as cur:
            dropped = max(execute(cur, statement, consumer=consumer, seq=seq).rowcount, 0)
            self.forget_subtype_copies(queue, cur)
            return dropped

    def rescue_expired(self, queue: Served, max_attempts: int, chunk: int | None) -> int:
        # The rows go back by the ready predicate itself; those with no attempt left become failed where
        # the profile has a failed value.
        failing = queue.dialect.adoption.adopted_fail_expired(queue.table, queue.profile)
        if failing is None:
            return 0
        with queue.transaction() as cur:
            return max(execute(cur, failing, **queue.bindings()).rowcount, 0)

    def ack_writes(self, queue: Served, keep: bool) -> AckWrites:
        outcomes, p = queue.dialect.outcomes, queue.profile
        return AckWrites(p, outcomes.lock_acked(queue.table, p), outcomes.forget_acked(queue.table, p))

    def forget_subtype_copies(self, queue: Served, cur: Any) -> None:
        """Inside the caller's transaction, after base copies were dropped: the subtype tables' copies of
        the same rows (Claims.forget_subtype_copies)."""
        for statement in queue.dialect.claims.forget_subtype_copies(queue.table, queue.profile, False):
            execute(cur, statement)
