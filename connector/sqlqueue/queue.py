"""The Spark-free queue: create, enqueue, claim, read claimed rows, complete, stats.

A ``Queue`` owns one connection, opened lazily. Every write runs in one transaction through the
dialect; statements are compiled once per queue. Driver errors leave as ``DatabaseError`` with
secrets scrubbed, and the broken connection is dropped so the next call reconnects.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from .connection import ConnectionSpec
from .dialects import Dialect, dialect_for
from .dialects.engine import Statement, execute
from .dialects.layout import Step
from .dialects.statements.lifecycle import Holding
from .errors import DatabaseError, SchemaError, layout_mismatch
from .identifiers import TableName
from .profile import NATIVE, Profile, native
from .schema import (
    DEFAULT_SOURCE_LIFECYCLE,
    LAYOUT,
    LAYOUT_1_COLUMNS,
    LIFECYCLE_NAMES,
    LIFECYCLE_TYPES,
    STAGE_TAG,
    UNRECORDED_LAYOUT,
    Column,
    QueueSpec,
    keyed,
    writable_columns,
)
from .waits import Backlog, Waits

T = TypeVar("T")
UNLIMITED = 2**62
DONE_OUTCOME, RETRY_OUTCOME, FAILED_OUTCOME = "done", "retry", "failed"
OUTCOMES = (DONE_OUTCOME, RETRY_OUTCOME, FAILED_OUTCOME)


def retry_delay(attempts: int, base_seconds: int, cap_seconds: int, jitter: float) -> int:
    """Exponential backoff: ``base`` after the first attempt, doubling after each further one,
    capped, times a jitter factor (e.g. 0.9 to 1.1) so retried rows do not all return at once."""
    return int(min(base_seconds * 2 ** max(attempts - 1, 0), cap_seconds) * jitter)


@dataclass(frozen=True)
class Ack:
    """A consumer's verdict on one claimed row: done, retry after a delay, or failed for good.
    ``attempts``: the row's attempts as the claim delivered them, its fencing token (None: unfenced)."""

    id: int
    outcome: str
    error: str | None = None
    delay_seconds: int = 0
    attempts: int | None = None


class Queue:
    def __init__(self, spec: ConnectionSpec, table: TableName, *, inspecting: bool = False) -> None:
        """``inspecting``: connect without changing database settings (for the doctor)."""
        self.spec = spec
        self.table = table
        self.dialect: Dialect = dialect_for(spec.dialect)
        self._inspecting = inspecting
        self._conn: Any = None
        # The address is known to work: this queue connected, or (set by its owner) a Spark task's
        # stream connected on the driver first. Until then a failing connection is a wrong address or
        # login, reported at once; after, it is an outage that the retry policy rides out.
        self.proven = False

    def __repr__(self) -> str:
        return f"Queue({self.table} at {self.spec.display})"

    # ---- connection and error handling --------------------------------------------------------
    @property
    def conn(self) -> Any:
        if self._conn is None:
            with self._errors():
                connect = self.dialect.inspection_connect if self._inspecting else self.dialect.connect
                conn = connect(self.spec)
                setting = self.dialect.session_clock(self.clock)
                if setting is not None:
                    self.dialect.autocommit_cursor(conn).execute(setting)
                self._conn = conn
            self.proven = True
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):  # closing a broken connection must not hide the original error
                self._conn.close()
            self._conn = None

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except Exception as exc:
            if not self.dialect.is_driver_error(exc):
                raise
            error = self.dialect.map_error(exc, self.spec, self.proven)
            if not error.transient and self.proven and self._conn is not None and not self._answers():
                error = DatabaseError(f"{error} (and the connection no longer answers)", transient=True)
            self.close()
            raise error from None

    def _answers(self) -> bool:
        """Whether the connection still answers a query. A driver's first error on a connection the
        server dropped need not say so: FreeTDS reports 'Unknown error', 'Could not change
        transaction status' or nothing at all (HY000, no number), and only later ones 08S01."""
        try:
            self.dialect.autocommit_cursor(self._conn).execute(self.dialect.ping().sql)
        except Exception:  # any failure of the probe means it does not answer; the first error is raised
            return False
        return True

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        conn = self.conn
        with self._errors(), self.dialect.transaction(conn) as cur:
            yield cur

    def fetch(self, statement: Statement, values: dict[str, Any]) -> list[tuple]:
        """Every row of a query the dialect built, outside any transaction."""
        conn = self.conn
        with self._errors():
            cur = self.dialect.autocommit_cursor(conn)
            cur.execute(statement.sql, statement.bind(values))
            return [tuple(r) for r in cur.fetchall()]

    # ---- schema -------------------------------------------------------------------------------
    def create(self, domain: Sequence[Column] = (Column("payload", "text"),), order: str = "fifo") -> None:
        """Create what is missing of the queue; refused over a table of another layout (migrate it)."""
        spec = QueueSpec(self.table, tuple(domain), order)
        if self.fetch(self.dialect.table_columns(self.table), self.catalog_names()):
            self.require_layout()
        with self.transaction() as cur:
            for sql in self.dialect.create_statements(spec):
                cur.execute(sql)

    def catalog_names(self, table: TableName | None = None) -> dict[str, str | None]:
        """The ways catalog queries name this table (or ``table``)."""
        table = table or self.table
        return {"table": table.name, "schema": table.schema, "object_name": str(table)}

    def columns(self) -> tuple[Column, ...]:
        """The table's columns as the database reports them, lifecycle columns included."""
        rows = self.fetch(self.dialect.table_columns(self.table), self.catalog_names())
        if not rows:
            raise SchemaError(f"queue table {self.table} does not exist at {self.spec.display}: create it first")
        return tuple(
            LIFECYCLE_TYPES.get(name) or Column(name, self.dialect.portable_type(db_type), bool(nullable))
            for name, db_type, nullable in rows
        )

    def domain_columns(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns() if c.name not in LIFECYCLE_NAMES)

    def source_columns(self) -> tuple[Column, ...]:
        """What a source returns by default: id, enqueued_at, attempts and every domain column."""
        columns = self.columns()
        return tuple(c for c in columns if c.name in DEFAULT_SOURCE_LIFECYCLE) + tuple(
            c for c in columns if c.name not in LIFECYCLE_NAMES
        )

    # ---- layout ---------------------------------------------------------------------------------
    def layout(self) -> int:
        """The table's layout: the highest one recorded, else 1 for a queue table made before layouts
        were recorded (it has every layout-1 lifecycle column). Reads only the catalog and the layout
        table, so it is safe on any table."""
        names = {c.name for c in self.columns()}
        if self.fetch(self.dialect.has_layout_table(self.table), {})[0][0]:
            recorded = self.fetch(self.dialect.recorded_layout(self.table), {})[0][0]
            if recorded is not None:
                return int(recorded)
        missing = [n for n in LAYOUT_1_COLUMNS if n not in names]
        if missing:
            raise SchemaError(
                f"table {self.table} at {self.spec.display} is not a sqlqueue queue table: it has no layout "
                f"recorded and no {', '.join(missing)} column(s)"
            )
        return UNRECORDED_LAYOUT

    def require_layout(self) -> None:
        """Refuse, in one line naming the command that fixes it, a table of another layout than this code's."""
        found = self.layout()
        if found != LAYOUT:
            raise layout_mismatch(self.table, self.spec.display, found, LAYOUT)

    def run_step(self, step: Step, chunk: int) -> int | None:
        """Run one migration step: None when its ``todo`` query found nothing to do, else the rows it
        moved (0 for a step that moves none). A chunked step commits each chunk on its own."""
        if step.todo is not None and not self.fetch(self.dialect.compile(step.todo), {})[0][0]:
            return None
        if step.chunked:
            statements = [self.dialect.compile(sql) for sql in step.statements]
            moved = 0
            while True:
                with self.transaction() as cur:
                    for statement in statements:
                        cur.execute(statement.sql, statement.bind({"limit": chunk}))
                    count = max(cur.rowcount, 0)
                moved += count
                if count < chunk:
                    return moved
        if step.atomic:
            with self.transaction() as cur:
                if self.dialect.migration_lock_timeout:
                    cur.execute(self.dialect.migration_lock_timeout)
                for sql in step.statements:
                    cur.execute(sql)
            return 0
        conn = self.conn
        with self._errors():
            cur = self.dialect.autocommit_cursor(conn)
            for sql in step.statements:
                cur.execute(sql)
        return 0

    # ---- producing ----------------------------------------------------------------------------
    def _encoded(self, columns: Sequence[Column], rows: Iterable[Sequence[Any]], tail: tuple = ()) -> Iterator[tuple]:
        """Rows as the driver takes them, each followed by ``tail``."""
        encode = self.dialect.encode
        converted = [(i, c) for i, c in enumerate(columns) if c.type in self.dialect.encoded_types]
        if not converted:
            return ((*row, *tail) for row in rows)

        def prepared(row: Sequence[Any]) -> tuple:
            values = list(row)
            for i, column in converted:
                if values[i] is not None:
                    values[i] = encode(column, values[i])
            return (*values, *tail)

        return (prepared(row) for row in rows)

    def insert(self, cur: Any, columns: Sequence[Column], rows: Iterable[Sequence[Any]]) -> None:
        """Insert ready rows inside the caller's transaction ``cur``.

        ``rows`` may be a generator: it is consumed once, as the driver sends. With a ``dedup_key``
        column, a row whose key the table already holds (or that repeats a key) is skipped.
        """
        encoded = self._encoded(columns, rows)
        self.dialect.insert_many(cur, self.table, columns, encoded, skip_duplicates=keyed(columns))

    def insert_unpublished(
        self, cur: Any, columns: Sequence[Column], rows: Iterable[Sequence[Any]], stage_tag: str
    ) -> None:
        """Insert rows under ``stage_tag`` inside the caller's transaction ``cur``; claimable once the
        tag is not in the unpublished table (``Producer`` lists it there in the same transaction)."""
        self._load_under(cur, self.table, columns, rows, stage_tag)

    # How the sink writes into this table (``Producer``): every batch staged, or only keyed ones, the
    # others written into the table under tags listed as unpublished.
    lists_unpublished = True

    def writable(self, names: Sequence[str]) -> tuple[Column, ...]:
        """The table's columns that receive a producer's ``names``, or one error naming what does not fit."""
        return writable_columns(names, self.columns(), self.table)

    def stages(self, columns: Sequence[Column]) -> bool:
        """Whether a batch of ``columns`` waits in the staging table until publish copies it over."""
        return keyed(columns)

    @property
    def staging(self) -> TableName:
        return self.dialect.staging(self.table)

    def publish_statement(self, columns: Sequence[Column]) -> Statement:
        """Copy one task's staged rows (:tag) into the table."""
        return self.dialect.publish_staged(self.table, tuple(c.name for c in columns))

    def stage(self, cur: Any, columns: Sequence[Column], rows: Iterable[Sequence[Any]], stage_tag: str) -> None:
        """Insert rows into the staging table under ``stage_tag``, inside the caller's transaction ``cur``."""
        self._load_under(cur, self.staging, columns, rows, stage_tag)

    def _load_under(
        self, cur: Any, table: TableName, columns: Sequence[Column], rows: Iterable[Sequence[Any]], stage_tag: str
    ) -> None:
        encoded = self._encoded(columns, rows, (stage_tag,))
        self.dialect.load(cur, self.dialect.table(table), [*columns, STAGE_TAG], encoded)

    def enqueue(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Enqueue ready rows (dicts keyed by column name) in one transaction."""
        if not rows:
            return 0
        known = {c.name: c for c in self.columns()}
        names = list(rows[0])
        unknown = [n for n in names if n not in known]
        if unknown:
            raise SchemaError(f"column(s) {', '.join(unknown)} are not in queue table {self.table}")
        with self.transaction() as cur:
            self.insert(cur, [known[n] for n in names], [[row[n] for n in names] for row in rows])
        return len(rows)

    # ---- consuming ----------------------------------------------------------------------------
    def claim(
        self,
        consumer: str,
        seq: int,
        limit: int,
        *,
        order: str = "fifo",
        strict: bool = False,
        lease_seconds: int = 300,
        chunk: int | None = None,
        bound: Any = None,
    ) -> int:
        """Claim up to ``limit`` ready rows under (consumer, seq); returns how many were claimed.

        Each chunk commits on its own: a crash between chunks leaves rows held under ``seq``,
        which the claim protocol finds and serves before claiming more. ``bound``: a Trigger.AvailableNow
        run's ``available_now_bound``, None otherwise.
        """
        take = self._claimer(order, strict, bound is not None)
        chunk = chunk or self.dialect.default_chunk or limit
        values = {"consumer": consumer, "seq": seq, "lease_seconds": lease_seconds, "max_id": bound}
        claimed = 0
        while claimed < limit:
            want = min(chunk, limit - claimed)
            with self.transaction() as cur:
                got = take(cur, {**values, "limit": want})
            claimed += got
            if got < want:
                break
        return claimed

    def _claimer(self, order: str, strict: bool, bounded: bool) -> Callable[[Any, dict[str, Any]], int]:
        """What claims one chunk inside the caller's transaction and says how many rows it took."""
        bound = self.bound_column() if bounded else None
        plan = self.dialect.claim(self.table, self.claim_profile(order), self.copied(), strict, bound)
        extra = self._values()

        def take(cur: Any, values: dict[str, Any]) -> int:
            cur.execute(plan.claim.sql, plan.claim.bind({**values, **extra}))
            rows = cur.fetchall() if plan.returns else None
            if plan.record is not None and rows:
                cur.executemany(plan.record.sql, [(values["consumer"], values["seq"], *row) for row in rows])
            taken = max(cur.rowcount, 0) if rows is None else len(rows)
            if plan.settle is not None and taken:
                cur.execute(plan.settle.sql, plan.settle.bind(values))
            return taken

        return take

    def claim_profile(self, order: str) -> Profile:
        """The profile a claim in ``order`` (the stream's order option) runs by."""
        return native(order)

    def copied(self) -> tuple[str, ...]:
        """The columns a claim copies into the claims table (none: sqlqueue's own rows are held in place)."""
        return ()

    def bound_column(self) -> str | None:
        """The column a Trigger.AvailableNow run bounds its claims by."""
        return "id"

    def twin(self) -> Queue:
        """The same queue on a connection of its own (for a thread that claims ahead)."""
        twin = Queue(self.spec, self.table)
        twin.proven = self.proven
        return twin

    @property
    def profile(self) -> Profile:
        """How this table expresses a queue: sqlqueue's own layout."""
        return NATIVE

    @property
    def clock(self) -> str:
        """The clock the table's times are written in (Profile.clock), which each session is set to."""
        return self.profile.clock

    @property
    def holding(self) -> Holding:
        """Where this table's claimed rows are held."""
        return self.dialect.holding(self.table, self.profile)

    def count_claimed(self, consumer: str, seq: int) -> int:
        return self.fetch(self.dialect.count_held(self.holding), {"consumer": consumer, "seq": seq})[0][0]

    def partition_bounds(self, consumer: str, after_seq: int, upto_seq: int, parts: int) -> list[tuple[int, int]]:
        """Row ranges that split the rows of claims (after_seq, upto_seq] into ``parts`` even groups."""
        rows = self.fetch(
            self.dialect.partition_bounds(self.holding, parts),
            {"consumer": consumer, "after_seq": after_seq, "upto_seq": upto_seq},
        )
        return [(int(lo), int(hi)) for lo, hi in rows]

    def read_claimed(
        self,
        consumer: str,
        after_seq: int,
        upto_seq: int,
        lo: int,
        hi: int,
        columns: Sequence[str],
        batch_rows: int = 10_000,
    ) -> Iterator[list[tuple]]:
        """The claimed rows in one row range, in lists of at most ``batch_rows``."""
        statement = self.dialect.read_claimed(self.holding, self.spelled(columns))
        values = {"consumer": consumer, "after_seq": after_seq, "upto_seq": upto_seq, "lo": lo, "hi": hi}
        conn = self.conn
        with self._errors():
            cur = self.dialect.autocommit_cursor(conn)
            cur.execute(statement.sql, statement.bind(values))
            while rows := cur.fetchmany(batch_rows):
                yield [tuple(r) for r in rows]

    def spelled(self, names: Sequence[str]) -> tuple[str, ...]:
        """``names`` as the table spells its columns."""
        return tuple(names)

    def complete(self, consumer: str, upto_seq: int, *, keep: bool = False, chunk: int | None = None) -> int:
        """Delete (or mark done) every row this consumer claimed under claims up to ``upto_seq``."""
        chunk = chunk or self.dialect.default_chunk
        statement = self.dialect.complete(self.table, keep, chunk is not None)
        return self._repeat(statement, {"consumer": consumer, "upto_seq": upto_seq, "limit": chunk}, chunk)

    # ---- leases --------------------------------------------------------------------------------
    def renew(self, consumer: str, after_seq: int, lease_seconds: int, chunk: int | None = None) -> int:
        """Renew the lease of the rows ``consumer`` holds under claims after ``after_seq`` (claims Spark
        has not committed) that have less than half of it left; returns how many. Rows another claimer
        took are not this consumer's to renew."""
        chunk = chunk or self.dialect.default_chunk
        values = {
            "consumer": consumer,
            "after_seq": after_seq,
            "lease_seconds": lease_seconds,
            "half_seconds": lease_seconds // 2,
            "limit": chunk,
        }
        return self._repeat(self.dialect.renew_held(self.table, chunk is not None), values, chunk)

    def drop_fenced(self, consumer: str, seq: int) -> int:
        """Forget the rows of claim ``seq`` another claimer took since; how many. None here: a row held in
        place carries its claim, so one taken over is simply no longer counted as held."""
        return 0

    # ---- lifecycle ----------------------------------------------------------------------------
    def rescue_expired(self, max_attempts: int, chunk: int | None = None) -> int:
        """Rows whose lease expired go back to ready, or to failed once their attempts are spent."""
        chunk = chunk or self.dialect.default_chunk
        statement = self.dialect.rescue_expired(self.table, chunk is not None)
        return self._repeat(statement, {"max_attempts": max_attempts, "limit": chunk}, chunk)

    def apply_acks(self, cur: Any, acks: Sequence[Ack], *, keep: bool, max_attempts: int) -> int:
        """Per-row outcomes inside the caller's transaction; returns how many changed nothing (fenced out).
        Only rows still claimed are touched, so applying the same acknowledgements twice changes nothing
        the second time; an acknowledgement that carries the row's attempts touches the row only while
        the claim that delivered it holds it."""
        groups: dict[tuple[str, bool], list[dict[str, Any]]] = {}
        for a in acks:
            values = {"id": a.id, "error": a.error, "attempts": a.attempts}
            if a.outcome == RETRY_OUTCOME:
                values |= {"delay_seconds": a.delay_seconds, "max_attempts": max_attempts}
            groups.setdefault((a.outcome, a.attempts is not None), []).append(values)
        builders = {
            DONE_OUTCOME: lambda fenced: self.dialect.ack_done(self.table, keep, fenced),
            FAILED_OUTCOME: lambda fenced: self.dialect.ack_failed(self.table, fenced),
            RETRY_OUTCOME: lambda fenced: self.dialect.ack_retry(self.table, fenced),
        }
        run = self.dialect.run_each
        changed = sum(run(cur, builders[outcome](fenced), values) for (outcome, fenced), values in groups.items())
        return len(acks) - changed

    def purge(
        self,
        state: str,
        completed_before: dt.datetime,
        chunk: int | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Delete finished rows (done or failed) completed before a time, a chunk per transaction;
        ``progress`` hears the running total after each chunk."""
        chunk = chunk or self.dialect.default_chunk or 10_000
        statement = self.dialect.purge(self.table, state, True)
        return self._repeat(statement, {"cutoff": self._time(completed_before), "limit": chunk}, chunk, progress)

    def requeue_failed(self, ids: Sequence[int] = (), dedup_keys: Sequence[str] = ()) -> int:
        """Failed rows back to ready with their attempts reset: by id, by dedup key, or all of them."""
        with self.transaction() as cur:
            if not ids and not dedup_keys:
                execute(cur, self.dialect.requeue_failed(self.table, "all"))
                return cur.rowcount
            count = 0
            for by, keys in (("id", ids), ("dedup_key", dedup_keys)):
                statement = self.dialect.requeue_failed(self.table, by)
                for key in keys:
                    cur.execute(statement.sql, statement.bind({by: key}))
                    count += max(cur.rowcount, 0)
            return count

    def _repeat(
        self,
        statement: Statement,
        values: dict[str, Any],
        chunk: int | None,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Run a chunked statement until a chunk comes back short; each chunk its own transaction."""
        total = 0
        while True:
            with self.transaction() as cur:
                cur.execute(statement.sql, statement.bind(values))
                count = max(cur.rowcount, 0)
            total += count
            if progress is not None:
                progress(total)
            if chunk is None or count < chunk:
                return total

    def _values(self) -> dict[str, Any]:
        """What the profile's statements bind besides each call's own values (Claims.ready)."""
        p = self.profile
        return {"lease_ago": -p.lease_seconds, "max_attempts": p.max_attempts}

    def count_ready(self) -> int:
        """Rows a claim could take now: the backlog."""
        return self.fetch(self.dialect.count_ready(self.table, self.profile), self._values())[0][0]

    def backlog(self) -> Backlog:
        """The ready rows and the age of the oldest, in one pass: what shows whether a stream keeps up."""
        return Backlog.from_row(self.fetch(self.dialect.backlog(self.table, self.profile), self._values())[0])

    def claim_waits(self, consumer: str, seq: int) -> Waits:
        """How long the rows of claim ``seq`` waited between enqueue and claim (none where the table
        records no enqueue time)."""
        statement = self.dialect.claim_waits(self.holding)
        if statement is None:
            return Waits()
        return Waits.from_row(self.fetch(statement, {"consumer": consumer, "seq": seq})[0])

    def recent_waits(self, since: dt.datetime) -> Waits:
        """How long the rows claimed since a time waited, of those still in the table: with
        completion=keep every one, with delete those not completed yet (in flight, failed, retrying)."""
        return Waits.from_row(self.fetch(self.dialect.recent_waits(self.table), {"since": self._time(since)})[0])

    def available_now_bound(self) -> Any:
        """What a Trigger.AvailableNow run claims up to, read at its start: the largest id ready then
        (0 when none is, which claims nothing). None would mean no bound."""
        column = str(self.bound_column())
        return self.fetch(self.dialect.max_ready(self.table, self.profile, column), self._values())[0][0] or 0

    def _time(self, value: dt.datetime) -> Any:
        return self.dialect.encode(LIFECYCLE_TYPES["completed_at"], value)

    def peek(self, limit: int, order: str = "fifo", columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The next ``limit`` ready rows in claim order, as dicts; nothing is claimed or locked."""
        names = tuple(columns or [c.name for c in self.columns()])
        rows = self.fetch(
            self.dialect.peek(self.table, self.claim_profile(order), names), {"limit": limit, **self._values()}
        )
        return [dict(zip(names, row)) for row in rows]

    def count_done_since(self, since: dt.datetime) -> int:
        """Rows completed since a time and kept as done (completion=keep)."""
        return self.fetch(self.dialect.count_done_since(self.table), {"since": self._time(since)})[0][0]

    def facts(self, builder: Callable[[TableName], Statement]) -> list[tuple]:
        """Rows of one of the dialect's catalog queries (``builder``) about this table and its database."""
        return self.fetch(builder(self.table), self.catalog_names())

    def stats(self) -> dict[str, dict[str, Any]]:
        """Rows per state and the enqueue time of the oldest row in each."""
        return {
            state: {"rows": count, "oldest_enqueued_at": oldest}
            for state, count, oldest in self.fetch(self.dialect.count_by_state(self.table), {})
        }

    def unpublished_rows(self) -> int:
        """Rows of sink batches not committed yet (or left by a checkpoint since deleted): in the
        staging table, and in the queue table under unpublished tags."""
        return self.fetch(self.dialect.count_unpublished(self.table), {})[0][0]

    def look(self, at: Callable[[Any], T]) -> T:
        """``at(connection)``: what the driver reports, or a statement that changes nothing (the doctor)."""
        conn = self.conn
        with self._errors():
            return at(conn)
