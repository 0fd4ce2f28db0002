"""What ``sqlqueue doctor`` reads of a live table and its database: its indexes, and each engine's own checks.

An engine's own checks (``Doctor.checks``, in the engine's doctor subclass) judge facts only its
catalog has, and return findings (``sqlqueue.findings``); ``sqlqueue.doctor`` adds the checks every
engine shares. What ``sqlqueue stats`` and ``peek`` read is in ``inspection``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol, TypeVar

from ...findings import Finding
from ...identifiers import TableName
from ..engine import Engine, Statement, cached
from .claims import Claims
from .lifecycle import Lifecycle
from .runs import Runs
from .schema import Schema

T = TypeVar("T")


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
    """The table's indexes, and the engine's own checks (``checks``, ``adopted_checks``: each engine's
    doctor subclass has its own)."""

    def __init__(self, engine: Engine, schema: Schema, lifecycle: Lifecycle, claims: Claims, runs: Runs) -> None:
        self.engine, self.schema, self.lifecycle, self.claims, self.runs = engine, schema, lifecycle, claims, runs

    def checks(self, live: LiveTable, order: str) -> Iterator[Finding]:
        """Findings on what only this engine has (settings, triggers, vacuum), for claims in ``order``."""
        return iter(())

    def adopted_checks(self, live: LiveTable) -> Iterator[Finding]:
        """Findings on what only this engine has, for a table sqlqueue adopted."""
        return iter(())

    @cached
    def table_indexes(self, table: TableName) -> Statement:
        return self.engine.compile(self.engine.indexes_sql(table))
