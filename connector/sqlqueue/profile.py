"""How a table that already exists expresses a queue: its lifecycle, as a value the statements take.

sqlqueue adopts a user's queue table as it is. A profile names the table's own columns and values for
each part of sqlqueue's lifecycle (what ready means, what a claim sets, what done does), so the same
statement builders serve every design. The presets follow the queue table designs teams already run:

- ``relational``: a status column with a vocabulary (Pending, Processing, Error, Failed, Completed),
  attempts, a due time, a started-at that expires abandoned work, duration and an updated-at token
  (a relational queue with a status table);
- ``started-mark``: ready while a started-at mark is NULL; the claim sets it; done deletes (a started-at
  mark table);
- ``claimer``: who claimed the row, when, how many attempts, and a done-at mark (a retry table with a
  claimer column);
- ``dequeue``: the claim deletes the rows it takes, heap, FIFO, LIFO or pending (a delete-on-dequeue table).

Every field can be set over a preset (option ``profile.<field>``). Bookkeeping (which consumer took
which rows under which claim number) never goes on the user's table: the claim statement copies the
rows it takes into sqlqueue's claims table beside it, and a replay reads them from there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace

from .errors import ConfigError, SchemaError
from .identifiers import TableName, check_name
from .schema import CLAIMED, DONE, FAILED, ORDERS, READY, STAGE_TAG, Column

# What each role's column must hold, as portable types (see schema.PORTABLE_TYPES).
TIMES = ("timestamp",)
COUNTS = ("int", "bigint")
TEXTS = ("string", "text")
# A status may be a word (Pending), a flag (a retry table's in_process bit) or a code.
STATUSES = (*TEXTS, "boolean", *COUNTS)
ROLE_TYPES: dict[str, tuple[str, ...]] = {
    "status": STATUSES,
    "attempts": COUNTS,
    "due": TIMES,
    "started": TIMES,
    "claimer": TEXTS,
    "error": TEXTS,
    "response": TEXTS,
    "step": TEXTS,
    "duration": COUNTS,
    "token": TIMES,
    "enqueued": TIMES,
    "done_at": TIMES,
    "group": (*TEXTS, *COUNTS),
}
CLOCKS = ("utc", "local")
DIRECTIONS = ("ASC", "DESC")


@dataclass(frozen=True)
class Profile:
    """A table's lifecycle. Column fields name the table's columns; None means the table has none."""

    name: str
    key: tuple[str, ...]
    # The claim takes the rows out of the table (delete on dequeue) instead of marking them.
    take: bool = False
    status: str | None = None
    ready: tuple[str, ...] = ()
    in_flight: str | None = None
    # The status value done sets; None with no done_at: done deletes the row.
    done: str | None = None
    failed: str | None = None
    # The status value a row an acknowledgement retries takes (a ready value): a relational queue's Error.
    retry: str | None = None
    attempts: str | None = None
    max_attempts: int | None = None
    due: str | None = None
    started: str | None = None
    claimer: str | None = None
    error: str | None = None
    # What an acknowledgement reports besides its outcome: the response of the call a row made (done),
    # and the step of a multi-step job a retry resumes from.
    response: str | None = None
    step: str | None = None
    duration: str | None = None
    token: str | None = None
    enqueued: str | None = None
    done_at: str | None = None
    # One boolean expression on the table's columns that selects this stream's rows (e.g. Type = 'Sync'),
    # read by sqlqueue.filters before any statement holds it.
    filter: str | None = None
    # The column whose value names a row's message group: rows of a group are claimed one claim at a time,
    # in the claim order, and never while another row of the group is in flight (Claims.grouped).
    group: str | None = None
    order: tuple[tuple[str, str], ...] = ()
    # The clock the table's times are written in: SYSDATETIME() and friends are local.
    clock: str = "utc"
    # How long a claim's started-at holds a row before the row counts as abandoned by its claimer
    # (the source's leaseSeconds): after that a claim, ours or the table's own worker's, may take it.
    lease_seconds: int = 300
    # The five fields below are sqlqueue's own layout's only: its rows carry their bookkeeping (and their
    # own maximum attempts), where an adopted table's go in the claims table beside it. None (runs: False)
    # for every adopted table, and no option sets them. The column a claim writes its claim number to (the
    # consumer goes in ``claimer``):
    claim_seq: str | None = None
    # The column a claim writes its lease's end to and done clears. A sweep (rescue_expired) gives rows
    # whose lease ran out back to ready, so a claim takes ready rows only: it stays on the ready index.
    lease: str | None = None
    # The column holding a sink batch's tag on the rows it wrote, until a claim clears it: rows of a
    # batch Spark has yet to commit (the tag listed as unpublished) are not ready.
    tag: str | None = None
    # The column holding a row's own maximum attempts, which overrides the stream's maxAttempts.
    attempts_cap: str | None = None
    # A claim may hold rows as runs of consecutive keys in a claims table beside the table (statements.runs),
    # writing nothing on the rows: those rows stay ready in the table, and every claim passes over the
    # runs. Only rows numbered by an identity that never returns a number can be held so.
    runs: bool = False
    # Subtype tables: tables that extend this one by its key (a Notification's Notification_Email and
    # Notification_ResetPassword rows, keyed by the same EnqueuedAt), each with the key's columns under the
    # same names, referencing it. A claim copies their rows with the base row's; the sink writes them with
    # it. ``include_exclusive``: a row has at most one of them; false: any combination.
    include: tuple[str, ...] = ()
    include_exclusive: bool = True

    def __post_init__(self) -> None:
        if not self.key:
            raise ConfigError(f"profile {self.name!r} names no key column: set option 'profile.key'")
        for name in self.columns():
            check_name(name, "profile column")
        if self.clock not in CLOCKS:
            raise ConfigError(f"option 'profile.clock' = {self.clock!r} is not allowed: use one of {', '.join(CLOCKS)}")
        for column, direction in self.order:
            if direction not in DIRECTIONS:
                raise ConfigError(f"option 'profile.order' has {column} {direction}: use ASC or DESC")
        for name in self.include:
            parts = name.split(".")
            if len(parts) > 2:
                raise ConfigError(f"option 'profile.include' item {name!r} is not allowed: use table or schema.table")
            for part in parts:
                check_name(part, "profile.include table")
        if self.include and (self.take or self.deletes_on_done):
            what = "takes the rows it claims (profile.take)" if self.take else "deletes a row when done"
            raise ConfigError(
                f"option 'profile.include' is not allowed on profile {self.name!r}: it {what}, and a base row cannot "
                "go while subtype rows reference it; use a done transition that keeps the row (profile.done or "
                "profile.done_at)"
            )
        if self.take:
            return
        if self.status is not None and (not self.ready or self.in_flight is None):
            raise ConfigError(
                f"profile {self.name!r} has status column {self.status!r} but no ready values or in-flight value: "
                "set options 'profile.ready' and 'profile.in_flight'"
            )
        if self.status is None and self.started is None:
            raise ConfigError(
                f"profile {self.name!r} marks claimed rows with nothing: set 'profile.status' or 'profile.started'"
            )
        if self.done is not None and self.status is None:
            raise ConfigError(f"profile {self.name!r} has a done value {self.done!r} but no status column")
        taken = [v for v in (self.in_flight, self.done, self.failed) if v is not None and v in self.ready]
        if taken:
            raise ConfigError(
                f"profile {self.name!r}: status value(s) {', '.join(map(repr, taken))} are also ready values "
                f"({', '.join(self.ready)}): a claimed, done or failed row would be claimed again"
            )

    @property
    def ranking(self) -> tuple[tuple[str, str], ...]:
        """The order rows are ranked and read in: the claim order, else the key's (a claim in no order)."""
        return self.order or tuple((k, "ASC") for k in self.key)

    @property
    def deletes_on_done(self) -> bool:
        return not self.take and self.done is None and self.done_at is None

    def subtypes(self, table: TableName) -> tuple[TableName, ...]:
        """The tables ``include`` names, an unqualified one in ``table``'s schema."""
        named = (TableName.parse(name) for name in self.include)
        return tuple(t if t.schema is not None else TableName(t.name, table.schema) for t in named)

    def deleting(self) -> Profile:
        """This profile with done deleting the row (sqlqueue's own layout's completion=delete)."""
        return replace(self, done=None, done_at=None)

    @property
    def expires(self) -> bool:
        """Whether a claim's hold on a row runs out (a lease): sqlqueue's own layout's lease column, or an
        adopted table's started-at, after which a claim, ours or the table's own worker's, takes the row
        back (Claims.ready). Such holds are renewed while a stream holds them (Consumer's heartbeat)."""
        if self.lease is not None:
            return True
        return not self.take and self.started is not None and (self.status is not None or self.claimer is not None)

    @property
    def guard(self) -> str | None:
        """The column whose value, as the claim left it, shows the row is still ours at completion.

        The token first: the table's own workers check it too (optimistic concurrency), so any write
        of theirs changes it. Else the started-at the claim set, else who claimed the row."""
        return self.token or self.started or self.claimer

    def roles(self) -> dict[str, str]:
        """{role: column} for every role this profile maps."""
        return {role: getattr(self, role) for role in ROLE_TYPES if getattr(self, role) is not None}

    def columns(self) -> list[str]:
        """Every column the profile names, once."""
        named = [*self.key, *self.roles().values(), *(c for c, _ in self.order)]
        return list(dict.fromkeys(named))

    def lifecycle(self) -> set[str]:
        """The columns the lifecycle writes (a source shows the others by default)."""
        managed = ("status", "attempts", "started", "claimer", "error", "duration", "token", "done_at")
        return {getattr(self, r) for r in managed if getattr(self, r) is not None}

    def check(self, table: TableName, columns: Sequence[Column], unique_keys: Sequence[Sequence[str]]) -> Profile:
        """This profile with the table's spelling of each column, or one error naming what does not fit:
        a missing column, a column of the wrong type, a key that is not unique."""
        by_name = {c.name.lower(): c for c in columns}

        def found(name: str, role: str) -> Column:
            column = by_name.get(name.lower())
            if column is None:
                raise SchemaError(
                    f"profile {self.name!r}: {role} column {name!r} is not in table {table}; "
                    f"its columns are: {', '.join(c.name for c in columns)}"
                )
            return column

        spelled: dict[str, object] = {}
        for role, name in self.roles().items():
            column = found(name, role)
            if column.type not in ROLE_TYPES[role]:
                raise SchemaError(
                    f"profile {self.name!r}: {role} column {column.name!r} of table {table} is {column.type}; "
                    f"its {role} column must be {' or '.join(ROLE_TYPES[role])}"
                )
            spelled[role] = column.name
        key = tuple(found(name, "key").name for name in self.key)
        if not any({k.lower() for k in key} == {c.lower() for c in unique} for unique in unique_keys):
            raise SchemaError(
                f"profile {self.name!r}: key ({', '.join(key)}) of table {table} is not unique: name the columns "
                "of its primary key or of a unique index in option 'profile.key'"
            )
        order = tuple((found(c, "order").name, d) for c, d in self.order)
        return replace(self, key=key, order=order, **spelled)  # type: ignore[arg-type]


PRESETS: dict[str, Profile] = {
    "relational": Profile(
        "relational",
        key=("EnqueuedAt",),
        status="Status",
        ready=("Pending", "Error"),
        in_flight="Processing",
        done="Completed",
        failed="Failed",
        retry="Error",
        attempts="AttemptNum",
        max_attempts=3,
        due="ScheduledFor",
        started="StartedAt",
        error="Error",
        response="Response",
        step="Step",
        duration="Duration",
        token="UpdatedAt",
        enqueued="EnqueuedAt",
        order=(("ScheduledFor", "ASC"), ("EnqueuedAt", "ASC")),
        clock="local",
    ),
    "started-mark": Profile("started-mark", key=("Id",), started="ProcessingStartedAt", error="Errors"),
    # The retry table with a claimer column: in_process 0 is ready and 1 in flight; an end_date on a row in flight is
    # done. Its primary key is (in_process, id), so that is the key (id alone is not declared unique).
    "claimer": Profile(
        "claimer",
        key=("in_process", "id"),
        status="in_process",
        ready=("0",),
        in_flight="1",
        claimer="app_server",
        attempts="attempts",
        max_attempts=3,
        due="scheduled_start_date",
        started="start_date",
        done_at="end_date",
        order=(("id", "ASC"),),
        clock="local",
    ),
    "dequeue": Profile("dequeue", key=("Id",), take=True, order=(("Id", "ASC"),)),
}

# sqlqueue's own layout (schema.LIFECYCLE), as a profile: a table `sqlqueue create` made. Its claims
# are held on the rows themselves, and its stream options set what done does and the claim order.
NATIVE = Profile(
    "native",
    key=("id",),
    status="state",
    ready=(READY,),
    in_flight=CLAIMED,
    done=DONE,
    failed=FAILED,
    retry=READY,
    attempts="attempts",
    due="due_at",
    started="claimed_at",
    claimer="consumer",
    error="last_error",
    enqueued="enqueued_at",
    done_at="completed_at",
    claim_seq="claim_seq",
    lease="lease_until",
    tag=STAGE_TAG.name,
    attempts_cap="max_attempts",
    runs=True,
)


def native(order: str) -> Profile:
    """sqlqueue's own layout claimed in one of its claim orders (schema.ORDERS), which the stream sets."""
    return replace(NATIVE, order=ORDERS[order])


# Option names (after 'profile.') and how each is read.
_TUPLES = {"key", "ready", "include"}
_INTS = {"max_attempts", "lease_seconds"}
_BOOLS = {"take", "include_exclusive"}
# What no option sets: the profile's name, and the roles only sqlqueue's own layout has.
_OWN = ("name", "claim_seq", "lease", "tag", "attempts_cap", "runs")
_FIELDS = [f.name for f in fields(Profile) if f.name not in _OWN]


def _order(text: str) -> tuple[tuple[str, str], ...]:
    """ "ScheduledFor, EnqueuedAt DESC" -> (("ScheduledFor", "ASC"), ("EnqueuedAt", "DESC"))."""
    items = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        words = part.split()
        if len(words) > 2:
            raise ConfigError(f"option 'profile.order' item {part!r} is not allowed: use 'column [ASC|DESC]'")
        items.append((words[0], words[1].upper() if len(words) == 2 else "ASC"))
    return tuple(items)


def _value(field: str, text: str) -> object:
    text = str(text).strip()
    if field == "order":
        return _order(text)
    if field in _TUPLES:
        return tuple(filter(None, (p.strip() for p in text.split(","))))
    if field in _INTS:
        if not text.isdigit() or int(text) < 1:
            raise ConfigError(f"option 'profile.{field}' = {text!r} is not allowed: a whole number from 1")
        return int(text)
    if field in _BOOLS:
        if text.lower() not in ("true", "false"):
            raise ConfigError(f"option 'profile.{field}' = {text!r} is not allowed: true or false")
        return text.lower() == "true"
    return text or None


def profile_from(preset: str, settings: Mapping[str, str]) -> Profile:
    """A preset with ``settings`` ({field: text}, e.g. {"key": "Id", "done": "Completed"}) set over it."""
    base = PRESETS.get(preset.lower())
    if base is None:
        raise ConfigError(f"option 'profile' = {preset!r} is not allowed: use one of {', '.join(PRESETS)}")
    unknown = set(settings) - set(_FIELDS)
    if unknown:
        raise ConfigError(
            f"unknown option(s) {', '.join(f'profile.{u}' for u in sorted(unknown))}; "
            f"a profile takes: {', '.join(f'profile.{f}' for f in _FIELDS)}"
        )
    return replace(base, **{field: _value(field, text) for field, text in settings.items()})  # type: ignore[arg-type]


# What a column's name suggests it holds, by role: the first column of the right type whose lowercased
# name (underscores dropped) matches wins. Names from the designs above, Hangfire, Rebus and common ORMs.
_SUGGESTIONS = {
    "status": ("status", "state", "inprocess"),
    "attempts": ("attemptnum", "attempts", "attempt", "retries", "retrycount", "dequeuecount"),
    "due": ("scheduledfor", "scheduledstartdate", "dueat", "duetime", "visibleafter", "runat", "notbefore"),
    "started": ("startedat", "processingstartedat", "startdate", "claimedat", "lockedat", "fetchedat"),
    "claimer": ("appserver", "claimedby", "lockedby", "worker", "owner"),
    "token": ("updatedat", "modifiedat", "lastmodified"),
    "enqueued": ("enqueuedat", "createdat", "insertedat", "queuedat"),
    "done_at": ("enddate", "completedat", "finishedat", "doneat"),
    "error": ("error", "errors", "lasterror", "exception"),
    "response": ("response", "result", "webresponse"),
    "step": ("step", "queuestep", "currentstep"),
    "duration": ("duration", "durationms"),
}


def propose(columns: Sequence[Column], unique_keys: Sequence[Sequence[str]]) -> Profile:
    """A profile for a table, read from its columns' names and types: the design its lifecycle columns
    suggest (a claimer, with no status or a flag for one: claimer; a status: relational; a started-at
    alone: started-mark; none: dequeue), keyed by the first of ``unique_keys``: the primary key, where
    there is one (Engine.unique_keys_sql lists it first). A proposal to review, not a verdict."""
    found: dict[str, str] = {}
    types = {c.name: c.type for c in columns}
    for role, names in _SUGGESTIONS.items():
        for column in columns:
            if column.name.lower().replace("_", "") in names and column.type in ROLE_TYPES[role]:
                found[role] = column.name
                break
    if not unique_keys:
        raise SchemaError("the table has no primary key or unique index: sqlqueue needs a unique key to adopt it")
    key = tuple(unique_keys[0])
    flag = "status" in found and types[found["status"]] == "boolean"  # a retry table's in_process
    preset = (
        "claimer"
        if "claimer" in found and ("status" not in found or flag)
        else "relational"
        if "status" in found
        else "started-mark"
        if "started" in found
        else "dequeue"
    )
    base = PRESETS[preset]
    order = tuple((c, "ASC") for c in (found.get("due"), *key) if c is not None)
    mapped = {role: found.get(role) for role in ROLE_TYPES}
    return replace(base, key=key, order=order, **mapped)  # type: ignore[arg-type]


def _text(field: str, value: object) -> str:
    """A field's value as its option takes it; "" unsets a preset's column."""
    if value is None:
        return ""
    if field == "order":
        return ", ".join(f"{c} {d}" for c, d in value)  # type: ignore[attr-defined]
    if isinstance(value, tuple):
        return ", ".join(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def settings_of(profile: Profile) -> dict[str, str]:
    """The profile written out as options, for a person to review: its preset, every field it sets, and
    an empty value for each column of the preset the profile does without."""
    base = PRESETS[profile.name]
    values = {"profile": profile.name}
    for f in _FIELDS:
        value = getattr(profile, f)
        if f == "include_exclusive" and not profile.include:
            continue
        if value not in (None, (), False) or value != getattr(base, f):
            values[f"profile.{f}"] = _text(f, value)
    return values


# What each profile.<field> option means, for the options reference.
@dataclass(frozen=True)
class FieldDoc:
    """What a profile field means, the type of its value, and an example (the reference shows them)."""

    doc: str
    kind: str
    example: str


FIELD_DOCS = {
    "key": FieldDoc(
        "The table's unique key, comma-separated (its primary key or a unique index; need not be an identity).",
        "column names, comma-separated",
        "EnqueuedAt",
    ),
    "take": FieldDoc(
        "true: the claim deletes the rows it takes (dequeue), keeping them in the claims table until done.",
        "true or false",
        "true",
    ),
    "status": FieldDoc(
        "The status column.",
        "column name",
        "Status",
    ),
    "ready": FieldDoc(
        "Status values that mean ready, comma-separated (e.g. Pending, Error).",
        "status values, comma-separated",
        "Pending, Error",
    ),
    "in_flight": FieldDoc(
        "The status value a claim sets (e.g. Processing).",
        "status value",
        "Processing",
    ),
    "done": FieldDoc(
        "The status value done sets (e.g. Completed); unset with no done_at: done deletes the row.",
        "status value",
        "Completed",
    ),
    "failed": FieldDoc(
        "The terminal status of rows out of attempts whose claimer's lease ran out, or acknowledged failed (e.g. "
        "Failed).",
        "status value",
        "Failed",
    ),
    "retry": FieldDoc(
        "The status value a row acknowledged for retry takes, one of the ready values (e.g. Error).",
        "status value",
        "Error",
    ),
    "attempts": FieldDoc(
        "The attempts column, incremented by each claim.",
        "column name",
        "AttemptNum",
    ),
    "max_attempts": FieldDoc(
        "Rows with this many attempts are not claimed again.",
        "whole number, at least 1",
        "3",
    ),
    "due": FieldDoc(
        "A time column: rows are claimed once it has passed (e.g. ScheduledFor).",
        "column name",
        "ScheduledFor",
    ),
    "started": FieldDoc(
        "A time column the claim sets; past the lease it marks an abandoned row (e.g. StartedAt).",
        "column name",
        "StartedAt",
    ),
    "claimer": FieldDoc(
        "A column the claim sets to the consumer's id (e.g. app_server).",
        "column name",
        "app_server",
    ),
    "error": FieldDoc(
        "The column a failure's error text goes to.",
        "column name",
        "Error",
    ),
    "response": FieldDoc(
        "The column an acknowledgement's response text goes to (done).",
        "column name",
        "Response",
    ),
    "step": FieldDoc(
        "The column holding a multi-step job's step: an acknowledgement that names a step writes it.",
        "column name",
        "Step",
    ),
    "duration": FieldDoc(
        "A column done sets to the milliseconds since started.",
        "column name",
        "Duration",
    ),
    "token": FieldDoc(
        "The optimistic-concurrency column (e.g. UpdatedAt): every transition sets it, and completion touches a row "
        "only while it holds what the claim wrote.",
        "column name",
        "UpdatedAt",
    ),
    "enqueued": FieldDoc(
        "When a row was enqueued, for queue-wait figures.",
        "column name",
        "EnqueuedAt",
    ),
    "done_at": FieldDoc(
        "A time column done sets; rows where it is set are not claimed.",
        "column name",
        "end_date",
    ),
    "filter": FieldDoc(
        "One boolean expression on the table's columns, in its engine's SQL, selecting this stream's rows (e.g. Type ="
        " 'Sync'): no ';', comment, parameter or statement, no parenthesis it does not open and close, no subquery "
        "that writes. Checked against the table before any row moves.",
        "a boolean SQL expression",
        "Type = 'Sync'",
    ),
    "group": FieldDoc(
        "The column naming each row's message group: rows of a group are processed in the claim order, one claim at a"
        " time, and never while another row of the group is in flight or waits for a retry; different groups go in "
        "parallel (the source's option groupBy sets it too).",
        "a column name",
        "CustomerId",
    ),
    "order": FieldDoc(
        "Claim order, e.g. 'ScheduledFor, EnqueuedAt' (ASC or DESC per column); empty: any order.",
        "columns with ASC or DESC, comma-separated",
        "ScheduledFor, EnqueuedAt",
    ),
    "clock": FieldDoc(
        "utc or local: the time zone the table's times are written in (SYSDATETIME() is local).",
        "one of utc, local",
        "local",
    ),
    "lease_seconds": FieldDoc(
        "How long a claim's started-at holds a row before it counts as abandoned.",
        "whole number (seconds)",
        "600",
    ),
    "include": FieldDoc(
        "Subtype tables, comma-separated (schema-qualified allowed; unqualified: the table's schema): tables that "
        "extend the table by its key, each with the key's columns under the same names, a foreign key from them to it,"
        " and unique. The source returns each as a struct column named after it (its other columns; NULL where a row "
        "has none); the sink writes a struct column of that name into it, published with the base row.",
        "table names, comma-separated",
        "dbo.Notification_Email, dbo.Notification_ResetPassword",
    ),
    "include_exclusive": FieldDoc(
        "true (default): a row has at most one of its profile.include tables' rows; false: any combination.",
        "true or false",
        "false",
    ),
}
PROFILE_FIELDS = tuple(_FIELDS)
