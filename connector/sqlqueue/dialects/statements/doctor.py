"""What the sqlqueue command reads without changing anything: doctor's facts, stats and peek.

An engine's own checks (``Doctor.checks``, in the engine's doctor subclass) judge facts only its
catalog has, and return findings in the doctor's terms; ``sqlqueue.doctor`` adds the checks every
engine shares.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ...errors import DatabaseError
from ...identifiers import TableName
from ...profile import Profile
from ...schema import (
    DONE,
    UNPUBLISHED,
)
from ..engine import Engine, Statement, cached
from .claims import Claims
from .lifecycle import Lifecycle
from .schema import Schema

PROBLEM, NOTE, OK = "problem", "note", "ok"
T = TypeVar("T")


@dataclass(frozen=True)
class Finding:
    severity: str
    check: str
    message: str
    fix: tuple[str, ...] = ()
    # Checks this finding says the server cannot be judged by (a server that is not what it answers for):
    # their findings are left out rather than propose fixes that cannot apply.
    unjudged: tuple[str, ...] = ()


def guarded(check: str, findings: Callable[[], Iterable[Finding]]) -> list[Finding]:
    """The findings of one check; a check the database cannot answer (a missing permission, a
    catalog view or statement the server lacks) is a finding that says so, and the others still run."""
    try:
        return list(findings())
    except DatabaseError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return [Finding(NOTE, check, f"{check} not checked: {reason}")]


class LiveTable(Protocol):
    """What a check may ask of a live queue table (``sqlqueue.queue.Queue`` answers it)."""

    table: TableName

    def facts(self, builder: Callable[[TableName], Statement]) -> list[tuple]:
        """Rows of one of the dialect's catalog queries about this table and its database."""
        ...

    def layout(self) -> int: ...

    def look(self, at: Callable[[Any], T]) -> T:
        """``at(connection)``, for what a driver reports or a statement that changes nothing."""
        ...


class Doctor:
    """What the sqlqueue command reads: the table's indexes, peek, the counts and waits of stats, and the
    engine's own checks (``checks``, ``adopted_checks``: each engine's doctor subclass has its own)."""

    def __init__(self, engine: Engine, schema: Schema, lifecycle: Lifecycle, claims: Claims) -> None:
        self.engine, self.schema, self.lifecycle, self.claims = engine, schema, lifecycle, claims

    def checks(self, live: LiveTable, order: str) -> Iterator[Finding]:
        """Findings on what only this engine has (settings, triggers, vacuum), for claims in ``order``."""
        return iter(())

    def adopted_checks(self, live: LiveTable) -> Iterator[Finding]:
        """Findings on what only this engine has, for a table sqlqueue adopted."""
        return iter(())

    @cached
    def table_indexes(self, table: TableName) -> Statement:
        return self.engine.compile(self.engine.indexes_sql(table))

    @cached
    def peek(self, table: TableName, profile: Profile, columns: Sequence[str]) -> Statement:
        """The next ready rows in the profile's claim order (by key where it has none, as a heap claim
        takes them from no index), without claiming or locking them."""
        e = self.engine
        cols = ", ".join(e.quote(c) for c in columns)
        order_by = self.lifecycle.order_by(profile.order or tuple((k, "ASC") for k in profile.key))
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
        """Rows and the oldest enqueue time per state, rows of unpublished sink batches apart."""
        e, tag = self.engine, self.claims.row_tag(table)
        q = e.quote
        shown = (
            f"CASE WHEN {tag} IS NOT NULL AND EXISTS ({self.claims.listed_tag(table, tag)}) "
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
        return e.compile(self.claims.wait_figures(table, "enqueued_at", "claimed_at", where, e.skip_locked_hints()))
