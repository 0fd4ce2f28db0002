"""One step of a layout migration, as the dialect builds it and ``sqlqueue migrate`` runs or prints it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """Statements that take a queue table one step towards the current layout.

    Every step may run again after an interruption: its statements check the catalog first (IF NOT
    EXISTS, guarded blocks), or ``todo`` tells sqlqueue whether anything is left to do, where the
    engine has no conditional DDL.
    """

    name: str  # what tests and goldens call it
    title: str  # what sqlqueue migrate says it does
    statements: tuple[str, ...]
    # The statements move at most ``:limit`` rows, each run in a transaction of its own, again until
    # a run moves fewer (the last statement's row count).
    chunked: bool = False
    # False: each statement commits on its own (PostgreSQL's CREATE INDEX CONCURRENTLY refuses to run
    # in a transaction; SQL Server's index builds run outside one).
    atomic: bool = True
    # A query answering how much is left to do (0: nothing, skip the step); names inlined.
    todo: str | None = None
    # How a DBA's script says the step, when not as ``statements`` (loops for chunked steps).
    script: tuple[str, ...] | None = None
