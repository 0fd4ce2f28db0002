"""What the database's catalog says of any table, whatever its kind: its columns and their exact types, its
unique keys, the defaults an INSERT may leave out, and the tables referencing its key. The adopted kind
checks a profile against these, and ``sqlqueue adopt`` proposes one from them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ..errors import SchemaError
from ..identifiers import TableName
from ..schema import Column
from .kind import Served


def defaults(queue: Served, table: TableName | None = None) -> dict[str, int]:
    """{column, lower case: its kind (Engine.defaults_sql)} of the columns an INSERT may leave out, of the
    queue's table or ``table``."""
    table = table or queue.table
    rows = queue.fetch(queue.dialect.sink.defaults(table), queue.catalog_names(table))
    return {str(name).lower(): int(kind) for name, kind in rows}


def exact_columns(queue: Served, table: TableName | None = None) -> list[tuple[str, str]]:
    """(column, its type spelled as DDL takes it), in the table's order (the queue's table, or ``table``):
    what sqlqueue's copies take."""
    table = table or queue.table
    return [
        (str(n), str(t))
        for n, t in queue.fetch(queue.dialect.adoption.exact_columns(table), queue.catalog_names(table))
    ]


def table_columns(queue: Served, table: TableName | None = None) -> tuple[Column, ...]:
    """A table's columns as the database reports them (the queue's table, or ``table``), each the user's (no
    lifecycle column of ours)."""
    table = table or queue.table
    rows = queue.fetch(queue.dialect.schema.table_columns(table), queue.catalog_names(table))
    if not rows:
        raise SchemaError(f"table {table} does not exist at {queue.spec.display}")
    portable = queue.engine.portable_type
    return tuple(Column(name, portable(db_type), bool(nullable)) for name, db_type, nullable in rows)


def unique_keys(queue: Served, table: TableName | None = None) -> list[list[str]]:
    """The columns of a table's primary key and of each of its unique indexes without a filter (the queue's
    table, or ``table``)."""
    table = table or queue.table
    keys: dict[str, list[str]] = defaultdict(list)
    for index, column in queue.fetch(queue.dialect.adoption.unique_keys(table), queue.catalog_names(table)):
        keys[str(index)].append(column)
    return list(keys.values())


def referencing_tables(queue: Served, key: Sequence[str]) -> list[TableName]:
    """The tables with a foreign key from columns named as ``key``'s (the queue table's key) to those
    columns of the queue table: its subtype tables, as ``profile.include`` takes them."""
    foreign: dict[tuple[str | None, str, str], list[tuple[str, str]]] = defaultdict(list)
    for schema, name, constraint, column, referenced in queue.facts(queue.dialect.adoption.referencing):
        pairs = foreign[(None if schema is None else str(schema), str(name), str(constraint))]
        # A NULL referenced column (SQLite) is the primary key's column in that place.
        to = str(referenced) if referenced is not None else (key[len(pairs)] if len(pairs) < len(key) else "")
        pairs.append((str(column), to))
    wanted = sorted(k.lower() for k in key)
    found = [
        TableName(name, schema)
        for (schema, name, _), pairs in foreign.items()
        if sorted(c.lower() for c, _ in pairs) == wanted and all(c.lower() == to.lower() for c, to in pairs)
    ]
    return list(dict.fromkeys(found))
