"""SQL Server through pyodbc (Microsoft ODBC Driver 18/17 or FreeTDS).

Claims use READPAST so consumers skip each other's locked rows instead of waiting. READPAST is
refused under READ COMMITTED when the database has READ_COMMITTED_SNAPSHOT on (Azure SQL's default)
unless the statement also asks for READCOMMITTEDLOCK, so every READPAST here carries it.
Statements that touch many rows run in chunks below the 5,000-lock escalation threshold.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..connection import ConnectionSpec
from ..errors import ConfigError, missing_driver
from ..identifiers import TableName
from ..schema import Column
from .base import Dialect, Statement, rows_in_chunks, utc_naive

_TYPES = {
    "string": "NVARCHAR(400)", "text": "NVARCHAR(MAX)", "int": "INT", "bigint": "BIGINT", "double": "FLOAT",
    "boolean": "BIT", "timestamp": "DATETIME2(6)", "binary": "VARBINARY(MAX)",
}
_PORTABLE = {
    "nvarchar(max)": "text", "varchar(max)": "text", "ntext": "text", "text": "text", "xml": "text",
    "nvarchar": "string", "varchar": "string", "nchar": "string", "char": "string", "uniqueidentifier": "string",
    "int": "int", "smallint": "int", "tinyint": "int", "bigint": "bigint", "float": "double", "real": "double",
    "decimal": "double", "numeric": "double", "money": "double", "bit": "boolean", "datetime2": "timestamp",
    "datetime": "timestamp", "smalldatetime": "timestamp", "datetimeoffset": "timestamp",
    "varbinary": "binary", "varbinary(max)": "binary", "binary": "binary",
}
# Drivers in order of preference when the URL does not name one.
PREFERRED_DRIVERS = ("ODBC Driver 18 for SQL Server", "ODBC Driver 17 for SQL Server", "FreeTDS")
CLAIM_HINTS = "ROWLOCK, READPAST, READCOMMITTEDLOCK"
STRICT_HINTS = "ROWLOCK, UPDLOCK"
# Rows per fast_executemany parameter array.
LOAD_CHUNK_ROWS = 10_000


def _pyodbc() -> Any:
    try:
        import pyodbc
    except ImportError as exc:
        raise missing_driver("pyodbc", "sqlserver") from exc
    return pyodbc


def odbc_connection_string(spec: ConnectionSpec, available: Sequence[str]) -> str:
    """An ODBC connection string for a sqlserver:// URL (user and password appended last)."""
    params = dict(spec.params)
    driver = params.pop("driver", None) or next((d for d in PREFERRED_DRIVERS if d in available), None)
    if driver is None:
        raise ConfigError(
            "no SQL Server ODBC driver is installed: install Microsoft's 'ODBC Driver 18 for SQL Server' "
            "or FreeTDS (Debian: apt-get install tdsodbc), or name one with ?driver=..."
        )
    server = params.pop("host") + (f",{params.pop('port')}" if "port" in params else "")
    parts = {"DRIVER": f"{{{driver}}}", "SERVER": server, "DATABASE": params.pop("database")}
    if driver == "FreeTDS":
        parts.setdefault("TDS_Version", "7.4")  # DATETIME2 and NVARCHAR(MAX) need TDS 7.3 or later
    parts.update(params)
    text = ";".join(f"{k}={v}" for k, v in parts.items())
    return text + _credentials(spec)


def _credentials(spec: ConnectionSpec) -> str:
    creds = ""
    if spec.user:
        creds += f";UID={spec.user}"
    if spec.password:
        creds += ";PWD={" + spec.password.replace("}", "}}") + "}"
    return creds


class SqlServerDialect(Dialect):
    name = "sqlserver"
    default_chunk = 4000
    encoded_types = frozenset({"timestamp"})
    scratch_table = "#sqlqueue_scratch"

    def quote(self, ident: str) -> str:
        return f"[{ident}]"

    def type_sql(self, column: Column) -> str:
        return _TYPES[column.type]

    def identity_sql(self, column: Column) -> str:
        return "BIGINT IDENTITY(1, 1) NOT NULL"

    def now(self) -> str:
        return "SYSUTCDATETIME()"

    def now_plus(self, seconds_param: str) -> str:
        return f"DATEADD(SECOND, :{seconds_param}, SYSUTCDATETIME())"

    def _object_name(self, table: TableName) -> str:
        # A one-part name resolves in the login's default schema, as CREATE TABLE does.
        return f"N'{table}'"

    def create_table_guarded(self, table: TableName, body: str, unlogged: bool = False) -> str:
        return (
            f"IF OBJECT_ID({self._object_name(table)}, N'U') IS NULL\n"
            f"CREATE TABLE {self.table(table)} (\n  {body}\n)"
        )

    def table_options(self, table: TableName) -> list[str]:
        # Many consumers each hold row locks; escalation to a table lock would block all of them.
        return [f"ALTER TABLE {self.table(table)} SET (LOCK_ESCALATION = DISABLE)"]

    def create_index_guarded(
        self, table: TableName, index: str, key: str, include: Sequence[str], where: str | None, unique: bool = False,
        clustered: bool = False,
    ) -> str:
        # A heap keeps the pages its deletes empty; a clustered staging table reuses them.
        kind = ("UNIQUE " if unique else "") + ("CLUSTERED INDEX" if clustered else "INDEX")
        included = f" INCLUDE ({', '.join(self.quote(c) for c in include)})" if include else ""
        return (
            f"IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{index}' "
            f"AND object_id = OBJECT_ID({self._object_name(table)}))\n"
            f"CREATE {kind} {self.quote(index)} ON {self.table(table)} ({key}){included}{self.index_filter(where)}"
        )

    def claim_sql(self, table: TableName, set_sql: str, where: str, order: str, strict: bool) -> str:
        out = f"OUTPUT inserted.{self.quote('id')}"
        if order == "heap":
            return f"UPDATE TOP (:limit) {self.table(table)} WITH ({CLAIM_HINTS})\nSET {set_sql}\n{out}\nWHERE {where}"
        # UPDATE has no ORDER BY: order the rows in a CTE, whose scan takes update locks.
        hints = STRICT_HINTS if strict else f"{CLAIM_HINTS}, UPDLOCK"
        return (
            f"WITH [batch] AS (\n  SELECT TOP (:limit) * FROM {self.table(table)} WITH ({hints})\n"
            f"  WHERE {where}\n  ORDER BY {self.order_by(order)}\n)\n"
            f"UPDATE [batch]\nSET {set_sql}\n{out}"
        )

    def limited_update(self, table: TableName, set_sql: str, where: str, limited: bool) -> str:
        top = "TOP (:limit) " if limited else ""
        return f"UPDATE {top}{self.table(table)} SET {set_sql} WHERE {where}"

    def limited_delete(self, table: TableName, where: str, limited: bool) -> str:
        top = "TOP (:limit) " if limited else ""
        return f"DELETE {top}FROM {self.table(table)} WHERE {where}"

    def columns_sql(self, table: TableName) -> str:
        return (
            "SELECT c.name, CASE WHEN c.max_length = -1 THEN t.name + '(max)' ELSE t.name END, c.is_nullable "
            "FROM sys.columns AS c JOIN sys.types AS t ON c.user_type_id = t.user_type_id "
            "WHERE c.object_id = OBJECT_ID(:object_name) ORDER BY c.column_id"
        )

    def portable_type(self, db_type: str) -> str:
        return _PORTABLE.get(db_type.lower(), "text")

    def script(self, statements: Sequence[str]) -> str:
        return "".join(f"{sql}\nGO\n\n" for sql in statements)

    def select_first(self, columns: str, rest: str) -> str:
        return f"SELECT TOP (:limit) {columns} FROM {rest}"

    def skip_locked_hints(self) -> str:
        # Skip rows other sessions are claiming or inserting rather than wait for them.
        return " WITH (READPAST, READCOMMITTEDLOCK)"

    def committed_read_hints(self) -> str:
        # Under READ_COMMITTED_SNAPSHOT a plain read sees versions from the statement's start, while
        # claims read the queue table with locks: a batch written since would look unlisted.
        return " WITH (READCOMMITTEDLOCK)"

    # ---- doctor ---------------------------------------------------------------------------------
    def indexes_sql(self, table: TableName) -> str:
        return (
            "SELECT i.name, i.filter_definition, c.name FROM sys.indexes AS i "
            "JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id "
            "AND ic.key_ordinal = 1 "
            "JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id "
            "WHERE i.object_id = OBJECT_ID(:object_name)"
        )

    def database_settings(self, table: TableName) -> Statement:
        """(READ_COMMITTED_SNAPSHOT on, the table's lock escalation) of the current database."""
        return self.compile(
            "SELECT d.is_read_committed_snapshot_on, t.lock_escalation_desc "
            "FROM sys.databases AS d CROSS JOIN sys.tables AS t "
            "WHERE d.database_id = DB_ID() AND t.object_id = OBJECT_ID(:object_name)"
        )

    def enabled_triggers(self, table: TableName) -> Statement:
        return self.compile(
            "SELECT tr.name FROM sys.triggers AS tr WHERE tr.parent_id = OBJECT_ID(:object_name) AND tr.is_disabled = 0"
        )

    def disable_trigger(self, table: TableName, trigger: str) -> Statement:
        return self.compile(f"DISABLE TRIGGER {self.quote(trigger)} ON {self.table(table)}")

    def read_committed_snapshot_off(self, table: TableName) -> Statement:
        return self.compile("ALTER DATABASE CURRENT SET READ_COMMITTED_SNAPSHOT OFF WITH ROLLBACK IMMEDIATE")

    def connect(self, spec: ConnectionSpec) -> Any:
        pyodbc = _pyodbc()
        text = spec.raw + _credentials(spec) if spec.raw is not None else odbc_connection_string(spec, pyodbc.drivers())
        return pyodbc.connect(text, autocommit=True)

    @contextmanager
    def transaction(self, conn: Any) -> Iterator[Any]:
        conn.autocommit = False
        try:
            cur = conn.cursor()
            try:
                yield cur
            except BaseException:
                conn.rollback()
                raise
            conn.commit()
        finally:
            conn.autocommit = True

    def load(self, cur: Any, target: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        # fast_executemany sends each chunk as one parameter array: one round trip per chunk.
        cur.fast_executemany = True
        for chunk in rows_in_chunks(rows, LOAD_CHUNK_ROWS):
            super().load(cur, target, columns, chunk)

    def encode(self, column: Column, value: Any) -> Any:
        # DATETIME2 has no zone: send UTC wall time.
        return utc_naive(value) if isinstance(value, dt.datetime) else value

    def create_scratch(self, table: TableName, columns: Sequence[str]) -> str:
        names = ", ".join(self.quote(c) for c in columns)
        return f"SELECT {names} INTO {self.scratch_table} FROM {self.table(table)} WHERE 1 = 0"

    def insert_new_keys(self, table: TableName, columns: Sequence[str], source: str, where: str = "1 = 1") -> str:
        # IGNORE_DUP_KEY would do this, but SQL Server refuses it on filtered indexes (the dedup
        # index is one). UPDLOCK, HOLDLOCK keeps a concurrent writer from adding the key between
        # the check and the insert; ROW_NUMBER keeps one row per key within the batch.
        q = self.quote
        names = ", ".join(q(c) for c in columns)
        key = q("dedup_key")
        return (
            f"INSERT INTO {self.table(table)} ({names})\n"
            f"SELECT {', '.join(f's.{q(c)}' for c in columns)}\n"
            f"FROM (\n  SELECT {names}, ROW_NUMBER() OVER (PARTITION BY {key} ORDER BY (SELECT NULL)) AS {q('copy_no')}\n"
            f"  FROM {source}\n  WHERE {where}\n) AS s\n"
            f"WHERE (s.{key} IS NULL OR s.{q('copy_no')} = 1)\n"
            f"  AND NOT EXISTS (\n    SELECT 1 FROM {self.table(table)} AS q WITH (UPDLOCK, HOLDLOCK)\n"
            f"    WHERE q.{key} IS NOT NULL AND q.{key} = s.{key}\n  )"
        )

    def is_driver_error(self, exc: BaseException) -> bool:
        return isinstance(exc, _pyodbc().Error)

    def is_transient(self, exc: BaseException) -> bool:
        # SQLSTATE 08xxx: connection lost; 40001: deadlock victim (error 1205); HYT00: timeout.
        state = str(exc.args[0]) if getattr(exc, "args", None) else ""
        return state.startswith("08") or state in ("40001", "HYT00", "HYT01")
