"""``sqlqueue doctor``: look at a live queue table and its database for what would hurt a queue.

Each finding says what is wrong, why it hurts, and the statement that fixes it. The queries and
the fix statements come from the dialect (so they are in the statement catalog, parsed and
pinned); this module judges what every engine shares (layout, indexes), and each dialect judges
what only its engine has (``Dialect.checks``). The doctor connects without changing any setting.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .adoption import AdoptedQueue
from .dialects.statements.doctor import NOTE, OK, PROBLEM, Finding, guarded
from .errors import SchemaError
from .queue import Queue
from .schema import CLAIMED, LAYOUT, READY, READY_INDEX_KEY

__all__ = ["NOTE", "OK", "PROBLEM", "Finding", "examine", "report"]


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


def examine(queue: Queue, order: str) -> list[Finding]:
    """Every finding for the queue table, whose claims use ``order``."""
    if isinstance(queue, AdoptedQueue):
        return _adopted(queue)
    return [
        *guarded("layout", lambda: [_layout(queue)]),
        *guarded("indexes", lambda: _indexes(queue, order)),
        *queue.dialect.checks(queue, order),
    ]


def _layout(queue: Queue) -> Finding:
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


def _indexes(queue: Queue, order: str) -> Iterator[Finding]:
    indexes = [Index(*row) for row in queue.facts(queue.dialect.table_indexes)]
    create = queue.dialect.index_statements(queue.table, order)
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


def _adopted(queue: AdoptedQueue) -> list[Finding]:
    """An adopted table: its profile fits, sqlqueue's claims and staging tables are there, the claim can seek; then what
    only its engine has (triggers, read committed snapshot)."""
    try:
        profile = queue.profile
    except SchemaError as exc:
        return [Finding(PROBLEM, "profile", str(exc))]
    findings = [Finding(OK, "profile", f"the table fits profile {profile.name} (key {', '.join(profile.key)})")]
    try:
        queue.require_layout()
        findings.append(
            Finding(
                OK,
                "adopted",
                f"sqlqueue's tables {queue.dialect.claims_table(queue.table)} and {queue.staging} are there",
            )
        )
    except SchemaError as exc:
        findings.append(Finding(PROBLEM, "adopted", str(exc), tuple(queue.adoption_statements())))
    index = queue.claim_index()
    if index is None:
        findings.append(Finding(OK, "claim index", "an index leads with the claim's first column"))
    else:
        findings.append(
            Finding(
                PROBLEM,
                "claim index",
                "no index leads with the claim's first column: every claim scans the table, and a scan that "
                "skips locked rows reads past every one of them (blocking and deadlocks on SQL Server)",
                (index,),
            )
        )
    return findings + list(queue.dialect.adopted_checks(queue))


def report(findings: list[Finding], script: Callable[[list[str]], str]) -> str:
    """Findings as text: one line each, the fix statements indented under it."""
    lines = []
    for f in findings:
        lines.append(f"{f.severity.upper():8} {f.check}: {f.message}")
        if f.fix:
            lines.append("         fix:")
            lines += [f"           {line}" for line in script(list(f.fix)).rstrip().splitlines() if line]
    problems = sum(f.severity == PROBLEM for f in findings)
    lines.append(f"{problems} problem(s) found" if problems else "no problems found")
    return "\n".join(lines)
