"""Per-row outcomes: an acknowledgement settles one claimed row done, retried after a delay, or failed,
by the profile's transitions (Lifecycle.done_reported_sets, retry_sets, failed_sets), for both kinds.

A batch's acknowledgements are staged first, in a temporary table of the session, and each outcome is
then one set-based statement over the staged rows, as a relational queue's own worker completes a batch
in one statement. One statement per row cost a round trip per row: 1,182 rows/s where the table's own
batched worker reached 13,656 (benchmarks/bench_source.py --profile relational). An outcome is an UPDATE
joined to the staged rows (UPDATE ... FROM), which reads each staged row once, where a subquery for
each value it carries read it again (its apply 1.06x faster: six alternated pairs, 0.97-1.13x). The
staged rows carry an ordinal in key order, and each statement takes a range of it: one range on
PostgreSQL and SQLite, chunks of the engine's default_chunk on SQL Server, whose lock escalation is
judged per statement.

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
# Its fields besides the key's k0, k1, ...: the ordinal, the outcome, the delay of a retry. Every
# field after the key's, CARRIED's too, is named as the acknowledgement's own (queue.Ack), which the
# queue reads by that name.
ORDINAL, OUTCOME, DELAY = "n", "outcome", "delay_seconds"
# Each field is the staged table's column of this prefix and its name. The outcomes join the staged
# rows to the table, whose columns the transitions name unqualified: a table's own "Error" or "step"
# would be ambiguous beside a staged column of that name (SQL Server's and SQLite's names ignore case).
COLUMN_PREFIX = "sqlqueue_"
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
    def column(field: str) -> str:
        """The staged table's column of a field (Outcomes.fields)."""
        return COLUMN_PREFIX + field

    @staticmethod
    def own_type(field: str) -> Column:
        """The portable type of a staged column that takes no table column's."""
        return Column(field, "string" if field == OUTCOME else "bigint")

    @cached
    def stage(self, types: tuple[tuple[str, str], ...], keys: int) -> Statement:
        """The temporary table of staged acknowledgements, ``types`` (name, type as DDL spells it) in
        Outcomes.fields' order, unique by its first ``keys`` key columns."""
        key = tuple(self.column(f"k{i}") for i in range(keys))
        return self.engine.compile(self.engine.create_temp_table(STAGED, types, key))

    @cached
    def unstage(self) -> Statement:
        return self.engine.compile(f"DROP TABLE {self.engine.temp_table(STAGED)}")

    def _field(self, field: str) -> str:
        """A field of the staged row (quoted, qualified)."""
        return f"{ROW}.{self.engine.quote(self.column(field))}"

    def _named(self, profile: Profile, row_of: str) -> str:
        """The staged row names the row ``row_of`` (a quoted table name): its key fields k0, k1, ... hold the key."""
        q = self.engine.quote
        return " AND ".join(f"{self._field(f'k{i}')} = {row_of}.{q(k)}" for i, k in enumerate(profile.key))

    def _joined(self, profile: Profile, row_of: str, outcome: str | None = None) -> str:
        """The staged acknowledgement (``ROW``) is of this chunk (ordinals :lo to :hi) and names the row
        ``row_of`` (a quoted table name) and, given ``outcome``, reports it, fenced by the attempts it carries."""
        q = self.engine.quote
        where = f"{self._field(ORDINAL)} BETWEEN :lo AND :hi AND {self._named(profile, row_of)}"
        if outcome is not None:
            where += f" AND {self._field(OUTCOME)} = {self.engine.literal(outcome)}"
            if profile.attempts is not None:
                attempts = self._field("attempts")
                where += f" AND ({attempts} IS NULL OR {attempts} = {row_of}.{q(profile.attempts)})"
        return where

    def _staged(self, profile: Profile, row_of: str, outcome: str | None = None) -> str:
        """A staged acknowledgement of this chunk names the row ``row_of`` (a quoted table name), as _joined."""
        return f"EXISTS (SELECT 1 FROM {self._source()} WHERE {self._joined(profile, row_of, outcome)})"

    def _source(self) -> str:
        return f"{self.engine.temp_table(STAGED)} AS {ROW}"

    def _transition(self, table: TableName, profile: Profile, outcome: str, sets: str) -> Statement:
        """The transition ``sets`` of the rows this chunk's acknowledgements of ``outcome`` name, while the
        claim that delivered each still holds it, each value an acknowledgement carries read from its staged
        row (joined: one staged row a key, Outcomes.stage)."""
        e = self.engine
        where = f"{self._joined(profile, e.quote(table.name), outcome)} AND {self._held(table, profile)}"
        carried = _FROM_ROW.sub(lambda m: self._field(m[1]), sets)
        return e.compile(e.update_from(table, carried, self._source(), where))

    def _held(self, table: TableName, profile: Profile) -> str:
        """The row is still held by the claim that delivered it."""
        if profile.claim_seq is not None:  # the rows carry their claim: in flight, fenced by their attempts
            return self.lifecycle.status_in(profile, (str(profile.in_flight),))
        return self.claims.still_ours(table, profile, None)

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
        if profile.deletes_on_done:
            e = self.engine
            staged = self._staged(profile, e.quote(table.name), "done")
            return e.compile(e.limited_delete(table, f"{staged} AND {self._held(table, profile)}", False))
        return self._transition(table, profile, "done", self.lifecycle.done_reported_sets(profile))

    @cached
    def ack_retry(self, table: TableName, profile: Profile) -> Statement:
        """The row back to the queue after its delay with its error, or failed once its attempts are spent."""
        return self._transition(table, profile, "retry", self.lifecycle.retry_sets(profile))

    @cached
    def ack_failed(self, table: TableName, profile: Profile) -> Statement:
        return self._transition(table, profile, "failed", self.lifecycle.failed_sets(profile))

    @cached
    def forget_acked(self, table: TableName, profile: Profile) -> Statement:
        """After the outcomes, the copies of an acknowledged row that no longer hold it: the row is settled
        (no longer in flight, its guard rewritten), or another claimer took it. A copy that still holds
        the row is another consumer's live claim, and stays."""
        e, lifecycle = self.engine, self.lifecycle
        q, copies = e.quote, lifecycle.claims_table(table)
        c, t = q(copies.name), q(table.name)
        held = lifecycle.status_in(profile, (str(profile.in_flight),), t)
        if profile.guard is not None:
            held += f" AND {t}.{q(profile.guard)} = {c}.{q(profile.guard)}"
        # The row is found by its key alone, and held is tested in a CASE, which the planner cannot
        # estimate from the table's statistics. Taken while few rows were in flight, those put the rows
        # in flight near one, and PostgreSQL then scanned them once per acknowledged copy (a nested loop
        # over a materialized scan): 1.8 s against 26 ms to forget 5,000 copies of a 100,000-row table
        # while the claim made ahead held 5,000 more ("Row Estimation Examples", postgresql.org/docs/
        # current/row-estimation-examples.html: a value outside the most common ones gets what they leave).
        holds = f"{self.claims.key_match(profile, t, c)} AND CASE WHEN {held} THEN 1 END = 1"
        where = f"{self._staged(profile, c)} AND NOT EXISTS (SELECT 1 FROM {e.table(table)} WHERE {holds})"
        return e.compile(e.limited_delete(copies, where, False))
