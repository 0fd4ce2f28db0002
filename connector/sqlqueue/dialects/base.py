"""The dialect contract: every SQL statement sqlqueue runs, built from one shared skeleton.

A dialect subclass varies only what its engine spells differently (types, "now", row limits,
locking hints, bulk insert). Statements are written with ``:name`` parameters and compiled to the
driver's positional markers, so parameter order never differs between engines.
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
from ..errors import DatabaseError
from ..identifiers import TableName
from ..schema import (
    CLAIMED,
    DONE,
    FAILED,
    LAYOUT,
    LIFECYCLE,
    LIFECYCLE_TYPES,
    ORDERS,
    READY,
    READY_INDEX_KEY,
    STAGE_TAG,
    STAGED,
    STATES,
    UNPUBLISHED,
    WRITABLE_LIFECYCLE,
    Column,
    QueueSpec,
)
from .layout import Step

_PARAM = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")
LEDGER_TABLE = "sqlqueue_sink_ledger"
# How long a migration's DDL waits for a table lock before it fails (and migrate is run again).
MIGRATION_LOCK_TIMEOUT_S = 10


@dataclass(frozen=True)
class Statement:
    """SQL text with positional markers, and the parameter name behind each marker."""

    sql: str
    names: tuple[str, ...]

    def bind(self, values: dict[str, Any]) -> list[Any]:
        return [values[n] for n in self.names]


P = ParamSpec("P")
D = TypeVar("D", bound="Dialect")


def cached(builder: Callable[Concatenate[D, P], Statement]) -> Callable[Concatenate[D, P], Statement]:
    """Build each statement shape once per dialect instance (every Queue has its own dialect)."""

    @functools.wraps(builder)
    def build(self: D, *args: P.args, **kwargs: P.kwargs) -> Statement:
        key = (builder.__name__, args, tuple(sorted(kwargs.items())))
        built = self.__dict__.setdefault("_built", {})
        if key not in built:
            built[key] = builder(self, *args, **kwargs)
        return built[key]

    return build


class Dialect(ABC):
    name: str
    marker: str = "?"
    # Largest number of rows one statement may lock; None means no limit is needed.
    default_chunk: int | None = None
    # False where the identity column declares the primary key itself.
    separate_primary_key: bool = True
    # Portable column types whose Python values ``encode`` must convert for this driver.
    encoded_types: frozenset[str] = frozenset()
    # Where insert_many(skip_duplicates=True) loads rows before keeping the new ones.
    scratch_table = "sqlqueue_scratch"
    # Whether queue rows get an index on their sink tag (see SqlServerDialect for why).
    indexes_row_tags = False

    # ---- spelling: what subclasses vary -------------------------------------------------------
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
    def claim_sql(self, table: TableName, set_sql: str, where: str, order: str, strict: bool) -> str:
        """One statement that marks up to ``:limit`` ready rows and returns their ids."""

    def limited_update(self, table: TableName, set_sql: str, where: str, limited: bool) -> str:
        """UPDATE of the matching rows, at most ``:limit`` of them when ``limited``."""
        return f"UPDATE {self.table(table)} SET {set_sql} WHERE {self._limited(table, where, limited)}"

    def limited_delete(self, table: TableName, where: str, limited: bool) -> str:
        return f"DELETE FROM {self.table(table)} WHERE {self._limited(table, where, limited)}"

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

    def identity_sql(self, column: Column) -> str:
        return f"{self.type_sql(column)} NOT NULL"

    def table_options(self, table: TableName) -> list[str]:
        """Statements run after CREATE TABLE (engine settings a queue table needs)."""
        return []

    # ---- driver: each dialect module owns its driver -----------------------------------------
    @abstractmethod
    def connect(self, spec: ConnectionSpec) -> Any: ...

    @abstractmethod
    @contextmanager
    def transaction(self, conn: Any) -> Iterator[Any]:
        """A cursor inside one transaction, committed on success and rolled back on error."""

    def autocommit_cursor(self, conn: Any) -> Any:
        return conn.cursor()

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

    def encode(self, column: Column, value: Any) -> Any:
        """Turn a Python value of a column whose type is in ``encoded_types`` into what the driver sends."""
        return value

    def map_error(self, exc: BaseException, spec: ConnectionSpec | None, connected_before: bool) -> DatabaseError:
        """The one place a driver error becomes ours: secrets scrubbed, transient or not."""
        secret = spec.password if spec else None
        transient = self.is_transient(exc, first_connect=not connected_before)
        return DatabaseError(f"{self.name}: {redact(str(exc), secret)}", transient)

    @abstractmethod
    def is_driver_error(self, exc: BaseException) -> bool: ...

    @abstractmethod
    def is_transient(self, exc: BaseException, first_connect: bool) -> bool:
        """Lost connections, deadlock victims, lock timeouts: worth another try.

        ``first_connect``: the error came from the very first connection attempt, where most
        failures are a wrong address or login, and retrying only delays the message.
        """

    # ---- shared SQL -------------------------------------------------------------------------
    def table(self, table: TableName) -> str:
        if table.schema:
            return f"{self.quote(table.schema)}.{self.quote(table.name)}"
        return self.quote(table.name)

    def compile(self, sql: str) -> Statement:
        names: list[str] = []

        def marker(match: re.Match[str]) -> str:
            names.append(match.group(1))
            return self.marker

        return Statement(_PARAM.sub(marker, sql), tuple(names))

    def default_sql(self, default: str) -> str:
        return self.now() if default == "now" else default

    def _column_sql(self, column: Column, default: str | None = None) -> str:
        if default == "identity":
            return f"{self.quote(column.name)} {self.identity_sql(column)}"
        sql = f"{self.quote(column.name)} {self.type_sql(column)}"
        if default is not None:
            sql += f" DEFAULT {self.default_sql(default)}"
        return sql + ("" if column.nullable else " NOT NULL")

    def create_statements(self, spec: QueueSpec) -> list[str]:
        """Idempotent DDL for a queue table, its indexes, its staging table and the sink ledger.

        The layout is recorded first, and only when the queue table does not exist yet: running this
        over a table an earlier sqlqueue made leaves it unrecorded, for ``sqlqueue migrate``.
        """
        t, q = spec.table, self.quote
        lines = [self._column_sql(column, default) for column, default in LIFECYCLE]
        lines += [self._column_sql(c) for c in spec.domain]
        lines.append(f"CONSTRAINT {q(self.state_check_name(t))} {self._state_check(t)}")
        if self.separate_primary_key:
            lines.append(f"CONSTRAINT {q('pk_' + t.name)} PRIMARY KEY ({q('id')})")
        body = ",\n  ".join(lines)
        statements = [self.create_layout_table(t), self.record_layout(t, self.table_absent(t))]
        statements.append(self.create_table_guarded(t, body))
        statements += self.table_options(t)
        statements += self.index_statements(t, spec.order).values()
        statements += self._staging_statements(spec)
        statements.append(self._create_unpublished(t))
        statements.append(self.create_ledger(t))
        return statements

    def staging(self, table: TableName) -> TableName:
        """Where the sink's tasks stage a batch until Spark commits it (beside the queue table)."""
        return TableName(f"{table.name}_staging", table.schema)

    def _staging_statements(self, spec: QueueSpec) -> list[str]:
        # The columns a producer may write, all nullable: publish inserts only the columns a batch
        # has, so the queue's defaults and NOT NULL checks apply then. Nothing is claimed from it.
        staging = self.staging(spec.table)
        columns = [STAGE_TAG, *(Column(n, LIFECYCLE_TYPES[n].type) for n in WRITABLE_LIFECYCLE)]
        body = ",\n  ".join(self._column_sql(c) for c in [*columns, *spec.domain])
        return [
            self.create_table_guarded(staging, body, unlogged=True),
            *self.table_options(staging),
            self.create_index_guarded(
                staging, f"ix_{staging.name}_tag", self.quote(STAGE_TAG.name), [], None, clustered=True
            ),
        ]

    def unpublished(self, table: TableName) -> TableName:
        """The tags of sink batches written into the queue table but not committed by Spark yet."""
        return TableName(f"{table.name}_unpublished", table.schema)

    def _create_unpublished(self, table: TableName) -> str:
        # Logged like the queue table, whose rows it hides: a crash must not publish them. Each tag
        # records the id range its rows lie in, so dropping them seeks the primary key.
        q = self.quote
        bigints = [Column(n, "bigint", False) for n in ("id_after", "id_upto", "row_count")]
        lines = [self._column_sql(c) for c in (STAGE_TAG, *bigints)]
        lines.append(f"CONSTRAINT {q('pk_' + self.unpublished(table).name)} PRIMARY KEY ({q(STAGE_TAG.name)})")
        return self.create_table_guarded(self.unpublished(table), ",\n  ".join(lines))

    def ready_index(self, table: TableName) -> str:
        """The filtered index of ready rows, in the order the queue was created for."""
        return f"ix_{table.name}_ready"

    def index_statements(self, table: TableName, order: str) -> dict[str, str]:
        """{index name: idempotent CREATE INDEX} for every index a queue table needs (see the README)."""
        t, q = table, self.quote
        key = ", ".join(f"{q(c)} {d}" for c, d in READY_INDEX_KEY[order])
        # The ready index covers every column the claim's WHERE reads (stage_tag too), so rows a claim
        # passes over are judged from the index alone, without a lookup that locks the base row.
        include = [c for c in ("due_at", "priority") if c not in dict(READY_INDEX_KEY[order])] + [STAGE_TAG.name]
        indexes: tuple[tuple[str, str, list[str], str, bool], ...] = (
            (self.ready_index(t), key, include, f"{q('state')} = '{READY}'", False),
            (
                f"ix_{t.name}_claimed",
                f"{q('consumer')}, {q('claim_seq')}",
                ["lease_until"],
                f"{q('state')} = '{CLAIMED}'",
                False,
            ),
            (f"ix_{t.name}_done", q("completed_at"), [], f"{q('state')} = '{DONE}'", False),
            (f"ux_{t.name}_dedup", q("dedup_key"), [], f"{q('dedup_key')} IS NOT NULL", True),
        )
        if self.indexes_row_tags:
            # Rows still carrying a sink tag (unpublished, or published and not yet claimed): dropping
            # a tag's rows outside its recorded id range seeks here instead of scanning the table.
            indexes += ((f"ix_{t.name}_tag", q(STAGE_TAG.name), [], f"{q(STAGE_TAG.name)} IS NOT NULL", False),)
        return {
            name: self.create_index_guarded(t, name, key, inc, where, unique)
            for name, key, inc, where, unique in indexes
        }

    def script(self, statements: Sequence[str]) -> str:
        """Statements as one script a DBA can run (psql, sqlite3; sqlcmd on SQL Server)."""
        return "".join(f"{sql};\n\n" for sql in statements)

    def ledger(self, table: TableName) -> TableName:
        """The sink ledger of a queue lives in the queue table's schema."""
        return TableName(LEDGER_TABLE, table.schema)

    def create_ledger(self, table: TableName) -> str:
        # The key stays within SQL Server's 900-byte clustered key: queue names have at most 201
        # characters and writer ids (option writerId, or a query id) at most 200.
        q = self.quote
        ledger = self.ledger(table)
        body = (
            f"{q('queue_name')} {self.type_sql(Column('queue_name', 'string'))} NOT NULL,\n"
            f"  {q('writer_id')} {self.type_sql(Column('writer_id', 'string'))} NOT NULL,\n"
            f"  {q('batch_id')} {self.type_sql(Column('batch_id', 'bigint'))} NOT NULL,\n"
            f"  {q('row_count')} {self.type_sql(Column('row_count', 'bigint'))} NOT NULL,\n"
            f"  {q('committed_at')} {self.type_sql(Column('committed_at', 'timestamp'))} NOT NULL"
            f" DEFAULT {self.default_sql('now')},\n"
            f"  CONSTRAINT {q('pk_' + LEDGER_TABLE)} PRIMARY KEY ({q('queue_name')}, {q('writer_id')}, {q('batch_id')})"
        )
        return self.create_table_guarded(ledger, body)

    def ready_predicate(self, table: TableName, bounded: bool) -> str:
        """Rows a claim may take: ready, due, and not part of a sink batch Spark has yet to commit.

        Rows of unpublished batches sit in the ready index like any other; the tag test skips them
        with one primary-key probe each, and only rows a sink wrote carry a tag until claimed.
        """
        q = self.quote
        where = (
            f"{q('state')} = '{READY}' AND {q('due_at')} <= {self.now()} "
            f"AND ({self._row_tag(table)} IS NULL OR NOT EXISTS ({self._listed_tag(table)}))"
        )
        return where + (f" AND {q('id')} <= :max_id" if bounded else "")

    def _row_tag(self, table: TableName) -> str:
        """A table's tag column, qualified: the queue and its unpublished list both have one."""
        return f"{self.quote(table.name)}.{self.quote(STAGE_TAG.name)}"

    def _listed_tag(self, table: TableName) -> str:
        """A subquery with a row when the current row of ``table`` belongs to an unpublished batch.

        No alias: the two table names differ by construction, where an alias could equal the
        queue's name. The list is read as last committed, like the queue rows it hides.
        """
        unpublished = self.unpublished(table)
        return (
            f"SELECT 1 FROM {self.table(unpublished)}{self.committed_read_hints()} "
            f"WHERE {self._row_tag(unpublished)} = {self._row_tag(table)}"
        )

    @cached
    def claim(self, table: TableName, order: str, strict: bool, bounded: bool) -> Statement:
        q = self.quote
        set_sql = (
            f"{q('state')} = '{CLAIMED}', {q('consumer')} = :consumer, {q('claim_seq')} = :seq, "
            f"{q('attempts')} = {q('attempts')} + 1, {q('claimed_at')} = {self.now()}, "
            f"{q('lease_until')} = {self.now_plus('lease_seconds')}, {q(STAGE_TAG.name)} = NULL"
        )
        return self.compile(self.claim_sql(table, set_sql, self.ready_predicate(table, bounded), order, strict))

    def order_by(self, order: str) -> str:
        return ", ".join(f"{self.quote(c)} {d}" for c, d in ORDERS[order])

    def tagged(self, exact: bool = False) -> str:
        """Rows a consumer holds under one claim number, or a range of them.

        The state test lets the engine seek the filtered index of claimed rows.
        """
        q = self.quote
        held = f"{q('state')} = '{CLAIMED}' AND {q('consumer')} = :consumer AND "
        if exact:
            return held + f"{q('claim_seq')} = :seq"
        return held + f"{q('claim_seq')} > :after_seq AND {q('claim_seq')} <= :upto_seq"

    @cached
    def count_tagged(self, table: TableName) -> Statement:
        return self.compile(f"SELECT COUNT(*) FROM {self.table(table)} WHERE {self.tagged(exact=True)}")

    @cached
    def partition_bounds(self, table: TableName, parts: int) -> Statement:
        """Split the rows of claims (after_seq, upto_seq] into ``parts`` id ranges of equal size.

        ``parts`` is a validated int written as a literal: NTILE takes no parameter marker in every
        engine's parser.
        """
        q = self.quote
        inner = (
            f"SELECT {q('id')}, NTILE({int(parts)}) OVER (ORDER BY {q('id')}) AS {q('part')} "
            f"FROM {self.table(table)} WHERE {self.tagged()}"
        )
        return self.compile(
            f"SELECT MIN(t.{q('id')}) AS {q('lo')}, MAX(t.{q('id')}) AS {q('hi')} FROM ({inner}) AS t "
            f"GROUP BY t.{q('part')} ORDER BY {q('lo')}"
        )

    @cached
    def read_claimed(self, table: TableName, columns: Sequence[str]) -> Statement:
        cols = ", ".join(self.quote(c) for c in columns)
        return self.compile(
            f"SELECT {cols} FROM {self.table(table)} WHERE {self.tagged()} AND {self.quote('id')} BETWEEN :lo AND :hi"
        )

    @cached
    def complete(self, table: TableName, keep: bool, limited: bool) -> Statement:
        """Finish the rows of claims up to ``:upto_seq``: delete them, or mark them done."""
        q = self.quote
        where = f"{q('state')} = '{CLAIMED}' AND {q('consumer')} = :consumer AND {q('claim_seq')} <= :upto_seq"
        if keep:
            set_sql = f"{q('state')} = '{DONE}', {q('completed_at')} = {self.now()}, {q('lease_until')} = NULL"
            return self.compile(self.limited_update(table, set_sql, where, limited))
        return self.compile(self.limited_delete(table, where, limited))

    # ---- lifecycle: leases, per-row outcomes, housekeeping -------------------------------------
    def _give_back(self, error: str, failed_at: str) -> str:
        """SET list that returns a claimed row to the queue, or fails it once its attempts are spent.

        A failed row keeps the consumer and claim number that gave up on it, and records when in
        ``completed_at`` (its fail time, ``failed_at`` in the dead-letter table): the SQL expression
        ``failed_at``, read before the SET applies.
        """
        q = self.quote
        spent = f"{q('attempts')} >= COALESCE({q('max_attempts')}, :max_attempts)"
        return (
            f"{q('state')} = CASE WHEN {spent} THEN '{FAILED}' ELSE '{READY}' END, "
            f"{q('consumer')} = CASE WHEN {spent} THEN {q('consumer')} ELSE NULL END, "
            f"{q('claim_seq')} = CASE WHEN {spent} THEN {q('claim_seq')} ELSE NULL END, "
            f"{q('completed_at')} = CASE WHEN {spent} THEN {failed_at} ELSE NULL END, "
            f"{q('lease_until')} = NULL, {q('last_error')} = {error}"
        )

    @cached
    def rescue_expired(self, table: TableName, limited: bool) -> Statement:
        """Claimed rows whose lease ran out (their consumer died) go back to the queue, or fail."""
        q = self.quote
        where = f"{q('state')} = '{CLAIMED}' AND {q('lease_until')} < {self.now()}"
        # A row whose last lease ran out failed then, not when some consumer came to notice: that can
        # be up to a quarter of the lease later, or hours later when no consumer ran meanwhile.
        set_sql = self._give_back("'lease expired'", q("lease_until"))
        return self.compile(self.limited_update(table, set_sql, where, limited))

    def _one_claimed_row(self, table: TableName) -> str:
        """Only a row still claimed: applying an acknowledgement twice changes nothing the second time."""
        return f"{self.quote('id')} = :id AND {self.quote('state')} = '{CLAIMED}'"

    @cached
    def ack_retry(self, table: TableName) -> Statement:
        """One claimed row back to the queue after ``:delay_seconds``, with its error, or failed."""
        set_sql = self._give_back(":error", self.now()) + f", {self.quote('due_at')} = {self.now_plus('delay_seconds')}"
        return self.compile(self.limited_update(table, set_sql, self._one_claimed_row(table), False))

    @cached
    def ack_failed(self, table: TableName) -> Statement:
        q = self.quote
        set_sql = (
            f"{q('state')} = '{FAILED}', {q('last_error')} = :error, {q('completed_at')} = {self.now()}, "
            f"{q('lease_until')} = NULL"
        )
        return self.compile(self.limited_update(table, set_sql, self._one_claimed_row(table), False))

    @cached
    def ack_done(self, table: TableName, keep: bool) -> Statement:
        q = self.quote
        where = self._one_claimed_row(table)
        if keep:
            set_sql = f"{q('state')} = '{DONE}', {q('completed_at')} = {self.now()}, {q('lease_until')} = NULL"
            return self.compile(self.limited_update(table, set_sql, where, False))
        return self.compile(self.limited_delete(table, where, False))

    @cached
    def purge(self, table: TableName, state: str, limited: bool) -> Statement:
        """Finished rows (done or failed) completed before ``:cutoff``, a chunk at a time."""
        q = self.quote
        where = f"{q('state')} = '{state}' AND {q('completed_at')} < :cutoff"
        return self.compile(self.limited_delete(table, where, limited))

    @cached
    def requeue_failed(self, table: TableName, by: str) -> Statement:
        """Failed rows back to ready with fresh attempts: one by ``id`` or ``dedup_key``, or ``all``."""
        q = self.quote
        set_sql = (
            f"{q('state')} = '{READY}', {q('attempts')} = 0, {q('due_at')} = {self.now()}, {q('consumer')} = NULL, "
            f"{q('claim_seq')} = NULL, {q('completed_at')} = NULL"
        )
        # Rows a move to the dead-letter table has tagged are on their way there: redrive them from it.
        where = f"{q('state')} = '{FAILED}' AND {q(STAGE_TAG.name)} IS NULL" + (
            "" if by == "all" else f" AND {q(by)} = :{by}"
        )
        return self.compile(f"UPDATE {self.table(table)}{self.row_lock_hints()} SET {set_sql} WHERE {where}")

    @cached
    def count_ready(self, table: TableName) -> Statement:
        """The backlog; rows being claimed or written are skipped rather than waited for."""
        return self.compile(
            f"SELECT COUNT(*) FROM {self.table(table)}{self.skip_locked_hints()} "
            f"WHERE {self.ready_predicate(table, False)}"
        )

    @cached
    def max_ready_id(self, table: TableName) -> Statement:
        return self.compile(
            f"SELECT MAX({self.quote('id')}) FROM {self.table(table)}{self.skip_locked_hints()} "
            f"WHERE {self.ready_predicate(table, False)}"
        )

    @cached
    def count_by_state(self, table: TableName) -> Statement:
        """Rows and the oldest enqueue time per state, rows of unpublished sink batches apart."""
        q = self.quote
        shown = (
            f"CASE WHEN {self._row_tag(table)} IS NOT NULL AND EXISTS ({self._listed_tag(table)}) "
            f"THEN '{UNPUBLISHED}' ELSE {q('state')} END"
        )
        return self.compile(
            f"SELECT s.{q('state')}, COUNT(*), MIN(s.{q('enqueued_at')}) "
            f"FROM (SELECT {shown} AS {q('state')}, {q('enqueued_at')} FROM {self.table(table)}) AS s "
            f"GROUP BY s.{q('state')}"
        )

    @cached
    def table_columns(self, table: TableName) -> Statement:
        return self.compile(self.columns_sql(table))

    # ---- operations: what the sqlqueue command shows ------------------------------------------
    def select_first(self, columns: str, rest: str) -> str:
        """SELECT the first ``:limit`` rows of ``FROM ... ORDER BY ...`` (``rest``)."""
        return f"SELECT {columns} FROM {rest} LIMIT :limit"

    def skip_locked_hints(self) -> str:
        """Table hints for a read that skips rows other sessions hold locked instead of waiting."""
        return ""

    def committed_read_hints(self) -> str:
        """Table hints for a read that sees the last committed rows, waiting for uncommitted ones."""
        return ""

    def row_lock_hints(self) -> str:
        """Table hints for a write that must lock rows, not pages, so claims can skip past it."""
        return ""

    @cached
    def peek(self, table: TableName, order: str, columns: Sequence[str]) -> Statement:
        """The next ready rows in claim order, without claiming or locking them."""
        cols = ", ".join(self.quote(c) for c in columns)
        order_by = self.order_by(order if order != "heap" else "fifo")
        ready = self.ready_predicate(table, False)
        return self.compile(
            self.select_first(cols, f"{self.table(table)}{self.skip_locked_hints()} WHERE {ready} ORDER BY {order_by}")
        )

    @cached
    def count_done_since(self, table: TableName) -> Statement:
        """Rows completed (and kept) since ``:since``: the recent throughput of completion=keep queues."""
        q = self.quote
        return self.compile(
            f"SELECT COUNT(*) FROM {self.table(table)} WHERE {q('state')} = '{DONE}' AND {q('completed_at')} >= :since"
        )

    def decode_timestamp(self, value: Any) -> dt.datetime | None:
        """A timestamp the driver returned, as an aware UTC datetime (stored times are UTC)."""
        if isinstance(value, dt.datetime):
            return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value
        return None

    # ---- doctor: facts about a live queue table and its database ------------------------------
    @abstractmethod
    def indexes_sql(self, table: TableName) -> str:
        """Rows of (index name, filter predicate or NULL, first key column) of the queue table."""

    @cached
    def table_indexes(self, table: TableName) -> Statement:
        return self.compile(self.indexes_sql(table))

    def inspection_connect(self, spec: ConnectionSpec) -> Any:
        """A connection that changes no database setting, for the doctor to look with."""
        return self.connect(spec)

    # ---- sink: unpublished and staged batches, and the ledger ----------------------------------
    # A sink task writes its rows into the queue table under a tag of writer, batch, run and task,
    # and lists the tag as unpublished; the commit deletes the batch's tags from that list in one
    # transaction that also records the batch in the ledger. Batches with dedup keys are staged in
    # the staging table instead and copied into the queue by the commit. Tags of one batch share a
    # prefix; ``:lo``/``:hi`` bounds select a prefix as a range, which seeks the tag index (a LIKE
    # would not on every engine and collation).
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

    def _writer_batches(self, table: TableName, batch: str) -> str:
        """FROM the ledger, WHERE: one writer's batches into one queue, ``batch`` picking which."""
        q = self.quote
        return (
            f"{self.table(self.ledger(table))} "
            f"WHERE {q('queue_name')} = :queue AND {q('writer_id')} = :writer AND {q('batch_id')} {batch}"
        )

    @cached
    def ledger_contains(self, table: TableName) -> Statement:
        return self.compile(f"SELECT COUNT(*) FROM {self._writer_batches(table, '= :batch')}")

    @cached
    def ledger_record(self, table: TableName) -> Statement:
        q = self.quote
        return self.compile(
            f"INSERT INTO {self.table(self.ledger(table))} "
            f"({q('queue_name')}, {q('writer_id')}, {q('batch_id')}, {q('row_count')}) "
            "VALUES (:queue, :writer, :batch, :row_count)"
        )

    @cached
    def ledger_prune(self, table: TableName) -> Statement:
        return self.compile(f"DELETE FROM {self._writer_batches(table, '< :before')}")

    @cached
    def last_id(self, table: TableName) -> Statement:
        """The highest id so far: the rows a task inserts after reading it have higher ones.

        Rows other writers hold locked are skipped rather than waited for; they are older anyway.
        """
        return self.compile(
            f"SELECT COALESCE(MAX({self.quote('id')}), 0) FROM {self.table(table)}{self.skip_locked_hints()}"
        )

    @cached
    def register_unpublished(self, table: TableName) -> Statement:
        q = self.quote
        return self.compile(
            f"INSERT INTO {self.table(self.unpublished(table))} "
            f"({q(STAGE_TAG.name)}, {q('id_after')}, {q('id_upto')}, {q('row_count')}) "
            "VALUES (:tag, :id_after, :id_upto, :row_count)"
        )

    def _tag_range(self, table: TableName, hints: str = "") -> str:
        tag = self.quote(STAGE_TAG.name)
        return f"{self.table(table)}{hints} WHERE {tag} >= :lo AND {tag} <= :hi"

    @cached
    def unpublished_in(self, table: TableName) -> Statement:
        """The unpublished tags in [lo, hi], with where their rows are and how many."""
        q = self.quote
        return self.compile(
            f"SELECT {q(STAGE_TAG.name)}, {q('id_after')}, {q('id_upto')}, {q('row_count')} "
            f"FROM {self._tag_range(self.unpublished(table))}"
        )

    @cached
    def delete_unpublished_rows(self, table: TableName, ranged: bool) -> Statement:
        """The queue rows of one unpublished tag (a batch that will not be published): ``ranged``,
        those in the id range the tag recorded, a primary-key seek; else wherever they are."""
        q = self.quote
        where = f"{q(STAGE_TAG.name)} = :tag"
        if ranged:
            where = f"{q('id')} > :id_after AND {q('id')} <= :id_upto AND {where}"
        return self.compile(f"DELETE FROM {self.table(table)}{self.row_lock_hints()} WHERE {where}")

    @cached
    def delete_unpublished(self, table: TableName) -> Statement:
        """One unpublished tag: its rows become claimable, unless deleted first."""
        return self.compile(
            f"DELETE FROM {self.table(self.unpublished(table))}{self.row_lock_hints()} "
            f"WHERE {self.quote(STAGE_TAG.name)} = :tag"
        )

    @cached
    def delete_staged(self, table: TableName) -> Statement:
        """Staged rows whose tag lies in [lo, hi]."""
        return self.compile(f"DELETE FROM {self._tag_range(self.staging(table), self.row_lock_hints())}")

    @cached
    def count_staged(self, table: TableName) -> Statement:
        """Rows one task staged, all of which publish must find."""
        tag = self.quote(STAGE_TAG.name)
        return self.compile(f"SELECT COUNT(*) FROM {self.table(self.staging(table))} WHERE {tag} = :tag")

    @cached
    def count_unpublished(self, table: TableName) -> Statement:
        """Rows of sink batches not published: in the queue under listed tags, and staged."""
        return self.compile(
            f"SELECT (SELECT COUNT(*) FROM {self.table(self.staging(table))}) + "
            f"(SELECT COALESCE(SUM({self.quote('row_count')}), 0) FROM {self.table(self.unpublished(table))})"
        )

    @cached
    def publish_staged(self, table: TableName, columns: Sequence[str]) -> Statement:
        """Copy one task's staged rows into the queue, ready; with a dedup key, new keys only."""
        staging, where = self.table(self.staging(table)), f"{self.quote(STAGE_TAG.name)} = :tag"
        if "dedup_key" in columns:
            return self.compile(self.insert_new_keys(table, columns, staging, where))
        names = ", ".join(self.quote(c) for c in columns)
        return self.compile(f"INSERT INTO {self.table(table)} ({names}) SELECT {names} FROM {staging} WHERE {where}")

    # ---- layout versions and migrate ----
    # The layout lives beside the queue in <queue>_layout, a row per layout the table reached (the
    # highest is its layout), like <queue>_unpublished and <queue>_staging: it goes wherever the queue
    # goes (its schema, its grants, dropping it), and checking it reads one tiny table the connector's
    # login is granted SELECT on (sql/<engine>/grants.sql). A table shared by every queue would mix
    # queues of different schemas and owners, and each queue's login would need rights on all of it.
    # Rows per layout keep when each migration finished; recording is an insert guarded by NOT EXISTS.
    # Migration statements name tables and indexes as literals (validated identifiers), so a printed
    # script shows exactly what sqlqueue runs.

    # Run first in each migration transaction: DDL that waits for its table lock holds up every
    # claim queued behind it, so it gives up after a while instead (and migrate is run again).
    migration_lock_timeout: str | None = None

    def layout_table(self, table: TableName) -> TableName:
        return TableName(f"{table.name}_layout", table.schema)

    def create_layout_table(self, table: TableName) -> str:
        q, layouts = self.quote, self.layout_table(table)
        body = (
            f"{q('layout')} {self.type_sql(Column('layout', 'int'))} NOT NULL,\n"
            f"  {q('recorded_at')} {self.type_sql(Column('recorded_at', 'timestamp'))} NOT NULL"
            f" DEFAULT {self.default_sql('now')},\n"
            f"  CONSTRAINT {q('pk_' + layouts.name)} PRIMARY KEY ({q('layout')})"
        )
        return self.create_table_guarded(layouts, body)

    def record_layout(self, table: TableName, when: str) -> str:
        """Record the current layout, once, if the SQL condition ``when`` holds."""
        q, layouts = self.quote, self.table(self.layout_table(table))
        recorded = f"SELECT 1 FROM {layouts} WHERE {q('layout')} = {LAYOUT}"
        return f"INSERT INTO {layouts} ({q('layout')}) SELECT {LAYOUT} WHERE NOT EXISTS ({recorded}) AND {when}"

    @abstractmethod
    def table_absent(self, table: TableName) -> str:
        """An SQL condition that holds while ``table`` does not exist (create records its layout then)."""

    @cached
    def has_layout_table(self, table: TableName) -> Statement:
        """1 when the queue's layout table exists. From the catalog every login reads (on PostgreSQL
        information_schema lists only the tables a login may use)."""
        return self.compile(f"SELECT CASE WHEN {self.table_absent(self.layout_table(table))} THEN 0 ELSE 1 END")

    @cached
    def recorded_layout(self, table: TableName) -> Statement:
        """The highest layout recorded for the queue; NULL when none is."""
        return self.compile(f"SELECT MAX({self.quote('layout')}) FROM {self.table(self.layout_table(table))}")

    def index_name(self, table: TableName, index: str) -> str:
        """An index of ``table`` as DROP INDEX names it."""
        return self.quote(index)

    def literal(self, text: str) -> str:
        """A string literal; ``text`` is a name that passed identifier checks, so it holds no quote."""
        return f"'{text}'"

    def migration_steps(self, spec: QueueSpec, chunk: int) -> list[Step]:
        """Layout 1 to the current layout, in order. ``spec`` gives the domain columns (the staging
        table's) and the order the ready index serves; ``chunk`` sizes the loops of printed scripts.

        Rows were 'staged' only while the index of staged rows existed: it is dropped once none is
        left, the state check loses 'staged' after that, and the layout is recorded last, only when
        no row can be 'staged' any more.
        """
        t = spec.table
        sides = (self.staging(t), self.unpublished(t), self.ledger(t), self.layout_table(t))
        return [
            self.add_tag_column(t),
            Step(
                "side_tables",
                f"create {', '.join(s.name for s in sides)} where missing",
                (*self._staging_statements(spec), self._create_unpublished(t), self.create_ledger(t))
                + (self.create_layout_table(t),),
            ),
            self.move_staged(spec, chunk),
            Step(
                "drop_staged_index",
                f"drop {self.staged_index(t)} once no row is staged",
                (self.drop_staged_index(t),),
                todo=self.staged_index_todo(t),
            ),
            *self.narrow_state_check(t),
            *self.ready_index_steps(t, spec.order),
            self.tag_index_step(t),
            Step(
                "record_layout",
                f"record layout {LAYOUT} in {self.layout_table(t).name}",
                (self.record_layout(t, self.migrated(t)),),
            ),
        ]

    # Whether a script can say every step conditionally (SQLite has no conditional DDL).
    conditional_ddl = True

    def staged_index(self, table: TableName) -> str:
        """Layout 1's index of staged rows."""
        return f"ix_{table.name}_staged"

    def _staged(self, table: TableName, hints: str = "") -> str:
        """A query with a row while a row of ``table`` is 'staged'."""
        return f"SELECT 1 FROM {self.table(table)}{hints} WHERE {self.quote('state')} = '{STAGED}'"

    def _moved(self, spec: QueueSpec) -> list[str]:
        """What a staged row keeps when it moves to the staging table: what a producer wrote."""
        return [STAGE_TAG.name, *WRITABLE_LIFECYCLE, *(c.name for c in spec.domain)]

    # Where an engine has no conditional DDL, sqlqueue asks these queries first (0: nothing to do).
    def column_todo(self, table: TableName, column: str) -> str | None:
        return None

    def staged_rows_todo(self, table: TableName) -> str | None:
        return None

    def staged_index_todo(self, table: TableName) -> str | None:
        """Whether the index of staged rows exists while no row is staged."""
        return None

    def ready_index_todo(self, table: TableName) -> str | None:
        """Whether the ready index lacks stage_tag."""
        return None

    def add_column_sql(self, table: TableName, column: str, name: str) -> str:
        return f"ALTER TABLE {self.table(table)} ADD COLUMN {column}"

    def add_tag_column(self, table: TableName) -> Step:
        # Tables made while the sink staged in <q>_staging only have no stage_tag. A nullable column
        # without a default changes no row.
        sql = self.add_column_sql(table, self._column_sql(Column(STAGE_TAG.name, STAGE_TAG.type)), STAGE_TAG.name)
        todo = self.column_todo(table, STAGE_TAG.name)
        script = None if self.conditional_ddl else (f"-- Only if this returns 1: {todo};\n-- {sql}",)
        return Step("add_tag_column", "add the stage_tag column where missing", (sql,), todo=todo, script=script)

    def move_staged(self, spec: QueueSpec, chunk: int) -> Step:
        # Layout 1 held a sink batch Spark had not committed as 'staged' rows of the queue table. No
        # layout-2 publish makes them claimable (their tags are not a running writer's), so they go
        # where layout 2 keeps such rows, the staging table: the writer's next publish or abort drops
        # them, stats count them, and the dedup keys they carry stop blocking the batch's replay.
        statements, script = self.move_staged_sql(spec, chunk)
        return Step(
            "move_staged",
            f"move rows of uncommitted sink batches (state '{STAGED}') into {self.staging(spec.table).name}",
            statements,
            chunked=True,
            todo=self.staged_rows_todo(spec.table),
            script=script,
        )

    def move_staged_sql(self, spec: QueueSpec, chunk: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(statements moving a chunk of ``:limit`` rows, a script's statements moving them all)."""
        t, staging = self.table(spec.table), self.table(self.staging(spec.table))
        i, cols = self.quote("id"), ", ".join(self.quote(n) for n in self._moved(spec))
        state = f"{self.quote('state')} = '{STAGED}'"
        picked = f"{i} IN (SELECT {i} FROM {t} WHERE {state} ORDER BY {i} LIMIT :limit)"
        return (
            (
                f"INSERT INTO {staging} ({cols}) SELECT {cols} FROM {t} WHERE {picked}",
                f"DELETE FROM {t} WHERE {picked}",
            ),
            (f"INSERT INTO {staging} ({cols}) SELECT {cols} FROM {t} WHERE {state}", f"DELETE FROM {t} WHERE {state}"),
        )

    def drop_staged_index(self, table: TableName) -> str:
        return f"DROP INDEX IF EXISTS {self.index_name(table, self.staged_index(table))}"

    def narrow_state_check(self, table: TableName) -> list[Step]:
        """Steps that take 'staged' out of the state check. SQLite cannot alter a constraint without
        rebuilding the table, so there it keeps allowing 'staged', which nothing writes any more."""
        return []

    def state_check_name(self, table: TableName) -> str:
        return f"ck_{table.name}_state"

    def _state_check(self, table: TableName) -> str:
        states = ", ".join(f"'{s}'" for s in STATES)
        return f"CHECK ({self.quote('state')} IN ({states}))"

    def migrated(self, table: TableName) -> str:
        """An SQL condition that holds once the steps a script could skip are done: no row is 'staged'
        and none can be (and, without conditional DDL, the stage_tag column is there)."""
        return f"NOT EXISTS ({self._staged(table)})"

    def ready_index_steps(self, table: TableName, order: str) -> list[Step]:
        # Dropped and built again in one transaction: SQLite writes one database at a time anyway.
        name = self.ready_index(table)
        return [
            Step(
                "ready_index",
                f"rebuild {name} to cover stage_tag",
                (f"DROP INDEX IF EXISTS {self.index_name(table, name)}", self.index_statements(table, order)[name]),
                todo=self.ready_index_todo(table),
            )
        ]

    def tag_index(self, table: TableName) -> str:
        return f"ix_{table.name}_tag"

    def tag_index_step(self, table: TableName) -> Step:
        # Only SQL Server keeps a tag index (indexes_row_tags); a short-lived earlier layout made it everywhere.
        index = self.tag_index(table)
        return Step("tag_index", f"drop {index}", (f"DROP INDEX IF EXISTS {self.index_name(table, index)}",))

    # ---- queue wait ----
    # A row's wait is claimed_at - enqueued_at, both from the database's clock. The percentiles are
    # ranked in the database and come back as one row: the nearest rank, the value at rank
    # ceil(p * n) in wait order (what PostgreSQL's percentile_disc returns). On a 50,000-row
    # PostgreSQL claim, ranking took 30 ms with percentile_disc and 53-56 ms with ROW_NUMBER, and
    # fetching the waits to rank them in Python 66 ms; a claim returning each wait beside its id took
    # 29-40 ms longer than the claim (benchmarks/bench_wait.py). So the claim statement stays as it
    # was, and a claim made ahead ranks its waits in the prefetch thread, off the batch's path.
    def _wait_figures(self, table: TableName, where: str, hints: str = "") -> str:
        """One row for the rows ``where`` selects: how many, the p50 and p95 of their waits and the
        longest (ms; NULL when no row matches)."""
        wait = self.millis_between(self.quote("enqueued_at"), self.quote("claimed_at"))
        return self.rank_waits(
            f"SELECT {wait} AS {self.quote('wait_ms')} FROM {self.table(table)}{hints} WHERE {where}"
        )

    def rank_waits(self, waits: str) -> str:
        """(count, p50, p95, max) of the column wait_ms of the query ``waits``, with ROW_NUMBER and
        COUNT(*) OVER (), which every engine has: SQLite has no percentile function, and SQL Server
        documents PERCENTILE_DISC as an analytic function, PERCENTILE_DISC (p) WITHIN GROUP (ORDER BY
        ...) OVER (...), one value per input row (learn.microsoft.com/sql/t-sql/functions/percentile-disc-transact-sql).
        Ranks ceil(n / 2) and ceil(19 n / 20) are integer arithmetic, the same in every engine."""
        q = self.quote
        ranked = (
            f"SELECT v.{q('wait_ms')}, ROW_NUMBER() OVER (ORDER BY v.{q('wait_ms')}) AS {q('wait_rank')}, "
            f"COUNT(*) OVER () AS {q('n')} FROM ({waits}) AS v"
        )
        w, r, n = f"w.{q('wait_ms')}", f"w.{q('wait_rank')}", f"w.{q('n')}"
        return (
            f"SELECT MAX({n}), MAX(CASE WHEN {r} = ({n} + 1) / 2 THEN {w} END), "
            f"MAX(CASE WHEN {r} = (19 * {n} + 19) / 20 THEN {w} END), MAX({w}) FROM ({ranked}) AS w"
        )

    @cached
    def claim_waits(self, table: TableName) -> Statement:
        """The wait figures of the rows one consumer holds under one claim (a micro-batch), read
        through the index of claimed rows."""
        return self.compile(self._wait_figures(table, self.tagged(exact=True)))

    @cached
    def recent_waits(self, table: TableName) -> Statement:
        """The wait figures of the rows claimed since ``:since`` that are still in the table, in any
        state (``sqlqueue stats``). No index has claimed_at: this reads the whole table, as the
        counts per state do. Rows being claimed or written are skipped rather than waited for."""
        where = f"{self.quote('claimed_at')} >= :since"
        return self.compile(self._wait_figures(table, where, self.skip_locked_hints()))

    @cached
    def backlog(self, table: TableName) -> Statement:
        """The ready rows a claim could take now, and the age in ms of the oldest (NULL when none),
        in the one pass over the ready rows that ``count_ready`` makes. Exact where a probe of the
        lowest ready id is not: with 1M done rows kept, that probe walked the primary key for
        130-180 ms on a queue whose ready index is by priority or due time, against 6-9 ms more than
        the count for the minimum here (PostgreSQL, JIT off)."""
        age = self.millis_between(f"MIN({self.quote('enqueued_at')})", self.now())
        return self.compile(
            f"SELECT COUNT(*), {age} FROM {self.table(table)}{self.skip_locked_hints()} "
            f"WHERE {self.ready_predicate(table, False)}"
        )

    # ---- dead letters ----
    # A move to the dead-letter table tags a chunk of failed rows in one transaction (stage_tag, which
    # failed rows otherwise never carry: a claim clears it), appends them to Delta under the tag's
    # number, then deletes them. No index holds failed rows (that would be a layout change), so the
    # mark reads the table past rows other sessions hold; the tagged rows are then found by id range.
    def _failed_untagged(self) -> str:
        q = self.quote
        return f"{q('state')} = '{FAILED}' AND {q(STAGE_TAG.name)} IS NULL"

    def _failed_tagged(self) -> str:
        q = self.quote
        return f"{q('state')} = '{FAILED}' AND {q(STAGE_TAG.name)} = :tag AND {q('id')} BETWEEN :lo AND :hi"

    def dead_letter_mark_sql(self, table: TableName, set_sql: str, where: str) -> str:
        """UPDATE of up to ``:limit`` rows matching ``where`` that skips locked rows and returns the ids:
        the heap claim's shape, which reads no index of ready rows."""
        return self.claim_sql(table, set_sql, where, "heap", False)

    @cached
    def mark_dead_letters(self, table: TableName) -> Statement:
        """Tag up to ``:limit`` failed rows no move holds with ``:tag``; returns their ids."""
        set_sql = f"{self.quote(STAGE_TAG.name)} = :tag"
        return self.compile(self.dead_letter_mark_sql(table, set_sql, self._failed_untagged()))

    @cached
    def pending_dead_letters(self, table: TableName) -> Statement:
        """The tags in [lo, hi] of failed rows a move tagged and has not deleted, with their id range and
        count, oldest first. Read as committed, waiting for locked rows: a row skipped here would be
        taken for moved."""
        q, tag = self.quote, self.quote(STAGE_TAG.name)
        return self.compile(
            f"SELECT {tag}, MIN({q('id')}), MAX({q('id')}), COUNT(*) FROM {self.table(table)}"
            f"{self.committed_read_hints()} WHERE {q('state')} = '{FAILED}' AND {tag} >= :lo AND {tag} <= :hi "
            f"GROUP BY {tag} ORDER BY {tag}"
        )

    @cached
    def read_dead_letters(self, table: TableName, columns: Sequence[str]) -> Statement:
        """The rows of one move's tag, in id order."""
        cols = ", ".join(self.quote(c) for c in columns)
        return self.compile(
            f"SELECT {cols} FROM {self.table(table)} WHERE {self._failed_tagged()} ORDER BY {self.quote('id')}"
        )

    @cached
    def delete_dead_letters(self, table: TableName) -> Statement:
        """The rows of one move's tag, once Delta holds them."""
        return self.compile(self.limited_delete(table, self._failed_tagged(), False))

    @cached
    def ledger_last(self, table: TableName) -> Statement:
        """One writer's highest batch in the ledger (a redrive publishes its chunks in order)."""
        return self.compile(f"SELECT MAX({self.quote('batch_id')}) FROM {self._writer_batches(table, '>= 0')}")


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
