"""Per-row outcomes: an acknowledgement settles one claimed row done, retried after a delay, or failed,
by the profile's transitions (Lifecycle.done_reported_sets, retry_sets, failed_sets), for both kinds.

An acknowledgement touches its row only while the claim that delivered it still holds it, so applying
the same acknowledgements twice changes nothing the second time, and one that comes after the row's
lease ran out and another claimer took it changes nothing either (Kleppmann's fencing token). Rows that
carry their claim (sqlqueue's own layout) are held while claimed; an adopted table's row while in flight
with a copy in the claims table whose guard (the token) still holds what the row holds. The sink's ack
rows name no consumer, only the row's key: the copy may be any consumer's, and only the copy of the
claim that last wrote the row's guard can match it. Once settled, that copy has served: forget_acked
drops it, with any copy of the row that no longer holds it.
"""

from __future__ import annotations

from ...identifiers import TableName
from ...profile import Profile
from ..engine import Engine, Statement, cached
from .claims import Claims
from .lifecycle import Lifecycle


class Outcomes:
    """The acknowledgement statements: done, retry and failed on one row each, and the copies forgotten."""

    def __init__(self, engine: Engine, lifecycle: Lifecycle, claims: Claims) -> None:
        self.engine, self.lifecycle, self.claims = engine, lifecycle, claims

    @staticmethod
    def key_params(profile: Profile) -> tuple[str, ...]:
        """The parameters an acknowledgement names its row's key by: sqlqueue's own rows by :id, an adopted
        table's by :k0, :k1, ... in its key's order (a column's name need not be a parameter's)."""
        return profile.key if profile.owned else tuple(f"k{i}" for i in range(len(profile.key)))

    def _key(self, profile: Profile) -> str:
        q = self.engine.quote
        return " AND ".join(f"{q(k)} = :{p}" for k, p in zip(profile.key, self.key_params(profile)))

    def _acked(self, table: TableName, profile: Profile, fenced: bool) -> str:
        """The row an acknowledgement names, while the claim that delivered it holds it. ``fenced``: and
        while it has the attempts that claim delivered (every claim adds one: sqlqueue's own layout's
        fencing token, which an acknowledgement may carry)."""
        attempts = f" AND {self.engine.quote(str(profile.attempts))} = :attempts" if fenced else ""
        if profile.owned:
            in_flight = self.lifecycle.status_in(profile, (str(profile.in_flight),))
            return f"{self._key(profile)} AND {in_flight}{attempts}"
        return f"{self._key(profile)}{attempts} AND {self.claims.still_ours(table, profile, None)}"

    @cached
    def lock_acked(self, table: TableName, profile: Profile) -> Statement | None:
        """An adopted table's row an acknowledgement names, locked before its outcome is written. The
        stream's heartbeat renews a held row (its started-at, so the table's trigger rewrites the token)
        and the row's copy (the new token) in one transaction. An outcome that waited on that row would
        then, under read committed, compare the row's new token with the copy's old one: PostgreSQL
        re-checks only the row it waited on ("Read Committed Isolation Level", postgresql.org/docs/
        current/transaction-iso.html), and SQL Server's snapshot reads keep the statement's start. The
        acknowledgement would be fenced out by its own stream's renewal. Once the row is locked, the
        outcome's statement starts after the renewal and reads both anew. None on SQLite (one writer)."""
        sql = self.engine.lock_rows(table, "1", self._key(profile))
        return None if sql is None else self.engine.compile(sql)

    @cached
    def ack_done(self, table: TableName, profile: Profile, fenced: bool) -> Statement:
        """The done transition with the response and step reported; a delete where done deletes (sqlqueue's
        own layout unless completion=keep)."""
        e, where = self.engine, self._acked(table, profile, fenced)
        if profile.deletes_on_done:
            return e.compile(e.limited_delete(table, where, False))
        return e.compile(e.limited_update(table, self.lifecycle.done_reported_sets(profile), where, False))

    @cached
    def ack_retry(self, table: TableName, profile: Profile, fenced: bool) -> Statement:
        """The row back to the queue after ``:delay_seconds`` with its error, or failed once its attempts
        are spent."""
        e = self.engine
        return e.compile(
            e.limited_update(table, self.lifecycle.retry_sets(profile), self._acked(table, profile, fenced), False)
        )

    @cached
    def ack_failed(self, table: TableName, profile: Profile, fenced: bool) -> Statement:
        e = self.engine
        return e.compile(
            e.limited_update(table, self.lifecycle.failed_sets(profile), self._acked(table, profile, fenced), False)
        )

    @cached
    def forget_acked(self, table: TableName, profile: Profile) -> Statement:
        """After the outcomes, the copies of an acknowledged row that no longer hold it: the row is settled
        (no longer in flight, its guard rewritten), or another claimer took it. A copy that still holds
        the row is another consumer's live claim, and stays."""
        e, lifecycle = self.engine, self.lifecycle
        q, copies = e.quote, lifecycle.claims_table(table)
        c, t = q(copies.name), q(table.name)
        in_flight = lifecycle.status_in(profile, (str(profile.in_flight),), t)
        holds = f"{self.claims.key_match(profile, t, c)} AND {in_flight}"
        if profile.guard is not None:
            holds += f" AND {t}.{q(profile.guard)} = {c}.{q(profile.guard)}"
        where = f"{self._key(profile)} AND NOT EXISTS (SELECT 1 FROM {e.table(table)} WHERE {holds})"
        return e.compile(e.limited_delete(copies, where, False))
