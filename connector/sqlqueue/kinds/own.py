"""sqlqueue's own layout: a table `sqlqueue create` made, whose rows carry their own bookkeeping (the
consumer and claim number of the claim holding them, the lease's end, the sink batch's tag).

It supports every capability (``capabilities.Capability``). Its profile is ``profile.NATIVE``, claimed in
the order the stream's option names. Its layout is versioned (``sqlqueue migrate``): a table of another
layout than this code's is refused until migrated.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..capabilities import Capability
from ..errors import SchemaError, layout_mismatch
from ..findings import OK, PROBLEM, Finding, guarded
from ..identifiers import TableName
from ..numbering import Identity
from ..profile import NATIVE, Profile, native
from ..schema import (
    CLAIMED,
    DEFAULT_SOURCE_LIFECYCLE,
    DONE,
    FAILED,
    LAYOUT,
    LAYOUT_1_COLUMNS,
    LIFECYCLE_NAMES,
    LIFECYCLE_TYPES,
    READY,
    READY_INDEX_KEY,
    UNRECORDED_LAYOUT,
    Column,
    Included,
    Subtype,
    writable_columns,
)
from ..waits import hms
from .holds import MarksOrRuns
from .kind import Adoption, Holds, Served

CAPABILITIES = frozenset(Capability)
# What `sqlqueue peek` shows of a row besides its domain columns.
PEEKED_LIFECYCLE = ("id", "priority", "enqueued_at", "due_at", "attempts", "dedup_key")


class OwnLayout:
    declared: Profile | None = None
    capabilities = CAPABILITIES
    shown_lifecycle: tuple[str, ...] = DEFAULT_SOURCE_LIFECYCLE
    holds: Holds = MarksOrRuns()
    ready_rule = "ready, due, not in an unpublished sink batch"

    def __init__(self) -> None:
        self._spelling: dict[str, str] | None = None  # lower-case name -> the table's spelling
        self._identity: Identity | None = None

    def describe(self) -> str:
        return "in sqlqueue's own layout"

    def instead(self, capability: Capability) -> str:
        return ""  # it supports every capability

    def profile(self, queue: Served) -> Profile:
        return NATIVE

    def claim_profile(self, queue: Served, order: str) -> Profile:
        return native(order)

    def subtypes(self, queue: Served) -> tuple[Subtype, ...]:
        return ()

    def columns(self, queue: Served) -> tuple[Column, ...]:
        """The table's columns as the database reports them, lifecycle columns with their own types."""
        rows = queue.fetch(queue.dialect.schema.table_columns(queue.table), queue.catalog_names())
        if not rows:
            raise SchemaError(f"queue table {queue.table} does not exist at {queue.spec.display}: create it first")
        portable = queue.engine.portable_type
        return tuple(LIFECYCLE_TYPES.get(n) or Column(n, portable(t), bool(nullable)) for n, t, nullable in rows)

    def identity(self, queue: Served) -> Identity:
        """Read once: a table keeps the step it was made with (Engine.id_step when sqlqueue made it)."""
        if self._identity is None:
            statement = queue.dialect.sink.identity(queue.table)
            rows = queue.fetch(statement, {}) if statement is not None else []
            self._identity = Identity(int(rows[0][0]), bool(rows[0][1])) if rows else Identity()
        return self._identity

    def domain_columns(self, queue: Served) -> tuple[Column, ...]:
        return tuple(c for c in self.columns(queue) if c.name not in LIFECYCLE_NAMES)

    def spelled(self, queue: Served, names: Sequence[str]) -> tuple[str, ...]:
        """``names`` as the table spells them: a stream names its columns as its options do, in any case.
        The table's names are read once (a queue's columns change only by migrate or a DBA's ALTER)."""
        if self._spelling is None:
            self._spelling = {c.name.lower(): c.name for c in self.columns(queue)}
        missing = [n for n in names if n.lower() not in self._spelling]
        if missing:
            raise SchemaError(f"column(s) {', '.join(missing)} are not in table {queue.table}")
        return tuple(self._spelling[n.lower()] for n in names)

    def require_layout(self, queue: Served) -> None:
        found = layout(queue)
        if found != LAYOUT:
            raise layout_mismatch(queue.table, queue.spec.display, found, LAYOUT)

    def writable(self, queue: Served, names: Sequence[str]) -> tuple[Column, ...]:
        return writable_columns(names, self.columns(queue), queue.table)

    def findings(self, queue: Served, order: str) -> list[Finding]:
        return [
            *guarded("layout", lambda: [_layout(queue)]),
            *guarded("indexes", lambda: _indexes(queue, order)),
            *queue.dialect.doctor.checks(queue, order),
        ]

    def peeked(self, queue: Served) -> tuple[str, ...]:
        return (*PEEKED_LIFECYCLE, *(c.name for c in self.domain_columns(queue)))

    def layout(self, queue: Served) -> int:
        return layout(queue)

    def included(
        self, queue: Served, given: Sequence[str], structs: Mapping[str, Sequence[str]]
    ) -> tuple[Included, ...]:
        return ()  # no subtype tables: Producing.included refuses struct columns first

    def adoption(self, queue: Served, index: bool = True) -> Adoption | None:
        return None

    def staging(self, queue: Served, table: TableName) -> TableName:
        return queue.dialect.schema.staging(table)

    def new_row(self, queue: Served, names: Sequence[str]) -> dict[str, str]:
        return {}  # the table's defaults give a new row its lifecycle values

    def stats(self, queue: Served) -> dict[str, dict[str, Any]]:
        """Rows per state, rows of unpublished sink batches apart, with the oldest enqueue time in each."""
        rows = queue.fetch(queue.dialect.inspection.count_by_state(queue.table), {})
        return {str(state): {"rows": n, "oldest_enqueued_at": oldest} for state, n, oldest in rows}

    def state_lines(self, queue: Served, now: dt.datetime) -> list[str]:
        """Every state, with the age of its oldest row (h:mm:ss)."""
        states = self.stats(queue)
        lines = [f"{'state':14} {'rows':>12}  oldest enqueued (h:mm:ss ago)"]
        for state in (READY, CLAIMED, FAILED, DONE):
            found = states.get(state, {"rows": 0, "oldest_enqueued_at": None})
            when = queue.engine.decode_timestamp(found["oldest_enqueued_at"])
            age = "-" if when is None else hms(max(int((now - when).total_seconds()), 0))
            lines.append(f"{state:14} {found['rows']:>12,}  {age}")
        return lines


def layout(queue: Served) -> int:
    """The table's layout: the highest one recorded, else 1 for a queue table made before layouts were
    recorded (it has every layout-1 lifecycle column). Reads only the catalog and the layout table, so it
    is safe on any table."""
    rows = queue.fetch(queue.dialect.schema.table_columns(queue.table), queue.catalog_names())
    if not rows:
        raise SchemaError(f"queue table {queue.table} does not exist at {queue.spec.display}: create it first")
    if queue.fetch(queue.dialect.schema.has_layout_table(queue.table), {})[0][0]:
        recorded = queue.fetch(queue.dialect.schema.recorded_layout(queue.table), {})[0][0]
        if recorded is not None:
            return int(recorded)
    names = {str(r[0]) for r in rows}
    missing = [n for n in LAYOUT_1_COLUMNS if n not in names]
    if missing:
        raise SchemaError(
            f"table {queue.table} at {queue.spec.display} is not a sqlqueue queue table: it has no layout "
            f"recorded and no {', '.join(missing)} column(s)"
        )
    return UNRECORDED_LAYOUT


@dataclass(frozen=True)
class Index:
    name: str
    predicate: str | None
    first_column: str | None

    def serves(self, state: str, first_column: str) -> bool:
        """A seek for rows in ``state``: filtered to it with the right leading key, or keyed by state."""
        if self.first_column == "state":
            return True
        predicate = (self.predicate or "").lower()
        return "state" in predicate and f"'{state}'" in predicate and self.first_column == first_column


def _layout(queue: Served) -> Finding:
    found = queue.layout()
    if found == LAYOUT:
        return Finding(OK, "layout", f"layout {LAYOUT}, the one this sqlqueue runs on")
    if found > LAYOUT:
        return Finding(
            PROBLEM, "layout", f"layout {found} is newer than this sqlqueue's layout {LAYOUT}: upgrade sqlqueue"
        )
    return Finding(
        PROBLEM,
        "layout",
        f"layout {found} is older than this sqlqueue's layout {LAYOUT}, so sources and sinks refuse to start: "
        "run `sqlqueue migrate` (`sqlqueue migrate --print` prints the script)",
    )


def _indexes(queue: Served, order: str) -> Iterator[Finding]:
    indexes = [Index(*row) for row in queue.facts(queue.dialect.doctor.table_indexes)]
    create = queue.dialect.schema.index_statements(queue.table, order)
    t = queue.table.name
    needs = (
        (
            READY,
            READY_INDEX_KEY[order][0][0],
            f"ix_{t}_ready",
            f"no index seeks the ready rows in {order} order: every claim scans the table, and a scan under "
            "READPAST/SKIP LOCKED reads past other consumers' locks row by row (blocking and deadlocks on SQL Server)",
        ),
        (
            CLAIMED,
            "consumer",
            f"ix_{t}_claimed",
            "no index seeks claimed rows by (consumer, claim_seq): every micro-batch's read and completion scans "
            "the table",
        ),
    )
    for state, first_column, name, problem in needs:
        serving = [i.name for i in indexes if i.serves(state, first_column)]
        if serving:
            yield Finding(OK, f"{state} index", f"{', '.join(serving)} serves the {state} rows")
        else:
            yield Finding(PROBLEM, f"{state} index", problem, (create[name],))
