"""SQL Server through pyodbc (Microsoft ODBC Driver 18/17 or FreeTDS) or mssql-python: the SQL.

Claims use READPAST so consumers skip each other's locked rows instead of waiting. READPAST is
refused under READ COMMITTED when the database has READ_COMMITTED_SNAPSHOT on (Azure SQL's default)
unless the statement also asks for READCOMMITTEDLOCK, so every READPAST here carries it.
READPAST skips row locks, not page locks: every statement that writes queue rows asks for ROWLOCK.
Statements that touch many rows run in chunks below the 5,000-lock escalation threshold.
What depends on the driver is in ``sqlserver_drivers.py`` (connecting, reading errors; mssql-python's
side in ``mssql_python_driver.py``), ``odbc.py`` (ODBC connection strings, the bulk path's binding)
and ``sqlserver_errors.py`` (which errors are transient, one judgement for every driver). SQL Server's
migrations are in ``sqlserver_migrations.py`` and its doctor in ``sqlserver_doctor.py``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..connection import ConnectionSpec
from ..errors import SchemaError
from ..identifiers import TableName
from ..profile import Profile
from ..schema import Column
from . import odbc, sqlserver_errors
from .engine import Engine, Statement, cached, rows_in_chunks, utc_naive
from .sqlserver_drivers import DRIVERS, driver_for, driver_of_error
from .statements.claims import ClaimPlan, Claims

_TYPES = {
    "string": "NVARCHAR(400)",
    "text": "NVARCHAR(MAX)",
    "int": "INT",
    "bigint": "BIGINT",
    "double": "FLOAT",
    "boolean": "BIT",
    "timestamp": "DATETIME2(6)",
    "binary": "VARBINARY(MAX)",
}
_PORTABLE = {
    "nvarchar(max)": "text",
    "varchar(max)": "text",
    "ntext": "text",
    "text": "text",
    "xml": "text",
    "nvarchar": "string",
    "varchar": "string",
    "nchar": "string",
    "char": "string",
    "uniqueidentifier": "string",
    "int": "int",
    "smallint": "int",
    "tinyint": "int",
    "bigint": "bigint",
    "float": "double",
    "real": "double",
    "decimal": "double",
    "numeric": "double",
    "money": "double",
    "bit": "boolean",
    "datetime2": "timestamp",
    "datetime": "timestamp",
    "smalldatetime": "timestamp",
    "datetimeoffset": "timestamp",
    "varbinary": "binary",
    "varbinary(max)": "binary",
    "binary": "binary",
}
# The hints NServiceBus's SQL Server transport receives with; the INDEX hint is added per queue.
CLAIM_HINTS = "UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK"
STRICT_HINTS = "UPDLOCK, ROWLOCK"
# READ COMMITTED, said explicitly: a pooled connection can carry another session's level.
SESSION_SETUP = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED"
BEGIN = "BEGIN TRANSACTION"

# The character types, whose columns take a collation.
_TEXT_TYPE = re.compile(r"n?(var)?char\b|n?text\b", re.IGNORECASE)

# How the bulk path's JSON carries each portable type, and the OPENJSON column it is read into.
# Strings arrive as NVARCHAR(MAX), so a value too long for the queue's column fails the INSERT
# (error 2628) instead of being cut to fit; bytes travel as hex and are decoded by CONVERT style 2.
_JSON_COLUMN = {"string": "NVARCHAR(MAX)", "text": "NVARCHAR(MAX)", "binary": "NVARCHAR(MAX)"}


def _finite(column: Column, value: Any) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise SchemaError(f"column {column.name!r} holds {value}: SQL Server's FLOAT has no NaN or infinity")
    return value


_JSON_VALUE: dict[str, Callable[[Column, Any], Any]] = {
    "binary": lambda column, value: bytes(value).hex(),
    "boolean": lambda column, value: 1 if value else 0,
    "timestamp": lambda column, value: value.isoformat(),  # ISO 8601: read the same in every language
    "double": _finite,
}


class LongTextCursor:
    """A driver cursor whose every statement binds its one parameter as ``size`` (``odbc.long_text_size``).

    The input sizes are set before each execute: pyodbc keeps them on the cursor, but mssql-python
    1.16 forgets them after every execute (``Cursor._reset_inputsizes``), as PEP 249 allows
    ("used before the .execute*() method is invoked"); its second chunk then went as VARCHAR(n).
    """

    def __init__(self, cursor: Any, size: tuple[int, int, int]) -> None:
        self.cursor, self.size = cursor, size

    def execute(self, sql: str, params: Sequence[Any]) -> Any:
        self.cursor.setinputsizes([self.size])
        return self.cursor.execute(sql, params)

    def fetchall(self) -> list[Any]:
        return list(self.cursor.fetchall())


class SqlServerEngine(Engine):
    """SQL Server's spelling and hints, its drivers' connections and transactions, and the bulk path."""

    name = "sqlserver"
    default_chunk = 4000
    encoded_types = frozenset({"timestamp"})
    # A delete that scans for a tag's rows reads past rows claims hold with update locks, and can
    # deadlock with them: seek instead. (On PostgreSQL the index cost the sink 35% of its speed for
    # a delete that rarely runs, so only SQL Server has it.)
    indexes_row_tags = True

    def quote(self, ident: str) -> str:
        return f"[{ident}]"

    def type_sql(self, column: Column) -> str:
        return _TYPES[column.type]

    def identity_sql(self, column: Column, step: int = 1) -> str:
        return "BIGINT IDENTITY(1, 1) NOT NULL"

    def now(self) -> str:
        return "SYSUTCDATETIME()"

    def now_plus(self, seconds_param: str) -> str:
        return self.add_seconds("SYSUTCDATETIME()", seconds_param)

    def local_now(self) -> str:
        return "SYSDATETIME()"

    def add_seconds(self, time: str, seconds_param: str) -> str:
        return f"DATEADD(SECOND, :{seconds_param}, {time})"

    def millis_between(self, start: str, end: str) -> str:
        # DATEDIFF_BIG, not DATEDIFF: an INT of milliseconds overflows after 24.8 days
        # (https://learn.microsoft.com/sql/t-sql/functions/datediff-big-transact-sql).
        return f"DATEDIFF_BIG(MILLISECOND, {start}, {end})"

    def object_name(self, table: TableName) -> str:
        # A one-part name resolves in the login's default schema, as CREATE TABLE does.
        return f"N'{table}'"

    def create_table_guarded(self, table: TableName, body: str, unlogged: bool = False) -> str:
        return f"IF OBJECT_ID({self.object_name(table)}, N'U') IS NULL\nCREATE TABLE {self.table(table)} (\n  {body}\n)"

    def table_options(self, table: TableName) -> list[str]:
        # Many consumers each hold row locks; escalation to a table lock would block all of them.
        return [f"ALTER TABLE {self.table(table)} SET (LOCK_ESCALATION = DISABLE)"]

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
        # Queue tables are clustered on their primary key (id). The staging table has no key of
        # its own: clustering it on the tag makes publish and its delete seek one task's rows.
        kind = ("UNIQUE " if unique else "") + ("CLUSTERED INDEX" if clustered else "INDEX")
        included = f" INCLUDE ({', '.join(self.quote(c) for c in include)})" if include else ""
        return (
            f"IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{index}' "
            f"AND object_id = OBJECT_ID({self.object_name(table)}))\n"
            f"CREATE {kind} {self.quote(index)} ON {self.table(table)} ({key}){included}{self.index_filter(where)}"
        )

    def claim_sql(
        self, table: TableName, set_sql: str, where: str, order: str, strict: bool, index: str | None,
        waited: tuple[str, str] | None = None, addressed: bool = False,
    ) -> str:  # fmt: skip
        # The claim reads through the filtered ready index, named in an INDEX hint (Hangfire pins
        # its fetch the same way, with FORCESEEK): a scan of the clustered index would take update
        # locks on every done or failed row it passes. FORCESEEK is not used because a FIFO or
        # heap claim has no seek predicate (error 8622); the filter state = 'ready' is in the WHERE
        # as a literal, so the hinted index always matches it. UPDATE's own target takes no INDEX
        # hint (Table_Hint_Limited), so the hints go on a FROM that names the same table.
        # Neither form joins the table back to the rows it picked, the shape PostgreSQL planned
        # as a hash join over the whole table (see PostgresEngine.claim_sql): a FROM naming the
        # target once, without an alias, is the target itself (Microsoft's UPDATE reference,
        # learn.microsoft.com/sql/t-sql/queries/update-transact-sql, on FROM), and an UPDATE of
        # a CTE over one table writes the rows its TOP ... ORDER BY yields ("Updatable views" in
        # CREATE VIEW; NServiceBus's SQL Server transport receives the same way, WITH message AS
        # (SELECT TOP(1) * ... WITH (UPDLOCK, READPAST, ROWLOCK) ORDER BY RowVersion) DELETE FROM
        # message). So the plan expected is Top over a seek or ordered scan of the hinted index,
        # one key lookup per claimed row, then the clustered index update: work per claimed row,
        # not per ready row. Not the join that same UPDATE reference shows for an ordered TOP
        # (UPDATE t ... FROM (SELECT TOP n id ... ORDER BY ...) AS th WHERE t.id = th.id), which
        # leaves the join strategy to the optimizer. `sqlqueue doctor` flags a claim plan that
        # scans the clustered index; this was reasoned from the documentation, not measured.
        # Without an index (the move of failed rows to the dead-letter table: no index holds failed rows,
        # and the ready index's filter would not match, error 8622) it reads the clustered index, past
        # the rows claims and writers hold (READPAST; READCOMMITTEDLOCK as in every READPAST here),
        # locking rows only.
        hints = STRICT_HINTS if strict else CLAIM_HINTS
        if index is not None:
            hints += f", INDEX({self.quote(index)})"
        # OUTPUT's inserted. names each row as the UPDATE left it (learn.microsoft.com/sql/t-sql/queries/
        # output-clause-transact-sql), its claim time included.
        returned = self.claimed_returns(waited, "inserted.")
        return self.change_first(table, set_sql, where, order, hints, f"OUTPUT {returned}")

    def claim_turn(self, table: TableName) -> str:
        # An application lock owned by the transaction, released when it commits or rolls back
        # (learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-getapplock-transact-sql),
        # on a resource named by the table's object id: every claimer names the same table however it spells
        # its name, and an application lock is the current database's. It waits as long as the session's
        # LOCK_TIMEOUT allows; a result below 0 (timed out, cancelled, chosen as a deadlock victim) raises no
        # error by itself, so it is raised here and the claim's transaction rolls back. Under READ COMMITTED
        # the claim's reads, with locks or from row versions as of the statement's start, come after the
        # lock, so they see the claim before it committed.
        named = f"OBJECT_ID({self.literal(self.table(table))})"
        return (
            f"DECLARE @resource NVARCHAR(255) = CONCAT('sqlqueue.groups ', {named}), @granted INT;\n"
            "EXEC @granted = sp_getapplock @Resource = @resource, @LockMode = 'Exclusive', "
            "@LockOwner = 'Transaction';\n"
            "IF @granted < 0 THROW 51000, 'sqlqueue: the turn of a claim was not granted', 1;"
        )

    def change_first(self, table: TableName, set_sql: str | None, where: str, order: str, hints: str, out: str) -> str:
        """Up to ``:limit`` rows ``where`` selects, read with table ``hints``, in ``order`` (an ORDER BY list;
        empty: UPDATE TOP in no order), updated with ``set_sql`` or, with None, deleted; ``out`` is the
        OUTPUT clause. UPDATE has no ORDER BY: an ordered claim orders the rows in a CTE, whose scan takes
        the locks."""
        t = self.table(table)
        if not order:
            if set_sql is None:
                return f"DELETE TOP (:limit) FROM {t} WITH ({hints})\n{out}\nWHERE {where}"
            return f"UPDATE TOP (:limit) {t}\nSET {set_sql}\n{out}\nFROM {t} WITH ({hints})\nWHERE {where}"
        change = "DELETE FROM [batch]" if set_sql is None else f"UPDATE [batch]\nSET {set_sql}"
        return (
            f"WITH [batch] AS (\n  SELECT TOP (:limit) * FROM {t} WITH ({hints})\n"
            f"  WHERE {where}\n  ORDER BY {order}\n)\n{change}\n{out}"
        )

    def lock_first(self, table: TableName, columns: str, where: str) -> str:
        # The claim's hints: update locks held to the end of the transaction, rows other sessions hold
        # skipped (READPAST, legal under READ_COMMITTED_SNAPSHOT with READCOMMITTEDLOCK), row locks only.
        return f"SELECT TOP (:limit) {columns} FROM {self.table(table)} WITH ({CLAIM_HINTS}) WHERE {where}"

    def read_first(self, table: TableName, columns: str, where: str, order: str, index: str | None) -> str:
        # The claim's read without its UPDLOCK: shared row locks, each released once its row is read under
        # READ COMMITTED, so the scan takes no lock it keeps and none escalates; rows other sessions hold
        # passed over (READPAST, with READCOMMITTEDLOCK under READ_COMMITTED_SNAPSHOT); the filtered ready
        # index named, as claim_sql names it ("Table hints (Transact-SQL)", learn.microsoft.com/sql/t-sql/
        # queries/hints-transact-sql-table).
        hints = f"READPAST, ROWLOCK, READCOMMITTEDLOCK{f', INDEX({self.quote(index)})' if index else ''}"
        order_by = f" ORDER BY {order}" if order else ""
        return f"SELECT TOP (:limit) {columns} FROM {self.table(table)} WITH ({hints}) WHERE {where}{order_by}"

    def lock_waiting(self, table: TableName, columns: str, where: str, order: str) -> str:
        return self.lock_rows(table, columns, where, order)

    def lock_rows(self, table: TableName, columns: str, where: str, order: str) -> str:
        # UPDLOCK holds the lock to the end of the transaction and makes the read a locking one under
        # READ_COMMITTED_SNAPSHOT too ("Table hints (Transact-SQL)", learn.microsoft.com/sql/t-sql/
        # queries/hints-transact-sql-table); ROWLOCK keeps it off the rows of claims that skip past it.
        return f"SELECT {columns} FROM {self.table(table)} WITH ({STRICT_HINTS}) WHERE {where} ORDER BY {order}"

    def temp_table(self, name: str) -> str:
        return f"#{name}"

    def create_temp_table(self, name: str, columns: Sequence[tuple[str, str]], key: Sequence[str]) -> str:
        # A #temp table lives in tempdb, whose collation may not be the database's: its text columns take
        # the database's (COLLATE DATABASE_DEFAULT), or comparing them with the table's fails with
        # "Cannot resolve the collation conflict" ("COLLATE (Transact-SQL)", learn.microsoft.com/sql/
        # t-sql/statements/collations).
        def typed(name: str, type_: str) -> str:
            collate = " COLLATE DATABASE_DEFAULT" if _TEXT_TYPE.match(type_) else ""
            return f"{self.quote(name)} {type_}{collate}"

        body = ", ".join([*(typed(n, t) for n, t in columns), self._primary_key(key)])
        return f"CREATE TABLE {self.temp_table(name)} ({body})"

    def limited_update(self, table: TableName, set_sql: str, where: str, limited: bool) -> str:
        top = "TOP (:limit) " if limited else ""
        return f"UPDATE {top}{self.table(table)}{self.row_lock_hints()} SET {set_sql} WHERE {where}"

    def limited_delete(self, table: TableName, where: str, limited: bool) -> str:
        top = "TOP (:limit) " if limited else ""
        return f"DELETE {top}FROM {self.table(table)}{self.row_lock_hints()} WHERE {where}"

    def columns_sql(self, table: TableName) -> str:
        # An alias type (a relational queue's _Timestamp, AttemptNum) is read as its system type: sys.types' row
        # whose user_type_id is the column's system_type_id (sys.columns reference, as exact_columns_sql).
        return (
            "SELECT c.name, CASE WHEN c.max_length = -1 THEN t.name + '(max)' ELSE t.name END, c.is_nullable "
            "FROM sys.columns AS c JOIN sys.types AS t ON t.user_type_id = c.system_type_id "
            "WHERE c.object_id = OBJECT_ID(:object_name) ORDER BY c.column_id"
        )

    def portable_type(self, db_type: str) -> str:
        return _PORTABLE.get(db_type.lower(), "text")

    def exact_columns_sql(self, table: TableName) -> str:
        # The system type under an alias type (a relational queue's _Timestamp, QueueState): sys.types' row whose
        # user_type_id is the column's system_type_id. Lengths in sys.columns are bytes, two per
        # character for the N types, -1 for MAX; rowversion copies as binary(8)
        # (learn.microsoft.com/sql/relational-databases/system-catalog-views/sys-columns-transact-sql);
        # PRECISION is a reserved keyword, hence [precision].
        def sized(types: str, inside: str) -> str:
            return f"WHEN t.name IN ({types}) THEN t.name + N'(' + {inside} + N')' "

        def text(number: str) -> str:
            return f"CAST({number} AS NVARCHAR(10))"

        def length(per_char: str) -> str:
            return f"CASE WHEN c.max_length = -1 THEN N'max' ELSE {text('c.max_length' + per_char)} END"

        return (
            "SELECT c.name, CASE "
            + sized("N'nvarchar', N'nchar'", length(" / 2"))
            + sized("N'varchar', N'char', N'varbinary', N'binary'", length(""))
            + sized("N'decimal', N'numeric'", f"{text('c.[precision]')} + N', ' + {text('c.scale')}")
            + sized("N'datetime2', N'datetimeoffset', N'time'", text("c.scale"))
            + "WHEN t.name = N'timestamp' THEN N'binary(8)' ELSE t.name END "
            "FROM sys.columns AS c JOIN sys.types AS t ON t.user_type_id = c.system_type_id "
            "WHERE c.object_id = OBJECT_ID(:object_name) ORDER BY c.column_id"
        )

    def referenced_sql(self, table: TableName) -> str:
        return (
            "SELECT QUOTENAME(OBJECT_SCHEMA_NAME(fk.referenced_object_id)) + N'.' "
            "+ QUOTENAME(OBJECT_NAME(fk.referenced_object_id)), QUOTENAME(rc.name) "
            "FROM sys.foreign_key_columns AS fk "
            "JOIN sys.columns AS pc ON pc.object_id = fk.parent_object_id AND pc.column_id = fk.parent_column_id "
            "JOIN sys.columns AS rc "
            "ON rc.object_id = fk.referenced_object_id AND rc.column_id = fk.referenced_column_id "
            "WHERE fk.parent_object_id = OBJECT_ID(:object_name) AND pc.name = :column"
        )

    def referencing_sql(self, table: TableName) -> str:
        # One row per column of each foreign key, constraint_column_id its place in the key
        # (learn.microsoft.com/sql/relational-databases/system-catalog-views/sys-foreign-key-columns-transact-sql).
        return (
            "SELECT OBJECT_SCHEMA_NAME(fk.parent_object_id), OBJECT_NAME(fk.parent_object_id), "
            "OBJECT_NAME(fk.constraint_object_id), pc.name, rc.name FROM sys.foreign_key_columns AS fk "
            "JOIN sys.columns AS pc ON pc.object_id = fk.parent_object_id AND pc.column_id = fk.parent_column_id "
            "JOIN sys.columns AS rc "
            "ON rc.object_id = fk.referenced_object_id AND rc.column_id = fk.referenced_column_id "
            "WHERE fk.referenced_object_id = OBJECT_ID(:object_name) "
            "ORDER BY fk.parent_object_id, fk.constraint_object_id, fk.constraint_column_id"
        )

    def checks_sql(self, table: TableName) -> str:
        return "SELECT [definition] FROM sys.check_constraints WHERE parent_object_id = OBJECT_ID(:object_name)"

    def unique_keys_sql(self, table: TableName) -> str:
        # key_ordinal is a column's 1-based place among the index's key columns, 0 for included ones
        # (learn.microsoft.com/sql/relational-databases/system-catalog-views/sys-index-columns-transact-sql).
        return (
            "SELECT i.name, c.name FROM sys.indexes AS i "
            "JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id "
            "AND ic.is_included_column = 0 "
            "JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id "
            "WHERE i.object_id = OBJECT_ID(:object_name) AND i.is_unique = 1 AND i.has_filter = 0 "
            "ORDER BY i.is_primary_key DESC, i.index_id, ic.key_ordinal"
        )

    def indexes_sql(self, table: TableName) -> str:
        return (
            "SELECT i.name, i.filter_definition, c.name FROM sys.indexes AS i "
            "JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id "
            "AND ic.key_ordinal = 1 "
            "JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id "
            "WHERE i.object_id = OBJECT_ID(:object_name)"
        )

    def local_offset_sql(self) -> str:
        # TZOFFSET: minutes (learn.microsoft.com/sql/t-sql/functions/datepart-transact-sql).
        return "SELECT DATEPART(TZOFFSET, SYSDATETIMEOFFSET()) * 60"

    def defaults_sql(self, table: TableName) -> str:
        # rowversion is system type 'timestamp' in sys.types; generated_always_type marks temporal period
        # and ledger columns. An INSERT may give none of these (sys.columns reference,
        # learn.microsoft.com/sql/relational-databases/system-catalog-views/sys-columns-transact-sql).
        # A default drawing NEXT VALUE FOR a sequence or NEWID() gives each row its own value: read from the
        # default's text, sys.default_constraints.definition (learn.microsoft.com/sql/relational-databases/
        # system-catalog-views/sys-default-constraints-transact-sql); bracketed, as sqlfluff takes DEFINITION
        # for a keyword.
        generated = "c.is_identity = 1 OR c.is_computed = 1 OR t.name = N'timestamp' OR c.generated_always_type <> 0"
        assigned = " OR ".join(
            f"d.[definition] LIKE N'%{f}%'" for f in ("NEXT VALUE FOR", "newid()", "newsequentialid()")
        )
        return (
            f"SELECT c.name, CASE WHEN {generated} THEN 1 WHEN {assigned} THEN 2 ELSE 0 END "
            "FROM sys.columns AS c JOIN sys.types AS t ON t.user_type_id = c.system_type_id "
            "LEFT JOIN sys.default_constraints AS d ON d.object_id = c.default_object_id "
            f"WHERE c.object_id = OBJECT_ID(:object_name) AND (c.default_object_id <> 0 OR {generated})"
        )

    def script(self, statements: Sequence[str]) -> str:
        return "".join(f"{sql}\nGO\n\n" for sql in statements)

    def select_first(self, columns: str, rest: str, limit: str = "limit") -> str:
        return f"SELECT TOP (:{limit}) {columns} FROM {rest}"

    def skip_locked_hints(self) -> str:
        # Skip rows other sessions are claiming or inserting rather than wait for them.
        return " WITH (READPAST, READCOMMITTEDLOCK)"

    def committed_read_hints(self) -> str:
        # Under READ_COMMITTED_SNAPSHOT a plain read sees versions from the statement's start, while
        # claims read the queue table with locks: a batch written since would look unlisted.
        return " WITH (READCOMMITTEDLOCK)"

    def row_lock_hints(self) -> str:
        # READPAST skips row locks only: a write holding a page lock would block every claim.
        return " WITH (ROWLOCK)"

    @cached
    def session_setup(self, table: TableName | None = None) -> Statement:
        """Run once per connection (Hangfire sets the same level before each fetch)."""
        return self.compile(SESSION_SETUP)

    @cached
    def begin(self) -> Statement:
        """Opens a transaction for FreeTDS's rollback to end (_autocommit_again)."""
        return self.compile(BEGIN)

    def connect(self, spec: ConnectionSpec) -> Any:
        conn = driver_for(spec).connect(spec)
        conn.execute(self.session_setup().sql)
        return conn

    def driver(self, conn: Any) -> odbc.Driver:
        return odbc.driver_of(conn)

    @contextmanager
    def transaction(self, conn: Any) -> Iterator[Any]:
        with self._manual(conn, keep=True) as cur:
            yield cur

    @contextmanager
    def rolled_back(self, conn: Any) -> Iterator[Any]:
        """A cursor in a transaction that is rolled back however it ends."""
        with self._manual(conn, keep=False) as cur:
            yield cur

    @contextmanager
    def _manual(self, conn: Any, keep: bool) -> Iterator[Any]:
        """A cursor in one transaction, committed at the end when ``keep``, else rolled back.

        After an error the rollback is attempted, and if it fails the first error is still the one
        raised: an error that dooms the transaction (a deadlock victim, 1205; XACT_ABORT ON; on
        Babelfish every error) ends it, and the ROLLBACK then fails with 3903, which would hide the
        1205 that the retry policy retries (https://learn.microsoft.com/sql/t-sql/functions/xact-state-transact-sql).
        """
        conn.autocommit = False
        try:
            yield conn.cursor()
        except BaseException:
            for undo in (conn.rollback, lambda: self._autocommit_again(conn)):
                try:
                    undo()
                except Exception as exc:  # noqa: PERF203 - each undo is tried on its own
                    if not self.is_driver_error(exc):
                        raise
            raise
        try:
            conn.commit() if keep else conn.rollback()
        finally:
            self._autocommit_again(conn)

    def _autocommit_again(self, conn: Any) -> None:
        """Turn autocommit back on after an error, also when the error ended the transaction.

        FreeTDS turns autocommit on by rolling back, and when that rollback fails (3903: the
        transaction is over) it leaves autocommit off, so every later switch fails the same way
        (src/odbc/odbc.c, change_autocommit). The connection would then fail at its next use, and
        one handed out again by unixODBC's pool at its first: give the rollback a transaction to end.
        """
        try:
            conn.autocommit = True
        except Exception as exc:
            if not self.is_driver_error(exc):
                raise
            conn.cursor().execute(self.begin().sql)
            conn.autocommit = True

    # ---- the bulk path: one JSON parameter per chunk --------------------------------------------
    # Neither driver can be trusted with fast_executemany: FreeTDS 1.3 has no SQLDescribeParam, so
    # pyodbc binds VARCHAR(255) (long text fails, non-ASCII is squeezed through a single-byte type,
    # and on FreeTDS 1.3.17 short rows crash the process); Microsoft's driver does the same for a
    # #temp table. So a chunk of rows travels as one NVARCHAR(MAX) parameter of JSON, typed by
    # OPENJSON's WITH clause from the queue's column types: one round trip per chunk, on both drivers.
    def _from_json(self, columns: Sequence[Column]) -> tuple[list[str], str]:
        """Each column's value as read from the JSON parameter ``:rows``, and the FROM that reads it."""
        q = self.quote
        fields, values = [f"{q('n')} BIGINT '$.n'"], []
        for i, column in enumerate(columns):
            field = f"c{i}"
            fields.append(f"{q(field)} {_JSON_COLUMN.get(column.type, _TYPES[column.type])} '$.{field}'")
            value = f"r.{q(field)}"
            values.append(f"CONVERT(VARBINARY(MAX), {value}, 2)" if column.type == "binary" else value)
        # CAST: OPENJSON reads the text as NVARCHAR(MAX) whatever type a driver declares for it
        # (OPENJSON takes no NTEXT; FreeTDS maps SQL_WLONGVARCHAR to NTEXT before TDS 7.2).
        return values, f"OPENJSON(CAST(:rows AS NVARCHAR(MAX)))\n  WITH ({', '.join(fields)}) AS r"

    def _json_insert(self, target: str, columns: Sequence[Column]) -> Statement:
        """Insert the rows of one JSON chunk in their order (identities follow the ORDER BY)."""
        values, source = self._from_json(columns)
        names = ", ".join(self.quote(c.name) for c in columns)
        return self.compile(
            f"INSERT INTO {target} ({names})\nSELECT {', '.join(values)}\nFROM {source}\nORDER BY r.[n]"
        )

    def _json_insert_new_keys(self, table: TableName, columns: Sequence[Column]) -> Statement:
        """Insert the rows of one JSON chunk whose dedup keys are new: no #temp table to load."""
        values, source = self._from_json(columns)
        named = ", ".join(f"{v} AS {self.quote(c.name)}" for v, c in zip(values, columns))
        rows = f"(\n  SELECT {named}\n  FROM {source}\n) AS [rows]"
        return self.compile(self.insert_new_keys(table, [c.name for c in columns], rows))

    def json_chunks(self, columns: Sequence[Column], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
        """Rows as JSON documents of at most ``default_chunk`` rows: [{"n": 0, "c0": …}, …]."""
        convert = [(f"c{i}", c, _JSON_VALUE.get(c.type)) for i, c in enumerate(columns)]
        for chunk in rows_in_chunks(rows, self.default_chunk or 1000):
            doc = [
                {
                    "n": n,
                    **{
                        key: value if value is None or to is None else to(column, value)
                        for (key, column, to), value in zip(convert, row)
                    },
                }
                for n, row in enumerate(chunk)
            ]
            yield json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":"))

    def _send_json(
        self, cur: Any, statement: Statement, columns: Sequence[Column], rows: Iterable[Sequence[Any]]
    ) -> None:
        # The parameter is bound as NVARCHAR(MAX) on every driver (odbc.long_text_size): one declaration
        # whatever the chunk's length, so one cached plan. Left to pyodbc, a str is bound by its
        # length: FreeTDS 1.3.17 then declares NVARCHAR(2 x characters) for a short chunk, a str bound
        # as WVARCHAR past 4,000 characters is cut to 4,000 without an error, and Driver 18 refused a
        # long one outright (HY104) on the stub. Left to mssql-python, a str is bound by its length and
        # content: VARCHAR(n) for ASCII, NVARCHAR(n), and past 4,000 UTF-16 units an sp_prepare plus
        # sp_execute, two round trips (tests/drivers).
        # A cursor of its own (same connection, same transaction), so its input sizes end with it.
        with self.long_text_cursor(cur) as loader:
            for text in self.json_chunks(columns, rows):
                loader.execute(statement.sql, statement.bind({"rows": text}))

    @contextmanager
    def long_text_cursor(self, cur: Any) -> Iterator[LongTextCursor]:
        """A cursor beside ``cur`` (same connection and transaction) whose one parameter is NVARCHAR(MAX)."""
        loader = cur.connection.cursor()
        try:
            yield LongTextCursor(loader, odbc.long_text_size(self.driver(cur.connection)))
        finally:
            loader.close()

    def load(self, cur: Any, target: str, columns: Sequence[Column], rows: Iterable[Sequence[Any]]) -> None:
        self._send_json(cur, self._json_insert(target, columns), columns, rows)

    def insert_many(
        self,
        cur: Any,
        table: TableName,
        columns: Sequence[Column],
        rows: Iterable[Sequence[Any]],
        skip_duplicates: bool = False,
    ) -> None:
        if not skip_duplicates:
            self.load(cur, self.table(table), columns, rows)
            return
        self._send_json(cur, self._json_insert_new_keys(table, columns), columns, rows)

    def encode(self, column: Column, value: Any) -> Any:
        # DATETIME2 has no zone: send UTC wall time.
        return utc_naive(value) if isinstance(value, dt.datetime) else value

    def insert_new_keys(self, table: TableName, columns: Sequence[str], source: str, where: str = "1 = 1") -> str:
        # IGNORE_DUP_KEY would do this, but SQL Server refuses it on filtered indexes (the dedup
        # index is one). UPDLOCK, HOLDLOCK keeps a concurrent writer from adding the key between
        # the check and the insert; ROW_NUMBER keeps one row per key within the batch.
        q = self.quote
        names = ", ".join(q(c) for c in columns)
        key = q("dedup_key")
        numbered = f"ROW_NUMBER() OVER (PARTITION BY {key} ORDER BY (SELECT NULL)) AS {q('copy_no')}"
        return (
            f"INSERT INTO {self.table(table)} ({names})\n"
            f"SELECT {', '.join(f's.{q(c)}' for c in columns)}\n"
            f"FROM (\n  SELECT {names}, {numbered}\n"
            f"  FROM {source}\n  WHERE {where}\n) AS s\n"
            f"WHERE (s.{key} IS NULL OR s.{q('copy_no')} = 1)\n"
            f"  AND NOT EXISTS (\n    SELECT 1 FROM {self.table(table)} AS q WITH (UPDLOCK, HOLDLOCK)\n"
            f"    WHERE q.{key} IS NOT NULL AND q.{key} = s.{key}\n  )"
        )

    def is_driver_error(self, exc: BaseException) -> bool:
        return any(driver.is_error(exc) for driver in DRIVERS)

    def is_transient(self, exc: BaseException, first_connect: bool) -> bool:
        return sqlserver_errors.is_transient(driver_of_error(exc).diagnosis(exc), first_connect)

    def table_absent(self, table: TableName) -> str:
        return f"OBJECT_ID({self.object_name(table)}, N'U') IS NULL"

    def literal(self, text: str) -> str:
        # A plain literal where the text is ASCII: against a VARCHAR column an N'' literal converts the
        # column, since nvarchar outranks varchar ("Data type precedence",
        # learn.microsoft.com/sql/t-sql/data-types/data-type-precedence-transact-sql). A query's seek is
        # lost under a SQL collation, and a filtered index refuses a conversion on the left of its
        # comparison ("Create filtered indexes", learn.microsoft.com/sql/relational-databases/indexes/
        # create-filtered-indexes). A plain literal converts to an NVARCHAR, bit or int column instead.
        # Text beyond ASCII needs N'' to keep its characters.
        return ("" if text.isascii() else "N") + super().literal(text)

    def index_name(self, table: TableName, index: str) -> str:
        return f"{self.quote(index)} ON {self.table(table)}"


class SqlServerClaims(Claims):
    """An adopted table's claim in SQL Server's shapes: UPDATE or DELETE TOP ... OUTPUT ... INTO."""

    engine: SqlServerEngine

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
        # The claim's own shapes, with the adopted table's columns, or the DELETE forms of delete-on-dequeue tables'
        # dequeues (DELETE TOP ... WITH (ROWLOCK, READPAST); NServiceBus's WITH message AS (SELECT TOP(1) ...
        # WITH (UPDLOCK, READPAST, ROWLOCK) ORDER BY ...) DELETE FROM message OUTPUT ...). OUTPUT ... INTO
        # writes the copies: OUTPUT without INTO fails with error 334 on a table with an enabled trigger, as
        # audited queue tables have, and the INSERT into the claims table is part of the same atomic
        # statement (OUTPUT clause (Transact-SQL), learn.microsoft.com/sql/t-sql/queries/output-clause-transact-sql).
        # No INDEX hint: sqlqueue does not own the table's indexes; `sqlqueue adopt` proposes one the claim
        # can seek.
        e = self.engine
        target, lead = self.into_claims(table, columns)
        rows = "deleted" if profile.take else "inserted"
        out = f"OUTPUT {lead}, {', '.join(f'{rows}.{e.quote(c)}' for c in columns)}\nINTO {target}"
        set_sql = None if profile.take else self.lifecycle.claim_sets(profile)
        hints = STRICT_HINTS if strict else CLAIM_HINTS
        return ClaimPlan(e.compile(e.change_first(table, set_sql, where, order, hints, out)))
