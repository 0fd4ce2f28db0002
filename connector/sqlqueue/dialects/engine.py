"""The engine contract: how an engine spells SQL (types, "now", row limits, locking hints), and
how its driver connects, runs transactions, bulk-inserts and reports errors.

The statement parts (``statements/``) build every statement sqlqueue runs from this contract, and a
dialect (``base.Dialect``) holds the engine and its parts. Statements are written with ``:name``
parameters and compiled to the driver's positional markers, so parameter order never differs between
engines.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

from ..connection import ConnectionSpec, redact
from ..errors import DatabaseError, one_line
from ..identifiers import TableName
from ..schema import Column

_PARAM = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")
# What a filter's colons are while compile looks for parameters (Engine.filter_condition): U+E000, of
# Unicode's private use area, which none of sqlqueue's statements holds.
_HIDDEN_COLON = "\ue000"


# Kinds of a column an INSERT may leave out (Engine.defaults_sql); 0 is a plain default.
GENERATED, ASSIGNED = 1, 2


@dataclass(frozen=True)
class Statement:
    """SQL text with positional markers, and the parameter name behind each marker."""

    sql: str
    names: tuple[str, ...]

    def bind(self, values: dict[str, Any]) -> list[Any]:
        return [values[n] for n in self.names]


def execute(cur: Any, statement: Statement, **values: Any) -> Any:
    """Run ``statement`` with named ``values`` on the caller's cursor (inside its transaction); returns the cursor."""
    cur.execute(statement.sql, statement.bind(values))
    return cur


def scalar(cur: Any, statement: Statement, **values: Any) -> Any:
    """The first value of the one row ``statement`` returns, read to the end of its result: FreeTDS, and
    Microsoft's driver without MARS, carry one active result per connection, and a statement sent while
    one is unread fails with 24000 "Invalid cursor state"."""
    return execute(cur, statement, **values).fetchall()[0][0]


P = ParamSpec("P")
D = TypeVar("D")
R = TypeVar("R")


def cached(builder: Callable[Concatenate[D, P], R]) -> Callable[Concatenate[D, P], R]:
    """Build each statement shape once per part (or engine) instance: every Queue has its own dialect,
    whose engine and parts are its own."""

    @functools.wraps(builder)
    def build(self: D, *args: P.args, **kwargs: P.kwargs) -> R:
        key = (builder.__name__, args, tuple(sorted(kwargs.items())))
        built = self.__dict__.setdefault("_built", {})
        if key not in built:
            built[key] = builder(self, *args, **kwargs)
        return built[key]

    return build


class Engine(ABC):
    name: str

    marker: str = "?"

    # Largest number of rows one statement may lock; None means no limit is needed.
    default_chunk: int | None = None

    # False where the identity column declares the primary key itself.
    separate_primary_key: bool = True

    # Portable column types whose Python values ``encode`` must convert for this driver.
    encoded_types: frozenset[str] = frozenset()
    # Whether load_text takes text rows (sqlqueue.textrows) as they are.
    loads_text = False

    # Where insert_many(skip_duplicates=True) loads rows before keeping the new ones.
    scratch_table = "sqlqueue_scratch"

    # Whether queue rows get an index on their sink tag (see SqlServerEngine for why).
    indexes_row_tags = False
    # How far apart the identity of a queue table this engine creates hands out ids (sqlqueue.numbering):
    # above 1, each id it hands out starts a block of that many, whose other ids a sink task may name.
    id_step = 1
    # Whether the ready index carries the sink tag (INCLUDE), so a claim judges a row of an unpublished
    # batch from the index alone (see PostgresEngine for where it does not help).
    ready_index_covers_tag = True

    @abstractmethod
    def quote(self, ident: str) -> str: ...

    @abstractmethod
    def type_sql(self, column: Column) -> str: ...

    @abstractmethod
    def now(self) -> str:
        """The current UTC time as an SQL expression."""

    @abstractmethod
    def now_plus(self, seconds_param: str) -> str:
        """The current UTC time plus ``:seconds_param`` seconds."""

    @abstractmethod
    def local_now(self) -> str:
        """The current time in the database server's time zone, as tables written with SYSDATETIME(),
        LOCALTIMESTAMP or localtime hold it."""

    @abstractmethod
    def local_offset_sql(self) -> str:
        """One row, one column: seconds the database server's local time is ahead of UTC now."""

    @abstractmethod
    def add_seconds(self, time: str, seconds_param: str) -> str:
        """The timestamp expression ``time`` plus ``:seconds_param`` seconds (which may be negative)."""

    @abstractmethod
    def millis_between(self, start: str, end: str) -> str:
        """Whole milliseconds from timestamp expression ``start`` to ``end``, as a BIGINT expression."""

    @abstractmethod
    def create_table_guarded(self, table: TableName, body: str, unlogged: bool = False) -> str:
        """CREATE TABLE unless it exists; ``unlogged`` where the engine can skip the log for scratch data."""

    @abstractmethod
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
        """CREATE INDEX unless it exists; a filtered (partial) index when ``where`` is given.

        ``clustered``: the index orders the table itself, on engines that store tables that way.
        """

    @staticmethod
    def index_filter(where: str | None) -> str:
        return f" WHERE {where}" if where else ""

    @abstractmethod
    def claim_sql(
        self, table: TableName, set_sql: str, where: str, order: str, strict: bool, index: str | None,
        waited: tuple[str, str] | None = None, addressed: bool = False,
    ) -> str:  # fmt: skip
        """One statement that marks up to ``:limit`` rows ``where`` selects with ``set_sql``, in ``order`` (an
        ORDER BY list, empty for none), and returns them as ``claimed_returns`` says; ``strict`` waits for rows
        others hold. ``index``: the index whose filter the rows match, for an engine that is told which to
        read (SQL Server's INDEX hint); None where no index holds them. ``addressed``: the table is one whose
        rows each have an address of their own (``plain_table_sql``), for an engine that fetches the rows it
        picked by address (PostgreSQL's ctid)."""

    def plain_table_sql(self) -> str | None:
        """One row of one flag: whether the table (:schema, :table) is one whose rows each have an address of
        their own, which claim_sql's ``addressed`` may fetch them by; None where no claim fetches by address."""
        return None

    def rewriters_sql(self) -> str | None:
        """One row of one flag: whether the table (:schema, :table) has a trigger or a rule that may write a row
        after a claim's RETURNING or OUTPUT returned it, and so its guard column (Claims.claim's settle); None
        where the engine cannot tell, and every claim settles."""
        return None

    def claimed_returns(self, waited: tuple[str, str] | None, row: str = "") -> str:
        """What a claim returns of each row it took: its id, and with ``waited`` (its enqueue and claim time
        columns) its queue wait in ms, so the claim's wait figures need no second pass over its rows (at
        500,000 rows that pass took 0.3 s of the database's time on PostgreSQL). ``row``: how the statement
        names the row as the claim left it (SQL Server's ``inserted.``)."""
        returned = f"{row}{self.quote('id')}"
        if waited is None:
            return returned
        enqueued, claimed = (f"{row}{self.quote(c)}" for c in waited)
        return f"{returned}, {self.millis_between(enqueued, claimed)}"

    def limited_update(self, table: TableName, set_sql: str, where: str, limited: bool) -> str:
        """UPDATE of the matching rows, at most ``:limit`` of them when ``limited``."""
        return f"UPDATE {self.table(table)} SET {set_sql} WHERE {self._limited(table, where, limited)}"

    def limited_delete(self, table: TableName, where: str, limited: bool) -> str:
        return f"DELETE FROM {self.table(table)} WHERE {self._limited(table, where, limited)}"

    def update_from(self, table: TableName, set_sql: str, source: str, where: str) -> str:
        """UPDATE of the rows ``where`` joins to ``source`` (a table and its alias), each joined to one
        source row, whose values ``set_sql`` may read: UPDATE ... FROM on PostgreSQL
        (postgresql.org/docs/current/sql-update.html), SQLite (sqlite.org/lang_update.html#update_from)
        and SQL Server, where the target, named and not aliased, is left out of the FROM list, which then
        joins it implicitly ("If the object being updated is the same as the object in the FROM clause
        ...", UPDATE (Transact-SQL), learn.microsoft.com/sql/t-sql/queries/update-transact-sql)."""
        return f"UPDATE {self.table(table)}{self.row_lock_hints()} SET {set_sql} FROM {source} WHERE {where}"

    def _limited(self, table: TableName, where: str, limited: bool) -> str:
        if not limited:
            return where
        i = self.quote("id")
        return f"{i} IN (SELECT {i} FROM {self.table(table)} WHERE {where} LIMIT :limit)"

    @abstractmethod
    def columns_sql(self, table: TableName) -> str:
        """Rows of (column name, database type name, nullable flag)."""

    @abstractmethod
    def portable_type(self, db_type: str) -> str: ...

    @abstractmethod
    def exact_columns_sql(self, table: TableName) -> str:
        """Rows of (column name, its type as CREATE TABLE spells it, precision and length kept)."""

    @abstractmethod
    def referenced_sql(self, table: TableName) -> str:
        """Rows of (referenced table, referenced column), each quoted as a query names it, of the foreign
        key on the table's column :column, if it has one."""

    @abstractmethod
    def referencing_sql(self, table: TableName) -> str:
        """Rows of (schema or NULL, table, foreign key, column, referenced column) of every foreign key that
        references the table, each key's columns in its order; a referenced column NULL (SQLite) is the
        table's primary key column in that place."""

    @abstractmethod
    def checks_sql(self, table: TableName) -> str:
        """Rows of (the text of a CHECK constraint of the table); on SQLite the CREATE TABLE holding them."""

    @abstractmethod
    def unique_keys_sql(self, table: TableName) -> str:
        """Rows of (primary key or unique index name, key column) of the table, the primary key first and
        each key's columns in its order; filtered indexes left out."""

    @abstractmethod
    def defaults_sql(self, table: TableName) -> str:
        """Rows of (column, kind) of the table's columns an INSERT may leave out. Kind 1 (GENERATED): the
        table makes the value and refuses a given one (identity on SQL Server, computed, rowversion);
        2 (ASSIGNED): the table gives each row a value of its own and takes given ones (a sequence, the
        rowid); 0: a plain default, which rows inserted together share."""

    @abstractmethod
    def indexes_sql(self, table: TableName) -> str:
        """Rows of (index name, filter predicate or NULL, first key column) of the queue table."""

    @abstractmethod
    def table_absent(self, table: TableName) -> str:
        """An SQL condition that holds while ``table`` does not exist (create records its layout then)."""

    def identity_sql(self, column: Column, step: int = 1) -> str:
        return f"{self.type_sql(column)} NOT NULL"

    def identity_query(self, table: TableName) -> str | None:
        """A query of how far apart ``table``'s identity hands out ids, and whether this login may reserve
        blocks of them (sqlqueue.numbering.Identity); None where it hands them out one at a time."""
        return None

    def identity_blocks_sql(self, table: TableName) -> str | None:
        """The ids ``table``'s identity hands out next, :blocks of them, each the first of its block; None
        where it hands them out one at a time."""
        return None

    def table_options(self, table: TableName) -> list[str]:
        """Statements run after CREATE TABLE (engine settings a queue table needs)."""
        return []

    @abstractmethod
    def connect(self, spec: ConnectionSpec) -> Any: ...

    def inspection_connect(self, spec: ConnectionSpec) -> Any:
        """A connection that changes no database setting, for the doctor to look with."""
        return self.connect(spec)

    @abstractmethod
    @contextmanager
    def transaction(self, conn: Any) -> Iterator[Any]:
        """A cursor inside one transaction, committed on success and rolled back on error."""

    def autocommit_cursor(self, conn: Any) -> Any:
        return conn.cursor()

    def copy_out(self, cur: Any, statement: Statement, values: dict[str, Any]) -> Iterator[bytes] | None:
        """The rows ``statement`` selects as CSV text in chunks, where the driver streams them so (NULL an
        unquoted empty field, an empty string a quoted one, booleans t and f, times as the session writes
        them); None where it cannot, and the caller fetches rows."""
        return None

    def session_clock(self, clock: str) -> str | None:
        """The statement that makes a new session write and compare a table's times without a zone in
        ``clock`` (Profile.clock: utc or local); None where the engine's clock functions say it already."""
        return None

    def insert_many(
        self,
        cur: Any,
        table: TableName,
        columns: Sequence[Column],
        rows: Iterable[Sequence[Any]],
        skip_duplicates: bool = False,
    ) -> None:
        """Bulk insert through the engine's fast path (``load``).

        With ``skip_duplicates`` a row whose ``dedup_key`` is already in the table, or earlier in
        ``rows``, is dropped instead of failing the statement: the rows go to a scratch table
        first, and one set-based statement keeps the new keys.
        """
        if not skip_duplicates:
            self.load(cur, self.table(table), columns, rows)
            return
        names = [c.name for c in columns]
        cur.execute(self.create_scratch(table, names))
        self.load(cur, self.scratch_table, columns, rows)
        cur.execute(self.insert_new_keys(table, names, self.scratch_table))
        cur.execute(f"DROP TABLE {self.scratch_table}")

    def load(self, cur: Any, target: str, columns: Sequence[Column], rows: Iterable[Sequence[Any]]) -> None:
        """Insert rows into ``target`` (quoted); engines override with their fast path.

        ``columns`` carry the queue's portable types, for drivers that must be told what they bind.
        """
        names = ", ".join(self.quote(c.name) for c in columns)
        marks = ", ".join(self.marker for _ in columns)
        cur.executemany(f"INSERT INTO {target} ({names}) VALUES ({marks})", rows)

    def load_text(self, cur: Any, target: str, columns: Sequence[Column], chunks: Iterable[bytes]) -> None:
        """Insert rows given as chunks of text (sqlqueue.textrows) into ``target`` (quoted), where ``loads_text``."""
        raise NotImplementedError(f"{self.name} loads no text rows")

    def encode(self, column: Column, value: Any) -> Any:
        """Turn a Python value of a column whose type is in ``encoded_types`` into what the driver sends."""
        return value

    def map_error(self, exc: BaseException, spec: ConnectionSpec | None, proven: bool) -> DatabaseError:
        """The one place a driver error becomes ours: secrets scrubbed, transient or not.

        ``proven``: the address is known to work (``Queue.proven``)."""
        secret = spec.password if spec else None
        transient = self.is_transient(exc, first_connect=not proven)
        return DatabaseError(f"{self.name}: {redact(one_line(exc), secret)}", transient)

    @abstractmethod
    def is_driver_error(self, exc: BaseException) -> bool: ...

    @abstractmethod
    def is_transient(self, exc: BaseException, first_connect: bool) -> bool:
        """Lost connections, a server restarting, deadlock victims, lock timeouts: worth another try.

        ``first_connect``: the address is not proven yet (no connection of this queue has worked,
        and it is no Spark task of a stream that reached the queue on the driver first), so a
        connection that fails is most likely a wrong address or login, and retrying only delays the
        message. A server that answers that it is starting up or busy is worth another try even then.
        """

    def table(self, table: TableName) -> str:
        if table.schema:
            return f"{self.quote(table.schema)}.{self.quote(table.name)}"
        return self.quote(table.name)

    def compile(self, sql: str) -> Statement:
        """``sql`` with each ``:name`` parameter turned into the driver's marker; run it with ``bind``."""
        names: list[str] = []

        def marker(match: re.Match[str]) -> str:
            names.append(match.group(1))
            return self.marker

        return Statement(_PARAM.sub(marker, sql).replace(_HIDDEN_COLON, ":"), tuple(names))

    @staticmethod
    def filter_condition(condition: str) -> str:
        """A stream's filter (profile.filter, checked by sqlqueue.filters) as a statement holds it: in
        parentheses of its own, its colons hidden from compile, which would take the ``:orders`` of a
        literal such as ``'%:orders'`` for a parameter of ours."""
        return f"({condition.replace(':', _HIDDEN_COLON)})"

    def default_sql(self, default: str) -> str:
        return self.now() if default == "now" else default

    def column_sql(self, column: Column, default: str | None = None) -> str:
        if default == "identity":
            return f"{self.quote(column.name)} {self.identity_sql(column, self.id_step)}"
        sql = f"{self.quote(column.name)} {self.type_sql(column)}"
        if default is not None:
            sql += f" DEFAULT {self.default_sql(default)}"
        return sql + ("" if column.nullable else " NOT NULL")

    def script(self, statements: Sequence[str]) -> str:
        """Statements as one script a DBA can run (psql, sqlite3; sqlcmd on SQL Server)."""
        return "".join(f"{sql};\n\n" for sql in statements)

    def select_first(self, columns: str, rest: str, limit: str = "limit") -> str:
        """SELECT the first ``:limit`` rows (the parameter ``limit`` names) of ``FROM ... ORDER BY ...`` (``rest``)."""
        return f"SELECT {columns} FROM {rest} LIMIT :{limit}"

    def among(self, key: Sequence[str], rows: str) -> str:
        """The row's ``key`` (quoted columns) is one of those the query ``rows`` returns."""
        names = ", ".join(key)
        return f"{names if len(key) == 1 else f'({names})'} IN ({rows})"

    def read_first(self, table: TableName, columns: str, where: str, order: str, index: str | None) -> str:
        """SELECT ``columns`` of the first ``:limit`` rows ``where`` selects, in ``order`` (an ORDER BY list, empty
        for none), locking none of them and passing over rows other sessions are writing, as the backlog's
        count reads them: a claim that holds rows as runs (Claims.pick). ``index``: the index whose filter the
        rows match, for an engine that is told which to read (SQL Server's INDEX hint)."""
        order_by = f" ORDER BY {order}" if order else ""
        return self.select_first(columns, f"{self.table(table)}{self.skip_locked_hints()} WHERE {where}{order_by}")

    def in_runs(self, row: str, runs: TableName, first: str, last: str) -> str:
        """A run of ``runs`` (columns ``first`` and ``last``: the run's ids) holds the id ``row`` (a qualified
        column): one seek of the runs' index on their first id a row. The runs are read as last committed,
        like a sink's unpublished list; no alias, as there: the two tables' names differ by construction."""
        q, r = self.quote, self.quote(runs.name)
        return (
            f"EXISTS (SELECT 1 FROM {self.table(runs)}{self.committed_read_hints()} "
            f"WHERE {r}.{q(first)} <= {row} AND {r}.{q(last)} >= {row})"
        )

    def lock_waiting(self, table: TableName, columns: str, where: str, order: str) -> str:
        """SELECT ``columns`` of the rows ``where`` selects, locked in ``order`` (an ORDER BY list) until the
        transaction ends, waiting for a session that holds one. SQLite's one writer (BEGIN IMMEDIATE) holds
        the whole database already."""
        return f"SELECT {columns} FROM {self.table(table)} WHERE {where} ORDER BY {order}"

    def claim_turn(self, table: TableName) -> str | None:
        """The statement a claim of ``table`` runs first in its transaction where claims take turns (a grouped
        claim, Claims.grouped; every claim of sqlqueue's own layout, statements.runs), which waits while another
        claim of that table holds it and holds it until commit; None where the claim's transaction already
        excludes every other writer: SQLite's BEGIN IMMEDIATE takes the database's write lock
        (sqlite.org/lang_transaction.html). The keys are the ones grouped claims took first, which a table's
        own worker takes too (docs/streaming.md)."""
        return None

    def lock_first(self, table: TableName, columns: str, where: str) -> str:
        """SELECT ``columns`` of up to ``:limit`` rows ``where`` selects, locked until the transaction ends
        and skipping rows other sessions hold. SQLite's one writer (BEGIN IMMEDIATE) locks the database."""
        return f"SELECT {columns} FROM {self.table(table)} WHERE {where} LIMIT :limit"

    @abstractmethod
    def lock_rows(self, table: TableName, columns: str, where: str, order: str) -> str | None:
        """SELECT ``columns`` of the rows ``where`` selects, locked in ``order`` (an ORDER BY list) until the
        transaction ends, waiting for a session that holds them, as acknowledgements lock their rows before
        writing outcomes (Outcomes.lock_acked); None where they take no such lock: a transaction holds the
        whole database already, or the outcomes' next pass settles what the lock would spare
        (queue._settled)."""

    def skip_locked_hints(self) -> str:
        """Table hints for a read that skips rows other sessions hold locked instead of waiting."""
        return ""

    def committed_read_hints(self) -> str:
        """Table hints for a read that sees the last committed rows, waiting for uncommitted ones."""
        return ""

    def row_lock_hints(self) -> str:
        """Table hints for a write that must lock rows, not pages, so claims can skip past it."""
        return ""

    def decode_timestamp(self, value: Any) -> dt.datetime | None:
        """A timestamp the driver returned, as an aware UTC datetime (stored times are UTC)."""
        if isinstance(value, dt.datetime):
            return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value
        return None

    def temp_table(self, name: str) -> str:
        """The session's temporary table ``name`` as a statement names it (never a table of a schema)."""
        return f"temp.{self.quote(name)}"

    def create_temp_table(self, name: str, columns: Sequence[tuple[str, str]], key: Sequence[str]) -> str:
        """A temporary table of the session, gone with it: ``columns`` (name, type as DDL spells it), unique
        by ``key``."""
        body = ", ".join([*(f"{self.quote(n)} {t}" for n, t in columns), self._primary_key(key)])
        return f"CREATE TEMP TABLE {self.quote(name)} ({body})"

    def analyze(self, table: str) -> str | None:
        """The statement that gives the planner the statistics of a table just loaded (``table`` as a
        statement names it); None where the engine keeps them itself."""
        return None

    def _primary_key(self, key: Sequence[str]) -> str:
        return f"PRIMARY KEY ({', '.join(self.quote(k) for k in key)})"

    def create_scratch(self, table: TableName, columns: Sequence[str]) -> str:
        """An empty temporary table with the types of ``columns`` in ``table``."""
        names = ", ".join(self.quote(c) for c in columns)
        return f"CREATE TEMP TABLE {self.scratch_table} AS SELECT {names} FROM {self.table(table)} WHERE 1 = 0"

    def insert_new_keys(self, table: TableName, columns: Sequence[str], source: str, where: str = "1 = 1") -> str:
        """Copy ``source`` rows matching ``where`` into ``table``, skipping dedup keys it has (or that repeat)."""
        names = ", ".join(self.quote(c) for c in columns)
        # The WHERE clause also keeps SQLite from reading ON CONFLICT as part of the SELECT's join.
        return (
            f"INSERT INTO {self.table(table)} ({names}) SELECT {names} FROM {source} "
            f"WHERE {where} ON CONFLICT DO NOTHING"
        )

    def index_name(self, table: TableName, index: str) -> str:
        """An index of ``table`` as DROP INDEX names it."""
        return self.quote(index)

    def literal(self, text: str) -> str:
        """A string literal of ``text`` (a name, or a status value from a profile), quotes doubled."""
        return "'" + text.replace("'", "''") + "'"


def utc_naive(value: dt.datetime) -> dt.datetime:
    """A datetime as naive UTC, for drivers and columns that carry no time zone."""
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


def rows_in_chunks(rows: Iterable[Sequence[Any]], size: int) -> Iterator[list[Sequence[Any]]]:
    chunk: list[Sequence[Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
