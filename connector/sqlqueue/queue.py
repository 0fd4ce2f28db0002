"""The Spark-free queue: create, enqueue, claim, read claimed rows, complete, stats.

A ``Queue`` serves one table of one kind (``kinds``): sqlqueue's own layout, or a table adopted through
a profile. It owns one connection, opened lazily, and one object per role its callers use: ``consuming``
(claim, read, complete, renew, fence, rescue, acknowledge), ``producing`` (insert, stage, publish),
``inspection`` (counts without claiming) and ``upkeep`` (purge, requeue). Every write runs in one
transaction through the dialect; statements are compiled once per queue, from the kind's checked
profile, so one implementation serves both kinds: where the rows carry their claim (in place) or copies
in a claims table hold it, what ready, a claim and done write. What a kind supports beyond every table's
basics is asked with ``supports`` and ``require``. Driver errors leave as ``DatabaseError`` with secrets
scrubbed, and the broken connection is dropped so the next call reconnects.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any, TypeVar

from .capabilities import Capability
from .connection import ConnectionSpec
from .dialects import Dialect, dialect_for
from .dialects.engine import Statement, execute
from .dialects.layout import Step
from .dialects.statements.lifecycle import RANGE, UPTO, Holding
from .dialects.statements.outcomes import STAGED, Outcomes
from .errors import ConfigError, DatabaseError, SchemaError, unsupported
from .findings import Finding
from .groups import PER_GROUP, Grouping
from .identifiers import TableName
from .kinds import TableKind, kind_for
from .kinds.catalog import exact_columns
from .numbering import Blocks, Identity, segments
from .profile import COUNTS, NATIVE, ROLE_TYPES, TIMES, Profile
from .schema import LIFECYCLE_TYPES, STAGE_TAG, Column, Included, QueueSpec, Subtype, keyed
from .textrows import TextRows
from .waits import Backlog, Waits

T = TypeVar("T")
UNLIMITED = 2**62
# Most rows a grouped claim's statement reads, as a multiple of the rows it is to take: reading stops once it
# has enough, so this bounds only the rows read past the first rows of groups much longer than maxRowsPerGroup.
SCAN_ROWS = 10
# A grouped read: the group column, and the claim order its rows are read in.
GroupRead = tuple[str, tuple[tuple[str, str], ...]]
DONE_OUTCOME, RETRY_OUTCOME, FAILED_OUTCOME = "done", "retry", "failed"
# Passes of an acknowledgement chunk's statements at most (Queue.apply_acks).
ACK_PASSES = 3
OUTCOMES = (DONE_OUTCOME, RETRY_OUTCOME, FAILED_OUTCOME)


def _settled(cur: Any, writes: Sequence[Statement], values: dict[str, Any], size: int) -> int:
    """Run one chunk's outcome statements; how many rows they settled. A pass that settled fewer rows than
    the chunk holds (``size``) runs again, up to ACK_PASSES in all: an ack that waited on the stream's own
    renewal of its row compared the row's new token with its copy's old one (lock_acked) and changed
    nothing; the next statement reads both anew. Where the lock is not taken (PostgreSQL:
    Engine.lock_rows) or not honoured (Babelfish ignores table hints) this pass is what settles
    such a row; without it that race fenced out whole batches, whose rows then stayed held. A row another
    claimer took stays unsettled in every pass."""
    settled = 0
    for n in range(ACK_PASSES):
        passed = sum(max(execute(cur, w, **values).rowcount, 0) for w in writes)
        settled += passed
        if settled >= size or (n > 0 and passed == 0):
            break
    return settled


def retry_delay(attempts: int, base_seconds: int, cap_seconds: int, jitter: float) -> int:
    """Exponential backoff: ``base`` after the first attempt, doubling after each further one,
    capped, times a jitter factor (e.g. 0.9 to 1.1) so retried rows do not all return at once."""
    return int(min(base_seconds * 2 ** max(attempts - 1, 0), cap_seconds) * jitter)


@dataclass(frozen=True)
class Ack:
    """A consumer's verdict on one claimed row: done, retry after a delay, or failed for good.
    ``key``: the row's key values in its key's order (sqlqueue's own layout: the id). ``attempts``: the
    row's attempts as the claim delivered them, its fencing token (None: unfenced). ``response`` and
    ``step``: what the row's work reports, where the table has columns for them (None: keep the row's)."""

    key: tuple[Any, ...]
    outcome: str
    error: str | None = None
    delay_seconds: int = 0
    attempts: int | None = None
    response: str | None = None
    step: str | None = None


class Queue:
    def __init__(
        self, spec: ConnectionSpec, table: TableName, profile: Profile | None = None, *, inspecting: bool = False
    ) -> None:
        """A queue at ``table``: sqlqueue's own layout, or with ``profile`` a table adopted through it.
        ``inspecting``: connect without changing database settings (for the doctor)."""
        self.spec = spec
        self.table = table
        self.kind: TableKind = kind_for(profile)
        self.dialect: Dialect = dialect_for(spec.dialect)
        # The engine's spelling and driver I/O (connections, transactions, bulk loads, errors).
        self.engine = self.dialect.engine
        self._inspecting = inspecting
        self._conn: Any = None
        # The address is known to work: this queue connected, or (set by its owner) a Spark task's
        # stream connected on the driver first. Until then a failing connection is a wrong address or
        # login, reported at once; after, it is an outage that the retry policy rides out.
        self.proven = False
        # Its roles, each what one kind of caller uses.
        self.consuming = Consuming(self)
        self.producing = Producing(self)
        self.inspection = Inspection(self)
        self.upkeep = Upkeep(self)

    def __repr__(self) -> str:
        adopted = f", profile {self.declared.name}" if self.declared is not None else ""
        return f"Queue({self.table} at {self.spec.display}{adopted})"

    @property
    def declared(self) -> Profile | None:
        """The profile the table was adopted through; None for sqlqueue's own layout."""
        return self.kind.declared

    def supports(self, capability: Capability) -> bool:
        return capability in self.kind.capabilities

    def require(self, *capabilities: Capability) -> None:
        """Refuse, in one line naming the table, the capability and what to use instead, a capability the
        table's kind lacks."""
        for capability in capabilities:
            if not self.supports(capability):
                raise unsupported(self.table, self.kind.describe(), capability.value, self.kind.instead(capability))

    def twin(self) -> Queue:
        """The same queue on a connection of its own (for a thread that claims ahead)."""
        twin = Queue(self.spec, self.table, self.declared)
        twin.proven = self.proven
        return twin

    # ---- connection and error handling --------------------------------------------------------
    @property
    def conn(self) -> Any:
        if self._conn is None:
            with self._errors():
                connect = self.engine.inspection_connect if self._inspecting else self.engine.connect
                conn = connect(self.spec)
                setting = self.engine.session_clock(self.clock)
                if setting is not None:
                    self.engine.autocommit_cursor(conn).execute(setting)
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
            if not self.engine.is_driver_error(exc):
                raise
            error = self.engine.map_error(exc, self.spec, self.proven)
            if not error.transient and self.proven and self._conn is not None and not self._answers():
                error = DatabaseError(f"{error} (and the connection no longer answers)", transient=True)
            self.close()
            raise error from None

    def _answers(self) -> bool:
        """Whether the connection still answers a query. A driver's first error on a connection the
        server dropped need not say so: FreeTDS reports 'Unknown error', 'Could not change
        transaction status' or nothing at all (HY000, no number), and only later ones 08S01."""
        try:
            self.engine.autocommit_cursor(self._conn).execute(self.dialect.inspection.ping().sql)
        except Exception:  # any failure of the probe means it does not answer; the first error is raised
            return False
        return True

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        conn = self.conn
        with self._errors(), self.engine.transaction(conn) as cur:
            yield cur

    def fetch(self, statement: Statement, values: dict[str, Any]) -> list[tuple]:
        """Every row of a query the dialect built, outside any transaction."""
        conn = self.conn
        with self._errors():
            cur = self.engine.autocommit_cursor(conn)
            cur.execute(statement.sql, statement.bind(values))
            return [tuple(r) for r in cur.fetchall()]

    # ---- the table and its kind -----------------------------------------------------------------
    @property
    def profile(self) -> Profile:
        """How this table expresses a queue, checked against the table (once) where it was declared."""
        return self.kind.profile(self)

    @property
    def clock(self) -> str:
        """The clock the table's times are written in (Profile.clock), which each session is set to: read
        from the declared profile, before the connection the profile's check reads the table with."""
        return (self.declared or NATIVE).clock

    def catalog_names(self, table: TableName | None = None) -> dict[str, str | None]:
        """The ways catalog queries name this table (or ``table``)."""
        table = table or self.table
        return {"table": table.name, "schema": table.schema, "object_name": str(table)}

    def columns(self) -> tuple[Column, ...]:
        """The table's columns as the database reports them."""
        return self.kind.columns(self)

    def identity(self) -> Identity:
        """How the table's identity hands out ids: one at a time, or in blocks a sink task may name its rows'
        ids from (sqlqueue.numbering)."""
        return self.kind.identity(self)

    def subtypes(self) -> tuple[Subtype, ...]:
        """The tables that extend this one by its key (Profile.include), as the catalog describes them."""
        return self.kind.subtypes(self)

    def domain_columns(self) -> tuple[Column, ...]:
        """The table's columns but those its lifecycle owns."""
        return self.kind.domain_columns(self)

    def group_column(self, name: str) -> str:
        """``name`` as the table spells it: a column of its own (not the lifecycle's) of a type a claim can
        group rows by (profile.ROLE_TYPES' group), or one error naming what fits."""
        self.require(Capability.GROUPS)
        domain = self.domain_columns()
        fits = [c for c in domain if c.type in ROLE_TYPES["group"]]
        found = next((c for c in fits if c.name.lower() == name.lower()), None)
        if found is None:
            allowed = ", ".join(c.name for c in fits) or "none"
            raise SchemaError(
                f"option 'groupBy' = {name!r} is not a column of queue table {self.table} a claim can group by "
                f"(its own columns of type {' or '.join(ROLE_TYPES['group'])}): {allowed}"
            )
        return found.name

    def source_columns(self) -> tuple[Column, ...]:
        """What a source returns by default: the lifecycle columns the kind shows, then the domain's."""
        shown = self.kind.shown_lifecycle
        return tuple(c for c in self.columns() if c.name in shown) + self.domain_columns()

    def spelled(self, names: Sequence[str]) -> tuple[str, ...]:
        """``names`` as the table spells its columns."""
        return self.kind.spelled(self, names)

    def require_layout(self) -> None:
        """Refuse, in one line naming what fixes it, a table not ready to be served."""
        self.kind.require_layout(self)

    def findings(self, order: str) -> list[Finding]:
        """What the doctor finds about the table and its database, for claims in ``order``."""
        return self.kind.findings(self, order)

    # ---- sqlqueue's own layout: create, layouts ---------------------------------------------------
    def create(
        self, domain: Sequence[Column] = (Column("payload", "text"),), order: str = "fifo", group: str | None = None
    ) -> None:
        """Create what is missing of the queue (with ``group``, the index message groups are claimed by);
        refused over a table of another layout (migrate it)."""
        self.require(Capability.CREATE)
        spec = QueueSpec(self.table, tuple(domain), order, group)
        if self.fetch(self.dialect.schema.table_columns(self.table), self.catalog_names()):
            self.require_layout()
        with self.transaction() as cur:
            for sql in self.dialect.schema.create_statements(spec):
                cur.execute(sql)

    def adopt(self, index: bool = False) -> None:
        """Make sqlqueue's tables beside an adopted table (a bad mapping fails first, before anything is
        made), and with ``index`` the index its claim can seek where it has none."""
        adoption = self.kind.adoption(self, index)
        if adoption is None:
            raise ConfigError(f"table {self.table} is {self.kind.describe()}: give the profile that adopts it")
        with self.transaction() as cur:
            for sql in (*adoption.statements, *([adoption.index] if adoption.index else [])):
                cur.execute(sql)

    def layout(self) -> int:
        """The version of sqlqueue's own layout the table has."""
        self.require(Capability.MIGRATE)
        return self.kind.layout(self)

    def run_step(self, step: Step, chunk: int) -> int | None:
        """Run one migration step: None when its ``todo`` query found nothing to do, else the rows it
        moved (0 for a step that moves none). A chunked step commits each chunk on its own."""
        self.require(Capability.MIGRATE)
        if step.todo is not None and not self.fetch(self.engine.compile(step.todo), {})[0][0]:
            return None
        if step.chunked:
            statements = [self.engine.compile(sql) for sql in step.statements]
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
                if self.dialect.migrations.migration_lock_timeout:
                    cur.execute(self.dialect.migrations.migration_lock_timeout)
                for sql in step.statements:
                    cur.execute(sql)
            return 0
        conn = self.conn
        with self._errors():
            cur = self.engine.autocommit_cursor(conn)
            for sql in step.statements:
                cur.execute(sql)
        return 0

    # ---- producing ----------------------------------------------------------------------------
    def enqueue(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Enqueue ready rows (dicts keyed by column name) in one transaction."""
        self.require(Capability.ENQUEUE)
        if not rows:
            return 0
        known = {c.name: c for c in self.columns()}
        names = list(rows[0])
        unknown = [n for n in names if n not in known]
        if unknown:
            raise SchemaError(f"column(s) {', '.join(unknown)} are not in queue table {self.table}")
        with self.transaction() as cur:
            self.producing.insert(cur, [known[n] for n in names], [[row[n] for n in names] for row in rows])
        return len(rows)

    # ---- leases --------------------------------------------------------------------------------
    # ---- lifecycle ----------------------------------------------------------------------------
    def repeat(
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

    def bindings(self) -> dict[str, Any]:
        """What the profile's statements bind besides each call's own values (Claims.ready)."""
        p = self.profile
        return {"lease_ago": -p.lease_seconds, "max_attempts": p.max_attempts}

    def facts(self, builder: Callable[[TableName], Statement]) -> list[tuple]:
        """Rows of one of the dialect's catalog queries (``builder``) about this table and its database."""
        return self.fetch(builder(self.table), self.catalog_names())

    def look(self, at: Callable[[Any], T]) -> T:
        """``at(connection)``: what the driver reports, or a statement that changes nothing (the doctor)."""
        conn = self.conn
        with self._errors():
            return at(conn)


class Consuming:
    """A queue's consuming role: claim rows, read a claim's rows, complete them, renew their leases, fence
    what another claimer took, rescue expired claims and apply per-row outcomes (the source's Consumer and
    the ack sink hold it). How the rows are held comes from the kind (``kinds.holds``)."""

    def __init__(self, queue: Queue) -> None:
        self.queue = queue
        # Per consumer, the last group its grouped claims took: where the next one resumes (Claims.grouped).
        self._group_after: dict[str, Any] = {}
        self._ack_columns: tuple[tuple[Column, ...], tuple[tuple[str, str], ...]] | None = None
        self._copied: tuple[str, ...] | None = None
        self._addressed: bool | None = None

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
        taken: list[Any] | None = None,
        groups: Grouping | None = None,
        waited: list[int] | None = None,
        runs: bool = False,
    ) -> int:
        """Claim up to ``limit`` ready rows under (consumer, seq); returns how many were claimed.

        Each chunk commits on its own: a crash between chunks leaves rows held under ``seq``,
        which the claim protocol finds and serves before claiming more. ``bound``: a Trigger.AvailableNow
        run's ``available_now_bound``, None otherwise. ``taken``: where the claim returns the id of each
        row it takes (rows that carry their claim), those ids are added to it, and to ``waited`` their queue
        waits in ms (Waits.ranked). ``groups``: the claim takes rows by message group (Claims.grouped); the
        table's profile.group, if any, otherwise. ``runs``: hold the rows as runs of ids, in one transaction,
        writing nothing on them (_claim_runs), where ``holds_as_runs`` says the claim may.
        """
        group = groups.column if groups else self.claim_profile(order).group
        chunk = chunk or self.queue.engine.default_chunk or limit
        values = {"consumer": consumer, "seq": seq, "lease_seconds": lease_seconds, "max_id": bound}
        if group is not None:
            per_group = groups.per_group if groups else PER_GROUP
            return self._claim_groups(group, per_group, order, strict, limit, chunk, values, taken, waited)
        if self.holds_as_runs(runs, order, strict, groups):
            return self._claim_runs(order, limit, values, taken, waited)
        take = self._claimer(order, strict, bound is not None, ids=taken, waits=waited)
        claimed = 0
        while claimed < limit:
            want = min(chunk, limit - claimed)
            with self.queue.transaction() as cur:
                got = take(cur, {**values, "limit": want})
            claimed += got
            if got < want:
                break
        return claimed

    def holds_as_runs(self, runs: bool, order: str, strict: bool, groups: Grouping | None) -> bool:
        """Whether a claim asked to hold its rows as runs of ids (``runs``) does: where the table's rows may be
        held so (Profile.runs: sqlqueue's own layout), and the claim is neither strict nor grouped (by
        ``groups`` or the table's profile.group, as ``claim`` groups), which wait for or judge rows by what
        is marked on them."""
        profile = self.claim_profile(order)
        return runs and not strict and groups is None and profile.group is None and profile.runs

    def _claim_runs(
        self, order: str, limit: int, values: dict[str, Any], taken: list[Any] | None, waited: list[int] | None
    ) -> int:
        """A claim held as runs (dialects.statements.runs): in the claims' turn, the ids and waits of up to
        ``limit`` ready rows, then a run recorded for each stretch of them no other row can be inside (runs_of).
        One transaction whatever the limit: it locks no row."""
        runs, table, step = self.queue.dialect.runs, self.queue.table, self.queue.identity().step
        bound = self.bound_column() if values["max_id"] is not None else None
        pick = runs.pick(table, self.claim_profile(order), bound)
        turn, record = runs.turn(table), runs.record(table)
        with self.queue.transaction() as cur:
            if turn is not None:
                cur.execute(turn.sql)
            rows = execute(cur, pick, **values, **self.queue.bindings(), limit=limit).fetchall()
            ids = [int(row[0]) for row in rows]
            if ids:  # pyodbc refuses an executemany of no rows
                held = runs_of(ids, step)
                cur.executemany(record.sql, [record.bind({**values, "first": a, "last": b}) for a, b in held])
        if taken is not None:
            taken.extend(ids)
        if waited is not None:
            waited.extend(int(row[1]) for row in rows if row[1] is not None)
        return len(ids)

    def _claim_groups(
        self, group: str, per_group: int, order: str, strict: bool, limit: int, chunk: int,
        values: dict[str, Any], taken: list[Any] | None, waited: list[int] | None,
    ) -> int:  # fmt: skip
        """A grouped claim (Claims.grouped): statements that each read at most SCAN_ROWS times their share of
        rows from the groups after the last one this consumer took, until ``limit`` rows are taken or, once
        the groups have wrapped around to the first, a statement takes none."""
        bounded = values["max_id"] is not None
        takes = {
            resume: self._claimer(order, strict, bounded, ids=taken, group=group, resume=resume, waits=waited)
            for resume in (False, True)
        }
        last = self.queue.dialect.claims.last_group(self.holding, group)
        after = self._group_after.get(values["consumer"])
        wrapped, claimed = after is None, 0
        while claimed < limit:
            want = min(chunk, limit - claimed)
            step = {**values, "limit": want, "scan": SCAN_ROWS * want, "per_group": per_group, "after_group": after}
            with self.queue.transaction() as cur:
                got = takes[after is not None](cur, step)
                if got:
                    after = execute(cur, last, **values).fetchone()[0]
            claimed += got
            if not got and wrapped:
                break
            if not got:
                after, wrapped = None, True
        self._group_after[values["consumer"]] = after
        return claimed

    def _claimer(
        self, order: str, strict: bool, bounded: bool, ids: list[Any] | None = None, group: str | None = None,
        resume: bool = False, waits: list[int] | None = None,
    ) -> Callable[[Any, dict[str, Any]], int]:  # fmt: skip
        """What claims one chunk inside the caller's transaction and says how many rows it took (adding the
        ids the claim returns to ``ids``, and their waits to ``waits``, when given); by message group with a
        ``group`` column (``resume``: after :after_group)."""
        bound = self.bound_column() if bounded else None
        profile = replace(self.claim_profile(order), group=group)
        claims = self.queue.dialect.claims
        plan = claims.claim(self.queue.table, profile, self.copied(), strict, bound, resume, self.addressed())
        subtypes = [
            claims.copy_subtype(self.queue.table, profile, s.table, tuple(c.name for c in s.columns))
            for s in self.queue.subtypes()
        ]
        extra = self.queue.bindings()

        def take(cur: Any, values: dict[str, Any]) -> int:
            if plan.lock is not None:
                cur.execute(plan.lock.sql)
            cur.execute(plan.claim.sql, plan.claim.bind({**values, **extra}))
            rows = cur.fetchall() if plan.returns else None
            if plan.record is not None and rows:
                cur.executemany(plan.record.sql, [(values["consumer"], values["seq"], *row) for row in rows])
            elif ids is not None and rows:  # the claim returned the ids of the rows it took
                ids.extend(row[0] for row in rows)
                if waits is not None and len(rows[0]) > 1:  # ... and their waits
                    waits.extend(int(row[1]) for row in rows if row[1] is not None)  # short: ranked again
            taken = max(cur.rowcount, 0) if rows is None else len(rows)
            if plan.settle is not None and taken and self._rewritten(cur, plan.rewriters):
                cur.execute(plan.settle.sql, plan.settle.bind(values))
            for copy in subtypes if taken else ():
                cur.execute(copy.sql, copy.bind(values))
            return taken

        return take

    def _rewritten(self, cur: Any, rewriters: Statement | None) -> bool:
        """Whether a claim's copies may need settling: the table has triggers or rules, or the engine cannot tell."""
        if rewriters is None:
            return True
        return bool(execute(cur, rewriters, **self.queue.catalog_names()).fetchone()[0])

    def claim_profile(self, order: str) -> Profile:
        """The profile a claim in ``order`` (the stream's order option) runs by."""
        return self.queue.kind.claim_profile(self.queue, order)

    def copied(self) -> tuple[str, ...]:
        """The columns a claim copies into the claims table: none where the rows carry their claim, else
        every column of the table. Read once: the claims table got the columns the table had when it was
        adopted (a catalog read per claim was 27 ms of the ack cycle's 4.4 s over 20 claims)."""
        if self._copied is None:
            self._copied = self.queue.kind.holds.copied(self.queue)
        return self._copied

    def addressed(self) -> bool:
        """Whether the table's rows each have an address of their own that a claim may fetch them by
        (Schema.plain_table), read once: a table does not become a partitioned one in place."""
        if self._addressed is None:
            plain = self.queue.dialect.schema.plain_table(self.queue.table)
            rows = self.queue.fetch(plain, self.queue.catalog_names()) if plain is not None else []
            self._addressed = bool(rows and rows[0][0])
        return self._addressed

    def _bound(self) -> tuple[str | None, bool]:
        """(the bound column, whether it is a time)."""
        p = self.queue.profile
        types = {c.name: c.type for c in self.queue.columns()}
        keys = [k for k in p.key if k not in p.lifecycle()]
        ranked = [
            *(k for k in keys if types.get(k) in COUNTS),
            *([p.enqueued] if p.enqueued is not None else []),
            *(k for k in keys if types.get(k) in TIMES),
        ]
        return (ranked[0], types.get(ranked[0]) in TIMES) if ranked else (None, False)

    def bound_column(self) -> str | None:
        """The column a Trigger.AvailableNow run bounds its claims by: an integer key column the lifecycle
        does not write (an identity id), else the enqueue time, else a time key column. None: no column
        tells the rows ready at the start from later ones, and the run claims until a claim comes back
        empty."""
        return self._bound()[0]

    def available_now_bound(self) -> Any:
        """The largest value of the bound column among the rows ready at a Trigger.AvailableNow run's start
        (its claims take rows up to it), or one below every value when none is ready; None without a
        bound column. A time read back through a driver may come back coarser than the table holds it
        (DATETIME2(7) as microseconds; Microsoft's driver sends Babelfish whole seconds), so a time
        bound is a second later: rows enqueued within that second are taken too."""
        column, time_ = self._bound()
        if column is None:
            return None
        (largest,) = self.queue.fetch(
            self.queue.dialect.claims.max_ready(self.queue.table, self.queue.profile, column), self.queue.bindings()
        )[0]
        if largest is None:
            return _db_time(self.queue.engine, dt.datetime(1900, 1, 1, tzinfo=dt.timezone.utc)) if time_ else -(2**63)
        if isinstance(largest, dt.datetime):
            return largest + dt.timedelta(seconds=1)
        return largest

    @property
    def holding(self) -> Holding:
        """Where this table's claims that mark their rows (or copy them) hold them."""
        return self.queue.dialect.lifecycle.holding(self.queue.table, self.queue.profile)

    def held_by(self, runs: bool) -> Holding:
        """Where a claim holds its rows: as runs of ids (``runs``, statements.runs), else marked or copied."""
        return self.queue.dialect.lifecycle.runs_holding(self.queue.table, self.queue.profile) if runs else self.holding

    def holdings(self) -> tuple[Holding, ...]:
        """Every way this table's claims hold rows: marked or copied, and runs where the profile has them."""
        return (self.holding, self.held_by(True)) if self.queue.profile.runs else (self.holding,)

    def count_claimed(self, consumer: str, seq: int) -> int:
        """Rows ``consumer`` holds under claim ``seq``, however the claim holds them."""
        counts = self.queue.dialect.claims.count_held
        # int: a sum over runs comes back as a decimal on PostgreSQL, which a stream's progress cannot show.
        return sum(int(self.queue.fetch(counts(h), {"consumer": consumer, "seq": seq})[0][0]) for h in self.holdings())

    def count_claimed_through(self, consumer: str, seq: int) -> int:
        """Rows ``consumer`` holds under every claim up to ``seq``."""
        counts = self.queue.dialect.claims.count_held
        values = {"consumer": consumer, "upto_seq": seq}
        return sum(int(self.queue.fetch(counts(h, UPTO), values)[0][0]) for h in self.holdings())

    def runs_hold(self, consumer: str, after_seq: int, upto_seq: int) -> bool:
        """Whether runs hold the rows of ``consumer``'s claims (after_seq, upto_seq]: a claim held across a
        restart, read by the holding it was made with whatever the stream's options say now."""
        if not self.queue.profile.runs:
            return False
        counted = self.queue.dialect.claims.count_held(self.held_by(True), RANGE)
        values = {"consumer": consumer, "after_seq": after_seq, "upto_seq": upto_seq}
        return bool(self.queue.fetch(counted, values)[0][0])

    def _runs(self, runs: bool | None, consumer: str, after_seq: int, upto_seq: int) -> bool:
        return self.runs_hold(consumer, after_seq, upto_seq) if runs is None else runs

    def partition_bounds(
        self, consumer: str, after_seq: int, upto_seq: int, parts: int, group: str | None = None,
        runs: bool | None = None,
    ) -> list[tuple[Any, Any]]:  # fmt: skip
        """Row ranges that split the rows of claims (after_seq, upto_seq] into ``parts`` even groups; with a
        ``group`` column, ranges of its values that keep each message group whole, and (None, None) for the
        rows of no group. ``runs``: whether runs hold the claims (None: asked of the table, runs_hold)."""
        values = {"consumer": consumer, "after_seq": after_seq, "upto_seq": upto_seq}
        if group is not None:
            ranges = self.queue.fetch(self.queue.dialect.claims.partition_groups(self.holding, group, parts), values)
            return [(lo, hi) for lo, hi in ranges]
        held = self.held_by(self._runs(runs, consumer, after_seq, upto_seq))
        rows = self.queue.fetch(self.queue.dialect.claims.partition_bounds(held, parts), values)
        return [(int(lo), int(hi)) for lo, hi in rows]

    def read_claimed(
        self,
        consumer: str,
        after_seq: int,
        upto_seq: int,
        lo: Any,
        hi: Any,
        columns: Sequence[str],
        batch_rows: int = 10_000,
        grouped: GroupRead | None = None,
        runs: bool | None = None,
    ) -> Iterator[list[tuple]]:
        """The claimed rows in one row range, in lists of at most ``batch_rows``. A name in ``columns`` that
        names a subtype table (Profile.include) takes, in each row, a dict of that table's columns but the
        key, as the claim copied its row; None where the row has none. ``grouped``, ``runs``: as for
        export_claimed."""
        by_name = {s.name.lower(): s for s in self.queue.subtypes()}
        base = [n for n in columns if n.lower() not in by_name]
        wanted = [by_name[n.lower()] for n in columns if n.lower() in by_name]
        shape = tuple((s.table, tuple(c.name for c in s.fields)) for s in wanted)
        if grouped is not None and wanted:
            names = ", ".join(s.name for s in wanted)
            raise ConfigError(
                f"option 'groupBy' cannot read subtype tables ({names}): leave them out of option 'columns'"
            )
        runs = self._runs(runs, consumer, after_seq, upto_seq)
        statement = self._read_statement(self.queue.spelled(base), lo, grouped, shape, runs)
        values = {"consumer": consumer, "after_seq": after_seq, "upto_seq": upto_seq, "lo": lo, "hi": hi}
        places = {n.lower(): i for i, n in enumerate(columns)}

        def shaped(row: Sequence[Any]) -> tuple:
            """The base columns, then each subtype's copy as a dict (None without one), in ``columns``' order."""
            out: list[Any] = [None] * len(columns)
            for name, value in zip(base, row):
                out[places[name.lower()]] = value
            at = len(base)
            for subtype, (_, fields) in zip(wanted, shape):
                present, *found = row[at : at + 1 + len(fields)]
                out[places[subtype.name.lower()]] = None if present is None else dict(zip(fields, found))
                at += 1 + len(fields)
            return tuple(out)

        conn = self.queue.conn
        with self.queue._errors():
            cur = self.queue.engine.autocommit_cursor(conn)
            cur.execute(statement.sql, statement.bind(values))
            while rows := cur.fetchmany(batch_rows):
                yield [shaped(r) for r in rows] if wanted else [tuple(r) for r in rows]

    def export_claimed(
        self, consumer: str, after_seq: int, upto_seq: int, lo: Any, hi: Any, columns: Sequence[str],
        grouped: GroupRead | None = None, runs: bool | None = None,
    ) -> Iterator[bytes] | None:  # fmt: skip
        """The rows ``read_claimed`` reads, as CSV text in chunks (Engine.copy_out), where the engine streams
        them so and no name in ``columns`` is a subtype table's; None otherwise. ``grouped``: [lo, hi] is a
        range of group values (None: the rows of no group), read whole groups in the claim order; ``runs``:
        whether runs hold the claims (None: asked of the table, runs_hold; a read task is told)."""
        if any(s.name.lower() in {n.lower() for n in columns} for s in self.queue.subtypes()):
            return None
        runs = self._runs(runs, consumer, after_seq, upto_seq)
        statement = self._read_statement(self.queue.spelled(columns), lo, grouped, runs=runs)
        values = {"consumer": consumer, "after_seq": after_seq, "upto_seq": upto_seq, "lo": lo, "hi": hi}
        chunks = self.queue.engine.copy_out(self.queue.engine.autocommit_cursor(self.queue.conn), statement, values)
        return None if chunks is None else self._guarded(chunks)

    def _read_statement(
        self, columns: tuple[str, ...], lo: Any, grouped: GroupRead | None,
        shape: tuple[tuple[TableName, tuple[str, ...]], ...] = (), runs: bool = False,
    ) -> Statement:  # fmt: skip
        """What reads a read task's rows (``columns``, as the table spells them): a row range, or with
        ``grouped`` a range of group values starting at ``lo`` (None: the rows of no group) in the claim
        order; ``shape``: the subtype tables' copies read beside the rows (read_claimed); ``runs``: runs hold
        the claims."""
        if grouped is None:
            p = self.queue.profile
            return self.queue.dialect.claims.read_claimed(self.held_by(runs), p, columns, p.key, shape)
        group, order = grouped
        return self.queue.dialect.claims.read_grouped(self.holding, columns, group, order, lo is None)

    def _guarded(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        """``chunks``, with a driver error while they stream mapped to ours."""
        with self.queue._errors():
            yield from chunks

    def complete(self, consumer: str, upto_seq: int, *, keep: bool = False, chunk: int | None = None) -> int:
        """Apply the done transition to the rows this consumer holds under claims up to ``upto_seq`` and
        still holds (a row another claimer took is fenced out: left alone), and forget the copies where
        copies hold them; returns how many rows were done (where the claim took the rows out of the
        table, how many copies were forgotten). sqlqueue's own rows are deleted unless ``keep`` (option
        completion=keep); an adopted table's done transition is its profile's.

        Where the engine needs it (SQL Server), each statement runs in chunks of ``chunk`` rows (lock
        escalation is judged per statement). Rows held in place commit each chunk on its own; copies are
        forgotten in the done transition's one transaction, so a row is never done with its copy still
        taken for held, nor its copy gone while it is still in flight."""
        return self.queue.kind.holds.complete(self.queue, consumer, upto_seq, keep, chunk)

    def renew(self, consumer: str, after_seq: int, lease_seconds: int, chunk: int | None = None) -> int:
        """Renew the lease of the rows ``consumer`` still holds under claims after ``after_seq`` (claims
        Spark has not committed) that have less than half of it left; returns how many. Rows another
        claimer took are not this consumer's to renew.

        Rows that carry their claim get a new lease end. An adopted table's rows get started-at (and the
        token) now, which is what the table's own worker reads too, and their copies take the new guard
        (kinds.holds)."""
        p = self.queue.profile
        if not p.expires:
            return 0
        limit = chunk or self.queue.engine.default_chunk
        each = limit or UNLIMITED
        values = {
            "consumer": consumer,
            "after_seq": after_seq,
            "lease_seconds": lease_seconds,
            "half_seconds": lease_seconds // 2,
            "half_ago": -(lease_seconds // 2),
            "limit": each,
        }
        return self.queue.kind.holds.renew(self.queue, values, limit)

    def drop_fenced(self, consumer: str, seq: int) -> int:
        """Forget the rows of claim ``seq`` another claimer took since; how many. Only copies need it: a
        row held in place carries its claim, so one taken over is simply no longer counted as held."""
        return self.queue.kind.holds.drop_fenced(self.queue, consumer, seq)

    def rescue_expired(self, max_attempts: int, chunk: int | None = None) -> int:
        """Rows whose claimer's lease ran out: where the rows carry a lease (sqlqueue's own layout) they go
        back to ready, or to failed once their attempts are spent; an adopted table's go back by its ready
        predicate itself, and those with no attempt left become failed where the profile has a failed
        value."""
        return self.queue.kind.holds.rescue_expired(self.queue, max_attempts, chunk)

    def apply_acks(self, cur: Any, acks: Sequence[Ack], *, keep: bool, max_attempts: int) -> int:
        """Per-row outcomes inside the caller's transaction; returns how many changed nothing (fenced out).
        Only rows the claim that delivered them still holds are touched (Outcomes), so applying the same
        acknowledgements twice changes nothing the second time, nor does a second acknowledgement of a row
        in the same batch. sqlqueue's own rows done are deleted unless ``keep``; an adopted table's done
        transition is its profile's, and its rows' attempts are spent at its profile's max_attempts where
        it names one (what its own worker reads too). The acknowledgements are staged in a temporary
        table, then each outcome is one statement a chunk (Outcomes)."""
        self.queue.require(Capability.ACK)
        if not acks:
            return 0
        profile, outcomes, holds = self.queue.profile, self.queue.dialect.outcomes, self.queue.kind.holds
        extra = holds.ack_writes(self.queue, keep)
        first: dict[tuple[Any, ...], Ack] = {}
        for a in acks:
            first.setdefault(a.key, a)
        staged = [first[key] for key in sorted(first)]  # in key order, as two writers that lock several rows should
        columns, types = self._staged_columns()
        execute(cur, outcomes.stage(types, len(profile.key)))
        rows = _staged_rows(staged, [field for field, _ in outcomes.fields(profile)], len(profile.key))
        self.queue.engine.load(cur, self.queue.engine.temp_table(STAGED), columns, rows)
        analyze = self.queue.engine.analyze(self.queue.engine.temp_table(STAGED))
        if analyze is not None:
            cur.execute(analyze)
        given = {a.outcome for a in staged}
        writes = [
            outcomes.ack_done(self.queue.table, extra.done) if DONE_OUTCOME in given else None,
            outcomes.ack_retry(self.queue.table, profile) if RETRY_OUTCOME in given else None,
            outcomes.ack_failed(self.queue.table, profile) if FAILED_OUTCOME in given else None,
        ]
        lock, forget = extra.lock, extra.forget
        chunk = self.queue.engine.default_chunk or len(staged)
        changed = 0
        for lo in range(0, len(staged), chunk):
            values = {"lo": lo, "hi": lo + chunk - 1, "max_attempts": profile.max_attempts or max_attempts}
            if lock is not None:
                execute(cur, lock, **values).fetchall()  # read to the end: a row is locked once read
            changed += _settled(cur, [w for w in writes if w is not None], values, min(chunk, len(staged) - lo))
            if forget is not None:
                execute(cur, forget, **values)
        holds.forget_subtype_copies(self.queue, cur)
        execute(cur, outcomes.unstage())
        return len(acks) - changed

    def _staged_columns(self) -> tuple[tuple[Column, ...], tuple[tuple[str, str], ...]]:
        """The staged acknowledgement's columns (Outcomes.fields): with their portable types, which the
        engine's bulk load takes, and their types as DDL spells them, a table column's own where the
        staged value is compared with it or written to it."""
        if self._ack_columns is None:
            exact = {n.lower(): t for n, t in exact_columns(self.queue)}
            portable = {c.name.lower(): c.type for c in self.queue.columns()}
            columns, types = [], []
            for field, column in self.queue.dialect.outcomes.fields(self.queue.profile):
                own, name = Outcomes.own_type(field), Outcomes.column(field)
                columns.append(Column(name, portable[column.lower()]) if column else replace(own, name=name))
                types.append((name, exact[column.lower()] if column else self.queue.engine.type_sql(own)))
            self._ack_columns = (tuple(columns), tuple(types))
        return self._ack_columns


class Producing:
    """A queue's producing role: insert ready rows, or stage a sink batch's rows unpublished and the
    statements that publish them (the sink's Producer holds it)."""

    def __init__(self, queue: Queue) -> None:
        self.queue = queue

    def _encoded(self, columns: Sequence[Column], rows: Iterable[Sequence[Any]], tail: tuple = ()) -> Iterator[tuple]:
        """Rows as the driver takes them, each followed by ``tail``. Times go in the table's clock: a
        local-clock table (SYSDATETIME()) gets the rows' instants as the database server's wall time, at
        its current UTC offset."""
        times = [i for i, c in enumerate(columns) if c.type == "timestamp"]
        if self.queue.profile.clock == "local" and times:
            zone = dt.timezone(
                dt.timedelta(seconds=int(self.queue.fetch(self.queue.dialect.sink.local_offset(), {})[0][0]))
            )
            rows = (_in_zone(row, times, zone) for row in rows)
        encode = self.queue.engine.encode
        converted = [(i, c) for i, c in enumerate(columns) if c.type in self.queue.engine.encoded_types]
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
        self.queue.engine.insert_many(cur, self.queue.table, columns, encoded, skip_duplicates=keyed(columns))

    def insert_unpublished(
        self, cur: Any, columns: Sequence[Column], rows: Iterable[Sequence[Any]], stage_tag: str, identity: Identity
    ) -> None:
        """Insert rows under ``stage_tag`` inside the caller's transaction ``cur``; claimable once the
        tag is not in the unpublished table (``Producer`` lists it there in the same transaction). Text rows
        go with ids of their own where the table's ``identity`` (Queue.identity) lets this login name them
        (sqlqueue.numbering)."""
        self._load_under(cur, self.queue.table, columns, rows, stage_tag, identity.step if identity.names_ids else 1)

    @property
    def lists_unpublished(self) -> bool:
        """How the sink writes into this table (``Producer``): rows carrying a tag column are written into
        it under tags listed as unpublished; else every batch waits in the staging table."""
        return self.queue.profile.tag is not None

    def writable(self, names: Sequence[str]) -> tuple[Column, ...]:
        """The table's columns that receive a producer's ``names``, or one error naming what does not fit."""
        return self.queue.kind.writable(self.queue, names)

    def included(self, given: Sequence[str], structs: Mapping[str, Sequence[str]]) -> tuple[Included, ...]:
        """The subtype tables a producer's struct columns (``structs``: {struct column: its fields}) write
        beside the base columns ``given``, or one error naming what does not fit."""
        if structs and not self.queue.subtypes():
            raise SchemaError(
                f"struct column(s) {', '.join(map(repr, structs))}: table {self.queue.table} has no subtype tables "
                "(profile.include), where a struct column's rows go"
            )
        return self.queue.kind.included(self.queue, given, structs) if structs else ()

    def subtype_staging(self, subtype: Subtype) -> TableName:
        return self.queue.kind.staging(self.queue, subtype.table)

    def stage_subtype(self, cur: Any, included: Included, rows: Iterable[Sequence[Any]], stage_tag: str) -> None:
        """Insert rows of a subtype table (its key, then ``included.columns``) into its staging table under
        ``stage_tag``, inside the caller's transaction ``cur``."""
        key = self.subtype_key(included.subtype)
        self._load_under(cur, self.subtype_staging(included.subtype), [*key, *included.columns], rows, stage_tag)

    def subtype_key(self, subtype: Subtype) -> tuple[Column, ...]:
        """A subtype table's key columns, typed as the queue table's key."""
        types = {c.name.lower(): c for c in self.queue.columns()}
        return tuple(Column(k, types[k.lower()].type, False) for k in subtype.key)

    def publish_subtype_statement(self, included: Included) -> Statement:
        """Copy one task's staged rows of a subtype table (:tag) into it."""
        names = tuple(c.name for c in (*self.subtype_key(included.subtype), *included.columns))
        return self.queue.dialect.sink.publish_subtype(included.subtype.table, names)

    def stages(self, columns: Sequence[Column]) -> bool:
        """Whether a batch of ``columns`` waits in the staging table until publish copies it over: every
        batch where the table has no tag column, and keyed ones, whose keys are checked at publish."""
        return not self.lists_unpublished or keyed(columns)

    @property
    def staging(self) -> TableName:
        return self.queue.kind.staging(self.queue, self.queue.table)

    def publish_statement(self, columns: Sequence[Column]) -> Statement:
        """Copy one task's staged rows (:tag) into the table, as new ready rows of the profile; a table
        with dedup keys skips a row whose dedup_key it holds already."""
        names = tuple(c.name for c in columns)
        dedup = self.queue.supports(Capability.DEDUP_KEYS) and "dedup_key" in names
        new_row = tuple(self.queue.kind.new_row(self.queue, names).items())
        return self.queue.dialect.sink.publish(self.queue.table, self.staging, names, dedup, new_row)

    def stage(self, cur: Any, columns: Sequence[Column], rows: Iterable[Sequence[Any]], stage_tag: str) -> None:
        """Insert rows into the staging table under ``stage_tag``, inside the caller's transaction ``cur``."""
        self._load_under(cur, self.staging, columns, rows, stage_tag)

    def _load_under(
        self, cur: Any, table: TableName, columns: Sequence[Column], rows: Iterable[Sequence[Any]], stage_tag: str,
        id_step: int = 1,
    ) -> None:  # fmt: skip
        """Load ``rows`` into ``table`` under ``stage_tag``; text rows with ids of their own from blocks of the
        table's identity where ``id_step`` is above 1 (sqlqueue.numbering)."""
        engine, target = self.queue.engine, self.queue.engine.table(table)
        if isinstance(rows, TextRows) and self._sends_as_is(columns):
            if id_step > 1:
                self._load_numbered(cur, table, columns, rows, stage_tag, id_step)
            else:
                engine.load_text(cur, target, [*columns, STAGE_TAG], rows.text((stage_tag,)))
            return
        engine.load(cur, target, [*columns, STAGE_TAG], self._encoded(columns, rows, (stage_tag,)))

    def _load_numbered(
        self, cur: Any, table: TableName, columns: Sequence[Column], rows: TextRows, stage_tag: str, step: int
    ) -> None:
        engine = self.queue.engine
        reserve = self.queue.dialect.sink.identity_blocks(table)
        assert reserve is not None, "only an engine that hands out ids in blocks makes a table step by more than 1"
        blocks = Blocks(step, lambda n: [int(first) for (first,) in execute(cur, reserve, blocks=n).fetchall()])
        target, loaded = engine.table(table), [Column("id", "bigint", False), *columns, STAGE_TAG]
        for segment in segments(rows.pieces((stage_tag,)), blocks):
            engine.load_text(cur, target, loaded, segment)

    def _sends_as_is(self, columns: Sequence[Column]) -> bool:
        """Whether the engine loads text rows and no value of ``columns`` needs changing first (_encoded): no time
        goes into a local-clock table, no type is one the engine encodes."""
        engine = self.queue.engine
        local = self.queue.profile.clock == "local" and any(c.type == "timestamp" for c in columns)
        return engine.loads_text and not local and not any(c.type in engine.encoded_types for c in columns)


class Inspection:
    """What a queue holds, counted without claiming or locking: rows per state, the backlog, waits, a
    peek at the next rows (the CLI, the doctor and the source's progress hold it)."""

    def __init__(self, queue: Queue) -> None:
        self.queue = queue

    def count_ready(self) -> int:
        """Rows a claim could take now: the backlog."""
        return self.queue.fetch(
            self.queue.dialect.claims.count_ready(self.queue.table, self.queue.profile), self.queue.bindings()
        )[0][0]

    def backlog(self) -> Backlog:
        """The ready rows and the age of the oldest, in one pass: what shows whether a stream keeps up."""
        return Backlog.from_row(
            self.queue.fetch(
                self.queue.dialect.claims.backlog(self.queue.table, self.queue.profile), self.queue.bindings()
            )[0]
        )

    def claim_waits(self, consumer: str, seq: int, runs: bool | None = None) -> Waits:
        """How long the rows of claim ``seq`` waited between enqueue and claim (none where the table
        records no enqueue time); ``runs``: whether runs hold the claim (None: asked of the table)."""
        consuming = self.queue.consuming
        runs = consuming.runs_hold(consumer, seq - 1, seq) if runs is None else runs
        statement = self.queue.dialect.claims.claim_waits(consuming.held_by(runs))
        if statement is None:
            return Waits()
        return Waits.from_row(self.queue.fetch(statement, {"consumer": consumer, "seq": seq})[0])

    def recent_waits(self, since: dt.datetime) -> Waits:
        """How long the rows claimed since a time waited, of those still in the table: with
        completion=keep every one, with delete those not completed yet (in flight, failed, retrying)."""
        self.queue.require(Capability.HISTORY)
        return Waits.from_row(
            self.queue.fetch(
                self.queue.dialect.inspection.recent_waits(self.queue.table),
                {"since": _db_time(self.queue.engine, since)},
            )[0]
        )

    def peek(self, limit: int, order: str = "fifo", columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The next ``limit`` ready rows in claim order, as dicts (``columns``, else the ones the kind shows:
        TableKind.peeked); nothing is claimed or locked."""
        names = tuple(columns or self.queue.kind.peeked(self.queue))
        rows = self.queue.fetch(
            self.queue.dialect.inspection.peek(self.queue.table, self.queue.consuming.claim_profile(order), names),
            {"limit": limit, **self.queue.bindings()},
        )
        return [dict(zip(names, row)) for row in rows]

    def count_done_since(self, since: dt.datetime) -> int:
        """Rows completed since a time and kept as done (completion=keep)."""
        self.queue.require(Capability.HISTORY)
        return self.queue.fetch(
            self.queue.dialect.inspection.count_done_since(self.queue.table),
            {"since": _db_time(self.queue.engine, since)},
        )[0][0]

    def stats(self) -> dict[str, dict[str, Any]]:
        """Rows per state or status value, by the table's kind (TableKind.stats)."""
        return self.queue.kind.stats(self.queue)

    def failed_errors(self) -> list[tuple[str, int]]:
        """(error text, rows) of an adopted table's failed rows, the most frequent first; [] where the
        profile has no failed status or no error column."""
        statement = self.queue.dialect.inspection.adopted_errors(self.queue.table, self.queue.profile)
        return [] if statement is None else [(str(text), n) for text, n in self.queue.fetch(statement, {})]

    def held_rows(self) -> int:
        """Rows sqlqueue's streams hold (claimed, not completed), whatever their consumer."""
        counts = self.queue.dialect.claims.count_all_held
        return sum(int(self.queue.fetch(counts(h), {})[0][0]) for h in self.queue.consuming.holdings())

    def unpublished_rows(self) -> int:
        """Rows of sink batches not committed yet (or left by a checkpoint since deleted): in the
        staging table, and in the table under unpublished tags."""
        if self.queue.producing.lists_unpublished:
            return self.queue.fetch(self.queue.dialect.sink.count_unpublished(self.queue.table), {})[0][0]
        return self.queue.fetch(self.queue.dialect.inspection.count_rows(self.queue.producing.staging), {})[0][0]


class Upkeep:
    """Housekeeping of finished rows: purging them, and sending failed ones back (the CLI holds it)."""

    def __init__(self, queue: Queue) -> None:
        self.queue = queue

    def purge(
        self,
        state: str,
        completed_before: dt.datetime,
        chunk: int | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Delete finished rows (done or failed) completed before a time, a chunk per transaction;
        ``progress`` hears the running total after each chunk."""
        self.queue.require(Capability.PURGE)
        chunk = chunk or self.queue.engine.default_chunk or 10_000
        statement = self.queue.dialect.housekeeping.purge(self.queue.table, state, True)
        return self.queue.repeat(
            statement, {"cutoff": _db_time(self.queue.engine, completed_before), "limit": chunk}, chunk, progress
        )

    def requeue_failed(self, ids: Sequence[int] = (), dedup_keys: Sequence[str] = ()) -> int:
        """Failed rows back to ready with their attempts reset: by id, by dedup key, or all of them."""
        self.queue.require(Capability.REQUEUE)
        with self.queue.transaction() as cur:
            if not ids and not dedup_keys:
                execute(cur, self.queue.dialect.housekeeping.requeue_failed(self.queue.table, "all"))
                return cur.rowcount
            count = 0
            for by, keys in (("id", ids), ("dedup_key", dedup_keys)):
                statement = self.queue.dialect.housekeeping.requeue_failed(self.queue.table, by)
                for key in keys:
                    cur.execute(statement.sql, statement.bind({by: key}))
                    count += max(cur.rowcount, 0)
            return count


def _db_time(engine: Any, value: dt.datetime) -> Any:
    """An instant as the driver binds a lifecycle time."""
    return engine.encode(LIFECYCLE_TYPES["completed_at"], value)


def _in_zone(row: Sequence[Any], times: Sequence[int], zone: dt.tzinfo) -> list[Any]:
    values = list(row)
    for i in times:
        if isinstance(values[i], dt.datetime) and values[i].tzinfo is not None:
            values[i] = values[i].astimezone(zone).replace(tzinfo=None)
    return values


def _staged_rows(acks: Sequence[Ack], fields: Sequence[str], keys: int) -> list[tuple[Any, ...]]:
    """Each acknowledgement as its staged row (Outcomes.fields): its ordinal, its ``keys`` key values, then
    the Ack's fields named by the rest (its outcome, what it carries where the table has a column for it,
    its delay). An attribute getter, not a dict a row: this runs for every row a batch acknowledges."""
    rest = fields[1 + keys :]
    carried = attrgetter(*rest)
    if len(rest) == 1:
        return [(n, *a.key, carried(a)) for n, a in enumerate(acks)]
    return [(n, *a.key, *carried(a)) for n, a in enumerate(acks)]


def runs_of(ids: Sequence[int], step: int = 1) -> list[tuple[int, int]]:
    """``ids`` as runs, each (first, last), in order: stretches of ids between two of which no row can have
    an id. Consecutive ids, and where the identity steps by ``step`` (sqlqueue.numbering) the ids on either
    side of a block's start: the last a row can hold in one block (its first, filled by a default, or its
    last) and the first in the next (its first, or the one after it, where a sink task's rows start)."""
    ordered = sorted(ids)
    if not ordered:
        return []
    runs: list[tuple[int, int]] = []
    first = last = ordered[0]
    for i in ordered[1:]:  # no tuple an id: a claim's 50,000 ids in one statement
        if i == last + 1 or (step > 1 and _across_a_start(last, i - last, step)):
            last = i
        else:
            runs.append((first, last))
            first = last = i
    runs.append((first, last))
    return runs


def _across_a_start(before: int, gap: int, step: int) -> bool:
    """Whether ``before`` and the id ``gap`` after it are on either side of a block's start with no id
    between them a row can hold: a default's id (its block's first) and the next block's first or second,
    or a block's last id and the next block's second (its first left to a default, which the sink took)."""
    at = (before - 1) % step
    return (at == 0 and gap in (step, step + 1)) or (at == step - 1 and gap == 2)
