"""A table sqlqueue did not create, served as it is through its profile: what it supports, and how
it is checked and adopted.

**What an adopted table supports.** What every table does: a stream claims its rows the profile's way
(marking them, or taking them out of the table) and reads them back from the copies in sqlqueue's
claims table beside it, a replay reads those copies again, completion applies the profile's done
transition to the rows still the stream's (fenced by the profile's guard), held claims renew their
lease, and the sink writes batches into it exactly once (staged beside it, published in the ledger's
transaction as new ready rows of the profile). ``sqlqueue peek``, ``stats``, ``doctor`` and ``adopt`` serve
it. Of the capabilities of ``capabilities.Capability``, only those ``OFFERED`` names, where its profile
has what they need: per-row outcomes (ack) on a table whose rows carry a status with done, failed and
retry values, as a relational queue's do. ``INSTEAD`` says, for every other, what to use on such a table.
sqlqueue never changes the table itself: its tables go beside it, and the one index ``sqlqueue adopt
--index`` proposes is created only when asked for.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..capabilities import Capability
from ..dialects.engine import ASSIGNED, GENERATED
from ..errors import DatabaseError, SchemaError, unsupported
from ..findings import OK, PROBLEM, Finding
from ..identifiers import TableName
from ..numbering import Identity
from ..profile import Profile
from ..schema import Column, Included, Subtype, picked_columns
from ..waits import duration
from .catalog import defaults, exact_columns, referencing_tables, table_columns, unique_keys
from .holds import Copies
from .kind import Adoption, Holds, Served

# The capabilities an adopted table may have, and what each needs of its profile. Per-row outcomes write
# the profile's transitions (Lifecycle.done_reported_sets, retry_sets, failed_sets): a status with a done,
# a failed and a retry value, the retry value a ready one so the row is claimed again; not where the
# claim takes the rows out of the table, which leaves no row to write an outcome on.
OFFERED: dict[Capability, Callable[[Profile], bool]] = {
    Capability.ACK: lambda p: not p.take and None not in (p.status, p.done, p.failed, p.retry) and p.retry in p.ready,
    # A claim tells a group with a row in flight by its status (Claims.group_busy): a row taken out of the
    # table leaves nothing to hold its group back by.
    Capability.GROUPS: lambda p: not p.take and p.status is not None,
}
INSTEAD = {
    Capability.CREATE: "it exists already: `sqlqueue adopt` checks it against its profile and makes sqlqueue's "
    "tables beside it",
    Capability.MIGRATE: "sqlqueue never changes an adopted table; `sqlqueue adopt --apply` makes what is missing "
    "of sqlqueue's tables beside it",
    Capability.ENQUEUE: "the sink (df.write.format('sqlqueue') with the profile), or the table's own producers",
    Capability.CLAIM_ORDER: "its profile's order (option profile.order)",
    Capability.PRIORITY: "its profile's order (option profile.order) on the table's own columns",
    Capability.DEDUP_KEYS: "a unique key of the table itself",
    Capability.KEEP_DONE: "its profile's done transition (options profile.done and profile.done_at)",
    Capability.ACK: "a profile whose status has done, failed and retry values (options profile.status, "
    "profile.done, profile.failed, and profile.retry, one of profile.ready), and that does not take the rows "
    "(profile.take); else completion by its profile's done transition when Spark commits a batch",
    Capability.DEAD_LETTERS: "its profile's failed status (option profile.failed), which keeps such rows in the table",
    Capability.REQUEUE: "the table's own tools to set a failed row's status back",
    Capability.PURGE: "the table's own housekeeping: its done rows are its own",
    Capability.GROUPS: "a profile with a status column (options profile.status, profile.ready and profile.in_flight) "
    "that does not take the rows (profile.take)",
    Capability.HISTORY: "each batch's queue wait in the stream's progress (waitP50Ms, waitP95Ms, waitMaxMs)",
}


def capabilities_of(profile: Profile) -> frozenset[Capability]:
    """What a table adopted through ``profile`` supports beyond every table's basics (OFFERED)."""
    return frozenset(c for c, fits in OFFERED.items() if fits(profile))


class Adopted:
    shown_lifecycle: tuple[str, ...] = ()  # a source shows the table's columns but those the lifecycle writes
    holds: Holds = Copies()
    ready_rule = "the profile's ready rows, due, with attempts left"

    def __init__(self, declared: Profile) -> None:
        self.declared: Profile | None = declared
        self.capabilities = capabilities_of(declared)
        self.profile_name = declared.name
        self._declared = declared
        self._checked: Profile | None = None
        self._subtypes: tuple[Subtype, ...] = ()
        self._names_by_lower: dict[str, str] = {}  # the table's columns, read with the profile's check

    def describe(self) -> str:
        return f"adopted through profile {self.profile_name}"

    def instead(self, capability: Capability) -> str:
        return INSTEAD[capability]

    # ---- the profile -----------------------------------------------------------------------------
    def profile(self, queue: Served) -> Profile:
        """The declared profile checked against the table (once), with the table's spelling of names."""
        if self._checked is None:
            columns = self.columns(queue)
            checked = self._declared.check(queue.table, columns, unique_keys(queue))
            _check_vocabulary(queue, checked)
            _try_filter(queue, checked.filter)
            self._subtypes = _checked_subtypes(queue, checked)
            self._checked = checked
            self._names_by_lower = {c.name.lower(): c.name for c in columns}
        return self._checked

    def claim_profile(self, queue: Served, order: str) -> Profile:
        return self.profile(queue)  # the profile sets the order

    def subtypes(self, queue: Served) -> tuple[Subtype, ...]:
        """The profile's subtype tables (profile.include), checked against the catalog with it."""
        self.profile(queue)
        return self._subtypes

    def columns(self, queue: Served) -> tuple[Column, ...]:
        return table_columns(queue)

    def domain_columns(self, queue: Served) -> tuple[Column, ...]:
        return _domain(self.profile(queue), self.columns(queue))

    def spelled(self, queue: Served, names: Sequence[str]) -> tuple[str, ...]:
        """``names`` as the table spells them (PostgreSQL folds unquoted names to lower case)."""
        self.profile(queue)
        missing = [n for n in names if n.lower() not in self._names_by_lower]
        if missing:
            raise SchemaError(f"column(s) {', '.join(missing)} are not in table {queue.table}")
        return tuple(self._names_by_lower[n.lower()] for n in names)

    def peeked(self, queue: Served) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns(queue))  # the row as the table holds it

    def identity(self, queue: Served) -> Identity:
        return Identity()  # its key is the table's own: no claim holds runs of it, the sink stages every batch

    def layout(self, queue: Served) -> int:
        raise unsupported(queue.table, self.describe(), Capability.MIGRATE.value, self.instead(Capability.MIGRATE))

    def included(
        self, queue: Served, given: Sequence[str], structs: Mapping[str, Sequence[str]]
    ) -> tuple[Included, ...]:
        return included_columns(queue, given, structs)

    def adoption(self, queue: Served, index: bool = True) -> Adoption | None:
        return Adoption(tuple(adoption_statements(queue)), claim_index(queue) if index else None)

    def staging(self, queue: Served, table: TableName) -> TableName:
        return queue.dialect.sink.staging_beside(table)

    def new_row(self, queue: Served, names: Sequence[str]) -> dict[str, str]:
        return queue.dialect.sink.new_row(self.profile(queue), names)

    def stats(self, queue: Served) -> dict[str, dict[str, Any]]:
        """Rows per status value of the profile (of this stream's filter), oldest None, with how many wait
        for their due time and the milliseconds until the first is due (None where the profile has no due
        time); {} where it has no status."""
        statement = queue.dialect.inspection.adopted_by_status(queue.table, self.profile(queue))
        found: dict[str, dict[str, Any]] = {}
        for value, n, *waits in [] if statement is None else queue.fetch(statement, {}):
            waiting, next_due_ms = waits or (None, None)
            found[_status(value)] = {
                "rows": n,
                "oldest_enqueued_at": None,
                "waiting": waiting,
                "next_due_ms": next_due_ms,
            }
        return found

    def state_lines(self, queue: Served, now: dt.datetime) -> list[str]:
        """Every status value rows have, with how many wait for their due time and when the first is due."""
        p = self.profile(queue)
        if p.status is None:
            return []
        waits = f"  {'waiting for ' + p.due:>24}  first due in" if p.due else ""
        lines = [f"{p.status:14} {'rows':>12}{waits}" + (f"  (rows where {p.filter})" if p.filter else "")]
        for value, found in sorted(self.stats(queue).items()):
            waiting = f"  {found['waiting']:>24,}  {duration(found['next_due_ms'])}" if found["waiting"] else ""
            lines.append(f"{value:14} {found['rows']:>12,}{waiting}")
        return lines

    # ---- ready to serve --------------------------------------------------------------------------
    def require_layout(self, queue: Served) -> None:
        """Refuse, before any row moves, a mapping the table does not fit or a table not adopted yet."""
        self.profile(queue)
        claims = queue.dialect.lifecycle.claims_table(queue.table)
        copied = self._require(queue, claims)
        for subtype in self._subtypes:
            for ours in (
                queue.dialect.lifecycle.claims_table(subtype.table),
                queue.dialect.sink.staging_beside(subtype.table),
            ):
                self._require(queue, ours)
        later = [n for lower, n in self._names_by_lower.items() if lower not in copied]
        if later:
            exact = dict(exact_columns(queue))
            q, t = queue.engine.quote, queue.engine.table(claims)
            adds = "; ".join(f"ALTER TABLE {t} ADD {q(n)} {exact.get(n, '?')} NULL" for n in later)
            raise SchemaError(
                f"column(s) {', '.join(map(repr, later))} of table {queue.table} came after it was adopted, and "
                f"{claims}, where a claim copies every column, has no place for them; add them to it: {adds}"
            )

    def _require(self, queue: Served, ours: TableName) -> set[str]:
        """The columns of sqlqueue's table ``ours`` (lower case), or an error naming the command to make it."""
        rows = queue.fetch(queue.dialect.schema.table_columns(ours), queue.catalog_names(ours))
        if not rows:
            raise SchemaError(
                f"table {queue.table} at {queue.spec.display} is not adopted yet ({ours} is missing): run "
                f"`sqlqueue adopt --queue {queue.table} --profile {self.profile_name}` to review the DDL it "
                "needs, then with --apply"
            )
        return {str(name).lower() for name, *_ in rows}

    # ---- the sink --------------------------------------------------------------------------------
    def writable(self, queue: Served, names: Sequence[str]) -> tuple[Column, ...]:
        """The table's columns receiving a producer's ``names``, checked so that a batch the table would
        refuse fails before anything is written: the key must come with the rows unless the table assigns
        it; a NOT NULL column without default must be given unless the profile fills it; and the lifecycle
        columns a new row leaves to the table must take that (a NULL, or their default)."""
        p = self.profile(queue)
        staging = queue.dialect.sink.staging_beside(queue.table)
        staged = self._require(queue, staging)
        kinds, columns = defaults(queue), self.columns(queue)
        writable = _writable(p, columns, kinds)
        unstaged = [n for n in names if n.lower() not in staged]
        if unstaged and all(n.lower() in {c.name.lower() for c in writable} for n in unstaged):
            raise SchemaError(
                f"column(s) {', '.join(map(repr, unstaged))} of table {queue.table} came after it was adopted, and "
                f"{staging} has no place for them: with the sink's queries stopped, drop {staging} (it "
                "holds only batches Spark has not committed) and run `sqlqueue adopt --apply` again"
            )
        new_row = queue.dialect.sink.new_row(p, names)
        given = {n.lower() for n in names}
        per_row = given | {n for n, kind in kinds.items() if kind in (GENERATED, ASSIGNED)}
        # A key column the profile fills (the retry table's in_process) is the same in every new row: fine beside
        # a key column that tells the rows apart (its identity id).
        filled = {c.lower() for c in new_row} if per_row & {k.lower() for k in p.key} else set()
        for key in p.key:
            if key.lower() not in per_row | filled:
                raise SchemaError(
                    f"column {key!r}, the key of table {queue.table} (profile.key), is missing from the rows and the "
                    "table does not assign it: give it in the rows, one value per row"
                )
        _check_new_row(queue.table, p, columns, new_row, kinds)
        lifecycle = {c.lower() for c in p.lifecycle()}
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
                return f"is generated by table {queue.table}"
            return f"is not in table {queue.table}"

        return picked_columns(names, writable, required, why_not, f"NOT NULL with no default in table {queue.table}")

    # ---- the doctor, and adopting ----------------------------------------------------------------
    def findings(self, queue: Served, order: str) -> list[Finding]:
        """Its profile fits, sqlqueue's claims and staging tables are there, the claim can seek; then what
        only its engine has (triggers, read committed snapshot)."""
        try:
            profile = self.profile(queue)
        except SchemaError as exc:
            return [Finding(PROBLEM, "profile", str(exc))]
        findings = [Finding(OK, "profile", f"the table fits profile {profile.name} (key {', '.join(profile.key)})")]
        try:
            self.require_layout(queue)
            claims, staging = (
                queue.dialect.lifecycle.claims_table(queue.table),
                queue.dialect.sink.staging_beside(queue.table),
            )
            beside = "".join(f", and its subtype table {s.table}'s copies and staging" for s in self._subtypes)
            findings.append(Finding(OK, "adopted", f"sqlqueue's tables {claims} and {staging} are there{beside}"))
        except SchemaError as exc:
            findings.append(Finding(PROBLEM, "adopted", str(exc), tuple(adoption_statements(queue))))
        index = claim_index(queue)
        if index is None:
            findings.append(Finding(OK, "claim index", "an index leads with the claim's first column"))
        else:
            findings.append(
                Finding(
                    PROBLEM,
                    "claim index",
                    "no index leads with the claim's first column: every claim scans the table, and a scan that "
                    "skips locked rows reads past every one of them (blocking and deadlocks on SQL Server)",
                    (index,),
                )
            )
        return findings + list(queue.dialect.doctor.adopted_checks(queue))


def adoption_statements(queue: Served) -> list[str]:
    """The DDL adopting the table needs, nothing on the table: sqlqueue's claims table beside it, and for
    the sink a staging table of the columns a producer may write, and the ledger."""
    exact = exact_columns(queue)
    writable = {c.name.lower() for c in _writable(queue.profile, table_columns(queue), defaults(queue))}
    staged = [(n, t) for n, t in exact if n.lower() in writable]
    beside = []
    for subtype in queue.subtypes():
        # A subtype table's copies and staging take every column of it the sink may write: the key too,
        # which a subtype row takes from its base row.
        columns = exact_columns(queue, subtype.table)
        generated = {n for n, kind in defaults(queue, subtype.table).items() if kind == GENERATED}
        beside += queue.dialect.adoption.create_claims_table(subtype.table, columns, subtype.key)
        sub_staged = [(n, t) for n, t in columns if n.lower() not in generated]
        beside += queue.dialect.sink.create_adopted_staging(subtype.table, sub_staged)
    return [
        *queue.dialect.adoption.create_claims_table(queue.table, exact, queue.profile.key),
        *queue.dialect.sink.create_adopted_staging(queue.table, staged),
        *beside,
        queue.dialect.schema.create_ledger(queue.table),
    ]


def included_columns(queue: Served, given: Sequence[str], structs: Mapping[str, Sequence[str]]) -> tuple[Included, ...]:
    """The subtype tables a sink's struct columns write (``structs``: {struct column: its fields}, each named
    after one of the profile's include tables, case-insensitively), with the columns their fields fill;
    refused in one line: a struct naming no included table, a field the table lacks (or its key, which
    comes from the base row), a NOT NULL column without default no field fills, a key not ``given``."""
    p, subtypes = queue.profile, queue.subtypes()
    by_name = {s.name.lower(): s for s in subtypes}
    tables = ", ".join(s.name for s in subtypes) or "none"
    included = []
    for struct, fields in structs.items():
        subtype = by_name.get(struct.lower())
        if subtype is None:
            raise SchemaError(
                f"struct column {struct!r} names no subtype table of {queue.table} (profile.include: {tables}): "
                "name the struct after the table its rows go to"
            )
        spelled = {c.name.lower(): c for c in subtype.fields}
        generated = {n for n, kind in defaults(queue, subtype.table).items() if kind == GENERATED}
        for field in fields:
            if field.lower() not in spelled or field.lower() in generated:
                raise SchemaError(
                    f"field {field!r} of struct column {struct!r} is not a column table {subtype.table} takes: it "
                    f"takes {', '.join(c.name for c in subtype.fields if c.name.lower() not in generated)} "
                    f"(its key, {', '.join(subtype.key)}, is the base row's)"
                )
        named = {f.lower() for f in fields}
        kinds = defaults(queue, subtype.table)
        for column in subtype.fields:
            if not column.nullable and column.name.lower() not in named | set(kinds):
                raise SchemaError(
                    f"struct column {struct!r} has no field {column.name!r}, which table {subtype.table} holds NOT "
                    "NULL with no default: add it to the struct"
                )
        included.append(Included(subtype, tuple(spelled[f.lower()] for f in fields)))
    missing = [k for k in p.key if k.lower() not in {n.lower() for n in given}]
    if included and missing:
        raise SchemaError(
            f"the rows give no {', '.join(missing)}, the key of table {queue.table}, which a subtype row "
            f"({', '.join(structs)}) takes from its base row: give the key in the rows, one value per row"
        )
    return tuple(included)


def claim_index(queue: Served) -> str | None:
    """An index the claim can seek (on the profile's order, else its key), when no index of the table
    leads with that column: the one change to the user's table sqlqueue proposes, applied only when
    asked for. Filtered to the rows a claim may take where the profile says which (status values,
    else done-at unset), so rows done and kept drop out of it (not where done leaves the status in
    flight, as the retry table's does); it includes what the claim's filter reads.
    SQL Server takes IN and IS NULL in a filter predicate ("Create filtered indexes",
    learn.microsoft.com/sql/relational-databases/indexes/create-filtered-indexes); writers of the
    table then need QUOTED_IDENTIFIER and ANSI_NULLS ON, as for any filtered index."""
    p, q = queue.profile, queue.engine.quote
    columns = [c for c, _ in p.order] or list(p.key)
    leading = {str(first).lower() for _, _, first in queue.facts(queue.dialect.doctor.table_indexes)}
    if columns[0].lower() in leading:
        return None
    where = queue.dialect.claims.claimable(p)
    read = [p.status, p.attempts, p.started, p.claimer, p.due]
    include = [c for c in dict.fromkeys(read) if c is not None and c not in columns]
    key = ", ".join(q(c) for c in columns)
    return queue.engine.create_index_guarded(queue.table, f"ix_{queue.table.name}_sqlqueue_claim", key, include, where)


def _check_new_row(
    table: TableName, p: Profile, columns: Sequence[Column], new_row: Mapping[str, str], kinds: dict[str, int]
) -> None:
    """Refuse a NOT NULL lifecycle column a new row of the profile would leave NULL (Sink.new_row, or no
    default of the table's)."""
    lifecycle = {c.lower() for c in p.lifecycle()}
    for column in columns:
        name = column.name.lower()
        if name not in lifecycle or column.nullable:
            continue
        if new_row.get(column.name) == "NULL":
            raise SchemaError(
                f"column {column.name!r} of table {table} is NOT NULL, but profile {p.name!r} reads NULL "
                "there as ready: map another column, or none (profile.<field> = '')"
            )
        if column.name not in new_row and name not in kinds:
            raise SchemaError(
                f"column {column.name!r} of table {table} is NOT NULL with no default, and a new row of "
                f"profile {p.name!r} leaves it empty: give it a default, or make it nullable"
            )


def _domain(profile: Profile, columns: Sequence[Column]) -> tuple[Column, ...]:
    """The table's ``columns`` but those the lifecycle writes."""
    managed = {c.lower() for c in profile.lifecycle()}
    return tuple(c for c in columns if c.name.lower() not in managed)


def _writable(profile: Profile, columns: Sequence[Column], kinds: dict[str, int]) -> tuple[Column, ...]:
    """The columns a producer may write: the table's ``columns``, but those the lifecycle writes or the
    table generates (identity, computed; ``kinds`` from defaults)."""
    return tuple(c for c in _domain(profile, columns) if kinds.get(c.name.lower()) != GENERATED)


def _check_vocabulary(queue: Served, profile: Profile) -> None:
    """Refuse a status value the table would refuse: one its status column's foreign key does not
    reference, or one a CHECK constraint on that column does not name."""
    if profile.status is None:
        return
    written = (profile.in_flight, profile.done, profile.failed, profile.retry)
    values = [v for v in dict.fromkeys((*profile.ready, *written)) if v is not None]
    names = {**queue.catalog_names(), "column": profile.status}
    for referenced, column in queue.fetch(queue.dialect.adoption.referenced(queue.table), names):
        allowed = {str(v) for (v,) in queue.fetch(queue.engine.compile(f"SELECT {column} FROM {referenced}"), {})}
        refused = [v for v in values if v not in allowed]
        if refused:
            raise SchemaError(
                f"profile {profile.name!r}: status value(s) {', '.join(map(repr, refused))} are not in the "
                f"vocabulary of {queue.table}.{profile.status} (a foreign key to {referenced}); it holds: "
                f"{', '.join(sorted(allowed))}"
            )
    for (text,) in queue.fetch(queue.dialect.adoption.check_constraints(queue.table), names):
        for check in checks_on(str(text), profile.status):
            refused = [v for v in values if f"'{v}'" not in check]
            if refused:
                raise SchemaError(
                    f"profile {profile.name!r}: status value(s) {', '.join(map(repr, refused))} are refused by "
                    f"the CHECK constraint on {queue.table}.{profile.status}: {check}"
                )


def _try_filter(queue: Served, condition: str | None) -> None:
    """Refuse, in one line, a filter that is not one boolean expression (sqlqueue.filters), or that the
    engine refuses on this table (an unknown column, a type clash) in a query that reads no row."""
    if condition is None:
        return
    from ..filters import check_filter, refused  # sqlglot: imported where a filter is set

    check_filter(condition, queue.engine.name)
    try:
        queue.fetch(queue.dialect.adoption.filter_probe(queue.table, condition), {})
    except DatabaseError as error:
        if error.transient:
            raise
        said = str(error).strip().splitlines()[0]
        raise refused(condition, f"the database refuses it on table {queue.table} ({said})") from None


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


def _checked_subtypes(queue: Served, profile: Profile) -> tuple[Subtype, ...]:
    """The profile's subtype tables, each refused in one line unless it exists, has the key's columns, a
    foreign key from them to the key, and holds at most one row per key (they are unique in it)."""
    if not profile.include:
        return ()
    key = ", ".join(profile.key)
    referencing = referencing_tables(queue, profile.key)
    subtypes = []
    for table in profile.subtypes(queue.table):
        rows = queue.fetch(queue.dialect.schema.table_columns(table), queue.catalog_names(table))
        if not rows:
            raise SchemaError(f"profile.include table {table} does not exist at {queue.spec.display}")
        columns = table_columns(queue, table)
        spelled = {c.name.lower(): c.name for c in columns}
        tied = any(
            t.name.lower() == table.name.lower() and (None in (t.schema, table.schema) or t.schema == table.schema)
            for t in referencing
        )
        if not tied or any(k.lower() not in spelled for k in profile.key):
            raise SchemaError(
                f"profile.include table {table} does not reference the key ({key}) of table {queue.table}: give it "
                f"the columns {key} and a foreign key from them to {queue.table} ({key})"
            )
        if not any(
            sorted(c.lower() for c in u) == sorted(k.lower() for k in profile.key) for u in unique_keys(queue, table)
        ):
            raise SchemaError(
                f"profile.include table {table}: its columns {key} are not unique in it, so a row of {queue.table} "
                "could have several of its rows: make them its primary key"
            )
        subtypes.append(Subtype(table, columns, tuple(spelled[k.lower()] for k in profile.key)))
    _refuse_struct_clashes(queue, subtypes)
    return tuple(subtypes)


def _refuse_struct_clashes(queue: Served, subtypes: Sequence[Subtype]) -> None:
    """Each subtype table is a struct column named after it (any case, as Spark's names are): refuse two
    that would share that name, and one named as a column of the queue table."""
    base = {c.name.lower(): c.name for c in table_columns(queue)}
    seen: dict[str, TableName] = {}
    for subtype in subtypes:
        name = subtype.name.lower()
        if name in seen:
            raise SchemaError(
                f"profile.include tables {seen[name]} and {subtype.table} would both be the struct column "
                f"{subtype.name!r}: include one of them"
            )
        if name in base:
            raise SchemaError(
                f"profile.include table {subtype.table} would be the struct column {subtype.name!r}, which is "
                f"already column {base[name]!r} of table {queue.table}: include a view of it under another name"
            )
        seen[name] = subtype.table


def _status(value: Any) -> str:
    """A status value as the profile spells it: a flag's 0 and 1, which drivers return as booleans on
    PostgreSQL and SQL Server."""
    return str(int(value) if isinstance(value, bool) else value)
