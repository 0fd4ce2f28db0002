"""The doctor's judgement on SQL Server, from the facts its (parsed, pinned) queries would return.

No SQL Server runs here: a stand-in queue answers each catalog query with prepared rows.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlqueue.dialects.sqlserver import SqlServerDialect
from sqlqueue.doctor import NOTE, PROBLEM, examine
from sqlqueue.identifiers import TableName

TABLE = TableName("jobs", "dbo")
HEALTHY_INDEXES = [("ix_jobs_ready", "([state]='ready')", "id"), ("ix_jobs_claimed", "([state]='claimed')", "consumer"),
                   ("pk_jobs", None, "id")]


@dataclass
class FactsQueue:
    """Answers Queue.facts(builder) from a dict; everything else the doctor uses is real."""

    answers: dict[str, list[tuple]] = field(default_factory=dict)
    dialect: SqlServerDialect = field(default_factory=SqlServerDialect)
    table: TableName = TABLE

    def facts(self, builder: str) -> list[tuple]:
        return self.answers[builder]


def findings(**answers: list[tuple]) -> dict[str, tuple[str, tuple[str, ...]]]:
    facts = {"table_indexes": HEALTHY_INDEXES, "database_settings": [(False, "DISABLE")], "enabled_triggers": []}
    facts.update(answers)
    return {f.check: (f.severity, f.fix) for f in examine(FactsQueue(facts), "fifo") if f.severity != "ok"}


def test_a_healthy_table_has_no_findings():
    assert findings() == {}


def test_read_committed_snapshot_is_a_note_because_claims_carry_readcommittedlock():
    assert findings(database_settings=[(True, "DISABLE")]) == {
        "read committed snapshot": (NOTE, ("ALTER DATABASE CURRENT SET READ_COMMITTED_SNAPSHOT OFF WITH ROLLBACK IMMEDIATE",)),
    }


def test_lock_escalation_left_on_is_a_problem_fixed_by_disabling_it():
    assert findings(database_settings=[(False, "TABLE")]) == {
        "lock escalation": (PROBLEM, ("ALTER TABLE [dbo].[jobs] SET (LOCK_ESCALATION = DISABLE)",)),
    }


def test_an_enabled_trigger_is_a_problem_fixed_by_disabling_it():
    assert findings(enabled_triggers=[("trg_audit",)]) == {
        "trigger": (PROBLEM, ("DISABLE TRIGGER [trg_audit] ON [dbo].[jobs]",)),
    }


def test_a_claim_without_a_filtered_ready_index_is_a_problem_fixed_by_creating_it():
    severity, fix = findings(table_indexes=HEALTHY_INDEXES[1:])["ready index"]
    assert severity == PROBLEM and fix == (SqlServerDialect().index_statements(TABLE, "fifo")["ix_jobs_ready"],)


def test_a_clustered_key_that_starts_with_the_state_serves_the_claim():
    assert findings(table_indexes=[("cx_jobs", None, "state")]) == {}
