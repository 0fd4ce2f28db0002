"""The statement catalog is complete: no statement a dialect can emit escapes the parse and golden tests.

A dialect's parts (and its engine) build statements in two ways: public methods returning a
``Statement`` (DML and queries), and the DDL builders returning text. Both are enumerated from every
part the dialect holds, as ``part.method``, so a new builder in any part fails here until
``tests/support/statements.py`` lists it.
"""

from __future__ import annotations

import inspect
from typing import Any, get_type_hints

import pytest

from sqlqueue.dialects import dialect_for
from sqlqueue.dialects.base import Dialect
from sqlqueue.dialects.engine import Statement
from sqlqueue.dialects.statements.housekeeping import Housekeeping
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
NOT_BUILDERS = {"engine.compile"}
# DDL that the DDL builders splice into their own output: an engine's table options, a staging
# table's statements and the column copies of an adopted table's.
DDL_PARTS = {
    "engine.table_options",
    "schema.staging_statements",
    "schema.create_staging",
    "schema.create_claims",
    "schema.group_indexes",
    "adoption.copied_columns",
}


def public_methods_returning(dialect: Dialect, returns: Any) -> set[str]:
    """``part.method`` of every public method of the dialect's engine and parts that returns ``returns``."""
    return {
        f"{part}.{name}"
        for part, held in vars(dialect).items()
        for name, method in inspect.getmembers(type(held), inspect.isfunction)
        if not name.startswith("_") and get_type_hints(method).get("return") == returns
    }


def statement_builders(dialect: Dialect) -> set[str]:
    return public_methods_returning(dialect, Statement) - NOT_BUILDERS


@pytest.mark.parametrize("name", DIALECTS)
def test_catalog_uses_every_statement_builder(name: str) -> None:
    dialect = dialect_for(name)
    used = {entry.builder for entry in catalog(dialect)}
    missing = statement_builders(dialect) - used
    assert not missing, f"add these {name} statement builders to tests/support/statements.py: {sorted(missing)}"


@pytest.mark.parametrize("name", DIALECTS)
def test_create_statements_is_the_only_ddl_builder(name: str) -> None:
    assert public_methods_returning(dialect_for(name), list[str]) - DDL_PARTS == {
        DDL_BUILDER,
        ADOPTION_BUILDER,
        "sink.create_adopted_staging",
    }


@pytest.mark.parametrize("name", DIALECTS)
@pytest.mark.parametrize("order", ORDERS)
def test_catalog_holds_every_ddl_statement_of_a_queue_with_each_order(name: str, order: str) -> None:
    dialect = dialect_for(name)
    listed = {entry.sql for entry in catalog(dialect)}
    missing = [sql for sql in dialect.schema.create_statements(example_spec(dialect, order)) if sql not in listed]
    assert not missing


@pytest.mark.parametrize("name", DIALECTS)
@pytest.mark.parametrize("order", ORDERS)
def test_catalog_holds_every_migration_statement_todo_and_script_part(name: str, order: str) -> None:
    dialect = dialect_for(name)
    listed = {entry.sql for entry in catalog(dialect)}
    steps = dialect.migrations.migration_steps(example_spec(dialect, order), EXAMPLE_CHUNK)
    parts = [dialect.engine.compile(sql).sql for step in steps for sql in migration_parts(step).values()]
    assert parts and [sql for sql in parts if sql not in listed] == []


def test_completeness_check_notices_a_new_statement_builder() -> None:
    """Negative control: a part growing a statement the catalog does not know is caught."""

    class WithVacuum(Housekeeping):
        def vacuum(self, table: TableName) -> Statement:
            return self.engine.compile(f"DELETE FROM {self.engine.table(table)}")

    dialect = dialect_for("sqlserver")
    dialect.housekeeping = WithVacuum(dialect.engine, dialect.lifecycle)
    used = {entry.builder for entry in catalog(dialect)}
    assert statement_builders(dialect) - used == {"housekeeping.vacuum"}
