"""Every statement the SQL Server dialect can send parses as T-SQL.

No SQL Server runs here, so sqlfluff's ``tsql`` dialect is the syntax check (sqlglot is not one: it
rejects valid ``UPDATE TOP (n)`` and accepts invalid statements). sqlfluff does not know ``?``
markers, so they become ``@p1, @p2, ...`` first. The negative controls show the check can fail.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import pytest
from sqlfluff.core import Linter

from sqlqueue.dialects import dialect_for
from tests.support.statements import Entry, catalog, claim_name


@dataclass(frozen=True)
class Allowed:
    """Valid T-SQL that sqlfluff cannot parse, with the Microsoft reference that makes it valid."""

    pattern: re.Pattern[str]
    reason: str


ALLOWED_UNPARSABLE = (
    Allowed(
        re.compile(r"ALTER TABLE \[\w+\]\.\[\w+\] SET \(LOCK_ESCALATION = (AUTO|TABLE|DISABLE)\)"),
        "ALTER TABLE (Transact-SQL): <table_option> ::= SET ( LOCK_ESCALATION = { AUTO | TABLE | DISABLE } ), "
        "SQL Server 2008 and later, Azure SQL Database, Azure SQL Managed Instance; "
        "https://learn.microsoft.com/sql/t-sql/statements/alter-table-transact-sql",
    ),
)

_LINTER = Linter(dialect="tsql")
ENTRIES = catalog(dialect_for("sqlserver"))


def allowance(sql: str) -> Allowed | None:
    return next((a for a in ALLOWED_UNPARSABLE if a.pattern.fullmatch(sql)), None)


def with_variables(sql: str) -> str:
    """``?`` markers as T-SQL variables @p1, @p2, ... (the dialect's SQL has no ``?`` in literals)."""
    numbers = itertools.count(1)
    return re.sub(r"\?", lambda _: f"@p{next(numbers)}", sql)


def tsql_problems(sql: str) -> list[str]:
    """Parse errors and unparsable sections sqlfluff finds in one statement; empty when it parses."""
    parsed = _LINTER.parse_string(with_variables(sql))
    problems = [v.desc() for v in parsed.violations]
    if parsed.tree is None:
        return problems + ["no parse tree"]
    return problems + [f"unparsable: {s.raw!r}" for s in parsed.tree.recursive_crawl("unparsable")]


def ids(entries: list[Entry]) -> list[str]:
    return [e.name for e in entries]


PARSABLE = [e for e in ENTRIES if allowance(e.sql) is None]
ALLOWED = [e for e in ENTRIES if allowance(e.sql) is not None]


@pytest.mark.parametrize("entry", PARSABLE, ids=ids(PARSABLE))
def test_statement_parses_as_tsql(entry: Entry) -> None:
    assert tsql_problems(entry.sql) == [], entry.sql


@pytest.mark.parametrize("entry", ALLOWED, ids=ids(ALLOWED))
def test_allow_listed_statement_is_still_unparsable_by_sqlfluff(entry: Entry) -> None:
    """When sqlfluff learns the syntax, the entry must go, so the allow-list stays honest."""
    assert tsql_problems(entry.sql), f"sqlfluff parses this now; drop its ALLOWED_UNPARSABLE entry:\n{entry.sql}"


@pytest.mark.parametrize("allowed", ALLOWED_UNPARSABLE, ids=lambda a: a.pattern.pattern[:40])
def test_every_allow_list_entry_matches_an_emitted_statement(allowed: Allowed) -> None:
    assert any(allowed.pattern.fullmatch(e.sql) for e in ENTRIES)


def test_markers_become_numbered_variables() -> None:
    assert with_variables("UPDATE TOP (?) t SET a = ? WHERE b = ?") == "UPDATE TOP (@p1) t SET a = @p2 WHERE b = @p3"


INVALID = {
    "top_without_parentheses": "UPDATE TOP q SET a = 1",
    "set_without_assignment": "UPDATE jobs SET WHERE x = 1",
    "unknown_table_hint": "UPDATE jobs WITH (FOOLOCK) SET a = 1",
    "update_top_with_order_by": "UPDATE TOP (@p1) jobs SET a = 1 ORDER BY id",
}


@pytest.mark.parametrize("sql", INVALID.values(), ids=INVALID.keys())
def test_checker_rejects_invalid_tsql(sql: str) -> None:
    assert tsql_problems(sql)


def test_checker_rejects_an_emitted_claim_with_a_misspelled_hint() -> None:
    claim = next(e.sql for e in ENTRIES if e.name == claim_name("fifo", False, False))
    assert "READPAST" in claim
    assert tsql_problems(claim.replace("READPAST", "READPASTE"))


def test_checker_rejects_the_dedup_insert_with_a_misspelled_hint() -> None:
    insert = next(e.sql for e in ENTRIES if e.name.endswith("insert_new_keys"))
    assert "HOLDLOCK" in insert
    assert tsql_problems(insert.replace("HOLDLOCK", "HOLDLOK"))


def test_checker_rejects_the_ready_index_rebuild_with_a_misspelled_option() -> None:
    rebuild = next(e.sql for e in ENTRIES if e.name == "migrate_06_ready_index_1_fifo")
    assert "DROP_EXISTING = ON, ONLINE = ON" in rebuild
    assert tsql_problems(rebuild.replace("DROP_EXISTING", "DROP_EXISTNG"))
