"""What ``sqlqueue stats`` and ``peek`` read, changing nothing: the next ready rows, the rows per state
or status, the recent waits and throughput, a failed table's errors, and the ping that tells a live
connection from a lost one.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...identifiers import TableName
from ...profile import NATIVE, Profile
from ...schema import CLAIMED, DONE, UNPUBLISHED
from ..engine import Engine, Statement, cached
from .claims import Claims
from .lifecycle import Lifecycle

# How much of a failed row's error text `sqlqueue stats` groups by: SUBSTRING, which SQL Server, PostgreSQL
# and SQLite (3.34 on) all spell so, keeps a long text (a stack trace) from splitting one cause in two,
# and groups an NVARCHAR(MAX) or TEXT column as GROUP BY allows ("GROUP BY (Transact-SQL)",
# learn.microsoft.com/sql/t-sql/queries/select-group-by-transact-sql).
ERROR_CHARS = 120


class Inspection:
    """Reads of a queue table for the command line and the stats; none takes a lock it waits for."""

    def __init__(self, engine: Engine, lifecycle: Lifecycle, claims: Claims) -> None:
        self.engine, self.lifecycle, self.claims = engine, lifecycle, claims

    @cached
    def peek(self, table: TableName, profile: Profile, columns: Sequence[str]) -> Statement:
        """The next ready rows in the profile's claim order (by key where it has none, as a heap claim
        takes them from no index), without claiming or locking them."""
        e = self.engine
        cols = ", ".join(e.quote(c) for c in columns)
        order_by = self.lifecycle.order_by(profile.ranking)
        ready = self.claims.ready(table, profile)
        return e.compile(
            e.select_first(cols, f"{e.table(table)}{e.skip_locked_hints()} WHERE {ready} ORDER BY {order_by}")
        )

    @cached
    def ping(self, table: TableName | None = None) -> Statement:
        """A query any live connection answers: whether one that just failed is still there."""
        return self.engine.compile("SELECT 1")

    @cached
    def count_by_state(self, table: TableName) -> Statement:
        """Rows and the oldest enqueue time per state, rows of unpublished sink batches apart, and rows runs hold
        (statements.runs), which stay ready in the table, counted as claimed."""
        e, tag = self.engine, self.claims.row_tag(table)
        q = e.quote
        shown = (
            f"CASE WHEN {self.lifecycle.in_run(table, NATIVE)} THEN '{CLAIMED}' "
            f"WHEN {tag} IS NOT NULL AND EXISTS ({self.claims.listed_tag(table, tag)}) "
            f"THEN '{UNPUBLISHED}' ELSE {q('state')} END"
        )
        return e.compile(
            f"SELECT s.{q('state')}, COUNT(*), MIN(s.{q('enqueued_at')}) "
            f"FROM (SELECT {shown} AS {q('state')}, {q('enqueued_at')} FROM {e.table(table)}) AS s "
            f"GROUP BY s.{q('state')}"
        )

    @cached
    def count_done_since(self, table: TableName) -> Statement:
        """Rows completed (and kept) since ``:since``: the recent throughput of completion=keep queues."""
        e = self.engine
        q = e.quote
        return e.compile(
            f"SELECT COUNT(*) FROM {e.table(table)} WHERE {q('state')} = '{DONE}' AND {q('completed_at')} >= :since"
        )

    @cached
    def recent_waits(self, table: TableName) -> Statement:
        """The wait figures of the rows claimed since ``:since`` that are still in the table, in any
        state (``sqlqueue stats``). No index has claimed_at: this reads the whole table, as the
        counts per state do. Rows being claimed or written are skipped rather than waited for."""
        e = self.engine
        where = f"{e.quote('claimed_at')} >= :since"
        source = f"{e.table(table)}{e.skip_locked_hints()}"
        return e.compile(self.claims.wait_figures(source, "enqueued_at", "claimed_at", where))

    @cached
    def count_rows(self, table: TableName) -> Statement:
        return self.engine.compile(f"SELECT COUNT(*) FROM {self.engine.table(table)}")

    @cached
    def adopted_by_status(self, table: TableName, profile: Profile) -> Statement | None:
        """Rows of this stream (the profile's filter) per status value, where the profile has a status;
        where it has a due time, also how many of them wait for it (a retry's backoff) and the
        milliseconds until the first of those is due."""
        if profile.status is None:
            return None
        e = self.engine
        status = e.quote(profile.status)
        waiting = ""
        if profile.due is not None:
            now, due = self.lifecycle.clock(profile), e.quote(profile.due)
            later = f"{due} > {now}"
            waiting = (
                f", SUM(CASE WHEN {later} THEN 1 ELSE 0 END), "
                f"MIN(CASE WHEN {later} THEN {e.millis_between(now, due)} END)"
            )
        where = "" if profile.filter is None else f" WHERE {e.filter_condition(profile.filter)}"
        return e.compile(f"SELECT {status}, COUNT(*){waiting} FROM {e.table(table)}{where} GROUP BY {status}")

    @cached
    def adopted_errors(self, table: TableName, profile: Profile) -> Statement | None:
        """The failed rows of this stream per error text (its first ERROR_CHARS characters), the most
        frequent first, where the profile has a failed status and an error column."""
        if None in (profile.status, profile.failed, profile.error):
            return None
        e = self.engine
        text = f"SUBSTRING({e.quote(profile.error or '')}, 1, {ERROR_CHARS})"
        where = self.lifecycle.status_in(profile, (profile.failed or "",))
        if profile.filter is not None:
            where += f" AND {e.filter_condition(profile.filter)}"
        return e.compile(
            f"SELECT {text}, COUNT(*) FROM {e.table(table)} WHERE {where} GROUP BY {text} ORDER BY COUNT(*) DESC"
        )
