"""A queue table sqlqueue did not create, served as it is through its profile.

``AdoptedQueue`` is a ``Queue`` whose claim side runs the profile's statements: a claim marks (or
takes) rows the table's way and copies them into sqlqueue's claims table beside it, a replay reads
the copies, and completion applies the profile's done transition to the rows still ours. The user's
table gets no column of ours. ``adopt`` creates the claims table, and the sink's staging table and
ledger (``sqlqueue adopt`` prints them first).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .connection import ConnectionSpec
from .dialects.engine import ASSIGNED, GENERATED, Statement
from .errors import DatabaseError, SchemaError
from .identifiers import TableName
from .profile import COUNTS, TIMES, Profile
from .queue import UNLIMITED, Queue
from .schema import Column, picked_columns

# Rows one renewal statement names by key: two key columns of 500 rows stay under SQL Server's 2,100
# parameters a statement (learn.microsoft.com/sql/sql-server/maximum-capacity-specifications-for-sql-server).
RENEWED_PER_STATEMENT = 500


class AdoptedQueue(Queue):
    def __init__(self, spec: ConnectionSpec, table: TableName, profile: Profile, *, inspecting: bool = False) -> None:
        super().__init__(spec, table, inspecting=inspecting)
        self.declared = profile
        self._checked: Profile | None = None
        self._names_by_lower: dict[str, str] = {}  # the table's columns, read with the profile's check

    def __repr__(self) -> str:
        return f"AdoptedQueue({self.table} at {self.spec.display}, profile {self.declared.name})"

    def twin(self) -> AdoptedQueue:
        twin = AdoptedQueue(self.spec, self.table, self.declared)
        twin.proven = self.proven
        return twin

    @property
    def clock(self) -> str:
        return self.declared.clock  # before the connection the profile's check reads the table with

    # ---- the table and its profile -------------------------------------------------------------
    def columns(self) -> tuple[Column, ...]:
        return table_columns(self)

    def domain_columns(self) -> tuple[Column, ...]:
        return self._domain(self.columns())

    def _domain(self, columns: Sequence[Column]) -> tuple[Column, ...]:
        """The table's ``columns`` but those the lifecycle writes."""
        managed = {c.lower() for c in self.profile.lifecycle()}
        return tuple(c for c in columns if c.name.lower() not in managed)

    def source_columns(self) -> tuple[Column, ...]:
        """What a source returns by default: the table's columns but those the lifecycle writes."""
        return self.domain_columns()

    @property
    def profile(self) -> Profile:
        """The declared profile checked against the table (once), with the table's spelling of names."""
        if self._checked is None:
            columns = self.columns()
            checked = self.declared.check(self.table, columns, unique_keys(self))
            self._check_vocabulary(checked)
            self._try_filter(checked.filter)
            self._checked = checked
            self._names_by_lower = {c.name.lower(): c.name for c in columns}
        return self._checked

    def _check_vocabulary(self, profile: Profile) -> None:
        """Refuse a status value the table would refuse: one its status column's foreign key does not
        reference, or one a CHECK constraint on that column does not name."""
        if profile.status is None:
            return
        values = [v for v in (*profile.ready, profile.in_flight, profile.done, profile.failed) if v is not None]
        names = {**self.catalog_names(), "column": profile.status}
        for referenced, column in self.fetch(self.dialect.referenced(self.table), names):
            allowed = {str(v) for (v,) in self.fetch(self.dialect.compile(f"SELECT {column} FROM {referenced}"), {})}
            refused = [v for v in values if v not in allowed]
            if refused:
                raise SchemaError(
                    f"profile {profile.name!r}: status value(s) {', '.join(map(repr, refused))} are not in the "
                    f"vocabulary of {self.table}.{profile.status} (a foreign key to {referenced}); it holds: "
                    f"{', '.join(sorted(allowed))}"
                )
        for (text,) in self.fetch(self.dialect.check_constraints(self.table), names):
            for check in checks_on(str(text), profile.status):
                refused = [v for v in values if f"'{v}'" not in check]
                if refused:
                    raise SchemaError(
                        f"profile {profile.name!r}: status value(s) {', '.join(map(repr, refused))} are refused by "
                        f"the CHECK constraint on {self.table}.{profile.status}: {check}"
                    )

    def _try_filter(self, condition: str | None) -> None:
        """Refuse, in one line, a filter that is not one boolean expression (sqlqueue.filters), or that the
        engine refuses on this table (an unknown column, a type clash) in a query that reads no row."""
        if condition is None:
            return
        from .filters import check_filter, refused  # sqlglot: imported where a filter is set

        check_filter(condition, self.dialect.name)
        try:
            self.fetch(self.dialect.filter_probe(self.table, condition), {})
        except DatabaseError as error:
            if error.transient:
                raise
            said = str(error).strip().splitlines()[0]
            raise refused(condition, f"the database refuses it on table {self.table} ({said})") from None

    def spelled(self, names: Sequence[str]) -> tuple[str, ...]:
        """``names`` as the table spells them (PostgreSQL folds unquoted names to lower case)."""
        self.profile  # noqa: B018
        missing = [n for n in names if n.lower() not in self._names_by_lower]
        if missing:
            raise SchemaError(f"column(s) {', '.join(missing)} are not in table {self.table}")
        return tuple(self._names_by_lower[n.lower()] for n in names)

    def adoption_statements(self) -> list[str]:
        """The DDL adopting the table needs, nothing on the table: sqlqueue's claims table beside it, and for
        the sink a staging table of the columns a producer may write, and the ledger."""
        exact = self._exact_columns()
        writable = {c.name.lower() for c in self._writable(self.columns(), self._defaults())}
        staged = [(n, t) for n, t in exact if n.lower() in writable]
        return [
            *self.dialect.create_claims_table(self.table, exact),
            *self.dialect.create_adopted_staging(self.table, staged),
            self.dialect.create_ledger(self.table),
        ]

    def _exact_columns(self) -> list[tuple[str, str]]:
        """(column, its type spelled as DDL takes it), in the table's order: what sqlqueue's copies take."""
        return [(str(n), str(t)) for n, t in self.fetch(self.dialect.exact_columns(self.table), self.catalog_names())]

    def claim_index(self) -> str | None:
        """An index the claim can seek (on the profile's order, else its key), when no index of the table
        leads with that column: the one change to the user's table sqlqueue proposes, applied only when
        asked for. Filtered to the rows a claim may take where the profile says which (status values,
        else done-at unset), so rows done and kept drop out of it (not where done leaves the status in
        flight, as seed 003's does); it includes what the claim's filter reads.
        SQL Server takes IN and IS NULL in a filter predicate ("Create filtered indexes",
        learn.microsoft.com/sql/relational-databases/indexes/create-filtered-indexes); writers of the
        table then need QUOTED_IDENTIFIER and ANSI_NULLS ON, as for any filtered index."""
        p, q = self.profile, self.dialect.quote
        columns = [c for c, _ in p.order] or list(p.key)
        leading = {str(first).lower() for _, _, first in self.facts(self.dialect.table_indexes)}
        if columns[0].lower() in leading:
            return None
        where = self.dialect.claimable(p)
        read = [p.status, p.attempts, p.started, p.claimer, p.due]
        include = [c for c in dict.fromkeys(read) if c is not None and c not in columns]
        key = ", ".join(q(c) for c in columns)
        return self.dialect.create_index_guarded(
            self.table, f"ix_{self.table.name}_sqlqueue_claim", key, include, where
        )

    def adopt(self) -> None:
        self.profile  # noqa: B018  (a bad mapping fails here, before anything is created)
        with self.transaction() as cur:
            for sql in self.adoption_statements():
                cur.execute(sql)

    def require_layout(self) -> None:
        """Refuse, before any row moves, a mapping the table does not fit or a table not adopted yet."""
        self.profile  # noqa: B018
        claims = self.dialect.claims_table(self.table)
        copied = self._require(claims)
        later = [n for lower, n in self._names_by_lower.items() if lower not in copied]
        if later:
            exact = dict(self._exact_columns())
            q, t = self.dialect.quote, self.dialect.table(claims)
            adds = "; ".join(f"ALTER TABLE {t} ADD {q(n)} {exact.get(n, '?')} NULL" for n in later)
            raise SchemaError(
                f"column(s) {', '.join(map(repr, later))} of table {self.table} came after it was adopted, and "
                f"{claims}, where a claim copies every column, has no place for them; add them to it: {adds}"
            )

    def _require(self, ours: TableName) -> set[str]:
        """The columns of sqlqueue's table ``ours`` (lower case), or an error naming the command to make it."""
        rows = self.fetch(self.dialect.table_columns(ours), self.catalog_names(ours))
        if not rows:
            raise SchemaError(
                f"table {self.table} at {self.spec.display} is not adopted yet ({ours} is missing): run "
                f"`sqlqueue adopt --queue {self.table} --profile {self.declared.name}` to review the DDL it "
                "needs, then with --apply"
            )
        return {str(name).lower() for name, *_ in rows}

    # ---- the sink --------------------------------------------------------------------------------
    lists_unpublished = False

    def stages(self, columns: Sequence[Column]) -> bool:
        return True

    @property
    def staging(self) -> TableName:
        return self.dialect.adopted_staging(self.table)

    def publish_statement(self, columns: Sequence[Column]) -> Statement:
        return self.dialect.adopted_publish(self.table, self.profile, tuple(c.name for c in columns))

    def _defaults(self) -> dict[str, int]:
        """{column, lower case: its kind (Engine.defaults_sql)} of the columns an INSERT may leave out."""
        rows = self.fetch(self.dialect.defaults(self.table), self.catalog_names())
        return {str(name).lower(): int(kind) for name, kind in rows}

    def _writable(self, columns: Sequence[Column], kinds: dict[str, int]) -> tuple[Column, ...]:
        """The columns a producer may write: the table's ``columns``, but those the lifecycle writes or the
        table generates (identity, computed; ``kinds`` from _defaults)."""
        return tuple(c for c in self._domain(columns) if kinds.get(c.name.lower()) != GENERATED)

    def writable(self, names: Sequence[str]) -> tuple[Column, ...]:
        """The table's columns receiving a producer's ``names``, checked so that a batch the table would
        refuse fails before anything is written: the key must come with the rows unless the table assigns
        it; a NOT NULL column without default must be given unless the profile fills it; and the lifecycle
        columns a new row leaves to the table must take that (a NULL, or their default)."""
        staged = self._require(self.staging)
        p, kinds, columns = self.profile, self._defaults(), self.columns()
        writable = self._writable(columns, kinds)
        unstaged = [n for n in names if n.lower() not in staged]
        if unstaged and all(n.lower() in {c.name.lower() for c in writable} for n in unstaged):
            raise SchemaError(
                f"column(s) {', '.join(map(repr, unstaged))} of table {self.table} came after it was adopted, and "
                f"{self.staging} has no place for them: with the sink's queries stopped, drop {self.staging} (it "
                "holds only batches Spark has not committed) and run `sqlqueue adopt --apply` again"
            )
        new_row = self.dialect.new_row(p, names)
        given = {n.lower() for n in names}
        per_row = given | {n for n, kind in kinds.items() if kind in (GENERATED, ASSIGNED)}
        # A key column the profile fills (seed 003's in_process) is the same in every new row: fine beside
        # a key column that tells the rows apart (its identity id).
        filled = {c.lower() for c in new_row} if per_row & {k.lower() for k in p.key} else set()
        for key in p.key:
            if key.lower() not in per_row | filled:
                raise SchemaError(
                    f"column {key!r}, the key of table {self.table} (profile.key), is missing from the rows and the "
                    "table does not assign it: give it in the rows, one value per row"
                )
        lifecycle = {c.lower() for c in p.lifecycle()}
        for column in columns:
            name = column.name.lower()
            if name not in lifecycle or column.nullable:
                continue
            if new_row.get(column.name) == "NULL":
                raise SchemaError(
                    f"column {column.name!r} of table {self.table} is NOT NULL, but profile {p.name!r} reads NULL "
                    "there as ready: map another column, or none (profile.<field> = '')"
                )
            if column.name not in new_row and name not in kinds:
                raise SchemaError(
                    f"column {column.name!r} of table {self.table} is NOT NULL with no default, and a new row of "
                    f"profile {p.name!r} leaves it empty: give it a default, or make it nullable"
                )
        keys = {k.lower() for k in p.key}
        required = [
            c.name
            for c in writable
            if not c.nullable and c.name.lower() not in {*kinds, *keys, *(n.lower() for n in new_row)}
        ]

        def why_not(name: str) -> str:
            if name.lower() in lifecycle:
                return f"is written by profile {p.name!r} (the row's lifecycle)"
            if kinds.get(name.lower()) == GENERATED:
                return f"is generated by table {self.table}"
            return f"is not in table {self.table}"

        return picked_columns(names, writable, required, why_not, f"NOT NULL with no default in table {self.table}")

    def _encoded(self, columns: Sequence[Column], rows: Iterable[Sequence[Any]], tail: tuple = ()) -> Iterator[tuple]:
        """Times as the table's clock holds them: a local-clock table (SYSDATETIME()) gets the rows'
        instants as the database server's wall time, at its current UTC offset."""
        if self.profile.clock == "local" and any(c.type == "timestamp" for c in columns):
            zone = dt.timezone(dt.timedelta(seconds=int(self.fetch(self.dialect.local_offset(), {})[0][0])))
            times = [i for i, c in enumerate(columns) if c.type == "timestamp"]
            rows = (_in_zone(row, times, zone) for row in rows)
        return super()._encoded(columns, rows, tail)

    # ---- the claim side --------------------------------------------------------------------------
    def claim_profile(self, order: str) -> Profile:
        return self.profile  # the profile sets the order

    def copied(self) -> tuple[str, ...]:
        self.profile  # noqa: B018
        return tuple(self._names_by_lower.values())

    def complete(self, consumer: str, upto_seq: int, *, keep: bool = False, chunk: int | None = None) -> int:
        """The done transition on the rows of claims up to ``upto_seq`` still ours, and their copies
        dropped, in one transaction; returns how many rows were done (where the claim took the rows out
        of the table, how many copies were dropped). Where the engine needs it (SQL Server), each
        statement runs in chunks of its ``default_chunk`` rows, within the one transaction: lock
        escalation is judged per statement."""
        limit = self.dialect.default_chunk
        values = {"consumer": consumer, "upto_seq": upto_seq, "limit": limit, **self._values()}
        statements = self.dialect.adopted_complete(self.table, self.profile, limit is not None)
        counts = []
        with self.transaction() as cur:
            for statement in statements:
                total = 0
                while True:
                    cur.execute(statement.sql, statement.bind(values))
                    count = max(cur.rowcount, 0)
                    total += count
                    if limit is None or count < limit:
                        break
                counts.append(total)
        return counts[0]

    def renew(self, consumer: str, after_seq: int, lease_seconds: int, chunk: int | None = None) -> int:
        """Renew the rows ``consumer`` still holds under claims after ``after_seq`` whose started-at is
        more than half a lease old: started-at (and the token) now, which is what the table's own worker
        reads too, and the copies take the new guard. Each chunk of locked rows is one transaction, its
        rows renewed RENEWED_PER_STATEMENT at a time (Leases.renewable, renew, settle_renewed); returns
        how many rows were renewed."""
        p = self.profile
        if not p.expires:
            return 0
        limit = chunk or self.dialect.default_chunk or UNLIMITED
        values = {"consumer": consumer, "after_seq": after_seq, "half_ago": -(lease_seconds // 2), "limit": limit}
        pick = self.dialect.renewable(self.table, p)
        total = 0
        while True:
            with self.transaction() as cur:
                cur.execute(pick.sql, pick.bind(values))
                keys = cur.fetchall()
                for start in range(0, len(keys), RENEWED_PER_STATEMENT):
                    rows = keys[start : start + RENEWED_PER_STATEMENT]
                    named = {f"k{c}_{i}": v for i, row in enumerate(rows) for c, v in enumerate(row)}
                    for statement in (
                        self.dialect.renew(self.table, p, len(rows)),
                        self.dialect.settle_renewed(self.table, p, len(rows)),
                    ):
                        cur.execute(statement.sql, statement.bind({**values, **named}))
            total += len(keys)
            if len(keys) < limit:
                return total

    def drop_fenced(self, consumer: str, seq: int) -> int:
        """Forget the copies of claim ``seq`` whose row another claimer took since (Leases.drop_fenced)."""
        p = self.profile
        if p.take or p.guard is None:
            return 0
        statement = self.dialect.drop_fenced(self.table, p)
        with self.transaction() as cur:
            cur.execute(statement.sql, statement.bind({"consumer": consumer, "seq": seq}))
            return max(cur.rowcount, 0)

    def rescue_expired(self, max_attempts: int, chunk: int | None = None) -> int:
        """Rows abandoned by their claimer go back by the ready predicate itself; those with no attempt
        left become failed, where the profile has a failed value."""
        statement = self.dialect.adopted_fail_expired(self.table, self.profile)
        if statement is None:
            return 0
        with self.transaction() as cur:
            cur.execute(statement.sql, statement.bind(self._values()))
            return max(cur.rowcount, 0)

    @functools.cached_property
    def _bound(self) -> tuple[str | None, bool]:
        """(the bound column, whether it is a time)."""
        p = self.profile
        types = {c.name: c.type for c in self.columns()}
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
        return self._bound[0]

    def available_now_bound(self) -> Any:
        """The largest value of the bound column among the rows ready at a Trigger.AvailableNow run's start
        (its claims take rows up to it), or one below every value when none is ready; None without a
        bound column. A time read back through a driver may come back coarser than the table holds it
        (DATETIME2(7) as microseconds; Microsoft's driver sends Babelfish whole seconds), so a time
        bound is a second later: rows enqueued within that second are taken too."""
        column, time_ = self._bound
        if column is None:
            return None
        (largest,) = self.fetch(self.dialect.max_ready(self.table, self.profile, column), self._values())[0]
        if largest is None:
            return self._time(dt.datetime(1900, 1, 1, tzinfo=dt.timezone.utc)) if time_ else -(2**63)
        if isinstance(largest, dt.datetime):
            return largest + dt.timedelta(seconds=1)
        return largest

    def by_status(self) -> dict[str, int]:
        """Rows of this stream per status value ({} without a status column); a flag's values as the
        profile spells them, 0 and 1, which drivers return as booleans on PostgreSQL and SQL Server."""
        statement = self.dialect.adopted_by_status(self.table, self.profile)
        rows = [] if statement is None else self.fetch(statement, {})
        return {str(int(value) if isinstance(value, bool) else value): count for value, count in rows}

    def count_in(self, ours: TableName) -> int:
        """Rows in one of sqlqueue's tables beside this one (claims: held by streams; staging: unpublished)."""
        return self.fetch(self.dialect.count_rows(ours), {})[0][0]

    def unpublished_rows(self) -> int:
        """Rows of sink batches not committed yet: all of them wait in the staging table."""
        return self.count_in(self.staging)


def _in_zone(row: Sequence[Any], times: Sequence[int], zone: dt.tzinfo) -> list[Any]:
    values = list(row)
    for i in times:
        if isinstance(values[i], dt.datetime) and values[i].tzinfo is not None:
            values[i] = values[i].astimezone(zone).replace(tzinfo=None)
    return values


def checks_on(text: str, column: str) -> list[str]:
    """The vocabularies a CHECK constraint gives ``column``: the CHECK (...) clauses in ``text`` (a
    constraint's definition, or SQLite's CREATE TABLE; SQL Server's definition is the bare condition)
    that name the column and some quoted value."""
    starts = [m.end() for m in re.finditer(r"(?i)\bCHECK\s*\(", text)]
    clauses = []
    for start in starts:
        depth, end = 1, start
        while depth and end < len(text):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        clauses.append(text[start - 1 : end])
    named = re.compile(rf"(?i)(?<![\w]){re.escape(column)}(?![\w])")
    bare = [] if clauses or text.lstrip().upper().startswith("CREATE") else [text]
    return [c for c in clauses or bare if named.search(c) and "'" in c]


def table_columns(queue: Queue) -> tuple[Column, ...]:
    """A table's columns as the database reports them, each the user's (no lifecycle column of ours)."""
    rows = queue.fetch(queue.dialect.table_columns(queue.table), queue.catalog_names())
    if not rows:
        raise SchemaError(f"table {queue.table} does not exist at {queue.spec.display}")
    portable = queue.dialect.portable_type
    return tuple(Column(name, portable(db_type), bool(nullable)) for name, db_type, nullable in rows)


def unique_keys(queue: Queue) -> list[list[str]]:
    """The columns of a table's primary key and of each of its unique indexes without a filter."""
    keys: dict[str, list[str]] = defaultdict(list)
    for index, column in queue.fetch(queue.dialect.unique_keys(queue.table), queue.catalog_names()):
        keys[str(index)].append(column)
    return list(keys.values())


def open_queue(spec: ConnectionSpec, table: TableName, profile: Profile | None, *, inspecting: bool = False) -> Queue:
    """The queue at ``table``: sqlqueue's own layout, or a table adopted through ``profile``."""
    if profile is None:
        return Queue(spec, table, inspecting=inspecting)
    return AdoptedQueue(spec, table, profile, inspecting=inspecting)
