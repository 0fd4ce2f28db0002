"""The doctor's judgement on SQL Server, from the facts its (parsed, pinned) queries would return.

No SQL Server runs here: a stand-in queue answers each catalog query with prepared rows, reports a
driver, and returns showplan XML shaped like SQL Server's (namespace and RelOp/IndexScan/Object
elements of the showplan schema).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyodbc

from sqlqueue.dialects import Dialect, dialect_for
from sqlqueue.dialects.odbc import Driver
from sqlqueue.doctor import NOTE, PROBLEM, examine
from sqlqueue.identifiers import TableName
from sqlqueue.kinds.own import OwnLayout
from sqlqueue.profile import native
from sqlqueue.schema import LAYOUT

TABLE = TableName("jobs", "dbo")
HEALTHY_INDEXES = [
    ("ix_jobs_ready", "([state]='ready')", "id"),
    ("ix_jobs_claimed", "([state]='claimed')", "consumer"),
    ("pk_jobs", None, "id"),
]


MICROSOFT = Driver("libmsodbcsql-18.3.so.3.1", "18.03.0003")


def showplan(*reads: tuple[str, str]) -> str:
    """A minimal estimated plan whose operators read ``(physical operator, index)`` of dbo.jobs."""
    ops = "".join(
        f'<RelOp PhysicalOp="{op}" LogicalOp="{op}"><IndexScan Ordered="true">'
        f'<Object Database="[q]" Schema="[dbo]" Table="[jobs]" Index="[{index}]" IndexKind="NonClustered"/>'
        "</IndexScan></RelOp>"
        for op, index in reads
    )
    return (
        '<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.564">'
        '<BatchSequence><Batch><Statements><StmtSimple StatementType="UPDATE"><QueryPlan>'
        f'<RelOp PhysicalOp="Clustered Index Update" LogicalOp="Update">{ops}</RelOp>'
        "</QueryPlan></StmtSimple></Statements></Batch></BatchSequence></ShowPlanXML>"
    )


SEEKS_READY = showplan(("Index Scan", "ix_jobs_ready"), ("Clustered Index Seek", "pk_jobs"))
# What the planning connection answers for a login without the SHOWPLAN permission.
REFUSED = "refused"


@dataclass
class FactsQueue:
    """Answers Queue.facts(builder) from a dict, and Queue.look with a planning connection; the rest is real."""

    answers: dict[str, list[tuple]] = field(default_factory=dict)
    plan: str = SEEKS_READY
    reported_driver: Driver = MICROSOFT
    dialect: Dialect = field(default_factory=lambda: dialect_for("sqlserver"))
    table: TableName = TABLE
    recorded_layout: int = LAYOUT

    @property
    def engine(self):
        return self.dialect.engine

    def layout(self) -> int:
        return self.recorded_layout

    def findings(self, order: str) -> list:
        return OwnLayout().findings(self, order)  # type: ignore[arg-type]  # the facts a Queue would read

    def facts(self, builder) -> list[tuple]:
        return self.answers[builder.__name__]

    connection: PlanningConnection | None = None

    def look(self, at):
        self.connection = PlanningConnection(self.plan, self.reported_driver)
        try:
            return at(self.connection)
        except pyodbc.Error as exc:  # as Queue.look maps a driver's error
            raise self.engine.map_error(exc, None, True) from None


@dataclass
class PlanningConnection:
    """A pyodbc connection as the doctor uses it: getinfo names the driver, and a statement run under
    SET SHOWPLAN_XML ON returns its estimated plan as rows of XML."""

    plan: str
    driver: Driver
    executed: list[str] = field(default_factory=list)
    autocommit: bool = True

    def rollback(self) -> None:
        self.executed.append("ROLLBACK")

    def getinfo(self, key: int) -> str:
        return {pyodbc.SQL_DRIVER_NAME: self.driver.name, pyodbc.SQL_DRIVER_VER: self.driver.version}[key]

    def cursor(self) -> PlanningConnection:
        return self

    def execute(self, sql: str) -> None:
        if self.plan == REFUSED and "SHOWPLAN" not in sql:
            raise pyodbc.ProgrammingError("42000", "[42000] SHOWPLAN permission denied in database 'q'. (262)")
        self.executed.append(sql if self.autocommit else f"in a transaction: {sql}")

    def fetchall(self) -> list[tuple[str]]:
        return [(self.plan,)]


FACTS = {
    "server_version": [("Microsoft SQL Server 2022 (RTM) - 16.0.1000.6 (X64)",)],
    "table_indexes": HEALTHY_INDEXES,
    "database_settings": [(False, "DISABLE", 160)],
    "enabled_triggers": [],
    "session_isolation": [(2,)],
}


def findings(
    plan: str = SEEKS_READY, driver: Driver = MICROSOFT, layout: int = LAYOUT, **answers: list[tuple]
) -> dict[str, tuple[str, tuple[str, ...]]]:
    facts = {**FACTS, **answers}
    queue = FactsQueue(facts, plan, driver, recorded_layout=layout)
    return {f.check: (f.severity, f.fix) for f in examine(queue, "fifo") if f.severity != "ok"}  # type: ignore[arg-type]


def test_a_healthy_table_has_no_findings():
    assert findings() == {}


def test_read_committed_snapshot_is_a_note_because_claims_carry_readcommittedlock():
    assert findings(database_settings=[(True, "DISABLE", 160)]) == {
        "read committed snapshot": (
            NOTE,
            ("ALTER DATABASE CURRENT SET READ_COMMITTED_SNAPSHOT OFF WITH ROLLBACK IMMEDIATE",),
        ),
    }


def test_lock_escalation_left_on_is_a_problem_fixed_by_disabling_it():
    assert findings(database_settings=[(False, "TABLE", 160)]) == {
        "lock escalation": (PROBLEM, ("ALTER TABLE [dbo].[jobs] SET (LOCK_ESCALATION = DISABLE)",)),
    }


def test_an_enabled_trigger_is_a_problem_fixed_by_disabling_it():
    assert findings(enabled_triggers=[("trg_audit",)]) == {
        "trigger": (PROBLEM, ("DISABLE TRIGGER [trg_audit] ON [dbo].[jobs]",)),
    }


def test_a_claim_without_a_filtered_ready_index_is_a_problem_fixed_by_creating_it():
    severity, fix = findings(table_indexes=HEALTHY_INDEXES[1:])["ready index"]
    assert severity == PROBLEM and fix == (
        dialect_for("sqlserver").schema.index_statements(TABLE, "fifo")["ix_jobs_ready"],
    )


def test_a_clustered_key_that_starts_with_the_state_serves_the_claim():
    assert findings(table_indexes=[("cx_jobs", None, "state")]) == {}


def test_a_claim_plan_that_scans_the_clustered_index_is_a_problem_fixed_by_the_ready_index():
    severity, fix = findings(plan=showplan(("Clustered Index Scan", "pk_jobs")))["claim plan"]
    assert severity == PROBLEM and fix == (
        dialect_for("sqlserver").schema.index_statements(TABLE, "fifo")["ix_jobs_ready"],
    )


def test_an_older_layout_is_the_one_problem_and_its_claim_plan_is_not_judged():
    # The claim of this sqlqueue reads <q>_unpublished, which a layout-1 table may lack: its plan says nothing.
    assert findings(plan=showplan(("Clustered Index Scan", "pk_jobs")), layout=LAYOUT - 1) == {"layout": (PROBLEM, ())}


def test_a_session_not_at_read_committed_is_a_problem_fixed_by_setting_it():
    assert findings(session_isolation=[(4,)]) == {
        "isolation level": (PROBLEM, ("SET TRANSACTION ISOLATION LEVEL READ COMMITTED",)),
    }


def test_a_compatibility_level_below_openjson_is_a_problem():
    assert findings(database_settings=[(False, "DISABLE", 120)]) == {
        "compatibility level": (PROBLEM, ("ALTER DATABASE CURRENT SET COMPATIBILITY_LEVEL = 130",)),
    }


def test_freetds_is_named_with_its_version_and_what_it_means_for_binding_and_tls():
    queue = FactsQueue(dict(FACTS), reported_driver=Driver("libtdsodbc.so", "01.03.0017"))
    (driver,) = [f for f in examine(queue, "fifo") if f.check == "driver"]  # type: ignore[arg-type]
    assert driver.severity == NOTE
    assert "libtdsodbc.so 01.03.0017" in driver.message and "fast_executemany" in driver.message
    assert "CA file" in driver.message


def test_the_claim_goes_to_showplan_with_literal_values_and_still_parses():
    from tests.unit.test_tsql_parses import tsql_problems

    dialect = dialect_for("sqlserver")
    sql = dialect.doctor.inline(
        dialect.claims.claim(TABLE, native("fifo")).claim,
        {"limit": 1000, "consumer": "o'brien", "seq": 1, "lease_seconds": 300},
    )
    assert "?" not in sql and "TOP (1000)" in sql and "[consumer] = N'o''brien'" in sql
    assert tsql_problems(sql) == []


def test_the_plan_is_asked_inside_a_transaction_that_is_rolled_back():
    # A server that ignores SET SHOWPLAN_XML ON runs the claim instead: the rollback takes it back.
    queue = FactsQueue(dict(FACTS))
    examine(queue, "fifo")  # type: ignore[arg-type]
    assert queue.connection is not None
    executed = queue.connection.executed
    assert executed[0] == "in a transaction: SET SHOWPLAN_XML ON" and executed[-2:] == [
        "in a transaction: SET SHOWPLAN_XML OFF",
        "ROLLBACK",
    ]
    # The last plan asked: the read of a claim held as runs (the claim that marks rows was asked first).
    assert executed[1].startswith("in a transaction: SELECT TOP (1000) [id]") and queue.connection.autocommit


def test_an_answer_that_is_no_showplan_is_a_note_that_the_plan_was_not_checked():
    found = {f.check: f for f in examine(FactsQueue(dict(FACTS), plan="42"), "fifo")}  # type: ignore[arg-type]
    assert found["claim plan"].severity == NOTE
    assert found["claim plan"].message.startswith("claim plan not checked: the server answered SET SHOWPLAN_XML ON")


def test_a_check_the_login_may_not_run_is_a_note_and_the_other_checks_still_run():
    found = {f.check: f for f in examine(FactsQueue(dict(FACTS), plan=REFUSED), "fifo")}  # type: ignore[arg-type]
    assert found["claim plan"].severity == NOTE and "claim plan not checked:" in found["claim plan"].message
    assert "SHOWPLAN permission denied" in found["claim plan"].message and "\n" not in found["claim plan"].message
    assert {"driver", "isolation level", "lock escalation", "ready index"} <= set(found)


def test_babelfish_is_named_with_its_gaps_and_the_checks_it_cannot_answer_propose_no_fix():
    babelfish = [("Babelfish for PostgreSQL with SQL Server Compatibility - 12.0.2000.8\nOct 22 2024",)]
    found = findings(
        server_version=babelfish,
        database_settings=[(True, "TABLE", 120)],
        table_indexes=[],
        plan=showplan(("Clustered Index Scan", "pk_jobs")),
    )
    assert list(found) == ["server"]
    assert found["server"] == (NOTE, ())
