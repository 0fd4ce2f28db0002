"""The statement catalog is complete: no statement a dialect can emit escapes the parse and golden tests.

A dialect builds statements in two ways: public methods returning a ``Statement`` (DML and queries),
and ``create_statements`` returning DDL text. Both are enumerated from the class itself, so a new
builder fails here until ``tests/support/statements.py`` lists it.
"""

from __future__ import annotations

import inspect
from typing import Any, get_type_hints

import pytest

from sqlqueue.dialects import dialect_for
from sqlqueue.dialects.base import Dialect
from sqlqueue.dialects.engine import Statement
from sqlqueue.dialects.sqlserver import SqlServerDialect
from sqlqueue.identifiers import TableName
from sqlqueue.schema import ORDERS
from tests.support.statements import (
    ADOPTION_BUILDER,
    DDL_BUILDER,
    DIALECTS,
    EXAMPLE_CHUNK,
    catalog,
    example_spec,
    migration_parts,
)

# compile() turns any text into a Statement; it is the builders' helper, not a statement.
NOT_BUILDERS = {"compile"}
# table_options() returns DDL that create_statements() splices into its own output.
DDL_PARTS = {"table_options", "staging_statements"}


def public_methods_returning(dialect_type: type[Dialect], returns: Any) -> set[str]:
    return {
        name
        for name, method in inspect.getmembers(dialect_type, inspect.isfunction)
        if not name.startswith("_") and get_type_hints(method).get("return") == returns
    }


def statement_builders(dialect_type: type[Dialect]) -> set[str]:
    return public_methods_returning(dialect_type, Statement) - NOT_BUILDERS


@pytest.mark.parametrize("name", DIALECTS)
def test_catalog_uses_every_statement_builder(name: str) -> None:
    dialect = dialect_for(name)
    used = {entry.builder for entry in catalog(dialect)}
    missing = statement_builders(type(dialect)) - used
    assert not missing, f"add these {name} statement builders to tests/support/statements.py: {sorted(missing)}"


@pytest.mark.parametrize("name", DIALECTS)
def test_create_statements_is_the_only_ddl_builder(name: str) -> None:
    assert public_methods_returning(type(dialect_for(name)), list[str]) - DDL_PARTS == {
        DDL_BUILDER,
        ADOPTION_BUILDER,
        "create_adopted_staging",
    }


@pytest.mark.parametrize("name", DIALECTS)
@pytest.mark.parametrize("order", ORDERS)
def test_catalog_holds_every_ddl_statement_of_a_queue_with_each_order(name: str, order: str) -> None:
    dialect = dialect_for(name)
    listed = {entry.sql for entry in catalog(dialect)}
    missing = [sql for sql in dialect.create_statements(example_spec(dialect, order)) if sql not in listed]
    assert not missing


@pytest.mark.parametrize("name", DIALECTS)
@pytest.mark.parametrize("order", ORDERS)
def test_catalog_holds_every_migration_statement_todo_and_script_part(name: str, order: str) -> None:
    dialect = dialect_for(name)
    listed = {entry.sql for entry in catalog(dialect)}
    steps = dialect.migration_steps(example_spec(dialect, order), EXAMPLE_CHUNK)
    parts = [dialect.compile(sql).sql for step in steps for sql in migration_parts(step).values()]
    assert parts and [sql for sql in parts if sql not in listed] == []


def test_completeness_check_notices_a_new_statement_builder() -> None:
    """Negative control: a dialect growing a statement the catalog does not know is caught."""

    class WithVacuum(SqlServerDialect):
        def vacuum(self, table: TableName) -> Statement:
            return self.compile(f"DELETE FROM {self.table(table)}")

    dialect = WithVacuum()
    used = {entry.builder for entry in catalog(dialect)}
    assert statement_builders(WithVacuum) - used == {"vacuum"}
