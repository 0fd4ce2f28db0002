"""Statements over a table sqlqueue adopted: every one built from the table's profile.

The user's table keeps its own columns and values; sqlqueue adds only its claims table beside it.
A claim marks the rows the profile's way (or takes them out of the table) and, in the same statement,
copies them as the claim left them into the claims table under (consumer, claim number): a replay
reads that copy, whatever the table's own workers have done since. Completion applies the profile's
done transition to the rows that are still ours (the guard column still holds the value our claim
gave it) and drops their copies, in one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...identifiers import TableName
from ...profile import Profile
from ...schema import Column
from ..engine import Statement, cached
from .claims import Claims
from .lifecycle import CONSUMER, ROW, SEQ, UPTO


class Adoption(Claims):
    def _copies(self, columns: Sequence[tuple[str, str]]) -> list[str]:
        """Column definitions copying ``columns`` (name, exact type): said NULL, since a column that says
        neither takes its nullability from session and database settings on SQL Server
        (https://learn.microsoft.com/sql/t-sql/statements/set-ansi-null-dflt-on-transact-sql)."""
        return [f"{self.quote(name)} {exact} NULL" for name, exact in columns]

    def create_claims_table(self, table: TableName, columns: Sequence[tuple[str, str]]) -> list[str]:
        """The claims table for ``table``, whose ``columns`` are (name, exact type as the table has it).

        Copies are nullable and keep the exact type, so a guard compares equal values. As the target of
        SQL Server's OUTPUT ... INTO it may have no trigger, foreign key or CHECK constraint, and has none
        (https://learn.microsoft.com/sql/t-sql/queries/output-clause-transact-sql)."""
        q, claims = self.quote, self.claims_table(table)
        lines = [
            f"{q(ROW)} {self.identity_sql(Column(ROW, 'bigint', False))}",
            f"{q(CONSUMER)} {self.type_sql(Column(CONSUMER, 'string'))} NOT NULL",
            f"{q(SEQ)} {self.type_sql(Column(SEQ, 'bigint'))} NOT NULL",
            *self._copies(columns),
        ]
        if self.separate_primary_key:
            lines.append(f"CONSTRAINT {q('pk_' + claims.name)} PRIMARY KEY ({q(ROW)})")
        held = f"{q(CONSUMER)}, {q(SEQ)}, {q(ROW)}"
        return [
            self.create_table_guarded(claims, ",\n  ".join(lines)),
            self.create_index_guarded(claims, f"ix_{claims.name}_held", held, [], None),
        ]

    # ---- completion ----------------------------------------------------------------------------------
    def copy_holds(self, table: TableName, profile: Profile, claims: str) -> str:
        """A copy of :consumer's claims that ``claims`` names (Lifecycle.held: UPTO, AFTER or ONE) holds this
        row of ``table`` unchanged since the claim (or the last renewal) wrote it: its guard column (the
        token, else the started-at, else the claimer) still holds that value. A row whose lease ran out
        and that the table's own worker took has another value there. The two tables are named, not
        aliased: their names differ by construction, where an alias could be the table's."""
        q, copies = self.quote, self.claims_table(table)
        c, t = q(copies.name), q(table.name)
        same = self.key_match(profile, c, t)
        if profile.guard is not None:
            same += f" AND {c}.{q(profile.guard)} = {t}.{q(profile.guard)}"
        held = self.held(self.holding(table, profile), claims, c)
        return f"EXISTS (SELECT 1 FROM {self.table(copies)} WHERE {held} AND {same})"

    def still_ours(self, table: TableName, profile: Profile) -> str:
        """A row of ``table`` that a copy of claims up to :upto_seq holds unchanged (copy_holds)."""
        q = self.quote
        ours = self.copy_holds(table, profile, UPTO)
        # Done sets done-at and may leave the status in flight (seed 003): a done row is no longer ours,
        # or chunked completion, which repeats while a pass fills its chunk, would never end.
        open_ = f"{q(profile.done_at)} IS NULL AND " if profile.done_at is not None else ""
        if profile.status is not None:
            return f"{self.status_in(profile, (profile.in_flight or '',))} AND {open_}{ours}"
        return open_ + ours

    @cached
    def complete(self, table: TableName, profile: Profile, limited: bool) -> tuple[Statement, ...]:
        """The done transition (an update, or a delete) on the rows of claims up to :upto_seq that are still
        ours, then, where copies hold them, the copies dropped. Rows that carry their claim are ours while
        they do; an adopted table's while the guard holds what our claim wrote (still_ours). A taken row
        left the table with its claim. ``limited``: each statement touches at most :limit rows and runs
        again until it touches fewer (SQL Server's lock escalation, at 5,000 locks a statement, would lock
        the table whole); a row done no longer counts as ours, so the repeats end."""
        holding = self.holding(table, profile)
        ours = self.held(holding, UPTO) if holding.in_place else self.still_ours(table, profile)
        if profile.deletes_on_done:
            done = self.limited_delete(table, ours, limited)
        else:
            done = self.limited_update(table, self.done_sets(profile), ours, limited)
        if holding.in_place:
            return (self.compile(done),)
        forget = self.compile(self.limited_delete(holding.table, self.held(holding, UPTO), limited))
        return (forget,) if profile.take else (self.compile(done), forget)

    @cached
    def adopted_fail_expired(self, table: TableName, profile: Profile) -> Statement | None:
        """Rows whose claimer's lease ran out with no attempt left become failed (the table's terminal
        value), as the seed's Modify_ procedure forces Failed once attempts are spent."""
        if None in (profile.status, profile.failed, profile.attempts, profile.max_attempts, profile.started):
            return None
        q, now = self.quote, self.clock(profile)
        where = (
            f"{self.status_in(profile, (profile.in_flight or '',))} "
            f"AND {q(profile.started or '')} < {self.add_seconds(now, 'lease_ago')} "
            f"AND {q(profile.attempts or '')} >= :max_attempts"
        )
        if profile.filter is not None:
            where += f" AND {self.filter_condition(profile.filter)}"
        sets = f"{q(profile.status or '')} = {self.literal(profile.failed or '')}"
        if profile.token is not None:
            sets += f", {q(profile.token)} = {now}"
        return self.compile(self.limited_update(table, sets, where, False))

    # ---- the backlog, queue wait and stats ----------------------------------------------------------
    @cached
    def adopted_by_status(self, table: TableName, profile: Profile) -> Statement | None:
        """Rows of this stream (the profile's filter) per status value, where the profile has a status."""
        if profile.status is None:
            return None
        status = self.quote(profile.status)
        where = "" if profile.filter is None else f" WHERE {self.filter_condition(profile.filter)}"
        return self.compile(f"SELECT {status}, COUNT(*) FROM {self.table(table)}{where} GROUP BY {status}")

    @cached
    def filter_probe(self, table: TableName, condition: str) -> Statement:
        """A query that reads no row of ``table`` but has the engine resolve every name and type in
        ``condition`` (a profile's filter) as a claim would: an unknown column or a type clash fails
        here. Names and types are bound before a plan is made (SQL Server's algebrizer, "Query processing
        architecture guide", learn.microsoft.com/sql/relational-databases/query-processing-architecture-guide;
        PostgreSQL's parse analysis; SQLite's prepare), and the plan reads nothing under ``1 = 0``. A
        conversion SQL Server makes row by row (an NVARCHAR column against a number) fails only when a
        row is read: not here."""
        return self.compile(f"SELECT 1 FROM {self.table(table)} WHERE 1 = 0 AND {self.filter_condition(condition)}")

    @cached
    def count_rows(self, table: TableName) -> Statement:
        return self.compile(f"SELECT COUNT(*) FROM {self.table(table)}")

    @cached
    def unique_keys(self, table: TableName) -> Statement:
        """Rows of (index or constraint name, column) for the table's primary key and unique indexes."""
        return self.compile(self.unique_keys_sql(table))

    @cached
    def referenced(self, table: TableName) -> Statement:
        return self.compile(self.referenced_sql(table))

    @cached
    def check_constraints(self, table: TableName) -> Statement:
        return self.compile(self.checks_sql(table))

    @cached
    def exact_columns(self, table: TableName) -> Statement:
        """Rows of (column, its type spelled as DDL takes it), in the table's order."""
        return self.compile(self.exact_columns_sql(table))
