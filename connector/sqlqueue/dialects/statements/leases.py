"""Leases: a stream's claims kept alive while it holds them, and the rows a claim lost.

A claim holds its rows for a lease (leaseSeconds): after that another claimer, sqlqueue's or the table's
own worker, may take them. A lease is not a lock: a job that is down, or a batch slower than the lease,
outlives it (Kleppmann, "How to do distributed locking", 2016). So a stream renews the lease of the
rows it holds while it holds them, as Hangfire's SlidingInvisibilityTimeout does, and a row another
claimer took meanwhile is fenced: the renewal, the drop of a claim made ahead and completion change
it only while its guard column still holds what this stream's claim (or renewal) wrote.
"""

from __future__ import annotations

from ...identifiers import TableName
from ...profile import NATIVE, Profile
from ..engine import Engine, Statement, cached
from .claims import Claims
from .lifecycle import AFTER, ONE, Lifecycle


class Leases:
    """Renewing the leases of the rows a stream holds, and dropping the copies of rows it lost."""

    def __init__(self, engine: Engine, lifecycle: Lifecycle, claims: Claims) -> None:
        self.engine, self.lifecycle, self.claims = engine, lifecycle, claims

    @cached
    def renew_held(self, table: TableName, limited: bool) -> Statement:
        """sqlqueue's own layout: the lease of rows :consumer holds under claims after :after_seq runs
        :lease_seconds from now again, where less than :half_seconds of it was left. Renewing only those
        keeps the heartbeat from writing every held row on every beat."""
        e, lifecycle = self.engine, self.lifecycle
        lease = e.quote(str(NATIVE.lease))
        where = f"{lifecycle.held(lifecycle.holding(table, NATIVE), AFTER)} AND {lease} < {e.now_plus('half_seconds')}"
        return e.compile(e.limited_update(table, f"{lease} = {e.now_plus('lease_seconds')}", where, limited))

    def keys_in(self, profile: Profile, rows: int, qualifier: str = "") -> str:
        """The ``rows`` rows whose keys are :k<column>_<row> (column and row counted from 0)."""
        q = self.engine.quote
        of = f"{qualifier}." if qualifier else ""
        if len(profile.key) == 1:
            listed = ", ".join(f":k0_{i}" for i in range(rows))
            return f"{of}{q(profile.key[0])} IN ({listed})"
        each = (
            "(" + " AND ".join(f"{of}{q(k)} = :k{c}_{i}" for c, k in enumerate(profile.key)) + ")" for i in range(rows)
        )
        return "(" + " OR ".join(each) + ")"

    @cached
    def renewable(self, table: TableName, profile: Profile) -> Statement:
        """An adopted table's renewal, step one: lock up to :limit rows :consumer still holds under claims
        after :after_seq whose started-at is older than :half_ago seconds (negative), and return their
        keys, skipping rows another session holds. The rows stay locked to the end of the renewal's
        transaction, so what its last step reads back is its own."""
        e, now = self.engine, self.lifecycle.clock(profile)
        q, started = e.quote, e.quote(str(profile.started))
        where = f"{started} < {e.add_seconds(now, 'half_ago')} AND {self.claims.copy_holds(table, profile, AFTER)}"
        return e.compile(e.lock_first(table, ", ".join(q(k) for k in profile.key), where))

    @cached
    def renew(self, table: TableName, profile: Profile, rows: int) -> Statement:
        """Step two, for ``rows`` locked rows: started-at (and the token) now, which is what the table's own
        worker reads to tell a live claim from an abandoned one."""
        e, now = self.engine, self.lifecycle.clock(profile)
        q, started = e.quote, e.quote(str(profile.started))
        sets = f"{started} = {now}" + (f", {q(profile.token)} = {now}" if profile.token is not None else "")
        return e.compile(e.limited_update(table, sets, self.keys_in(profile, rows), False))

    @cached
    def settle_renewed(self, table: TableName, profile: Profile, rows: int) -> Statement:
        """Step three: the copies of those rows take each row's new started-at and guard, read back after
        the table's triggers ran (a trigger may rewrite the token)."""
        e, lifecycle = self.engine, self.lifecycle
        q, copies = e.quote, lifecycle.claims_table(table)
        c = q(copies.name)
        same = self.claims.key_match(profile, q(table.name), c)
        read_back = [col for col in dict.fromkeys((profile.started, profile.guard)) if col is not None]
        sets = ", ".join(f"{q(col)} = (SELECT {q(col)} FROM {e.table(table)} WHERE {same})" for col in read_back)
        held = lifecycle.held(lifecycle.holding(table, profile), AFTER)
        return e.compile(f"UPDATE {e.table(copies)} SET {sets} WHERE {held} AND {self.keys_in(profile, rows, c)}")

    @cached
    def drop_fenced(self, table: TableName, profile: Profile) -> Statement:
        """The copies of :consumer's claim :seq whose row another claimer took since (its guard changed,
        or the row is gone): a claim made ahead, or held across a crash, that Spark has not logged yet
        serves only the rows still its own."""
        e, lifecycle = self.engine, self.lifecycle
        q, copies = e.quote, lifecycle.claims_table(table)
        c, t, guard = q(copies.name), q(table.name), q(str(profile.guard))
        same = f"{self.claims.key_match(profile, t, c)} AND {t}.{guard} = {c}.{guard}"
        return e.compile(
            f"DELETE FROM {e.table(copies)} WHERE {lifecycle.held(lifecycle.holding(table, profile), ONE)} "
            f"AND NOT EXISTS (SELECT 1 FROM {e.table(table)} WHERE {same})"
        )
