"""Sink statements into a table sqlqueue adopted: a batch waits beside the table, and publish inserts it.

The sink's tasks stage their rows in sqlqueue's staging table beside the user's table, under stage tags
as for sqlqueue's own tables. Publish, in the ledger's transaction, inserts a task's rows into the table
with what the profile gives a new row: the first ready status, no attempt, due and enqueued now (unless
the rows give them), and the token. So the table's own workers never see a batch Spark did not commit,
and no column of sqlqueue's goes on their table.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...identifiers import TableName
from ...profile import Profile
from ...schema import STAGE_TAG
from ..engine import Statement, cached
from .adoption import Adoption


class AdoptedSink(Adoption):
    def staging_of(self, table: TableName, profile: Profile) -> TableName:
        """Where the sink's batches wait: the staging table of sqlqueue's own layout, or sqlqueue's beside
        an adopted table (its name says whose it is, as the claims table's does)."""
        return self.staging(table) if profile.owned else self.beside(table, "staging")

    def create_adopted_staging(self, table: TableName, columns: Sequence[tuple[str, str]]) -> list[str]:
        """The staging table for ``table``: the tag, then ``columns`` (name, exact type as the table has it),
        nullable: publish inserts only the columns a batch has, so the table's defaults and checks apply."""
        lines = [self._column_sql(STAGE_TAG), *self._copies(columns)]
        return self.staging_statements(self.beside(table, "staging"), lines)

    @cached
    def defaults(self, table: TableName) -> Statement:
        return self.compile(self.defaults_sql(table))

    @cached
    def local_offset(self) -> Statement:
        return self.compile(self.local_offset_sql())

    def new_row(self, profile: Profile, given: Sequence[str]) -> dict[str, str]:
        """{column: SQL value} the profile writes into a new row besides the ``given`` columns: the first
        ready status, no attempt, the token now, due and enqueued now where the rows leave them NULL or
        out, and NULL where the profile reads NULL as ready (done-at; the claimer, or the started-at mark,
        without a status), whatever the table's defaults say. A key column is never filled: rows enqueued
        together would share its value. sqlqueue's own table gives a new row all that by its defaults."""
        if profile.owned:
            return {}
        q, now = self.quote, self.clock(profile)
        named = {c.lower(): c for c in given}
        keys = {k.lower() for k in profile.key}
        values: dict[str, str] = {}
        for column in (profile.due, profile.enqueued):
            if column is not None and column.lower() not in keys:
                spelled = named.get(column.lower())
                values[spelled or column] = f"COALESCE({q(spelled)}, {now})" if spelled else now
        if profile.status is not None and profile.ready:
            values[profile.status] = self.literal(profile.ready[0])
        if profile.attempts is not None:
            values[profile.attempts] = "0"
        if profile.token is not None:
            values[profile.token] = now
        for column in self._open_marks(profile):
            values[column] = "NULL"
        return values

    @staticmethod
    def _open_marks(profile: Profile) -> list[str]:
        """The columns whose NULL the profile's ready predicate reads (Claims.ready)."""
        if profile.take:
            return [profile.done_at] if profile.done_at else []
        marks = [profile.done_at]
        if profile.status is None:
            marks.append(profile.claimer if profile.claimer is not None else profile.started)
        return [c for c in marks if c is not None]

    @cached
    def publish(self, table: TableName, profile: Profile, columns: tuple[str, ...]) -> Statement:
        """Insert one task's staged rows (:tag) of ``columns`` into the table, as new ready rows of the
        profile (Sink.new_row); into sqlqueue's own table, keyed rows with a dedup key it does not hold
        yet only (a batch's keys are checked when it is published)."""
        q = self.quote
        staging, where = self.table(self.staging_of(table, profile)), f"{q(STAGE_TAG.name)} = :tag"
        if profile.owned and "dedup_key" in columns:
            return self.compile(self.insert_new_keys(table, columns, staging, where))
        values = {**{c: q(c) for c in columns}, **self.new_row(profile, columns)}
        names = ", ".join(q(c) for c in values)
        return self.compile(
            f"INSERT INTO {self.table(table)} ({names}) SELECT {', '.join(values.values())} FROM {staging} "
            f"WHERE {where}"
        )
