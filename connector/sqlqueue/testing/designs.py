"""Tables of the designs sqlqueue adopts as they are (queue tables teams already run), made for tests.

A user testing a pipeline over their own queue table gets a throwaway table of the same design, with
the preset's column names: ``make_queue.adopted("relational", rows=100)``. The project's own tests
make theirs here too. Rows are inserted the way the table's own producers would, with plain SQL, in
local time (these designs write SYSDATETIME()).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from ..queue import Queue

# engine -> (identity key, timestamp, text, short string, int)
TYPES = {
    "sqlite": ("INTEGER PRIMARY KEY AUTOINCREMENT", "DATETIME", "TEXT", "TEXT", "INTEGER"),
    "postgres": ("bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "timestamp(6)", "text", "varchar(40)", "integer"),
    # DATETIME2(6): a token read into Python (microseconds) compares equal when sent back.
    "sqlserver": ("BIGINT IDENTITY(1, 1) PRIMARY KEY", "DATETIME2(6)", "NVARCHAR(MAX)", "NVARCHAR(40)", "INT"),
}
LOCAL_NOW = {
    "sqlite": "strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime')",
    "postgres": "LOCALTIMESTAMP",
    "sqlserver": "SYSDATETIME()",
}
STATUSES = ("Pending", "Processing", "Error", "Failed", "Completed")


def relational(engine: str, name: str, audit: bool = False) -> list[str]:
    """A relational queue: EnqueuedAt is the key (no identity column), the statuses are a vocabulary in a table
    Status references; ``audit``: a trigger records every change of Status in ``<name>_Audit``."""
    _, ts, text, string, integer = TYPES[engine]
    statuses = f"{name}_Status"
    values = ", ".join(f"('{s}')" for s in STATUSES)
    statements = [
        f"CREATE TABLE {statuses} (Status {string} NOT NULL PRIMARY KEY)",
        f"INSERT INTO {statuses} (Status) VALUES {values}",
        f"""CREATE TABLE {name} (
  EnqueuedAt {ts} NOT NULL PRIMARY KEY,
  UpdatedAt {ts} NOT NULL,
  Status {string} NOT NULL REFERENCES {statuses} (Status),
  Type {string} NOT NULL,
  Step {string} NULL,
  AttemptNum {integer} NOT NULL DEFAULT 0,
  Response {text} NULL,
  Error {text} NULL,
  StartedAt {ts} NULL,
  Duration {integer} NULL,
  ScheduledFor {ts} NOT NULL,
  Payload {text} NULL
)""",
    ]
    if audit:
        statements += [f"CREATE TABLE {name}_Audit (EnqueuedAt {ts} NOT NULL, Status {string} NOT NULL)"]
        statements += _audit_trigger(engine, name, f"{name}_Audit")
    return statements


# A relational queue's subtype tables (profile.include): a Notification's Email and ResetPassword rows.
SUBTYPES = ("email", "reset")


def subtypes(engine: str, name: str) -> list[str]:
    """Subtype tables of a relational queue ``name``, keyed by its EnqueuedAt and referencing it: ``<name>_email``
    (Address, Subject) and ``<name>_reset`` (Token, ExpiresAt), as a Notification's Notification_Email and
    Notification_ResetPassword."""
    _, ts, text, string, _ = TYPES[engine]
    key = f"EnqueuedAt {ts} NOT NULL PRIMARY KEY REFERENCES {name} (EnqueuedAt)"
    return [
        f"CREATE TABLE {name}_email ({key}, Address {string} NOT NULL, Subject {text} NULL)",
        f"CREATE TABLE {name}_reset ({key}, Token {string} NOT NULL, ExpiresAt {ts} NULL)",
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
    identity, _, text, _, _ = TYPES[engine]
    return [f"CREATE TABLE {name} (Id {identity}, Payload {text} NULL)"]


def started_mark(engine: str, name: str) -> list[str]:
    """A started-at mark table: ready while ProcessingStartedAt is NULL; done deletes the row; failures keep Errors."""
    identity, ts, text, _, _ = TYPES[engine]
    return [f"CREATE TABLE {name} (Id {identity}, Payload {text} NULL, ProcessingStartedAt {ts} NULL, Errors {text})"]


def claimer(engine: str, name: str, computed: bool = True) -> list[str]:
    """A retry table with a claimer column: an in_process flag in the primary key (in_process, id), who claimed the
    row, its attempts, a scheduled start, and start and end dates whose defaults are now (an end_date
    just after), with the duration computed from them. SQLite gives id alone the key (its automatic
    rowid) and declares (in_process, id) unique instead. ``computed=False`` leaves the duration out
    (Babelfish 4.2 crashes on an OUTPUT of a computed column)."""
    identity, ts, text, string, _ = TYPES[engine]
    now = LOCAL_NOW[engine]
    if engine == "sqlite":
        flag, key = "INTEGER NOT NULL DEFAULT 0", f"{identity}, "
        end = "strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime', '+0.001 seconds')"
        duration = (
            "INTEGER GENERATED ALWAYS AS (CAST((julianday(end_date) - julianday(start_date)) * 86400000 AS INTEGER))"
        )
        unique = "UNIQUE (in_process, id)"
    elif engine == "postgres":
        flag, key = "boolean NOT NULL DEFAULT false", "bigint GENERATED ALWAYS AS IDENTITY, "
        end = "LOCALTIMESTAMP + interval '1 millisecond'"
        duration = "integer GENERATED ALWAYS AS ((EXTRACT(EPOCH FROM end_date - start_date) * 1000)::integer) STORED"
        unique = "PRIMARY KEY (in_process, id)"
    else:
        flag, key = "BIT NOT NULL DEFAULT 0", "BIGINT IDENTITY(1, 1) NOT NULL, "
        end = "DATEADD(MILLISECOND, 1, SYSDATETIME())"
        duration = "AS DATEDIFF(MILLISECOND, start_date, end_date)"
        unique = f"CONSTRAINT pk_{name} PRIMARY KEY CLUSTERED (in_process, id)"
    duration = f"duration_milliseconds {duration}, " if computed else ""
    return [
        f"CREATE TABLE {name} (id {key}in_process {flag}, scheduled_start_date {ts} NULL DEFAULT ({now}), "
        f"start_date {ts} NULL DEFAULT ({now}), end_date {ts} NULL DEFAULT ({end}), {duration}"
        f"app_server {string} NULL, attempts {TYPES[engine][4]} NOT NULL DEFAULT 0, Payload {text} NULL, {unique})"
    ]


DESIGNS = {"relational": relational, "started-mark": started_mark, "claimer": claimer, "dequeue": dequeue}


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
    due a minute ago; a relational row's EnqueuedAt, its key, a whole second apart from the others'
    (Microsoft's driver sends DATETIME2 parameters to Babelfish without their fractional seconds)."""
    now = dt.datetime.now().replace(microsecond=0)
    day_ago, due = now - dt.timedelta(days=1), now - dt.timedelta(minutes=1)
    numbers = range(start, start + n)
    if design == "relational":
        columns = "EnqueuedAt, UpdatedAt, Status, Type, ScheduledFor, Payload"
        insert(
            queue, columns, [(day_ago + dt.timedelta(seconds=i), now, "Pending", type_, due, f"p{i}") for i in numbers]
        )
    elif design == "claimer":
        insert(queue, "scheduled_start_date, Payload", [(due, f"p{i}") for i in numbers])
    else:
        insert(queue, "Payload", [(f"p{i}",) for i in numbers])
