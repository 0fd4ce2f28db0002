"""The designs of queue tables sqlqueue adopts as they are (tables teams already run): one registry,
``DESIGNS``, of one ``Design`` record each.

A user testing a pipeline over their own queue table gets a throwaway table of the same design, with
the preset's column names: ``make_queue.adopted("relational", rows=100)``. The project's own tests, its
statement catalog and its fault matrix make and fill theirs from the same records. Rows are inserted the
way the table's own producers would, with plain SQL, in local time (these designs write SYSDATETIME()).
Adding a design is one record.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..queue import Queue


class Types(NamedTuple):
    """The column types the designs use, as one engine spells them."""

    identity: str  # an identity key
    time: str
    text: str
    short: str  # a short string
    integer: str
    flag: str  # a boolean, false by default


TYPES = {
    "sqlite": Types(
        "INTEGER PRIMARY KEY AUTOINCREMENT", "DATETIME", "TEXT", "TEXT", "INTEGER", "INTEGER NOT NULL DEFAULT 0"
    ),
    "postgres": Types(
        "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
        "timestamp(6)",
        "text",
        "varchar(40)",
        "integer",
        "boolean NOT NULL DEFAULT false",
    ),
    # DATETIME2(6): a token read into Python (microseconds) compares equal when sent back.
    "sqlserver": Types(
        "BIGINT IDENTITY(1, 1) PRIMARY KEY",
        "DATETIME2(6)",
        "NVARCHAR(MAX)",
        "NVARCHAR(40)",
        "INT",
        "BIT NOT NULL DEFAULT 0",
    ),
}
LOCAL_NOW = {
    "sqlite": "strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime')",
    "postgres": "LOCALTIMESTAMP",
    "sqlserver": "SYSDATETIME()",
}
# A later time than any statement's own "now": what a touch trigger writes, so the token a claim returns is
# never the one the table holds (the claim's copy must be read back).
LATER = {
    "sqlite": "strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime', '+0.001 seconds')",
    "postgres": "CAST(clock_timestamp() AS timestamp) + INTERVAL '1 millisecond'",
    "sqlserver": "DATEADD(MICROSECOND, 1000, SYSDATETIME())",
}
STATUSES = ("Pending", "Processing", "Error", "Failed", "Completed")


def relational(engine: str, name: str, audit: bool = False, touch: bool = False) -> list[str]:
    """A relational queue: EnqueuedAt is the key (no identity column), the statuses are a vocabulary in a table
    Status references; ``audit``: a trigger records every change of Status in ``<name>_Audit``; ``touch``: a
    trigger rewrites UpdatedAt, the table's optimistic-concurrency token, on every update."""
    t = TYPES[engine]
    statuses = f"{name}_Status"
    values = ", ".join(f"('{s}')" for s in STATUSES)
    statements = [
        f"CREATE TABLE {statuses} (Status {t.short} NOT NULL PRIMARY KEY)",
        f"INSERT INTO {statuses} (Status) VALUES {values}",
        f"""CREATE TABLE {name} (
  EnqueuedAt {t.time} NOT NULL PRIMARY KEY,
  UpdatedAt {t.time} NOT NULL,
  Status {t.short} NOT NULL REFERENCES {statuses} (Status),
  Type {t.short} NOT NULL,
  Step {t.short} NULL,
  AttemptNum {t.integer} NOT NULL DEFAULT 0,
  Response {t.text} NULL,
  Error {t.text} NULL,
  StartedAt {t.time} NULL,
  Duration {t.integer} NULL,
  ScheduledFor {t.time} NOT NULL,
  Payload {t.text} NULL
)""",
    ]
    if touch:
        statements += _touch_trigger(engine, name)
    if audit:
        statements += [f"CREATE TABLE {name}_Audit (EnqueuedAt {t.time} NOT NULL, Status {t.short} NOT NULL)"]
        statements += _audit_trigger(engine, name, f"{name}_Audit")
    return statements


# A relational queue's subtype tables (profile.include): a Notification's Email and ResetPassword rows.
SUBTYPES = ("email", "reset")


def subtypes(engine: str, name: str) -> list[str]:
    """Subtype tables of a relational queue ``name``, keyed by its EnqueuedAt and referencing it: ``<name>_email``
    (Address, Subject) and ``<name>_reset`` (Token, ExpiresAt), as a Notification's Notification_Email and
    Notification_ResetPassword."""
    t = TYPES[engine]
    key = f"EnqueuedAt {t.time} NOT NULL PRIMARY KEY REFERENCES {name} (EnqueuedAt)"
    return [
        f"CREATE TABLE {name}_email ({key}, Address {t.short} NOT NULL, Subject {t.text} NULL)",
        f"CREATE TABLE {name}_reset ({key}, Token {t.short} NOT NULL, ExpiresAt {t.time} NULL)",
    ]


def _touch_trigger(engine: str, table: str) -> list[str]:
    if engine == "postgres":
        return [
            f"CREATE FUNCTION {table}_touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"NEW.UpdatedAt := {LATER[engine]}; RETURN NEW; END $$",
            f"CREATE TRIGGER {table}_touch BEFORE UPDATE ON {table} FOR EACH ROW EXECUTE FUNCTION {table}_touch()",
        ]
    if engine == "sqlite":  # no BEFORE row changes in SQLite: an AFTER trigger rewrites the row (not recursive)
        return [
            f"CREATE TRIGGER {table}_touch AFTER UPDATE ON {table} FOR EACH ROW BEGIN "
            f"UPDATE {table} SET UpdatedAt = {LATER[engine]} WHERE EnqueuedAt = NEW.EnqueuedAt; END"
        ]
    return [
        f"CREATE TRIGGER {table}_touch ON {table} AFTER UPDATE AS "
        f"UPDATE {table} SET UpdatedAt = {LATER[engine]} WHERE EnqueuedAt IN (SELECT EnqueuedAt FROM inserted)"
    ]


def _audit_trigger(engine: str, table: str, audit: str) -> list[str]:
    if engine == "sqlite":
        return [
            f"CREATE TRIGGER {table}_audit AFTER UPDATE OF Status ON {table} "
            f"BEGIN INSERT INTO {audit} VALUES (NEW.EnqueuedAt, NEW.Status); END"
        ]
    if engine == "postgres":
        return [
            f"CREATE FUNCTION {table}_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f'INSERT INTO {audit} VALUES (NEW."enqueuedat", NEW."status"); RETURN NEW; END $$',
            f"CREATE TRIGGER {table}_audit AFTER UPDATE ON {table} FOR EACH ROW EXECUTE FUNCTION {table}_audit()",
        ]
    return [
        f"CREATE TRIGGER {table}_audit ON {table} AFTER UPDATE AS "
        f"INSERT INTO {audit} (EnqueuedAt, Status) SELECT EnqueuedAt, Status FROM inserted"
    ]


def dequeue(engine: str, name: str) -> list[str]:
    """A delete-on-dequeue table: an identity key and a payload; a dequeue deletes the row."""
    t = TYPES[engine]
    return [f"CREATE TABLE {name} (Id {t.identity}, Payload {t.text} NULL)"]


def started_mark(engine: str, name: str) -> list[str]:
    """A started-at mark table: ready while ProcessingStartedAt is NULL; done deletes the row; failures keep Errors."""
    t = TYPES[engine]
    return [
        f"CREATE TABLE {name} (Id {t.identity}, Payload {t.text} NULL, "
        f"ProcessingStartedAt {t.time} NULL, Errors {t.text})"
    ]


def claimer(engine: str, name: str, computed: bool = True, dated: bool = True) -> list[str]:
    """A retry table with a claimer column: an in_process flag in the primary key (in_process, id), who claimed the
    row, its attempts, a scheduled start, and (``dated``) start and end dates whose defaults are now (an end_date
    just after), with (``computed``) the duration computed from them. SQLite gives id alone the key (its automatic
    rowid) and declares (in_process, id) unique instead. Babelfish 4.2 crashes on an OUTPUT of a computed
    column (``computed=False`` there). Undated, a row's end date is NULL until it is done."""
    t = TYPES[engine]
    now = LOCAL_NOW[engine]
    if engine == "sqlite":
        key = f"{t.identity}, "
        end = "strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime', '+0.001 seconds')"
        duration = (
            "INTEGER GENERATED ALWAYS AS (CAST((julianday(end_date) - julianday(start_date)) * 86400000 AS INTEGER))"
        )
        unique = "UNIQUE (in_process, id)"
    elif engine == "postgres":
        key = "bigint GENERATED ALWAYS AS IDENTITY, "
        end = "LOCALTIMESTAMP + interval '1 millisecond'"
        duration = "integer GENERATED ALWAYS AS ((EXTRACT(EPOCH FROM end_date - start_date) * 1000)::integer) STORED"
        unique = "PRIMARY KEY (in_process, id)"
    else:
        key = "BIGINT IDENTITY(1, 1) NOT NULL, "
        end = "DATEADD(MILLISECOND, 1, SYSDATETIME())"
        duration = "AS DATEDIFF(MILLISECOND, start_date, end_date)"
        unique = f"CONSTRAINT pk_{name} PRIMARY KEY CLUSTERED (in_process, id)"
    duration = f"duration_milliseconds {duration}, " if computed else ""
    dates = (f" DEFAULT ({now})", f" DEFAULT ({end})") if dated else ("", "")
    return [
        f"CREATE TABLE {name} (id {key}in_process {t.flag}, scheduled_start_date {t.time} NULL DEFAULT ({now}), "
        f"start_date {t.time} NULL{dates[0]}, end_date {t.time} NULL{dates[1]}, {duration}"
        f"app_server {t.short} NULL, attempts {t.integer} NOT NULL DEFAULT 0, Payload {t.text} NULL, {unique})"
    ]


Values = Callable[[int, str, dt.datetime, dt.datetime, str], tuple[Any, ...]]


@dataclass(frozen=True)
class Design:
    """One design of queue table: the preset that adopts it (its name), how to make it, how its producers
    insert a row, and what a drained table's rows look like when they are not done yet."""

    name: str
    columns: tuple[str, ...]  # as the fullest shape spells them, in order
    make: Callable[..., list[str]]  # (engine, table, **shape) -> its CREATE statements
    produced: str  # the columns its producers insert
    # (number, payload, now, epoch, type) -> a producer's values: EnqueuedAt keys count seconds from epoch
    values: Values
    # A condition on its rows left not done once drained; None: done deletes the row.
    not_done: str | None = None
    given: tuple[str, ...] = ()  # the columns of ``produced`` a writer gives besides the payload
    # The shape the fault matrix makes it in: the harshest envelope it meets.
    harsh: Mapping[str, bool] = field(default_factory=dict)
    payload: str = "Payload"

    @property
    def keeps_done(self) -> bool:
        return self.not_done is not None

    def row(self, n: int, payload: str, now: dt.datetime, epoch: dt.datetime, type_: str = "Sync") -> dict[str, Any]:
        """{column: value} of a producer's row (``produced``)."""
        names = [c.strip() for c in self.produced.split(",")]
        return dict(zip(names, self.values(n, payload, now, epoch, type_), strict=True))


def _due(now: dt.datetime) -> dt.datetime:
    return now - dt.timedelta(minutes=1)


DESIGNS = {
    d.name: d
    for d in (
        Design(
            "relational",
            (
                "EnqueuedAt",
                "UpdatedAt",
                "Status",
                "Type",
                "Step",
                "AttemptNum",
                "Response",
                "Error",
                "StartedAt",
                "Duration",
                "ScheduledFor",
                "Payload",
            ),
            relational,
            "EnqueuedAt, UpdatedAt, Status, Type, ScheduledFor, Payload",
            lambda n, p, now, epoch, type_: (epoch + dt.timedelta(seconds=n), now, "Pending", type_, _due(now), p),
            not_done="Status <> 'Completed'",
            given=("EnqueuedAt", "Type"),  # its key, and a job type it has no default for
            harsh={"audit": True, "touch": True},
        ),
        Design(
            "started-mark",
            ("Id", "Payload", "ProcessingStartedAt", "Errors"),
            started_mark,
            "Payload",
            lambda n, p, now, epoch, type_: (p,),
        ),
        Design(
            "claimer",
            (
                "id",
                "in_process",
                "scheduled_start_date",
                "start_date",
                "end_date",
                "duration_milliseconds",
                "app_server",
                "attempts",
                "Payload",
            ),
            claimer,
            "scheduled_start_date, Payload",
            lambda n, p, now, epoch, type_: (_due(now), p),
            not_done="end_date IS NULL",
            harsh={"computed": False, "dated": False},  # undated: a row's end date says it is done
        ),
        Design("dequeue", ("Id", "Payload"), dequeue, "Payload", lambda n, p, now, epoch, type_: (p,)),
    )
}


def run(queue: Queue, *statements: str) -> None:
    """Statements on the queue's connection, in one transaction."""
    with queue.transaction() as cur:
        for sql in statements:
            cur.execute(sql)


def insert(queue: Queue, columns: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """Rows inserted with parameters, one statement sent many times; SQLite takes times as ISO text."""
    if queue.engine.name == "sqlite":
        rows = [tuple(v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v for v in row) for row in rows]
    marks = ", ".join(queue.engine.marker for _ in columns.split(","))
    with queue.transaction() as cur:
        cur.executemany(f"INSERT INTO {queue.table} ({columns}) VALUES ({marks})", rows)


def fill(queue: Queue, design: str, n: int, start: int = 0, type_: str = "Sync") -> None:
    """``n`` ready rows as the design's producers insert them, payloads ``p<start>`` up. In local time,
    due a minute ago; a relational row's EnqueuedAt, its key, a whole second apart from the others', a day
    ago (Microsoft's driver sends DATETIME2 parameters to Babelfish without their fractional seconds)."""
    now = dt.datetime.now().replace(microsecond=0)
    made = DESIGNS[design]
    epoch = now - dt.timedelta(days=1)
    insert(queue, made.produced, [made.values(i, f"p{i}", now, epoch, type_) for i in range(start, start + n)])
