"""SQLite: the embedded default. One writer at a time, so a claim is an immediate transaction."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..connection import ConnectionSpec
from ..findings import OK, PROBLEM, Finding
from ..identifiers import TableName
from ..profile import Profile
from ..schema import STAGE_TAG, Column
from .engine import Engine, Statement, cached, utc_naive
from .statements.claims import ClaimPlan, Claims
from .statements.doctor import Doctor, LiveTable
from .statements.migrations import Migrations

# Declared names are kept by SQLite, so introspection can map them back to portable types.
_TYPES = {
    "string": "VARCHAR(200)",
    "text": "TEXT",
    "int": "INT",
    "bigint": "BIGINT",
    "double": "DOUBLE",
    "boolean": "BOOLEAN",
    "timestamp": "TIMESTAMP",
    "binary": "BLOB",
}
# DATETIME: how tables written by hand (and most ORMs) declare a time, stored as ISO text as ours are.
_PORTABLE = {v.split("(")[0]: k for k, v in _TYPES.items()} | {
    "INTEGER": "bigint",
    "REAL": "double",
    "DATETIME": "timestamp",
}
# Timestamps are ISO text in UTC, which sorts and compares like the instants.
_NOW = "strftime('%Y-%m-%d %H:%M:%f', 'now')"
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
# How long a statement waits for another connection's lock (SQLite's busy handler retries within it)
# before it fails with SQLITE_BUSY, which the retry policy then retries until retryTimeout.
BUSY_TIMEOUT_S = 60.0
# SQLITE_BUSY (another connection holds the lock) and SQLITE_LOCKED (a conflict within this
# connection): worth another try. Extended codes (SQLITE_BUSY_SNAPSHOT, ...) keep the primary code
# in their low byte (https://www.sqlite.org/rescode.html).
SQLITE_BUSY, SQLITE_LOCKED = 5, 6


class SqliteEngine(Engine):
    """SQLite's spelling and its sqlite3 connections."""

    name = "sqlite"
    encoded_types = frozenset({"timestamp"})

    def quote(self, ident: str) -> str:
        return f'"{ident}"'

    def type_sql(self, column: Column) -> str:
        return _TYPES[column.type]

    separate_primary_key = False

    def identity_sql(self, column: Column, step: int = 1) -> str:
        # Without AUTOINCREMENT SQLite reuses the ids of deleted rows, and a queue deletes them all.
        return "INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL"

    def now(self) -> str:
        return _NOW

    def now_plus(self, seconds_param: str) -> str:
        return f"strftime('%Y-%m-%d %H:%M:%f', 'now', '+' || :{seconds_param} || ' seconds')"

    def local_now(self) -> str:
        return "strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime')"

    def add_seconds(self, time: str, seconds_param: str) -> str:
        # A modifier "N seconds" takes a sign of its own: N may be negative.
        return f"strftime('%Y-%m-%d %H:%M:%f', {time}, :{seconds_param} || ' seconds')"

    def millis_between(self, start: str, end: str) -> str:
        # Times are ISO-8601 text; a Julian day as a double resolves about 0.05 ms today.
        return f"CAST(ROUND((julianday({end}) - julianday({start})) * 86400000) AS INTEGER)"

    def default_sql(self, default: str) -> str:
        return f"({_NOW})" if default == "now" else default

    def create_table_guarded(self, table: TableName, body: str, unlogged: bool = False) -> str:
        return f"CREATE TABLE IF NOT EXISTS {self.table(table)} (\n  {body}\n)"

    def create_index_guarded(
        self,
        table: TableName,
        index: str,
        key: str,
        include: Sequence[str],
        where: str | None,
        unique: bool = False,
        clustered: bool = False,
    ) -> str:
        key = ", ".join([key, *(self.quote(c) for c in include)])
        kind = "UNIQUE INDEX" if unique else "INDEX"
        on = f"{self.quote(table.name)} ({key}){self.index_filter(where)}"
        return f"CREATE {kind} IF NOT EXISTS {self.quote(index)} ON {on}"

    # A claim runs in BEGIN IMMEDIATE: SQLite's single writer makes it atomic, strict or not, and makes
    # an adopted table's claim and the copies it records one step.
    def picked(self, table: TableName, key: Sequence[str], where: str, order: str) -> str:
        """Up to ``:limit`` rows ``where`` selects, in ``order``, matched by ``key``. A composite key is
        matched off its index (unary +, which disqualifies a term from index use: sqlite.org/optoverview.html,
        "Disqualifying WHERE clause terms using unary-+"): SQLite 3.40 found no row for a row-value IN
        searched through a unique index holding the rowid alias, as a claimer table's (in_process, id) does. The
        outer statement then scans the table."""
        q, t = self.quote, self.table(table)
        names = ", ".join(q(k) for k in key)
        match = names if len(key) == 1 else f"({', '.join(f'+{q(k)}' for k in key)})"
        order_by = f" ORDER BY {order}" if order else ""
        return f"{match} IN (SELECT {names} FROM {t} WHERE {where}{order_by} LIMIT :limit)"

    def claim_sql(
        self, table: TableName, set_sql: str, where: str, order: str, strict: bool, index: str | None,
        waited: tuple[str, str] | None = None, addressed: bool = False,
    ) -> str:  # fmt: skip
        picked = self.picked(table, ("id",), where, order)
        return f"UPDATE {self.table(table)} SET {set_sql} WHERE {picked} RETURNING {self.claimed_returns(waited)}"

    def columns_sql(self, table: TableName) -> str:
        return 'SELECT name, type, "notnull" = 0 FROM pragma_table_info(:table)'

    def portable_type(self, db_type: str) -> str:
        return _PORTABLE.get(db_type.upper().split("(")[0], "text")

    def exact_columns_sql(self, table: TableName) -> str:
        return "SELECT name, type FROM pragma_table_info(:table) ORDER BY cid"

    def local_offset_sql(self) -> str:
        return "SELECT CAST(strftime('%s', 'now', 'localtime') AS INTEGER) - CAST(strftime('%s', 'now') AS INTEGER)"

    def defaults_sql(self, table: TableName) -> str:
        # An INTEGER PRIMARY KEY alone, in a rowid table, is the rowid: the table assigns it (a WITHOUT
        # ROWID table, or a DESC key, has a primary-key index instead, origin 'pk'). Hidden 2 and 3 are
        # generated columns (https://sqlite.org/lang_createtable.html#rowid, pragma_table_xinfo).
        alone = "(SELECT COUNT(*) FROM pragma_table_info(:table) WHERE pk > 0) = 1"
        no_pk_index = "NOT EXISTS (SELECT 1 FROM pragma_index_list(:table) WHERE origin = 'pk')"
        rowid = f"pk = 1 AND upper(type) = 'INTEGER' AND {alone} AND {no_pk_index}"
        return (
            f"SELECT name, CASE WHEN hidden IN (2, 3) THEN 1 WHEN {rowid} THEN 2 ELSE 0 END "
            f"FROM pragma_table_xinfo(:table) WHERE dflt_value IS NOT NULL OR hidden IN (2, 3) OR ({rowid})"
        )

    def referenced_sql(self, table: TableName) -> str:
        # Quoted in SQL, as PostgreSQL's quote_ident and SQL Server's QUOTENAME quote them.
        return (
            """SELECT '"' || "table" || '"', '"' || "to" || '"' """
            """FROM pragma_foreign_key_list(:table) WHERE "from" = :column"""
        )

    def referencing_sql(self, table: TableName) -> str:
        # pragma_foreign_key_list is a table-valued function of each table: joined to sqlite_master, it
        # lists every table's foreign keys (sqlite.org/pragma.html#pragfunc); "to" is NULL where a key
        # names only its parent table, meaning the parent's primary key.
        return (
            'SELECT NULL, m.name, f.id, f."from", f."to" FROM sqlite_master AS m, pragma_foreign_key_list(m.name) AS f '
            "WHERE m.type = 'table' AND f.\"table\" = :table COLLATE NOCASE ORDER BY m.name, f.id, f.seq"
        )

    def checks_sql(self, table: TableName) -> str:
        return "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = :table"

    def unique_keys_sql(self, table: TableName) -> str:
        # The primary key (an INTEGER PRIMARY KEY is the rowid), then unique indexes without a WHERE,
        # each in its key order (table_info's pk is the column's place in the primary key).
        return (
            "SELECT k, c FROM (SELECT 'primary key' AS k, name AS c, -1 AS seq, pk AS place "
            "FROM pragma_table_info(:table) WHERE pk > 0 "
            "UNION ALL SELECT l.name, i.name, l.seq, i.seqno FROM pragma_index_list(:table) AS l, "
            "pragma_index_info(l.name) AS i WHERE l.\"unique\" = 1 AND l.partial = 0 AND l.origin <> 'pk') "
            "ORDER BY seq, k, place"
        )

    def decode_timestamp(self, value: Any) -> dt.datetime | None:
        if isinstance(value, str):
            return dt.datetime.fromisoformat(value).replace(tzinfo=dt.timezone.utc)
        return super().decode_timestamp(value)

    def indexes_sql(self, table: TableName) -> str:
        return (
            "SELECT l.name, CASE WHEN l.partial = 1 THEN substr(m.sql, instr(upper(m.sql), ' WHERE ') + 7) END, "
            "(SELECT ii.name FROM pragma_index_info(l.name) AS ii WHERE ii.seqno = 0) "
            "FROM pragma_index_list(:table) AS l LEFT JOIN sqlite_master AS m ON m.type = 'index' AND m.name = l.name"
        )

    def inspection_connect(self, spec: ConnectionSpec) -> Any:
        # connect() turns WAL on, which would hide the very setting the doctor looks at.
        path = spec.param("path")
        assert path is not None, "a sqlite:// URL always names a file"
        return sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)

    def connect(self, spec: ConnectionSpec) -> Any:
        conn = self.inspection_connect(spec)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    @contextmanager
    def transaction(self, conn: Any) -> Iterator[Any]:
        cur = conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")

    def encode(self, column: Column, value: Any) -> Any:
        if isinstance(value, dt.datetime):
            return utc_naive(value).strftime(TIMESTAMP_FORMAT)[:-3]
        return value

    def lock_rows(self, table: TableName, columns: str, where: str, order: str) -> str | None:
        return None  # one writer at a time: BEGIN IMMEDIATE holds the database

    def is_driver_error(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.Error)

    def is_transient(self, exc: BaseException, first_connect: bool) -> bool:
        # A file has no address to get wrong: a busy database is busy on a first connection too.
        code = getattr(exc, "sqlite_errorcode", None)
        return code is not None and code & 0xFF in (SQLITE_BUSY, SQLITE_LOCKED)

    def table_absent(self, table: TableName) -> str:
        return f"NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = {self.literal(table.name)})"


class SqliteClaims(Claims):
    """An adopted table's claim in SQLite's shape."""

    engine: SqliteEngine

    def claim_into(
        self,
        table: TableName,
        profile: Profile,
        columns: Sequence[str],
        where: str,
        order: str,
        addressed: bool = False,
        strict: bool = False,
    ) -> ClaimPlan:
        """One UPDATE (or DELETE) ... RETURNING, then each returned row recorded in the claims table (one writer
        at a time: nothing to skip or wait for, strict or not)."""
        e = self.engine
        t = e.table(table)
        change = f"DELETE FROM {t}" if profile.take else f"UPDATE {t} SET {self.lifecycle.claim_sets(profile)}"
        returning = ", ".join(e.quote(c) for c in columns)
        target, _ = self.into_claims(table, columns)
        marks = ", ".join(f":{n}" for n in ("consumer", "seq", *(f"c{i}" for i in range(len(columns)))))
        claim = f"{change} WHERE {e.picked(table, profile.key, where, order)} RETURNING {returning}"
        return ClaimPlan(e.compile(claim), True, e.compile(f"INSERT INTO {target} VALUES ({marks})"))


class SqliteDoctor(Doctor):
    """SQLite's own check: the journal mode."""

    def checks(self, live: LiveTable, order: str) -> Iterator[Finding]:
        (mode,) = live.facts(self.journal_mode)[0]
        if str(mode).lower() != "wal":
            yield Finding(
                PROBLEM,
                "journal mode",
                f"journal_mode is {mode}, not WAL: readers block the one writer and every claim waits for them "
                "(sqlqueue turns WAL on when it connects; something switched it back or never connected through it)",
                (self.wal_on(live.table).sql,),
            )
        else:
            yield Finding(OK, "journal mode", "journal_mode is WAL")

    @cached
    def journal_mode(self, table: TableName) -> Statement:
        return self.engine.compile("PRAGMA journal_mode")

    @cached
    def wal_on(self, table: TableName) -> Statement:
        return self.engine.compile("PRAGMA journal_mode = WAL")


class SqliteMigrations(Migrations):
    """Layout versions and migrate on SQLite."""

    # SQLite has no conditional DDL: sqlqueue checks these queries before the steps they guard.
    how_to_run_script = (
        "-- SQLite has no conditional DDL: `sqlqueue migrate` checks what each step needs; here, a step",
        "-- that could fail on a table that has what it adds is left commented, with the query that says.",
    )
    conditional_ddl = False

    def column_todo(self, table: TableName, column: str) -> str | None:
        literal = self.engine.literal
        found = f"pragma_table_info({literal(table.name)}) WHERE name = {literal(column)}"
        return f"SELECT COUNT(*) = 0 FROM {found}"

    def staged_index_todo(self, table: TableName) -> str | None:
        index = self.engine.literal(self.staged_index(table))
        return (
            f"SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = {index} "
            f"AND NOT EXISTS ({self._staged(table)})"
        )

    def migrated(self, table: TableName) -> str:
        # A script's reader may have skipped the commented ADD COLUMN: no record without the column.
        literal = self.engine.literal
        has_tag = f"SELECT 1 FROM pragma_table_info({literal(table.name)}) WHERE name = {literal(STAGE_TAG.name)}"
        return f"{super().migrated(table)} AND EXISTS ({has_tag})"

    def ready_index_todo(self, table: TableName) -> str | None:
        literal = self.engine.literal
        name = literal(self.schema.ready_index(table))
        return f"SELECT COUNT(*) = 0 FROM pragma_index_info({name}) WHERE name = {literal(STAGE_TAG.name)}"
