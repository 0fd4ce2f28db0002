"""SQL Server's own doctor checks: session, database settings, triggers, the driver and the claim's plan.

The facts come from SqlServerDoctor's catalog queries (in the statement catalog, parsed and pinned);
this module holds them and the judgement, in the doctor's terms.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from typing import Any

from ..findings import NOTE, OK, PROBLEM, Finding, guarded
from ..identifiers import TableName
from ..profile import native
from ..schema import LAYOUT
from .engine import Statement, cached
from .odbc import FREETDS_DESCRIBES_PARAMS, Driver
from .sqlserver import SqlServerEngine
from .statements.doctor import Doctor, LiveTable

# OPENJSON, the bulk path, needs database compatibility level 130 (SQL Server 2016) or later.
OPENJSON_LEVEL = 130
# sys.dm_exec_sessions.transaction_isolation_level values.
ISOLATION_LEVELS = {
    0: "unspecified",
    1: "READ UNCOMMITTED",
    2: "READ COMMITTED",
    3: "REPEATABLE READ",
    4: "SERIALIZABLE",
    5: "SNAPSHOT",
}
_SHOWPLAN = "{http://schemas.microsoft.com/sqlserver/2004/07/showplan}"
# What the estimated plan of a claim is asked for: SHOWPLAN_XML needs literal values.
_EXAMPLE_CLAIM = {"limit": 1000, "consumer": "sqlqueue-doctor", "seq": 1, "lease_seconds": 300}


class SqlServerDoctor(Doctor):
    """SQL Server's catalog queries and plan requests for the doctor, and its checks."""

    engine: SqlServerEngine

    def checks(self, live: LiveTable, order: str) -> Iterator[Finding]:
        return checks(self, live, order)

    def adopted_checks(self, live: LiveTable) -> Iterator[Finding]:
        return adopted_checks(self, live)

    @cached
    def database_settings(self, table: TableName) -> Statement:
        """(READ_COMMITTED_SNAPSHOT on, the table's lock escalation, compatibility level) of the current database."""
        return self.engine.compile(
            "SELECT d.is_read_committed_snapshot_on, t.lock_escalation_desc, d.compatibility_level "
            "FROM sys.databases AS d CROSS JOIN sys.tables AS t "
            "WHERE d.database_id = DB_ID() AND t.object_id = OBJECT_ID(:object_name)"
        )

    @cached
    def server_version(self, table: TableName) -> Statement:
        """The server's @@VERSION: Babelfish for PostgreSQL's begins with its name."""
        return self.engine.compile("SELECT @@VERSION")

    @cached
    def session_isolation(self, table: TableName) -> Statement:
        """This session's isolation level (2 is READ COMMITTED); a session always sees its own row."""
        return self.engine.compile(
            "SELECT transaction_isolation_level FROM sys.dm_exec_sessions WHERE session_id = @@SPID"
        )

    @cached
    def compatibility_level_fix(self, table: TableName) -> Statement:
        return self.engine.compile(f"ALTER DATABASE CURRENT SET COMPATIBILITY_LEVEL = {OPENJSON_LEVEL}")

    def inline(self, statement: Statement, values: dict[str, Any]) -> str:
        """``statement`` with literal values for its markers: SHOWPLAN_XML shows only "EXECUTE PROC"
        for a statement sent with parameters (sp_executesql), not the plan inside it."""
        literals = iter(
            str(int(v)) if isinstance(v, int) else "N'" + str(v).replace("'", "''") + "'"
            for v in statement.bind(values)
        )
        return "".join(
            part + (next(literals) if i < len(statement.names) else "")
            for i, part in enumerate(statement.sql.split(self.engine.marker))
        )

    def estimated_plan(self, conn: Any, sql: str) -> str:
        """The estimated plan of ``sql`` as showplan XML. Under SHOWPLAN_XML SQL Server compiles the
        statement without running it (https://learn.microsoft.com/sql/t-sql/statements/set-showplan-xml-transact-sql);
        a server that ignores the setting runs it, so it is asked inside a transaction that is always
        rolled back: the doctor changes nothing on any server."""
        with self.engine.rolled_back(conn) as cur:
            cur.execute("SET SHOWPLAN_XML ON")
            try:
                cur.execute(sql)
                return "".join(str(row[0]) for row in cur.fetchall())
            finally:
                cur.execute("SET SHOWPLAN_XML OFF")

    @cached
    def enabled_triggers(self, table: TableName) -> Statement:
        return self.engine.compile(
            "SELECT tr.name FROM sys.triggers AS tr WHERE tr.parent_id = OBJECT_ID(:object_name) AND tr.is_disabled = 0"
        )

    @cached
    def disable_trigger(self, table: TableName, trigger: str) -> Statement:
        return self.engine.compile(f"DISABLE TRIGGER {self.engine.quote(trigger)} ON {self.engine.table(table)}")

    @cached
    def read_committed_snapshot_off(self, table: TableName) -> Statement:
        return self.engine.compile("ALTER DATABASE CURRENT SET READ_COMMITTED_SNAPSHOT OFF WITH ROLLBACK IMMEDIATE")


# Checks whose answers Babelfish gives without acting on them (tests/support/babelfish.py): its catalog keeps
# internal index names (the layout's indexes are checked by name; an adopted table's claim index by its
# columns, which Babelfish answers), reports settings it does not honour (lock escalation, compatibility
# level, READ_COMMITTED_SNAPSHOT), and it ignores SET SHOWPLAN_XML.
BABELFISH_UNJUDGED = (
    "ready index",
    "claimed index",
    "compatibility level",
    "read committed snapshot",
    "lock escalation",
    "claim plan",
)


def is_babelfish(version: object) -> bool:
    """Whether ``SELECT @@VERSION`` came from Babelfish for PostgreSQL, whose version starts with its name."""
    return str(version).lstrip().startswith("Babelfish")


def _server(d: SqlServerDoctor, live: LiveTable) -> Iterator[Finding]:
    (version,) = live.facts(d.server_version)[0]
    first = str(version).splitlines()[0].strip()
    if not is_babelfish(first):
        yield Finding(OK, "server", first)
        return
    yield Finding(
        NOTE,
        "server",
        f"{first}: a TDS server on PostgreSQL, not SQL Server. It parses table hints and ignores them (READPAST, "
        "UPDLOCK: competing claimers wait or deadlock where SQL Server skips locked rows), cannot UPDATE through "
        "a common table expression (the ordered claims fail: claim in heap order, option order=heap), keeps "
        "internal index names in sys.indexes, and reports settings it does not act on: the doctor does not "
        "judge the layout's indexes, lock escalation, compatibility level, READ_COMMITTED_SNAPSHOT or the claim's plan "
        "here (docs/sqlserver.md)",
        unjudged=BABELFISH_UNJUDGED,
    )


def checks(d: SqlServerDoctor, live: LiveTable, order: str) -> Iterator[Finding]:
    yield from guarded("server", lambda: _server(d, live))
    yield from guarded("driver", lambda: [_driver(live.look(d.engine.driver))])
    yield from guarded("isolation level", lambda: _isolation(d, live))
    yield from guarded("database settings", lambda: _database_settings(d, live))
    yield from guarded("trigger", lambda: _triggers(d, live))
    if live.layout() == LAYOUT:  # the claim of this sqlqueue reads tables an older layout lacks
        yield from guarded("claim plan", lambda: [_claim_plan(d, live, order)])


def adopted_checks(d: SqlServerDoctor, live: LiveTable) -> Iterator[Finding]:
    """An adopted table: its triggers (which the claim serves), and the database's read committed snapshot."""
    yield from guarded("server", lambda: _server(d, live))
    yield from guarded("driver", lambda: [_driver(live.look(d.engine.driver))])
    yield from guarded("trigger", lambda: _adopted_triggers(d, live))
    yield from guarded("read committed snapshot", lambda: _snapshot(d, live))


def _adopted_triggers(d: SqlServerDoctor, live: LiveTable) -> Iterator[Finding]:
    for (trigger,) in live.facts(d.enabled_triggers):
        yield Finding(
            NOTE,
            "trigger",
            f"trigger {trigger} is enabled: the claim writes its copies with OUTPUT ... INTO, which SQL Server "
            "allows on a table with enabled triggers (OUTPUT without INTO would fail with error 334); the trigger "
            "runs on every claim and completion, in their transactions (a token it rewrites is read back into "
            "the claim's copies, since OUTPUT shows values from before AFTER triggers)",
        )


def _snapshot(d: SqlServerDoctor, live: LiveTable) -> Iterator[Finding]:
    snapshot, _, _ = live.facts(d.database_settings)[0]
    yield Finding(
        NOTE if snapshot else OK,
        "read committed snapshot",
        "READ_COMMITTED_SNAPSHOT is ON: the claim reads with READCOMMITTEDLOCK, which keeps READPAST legal "
        "(error 650 otherwise); the table's own workers' READPAST needs it too"
        if snapshot
        else "READ_COMMITTED_SNAPSHOT is OFF",
    )


def _isolation(d: SqlServerDoctor, live: LiveTable) -> Iterator[Finding]:
    (level,) = live.facts(d.session_isolation)[0]
    if level == 2:
        yield Finding(OK, "isolation level", "the session runs at READ COMMITTED")
    else:
        yield Finding(
            PROBLEM,
            "isolation level",
            f"the session runs at {ISOLATION_LEVELS.get(level, level)}, not READ COMMITTED, although sqlqueue sets "
            "it when it connects (a login trigger or the driver's setup changed it): READPAST is refused outside "
            "READ COMMITTED and REPEATABLE READ (error 650)",
            (d.engine.session_setup(live.table).sql,),
        )


def _database_settings(d: SqlServerDoctor, live: LiveTable) -> Iterator[Finding]:
    t = live.table
    snapshot, escalation, compatibility = live.facts(d.database_settings)[0]
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
            tuple(d.engine.table_options(t)),
        )
    else:
        yield Finding(OK, "lock escalation", "lock escalation is DISABLE")


def _triggers(d: SqlServerDoctor, live: LiveTable) -> Iterator[Finding]:
    t = live.table
    for (trigger,) in live.facts(d.enabled_triggers):
        yield Finding(
            PROBLEM,
            "trigger",
            f"trigger {trigger} is enabled: claims return their rows with UPDATE ... OUTPUT (without INTO), which "
            "SQL Server refuses on a table with enabled triggers (error 334); move its work elsewhere or disable it",
            (d.disable_trigger(t, trigger).sql,),
        )


def indexes_read(showplan_xml: str, table: str) -> set[tuple[str, str]]:
    """(physical operator, index) of every scan or seek of ``table`` in an estimated plan."""
    read = set()
    for op in ElementTree.fromstring(showplan_xml).iter(f"{_SHOWPLAN}RelOp"):
        for scan in op.findall(f"{_SHOWPLAN}IndexScan"):
            for obj in scan.findall(f"{_SHOWPLAN}Object"):
                if obj.get("Table", "").strip("[]") == table:
                    read.add((op.get("PhysicalOp", ""), obj.get("Index", "").strip("[]")))
    return read


def _estimated(d: SqlServerDoctor, live: LiveTable, sql: str) -> str:
    return str(live.look(lambda conn: d.estimated_plan(conn, sql)))


def _claim_plan(d: SqlServerDoctor, live: LiveTable, order: str) -> Finding:
    t, ready = live.table, d.schema.ready_index(live.table)
    # Both claims: the one that marks its rows, and the read of a claim held as runs (Runs.pick).
    claims = [d.inline(d.claims.claim(t, native(order)).claim, _EXAMPLE_CLAIM)]
    claims.append(d.inline(d.runs.pick(t, native(order)), _EXAMPLE_CLAIM))
    try:
        read = {step for sql in claims for step in indexes_read(_estimated(d, live, sql), t.name)}
    except ElementTree.ParseError:
        return Finding(
            NOTE,
            "claim plan",
            "claim plan not checked: the server answered SET SHOWPLAN_XML ON without a showplan XML document "
            "(a server that is not SQL Server, such as Babelfish, may run the statement instead; sqlqueue asked "
            "inside a transaction it rolled back, so nothing was claimed)",
        )
    if any(index == ready for _, index in read) and not any(op == "Clustered Index Scan" for op, _ in read):
        return Finding(OK, "claim plan", f"the claim's estimated plan reads the ready rows through {ready}")
    shown = ", ".join(f"{op} on {index}" for op, index in sorted(read)) or "no index of the table"
    return Finding(
        PROBLEM,
        "claim plan",
        f"the claim's estimated plan reads {shown}, not the ready index {ready}: it passes done and failed rows "
        "and holds update locks on them; create the ready index for this order (or drop a conflicting one)",
        (d.schema.index_statements(t, order)[ready],),
    )


def _driver(driver: Driver) -> Finding:
    reported = f"{driver.name} {driver.version}"
    if not driver.freetds:
        return Finding(OK, "driver", reported)
    old = (
        ""
        if driver.describes_params
        else (
            f" Before {'.'.join(map(str, FREETDS_DESCRIBES_PARAMS))} FreeTDS cannot describe parameters, so "
            "pyodbc's fast_executemany binds VARCHAR(255) and can crash the process: sqlqueue never uses it and sends "
            "bulk rows as one NVARCHAR(MAX) JSON parameter per chunk instead."
        )
    )
    return Finding(
        NOTE,
        "driver",
        f"{reported}.{old} FreeTDS checks the server's TLS certificate only when a CA file is configured "
        "(freetds.conf 'ca file'); see conf/sqlserver-freetds.toml",
    )
