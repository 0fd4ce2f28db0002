"""``sqlqueue doctor``: look at a live queue table and its database for what would hurt a queue.

Each finding says what is wrong, why it hurts, and the statement that fixes it. The queries and
the fix statements come from the dialect (so they are in the statement catalog, parsed and
pinned); this module holds the judgement. The doctor connects without changing any setting.
"""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from .dialects.odbc import FREETDS_DESCRIBES_PARAMS
from .queue import Queue
from .schema import CLAIMED, LAYOUT, READY, READY_INDEX_KEY

if TYPE_CHECKING:  # each engine's checks read facts only its own dialect states
    from .dialects.postgres import PostgresDialect
    from .dialects.sqlite import SqliteDialect
    from .dialects.sqlserver import SqlServerDialect

PROBLEM, NOTE, OK = "problem", "note", "ok"
# PostgreSQL: dead row versions worth a finding once they pass this and outnumber the live rows.
DEAD_TUPLES_WORTH_A_LOOK = 1000
# SQL Server: sys.dm_exec_sessions.transaction_isolation_level values.
ISOLATION_LEVELS = {
    0: "unspecified",
    1: "READ UNCOMMITTED",
    2: "READ COMMITTED",
    3: "REPEATABLE READ",
    4: "SERIALIZABLE",
    5: "SNAPSHOT",
}
OPENJSON_LEVEL = 130
_SHOWPLAN = "{http://schemas.microsoft.com/sqlserver/2004/07/showplan}"


@dataclass(frozen=True)
class Finding:
    severity: str
    check: str
    message: str
    fix: tuple[str, ...] = ()


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
    findings = [_layout(queue)]
    findings += list(_indexes(queue, order))
    findings += list(_ENGINE_CHECKS[queue.dialect.name](queue, order))
    return findings


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


def indexes_read(showplan_xml: str, table: str) -> set[tuple[str, str]]:
    """(physical operator, index) of every scan or seek of ``table`` in an estimated plan."""
    read = set()
    for op in ElementTree.fromstring(showplan_xml).iter(f"{_SHOWPLAN}RelOp"):
        for scan in op.findall(f"{_SHOWPLAN}IndexScan"):
            for obj in scan.findall(f"{_SHOWPLAN}Object"):
                if obj.get("Table", "").strip("[]") == table:
                    read.add((op.get("PhysicalOp", ""), obj.get("Index", "").strip("[]")))
    return read


def _claim_plan(queue: Queue, order: str) -> Iterator[Finding]:
    ready = queue.dialect.ready_index(queue.table)
    read = indexes_read(queue.claim_plan(order), queue.table.name)
    if any(index == ready for _, index in read) and not any(op == "Clustered Index Scan" for op, _ in read):
        yield Finding(OK, "claim plan", f"the claim's estimated plan reads the ready rows through {ready}")
        return
    shown = ", ".join(f"{op} on {index}" for op, index in sorted(read)) or "no index of the table"
    yield Finding(
        PROBLEM,
        "claim plan",
        f"the claim's estimated plan reads {shown}, not the ready index {ready}: it passes done and failed rows "
        "and holds update locks on them; create the ready index for this order (or drop a conflicting one)",
        (queue.dialect.index_statements(queue.table, order)[ready],),
    )


def _driver(queue: Queue) -> Iterator[Finding]:
    driver = queue.driver()
    reported = f"{driver.name} {driver.version}"
    if not driver.freetds:
        yield Finding(OK, "driver", reported)
        return
    old = (
        ""
        if driver.describes_params
        else (
            f" Before {'.'.join(map(str, FREETDS_DESCRIBES_PARAMS))} FreeTDS cannot describe parameters, so "
            "pyodbc's fast_executemany binds VARCHAR(255) and can crash the process: sqlqueue never uses it and sends "
            "bulk rows as one NVARCHAR(MAX) JSON parameter per chunk instead."
        )
    )
    yield Finding(
        NOTE,
        "driver",
        f"{reported}.{old} FreeTDS checks the server's TLS certificate only when a CA file is configured "
        "(freetds.conf 'ca file'); see conf/sqlserver-freetds.toml",
    )


def _sqlserver(queue: Queue, order: str) -> Iterator[Finding]:
    d, t = cast("SqlServerDialect", queue.dialect), queue.table
    yield from _driver(queue)
    (level,) = queue.facts(d.session_isolation)[0]
    if level == 2:
        yield Finding(OK, "isolation level", "the session runs at READ COMMITTED")
    else:
        yield Finding(
            PROBLEM,
            "isolation level",
            f"the session runs at {ISOLATION_LEVELS.get(level, level)}, not READ COMMITTED, although sqlqueue sets "
            "it when it connects (a login trigger or the driver's setup changed it): READPAST is refused outside "
            "READ COMMITTED and REPEATABLE READ (error 650)",
            (d.session_setup(t).sql,),
        )
    snapshot, escalation, compatibility = queue.facts(d.database_settings)[0]
    if compatibility < OPENJSON_LEVEL:
        yield Finding(
            PROBLEM,
            "compatibility level",
            f"the database's compatibility level is {compatibility}: sqlqueue enqueues through OPENJSON, which needs "
            f"{OPENJSON_LEVEL} (SQL Server 2016) or later; raising it changes how every query of the database is "
            "optimised, so test the workload first",
            (d.compatibility_level_fix(t).sql,),
        )
    else:
        yield Finding(OK, "compatibility level", f"compatibility level {compatibility} has OPENJSON")
    if snapshot:
        yield Finding(
            NOTE,
            "read committed snapshot",
            "READ_COMMITTED_SNAPSHOT is ON. SQL Server refuses READPAST under snapshot-based read committed "
            "(error 650) unless the statement also says READCOMMITTEDLOCK, and every sqlqueue claim does: its "
            "claims read this table with locks, as under locking read committed, so they skip rows other "
            "consumers hold while other readers keep reading row versions. Any other client that uses READPAST "
            "on this table must add READCOMMITTEDLOCK too. Nothing to fix for sqlqueue; turning it off changes "
            "every reader of the database",
            (d.read_committed_snapshot_off(t).sql,),
        )
    else:
        yield Finding(OK, "read committed snapshot", "READ_COMMITTED_SNAPSHOT is OFF")
    if str(escalation).upper() != "DISABLE":
        yield Finding(
            PROBLEM,
            "lock escalation",
            f"lock escalation is {escalation}: a statement holding about 5,000 locks on the table (a large claim, "
            "completion or purge) escalates to a table lock and blocks every other consumer",
            tuple(d.table_options(t)),
        )
    else:
        yield Finding(OK, "lock escalation", "lock escalation is DISABLE")
    for (trigger,) in queue.facts(d.enabled_triggers):
        yield Finding(
            PROBLEM,
            "trigger",
            f"trigger {trigger} is enabled: claims return their rows with UPDATE ... OUTPUT (without INTO), which "
            "SQL Server refuses on a table with enabled triggers (error 334); move its work elsewhere or disable it",
            (d.disable_trigger(t, trigger).sql,),
        )
    if queue.layout() == LAYOUT:  # the claim of this sqlqueue reads tables an older layout lacks
        yield from _claim_plan(queue, order)


def _postgres(queue: Queue, order: str) -> Iterator[Finding]:
    d, t = cast("PostgresDialect", queue.dialect), queue.table
    rows = queue.facts(d.vacuum_stats)
    if not rows:
        return
    live, dead, last_autovacuum, last_vacuum = rows[0]
    vacuumed = last_autovacuum or last_vacuum
    when = f"last vacuum {vacuumed:%Y-%m-%d %H:%M:%S %Z}" if isinstance(vacuumed, dt.datetime) else "never vacuumed"
    summary = f"{dead} dead row versions against {live} live rows ({when})"
    if dead >= DEAD_TUPLES_WORTH_A_LOOK and dead > live:
        yield Finding(
            PROBLEM,
            "dead tuples",
            f"{summary}: every claim and completion leaves a dead row version, and claims wade through them "
            "until vacuum removes them; vacuum now, and let autovacuum run after a fixed number of dead rows",
            (d.vacuum(t).sql, d.eager_autovacuum(t).sql),
        )
    else:
        yield Finding(OK, "dead tuples", summary)


def _sqlite(queue: Queue, order: str) -> Iterator[Finding]:
    d = cast("SqliteDialect", queue.dialect)
    (mode,) = queue.facts(d.journal_mode)[0]
    if str(mode).lower() != "wal":
        yield Finding(
            PROBLEM,
            "journal mode",
            f"journal_mode is {mode}, not WAL: readers block the one writer and every claim waits for them "
            "(sqlqueue turns WAL on when it connects; something switched it back or never connected through it)",
            (d.wal_on(queue.table).sql,),
        )
    else:
        yield Finding(OK, "journal mode", "journal_mode is WAL")


_ENGINE_CHECKS: dict[str, Callable[[Queue, str], Iterator[Finding]]] = {
    "sqlserver": _sqlserver,
    "postgres": _postgres,
    "sqlite": _sqlite,
}


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
