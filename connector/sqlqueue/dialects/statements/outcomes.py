"""Per-row outcomes: an acknowledgement settles one claimed row done, retried after a delay, or failed,
by the profile's transitions (Lifecycle.done_reported_sets, retry_sets, failed_sets), for both kinds.

A batch's acknowledgements are staged first, in a temporary table of the session, and each outcome is
then one set-based statement over the staged rows, as a relational queue's own worker completes a batch
in one statement. One statement per row cost a round trip per row: 1,182 rows/s where the table's own
batched worker reached 13,656 (benchmarks/bench_source.py --profile relational). The staged rows carry
an ordinal in key order, and each statement takes a range of it: one range on PostgreSQL and SQLite,
chunks of the engine's default_chunk on SQL Server, whose lock escalation is judged per statement.

An acknowledgement touches its row only while the claim that delivered it still holds it, so applying
the same acknowledgements twice changes nothing the second time, and one that comes after the row's
lease ran out and another claimer took it changes nothing either (Kleppmann's fencing token). Rows that
carry their claim (sqlqueue's own layout) are held while claimed; an adopted table's row while in flight
with a copy in the claims table whose guard (the token) still holds what the row holds. An
acknowledgement that carries the row's attempts is fenced by them too. The sink's ack rows name no
consumer, only the row's key: the copy may be any consumer's, and only the copy of the claim that last
wrote the row's guard can match it. Once settled, that copy has served: forget_acked drops it, with any
copy of the row that no longer holds it.
"""

from __future__ import annotations

import re

from ...identifiers import TableName
from ...profile import Profile
from ...schema import Column
from ..engine import Engine, Statement, cached
from .claims import Claims
from .lifecycle import Lifecycle

# The session's temporary table of staged acknowledgements, and how a statement names its rows.
STAGED, ROW = "sqlqueue_acks", "sqlqueue_ack"
# Its columns besides the key's k0, k1, ...: the ordinal, the outcome, the delay of a retry. Every
# column after the key's, CARRIED's too, is named as the acknowledgement's own field (queue.Ack), which
# the queue reads by that name.
ORDINAL, OUTCOME, DELAY = "n", "outcome", "delay_seconds"
# What an acknowledgement carries to its row, each where the profile has the column: the field and
# the profile role of the column it is compared with or written to.
CARRIED = (("attempts", "attempts"), ("error", "error"), ("response", "response"), ("step", "step"))
# The transitions' parameters (Lifecycle) that take a staged row's value instead.
_FROM_ROW = re.compile(r"(?<![:\w]):(error|response|step|delay_seconds)\b")


class Outcomes:
    """The acknowledgement statements: staging, then done, retry and failed, and the copies forgotten."""

    def __init__(self, engine: Engine, lifecycle: Lifecycle, claims: Claims) -> None:
        self.engine, self.lifecycle, self.claims = engine, lifecycle, claims

    @staticmethod
    def fields(profile: Profile) -> tuple[tuple[str, str | None], ...]:
        """The staged row's columns, in order: (name, the table's column whose type it takes, or None for
        the ordinal, the outcome and the delay)."""
        keys = tuple((f"k{i}", k) for i, k in enumerate(profile.key))
        carried = tuple((f, getattr(profile, role)) for f, role in CARRIED if getattr(profile, role) is not None)
        delay = ((DELAY, None),) if profile.due is not None else ()
        return ((ORDINAL, None), *keys, (OUTCOME, None), *carried, *delay)

    @staticmethod
    def own_type(field: str) -> Column:
        """The portable type of a staged column that takes no table column's."""
        return Column(field, "string" if field == OUTCOME else "bigint")

    @cached
    def stage(self, types: tuple[tuple[str, str], ...], keys: int) -> Statement:
        """The temporary table of staged acknowledgements, ``types`` (name, type as DDL spells it) in
        Outcomes.fields' order, unique by its first ``keys`` key columns."""
        key = tuple(f"k{i}" for i in range(keys))
        return self.engine.compile(self.engine.create_temp_table(STAGED, types, key))

    @cached
    def unstage(self) -> Statement:
        return self.engine.compile(f"DROP TABLE {self.engine.temp_table(STAGED)}")

    def _named(self, profile: Profile, row_of: str) -> str:
        """The staged row names the row ``row_of`` (a quoted table name): its key columns k0, k1, ... hold the key."""
        q = self.engine.quote
        return " AND ".join(f"{ROW}.{q(f'k{i}')} = {row_of}.{q(k)}" for i, k in enumerate(profile.key))

    def _staged(self, profile: Profile, row_of: str, outcome: str | None = None) -> str:
        """A staged acknowledgement of this chunk (ordinals :lo to :hi) names the row ``row_of`` (a quoted
        table name) and, given ``outcome``, reports it, fenced by the attempts it carries."""
        q, r = self.engine.quote, ROW
        where = f"{r}.{q(ORDINAL)} BETWEEN :lo AND :hi AND {self._named(profile, row_of)}"
        if outcome is not None:
            where += f" AND {r}.{q(OUTCOME)} = {self.engine.literal(outcome)}"
            if profile.attempts is not None:
                attempts = q("attempts")
                where += f" AND ({r}.{attempts} IS NULL OR {r}.{attempts} = {row_of}.{q(profile.attempts)})"
        return f"EXISTS (SELECT 1 FROM {self.engine.temp_table(STAGED)} AS {r} WHERE {where})"

    def _from_row(self, table: TableName, profile: Profile, sets: str) -> str:
        """The transition's SET list with each value an acknowledgement carries read from its staged row."""
        q, r = self.engine.quote, ROW
        named = self._named(profile, q(table.name))
        source = f"{self.engine.temp_table(STAGED)} AS {r}"
        return _FROM_ROW.sub(lambda m: f"(SELECT {r}.{q(m[1])} FROM {source} WHERE {named})", sets)

    def _acked(self, table: TableName, profile: Profile, outcome: str) -> str:
        """The rows this chunk's acknowledgements of ``outcome`` name, while the claim that delivered each
        still holds it."""
        staged = self._staged(profile, self.engine.quote(table.name), outcome)
        if profile.claim_seq is not None:  # the rows carry their claim: in flight, fenced by their attempts
            return f"{staged} AND {self.lifecycle.status_in(profile, (str(profile.in_flight),))}"
        return f"{staged} AND {self.claims.still_ours(table, profile, None)}"

    @cached
    def lock_acked(self, table: TableName, profile: Profile) -> Statement | None:
        """An adopted table's rows this chunk's acknowledgements name, locked in key order before their
        outcomes are written. The stream's heartbeat renews a held row (its started-at, so the table's
        trigger rewrites the token) and the row's copy (the new token) in one transaction. An outcome that
        waited on that row would then, under read committed, compare the row's new token with the copy's
        old one: PostgreSQL re-checks only the row it waited on ("Read Committed Isolation Level",
        postgresql.org/docs/current/transaction-iso.html), and SQL Server's snapshot reads keep the
        statement's start. The acknowledgement would be fenced out by its own stream's renewal. Once the
        rows are locked, the outcomes' statements start after the renewal and read both anew. None on
        SQLite (one writer), and where the engine leaves such a row to the next pass instead
        (Engine.lock_rows)."""
        e = self.engine
        where = self._staged(profile, e.quote(table.name))
        sql = e.lock_rows(table, "1", where, self.lifecycle.order_by([(k, "ASC") for k in profile.key]))
        return None if sql is None else e.compile(sql)

    @cached
    def ack_done(self, table: TableName, profile: Profile) -> Statement:
        """The done transition with the response and step reported; a delete where done deletes (sqlqueue's
        own layout unless completion=keep)."""
        e, where = self.engine, self._acked(table, profile, "done")
        if profile.deletes_on_done:
            return e.compile(e.limited_delete(table, where, False))
        sets = self._from_row(table, profile, self.lifecycle.done_reported_sets(profile))
        return e.compile(e.limited_update(table, sets, where, False))

    @cached
    def ack_retry(self, table: TableName, profile: Profile) -> Statement:
        """The row back to the queue after its delay with its error, or failed once its attempts are spent."""
        e, where = self.engine, self._acked(table, profile, "retry")
        sets = self._from_row(table, profile, self.lifecycle.retry_sets(profile))
        return e.compile(e.limited_update(table, sets, where, False))

    @cached
    def ack_failed(self, table: TableName, profile: Profile) -> Statement:
        e, where = self.engine, self._acked(table, profile, "failed")
        sets = self._from_row(table, profile, self.lifecycle.failed_sets(profile))
        return e.compile(e.limited_update(table, sets, where, False))

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
        where = f"{self._staged(profile, c)} AND NOT EXISTS (SELECT 1 FROM {e.table(table)} WHERE {holds})"
        return e.compile(e.limited_delete(copies, where, False))
