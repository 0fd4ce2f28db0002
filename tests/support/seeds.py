"""Queue tables as users already have them (the designs in shared/seeds), made on each engine.

Each maker creates a table of one design under a fresh name and returns an ``AdoptedQueue`` for it
with the matching preset, its key set to the table's key. Rows are inserted the way the table's own
producers would, with plain SQL.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import replace

from sqlqueue.adoption import AdoptedQueue
from sqlqueue.identifiers import TableName
from sqlqueue.profile import PRESETS, Profile
from tests.support.engines import Engine, fresh_name

# name -> (identity key, timestamp, text, string, int) per engine
TYPES = {
    "sqlite": ("INTEGER PRIMARY KEY AUTOINCREMENT", "DATETIME", "TEXT", "TEXT", "INTEGER"),
    "postgres": ("bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "timestamp(6)", "text", "varchar(40)", "integer"),
    # DATETIME2(6): a token read into Python (microseconds) compares equal when sent back.
    "sqlserver": ("BIGINT IDENTITY(1, 1) PRIMARY KEY", "DATETIME2(6)", "NVARCHAR(MAX)", "NVARCHAR(40)", "INT"),
}
NOW = {
    "sqlite": "strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime')",
    "postgres": "LOCALTIMESTAMP",
    "sqlserver": "SYSDATETIME()",
}


def run(queue: AdoptedQueue, *statements: str) -> None:
    with queue.transaction() as cur:
        for sql in statements:
            cur.execute(sql)


def _queue(engine: Engine, table: str, profile: Profile, keep_order: bool = False) -> AdoptedQueue:
    """Babelfish cannot UPDATE or DELETE through a CTE (the ordered claims): there the profile claims in
    no order unless the order is the test's subject, as the engine's own tests do (tests/support/engines.py)."""
    if engine.babelfish and not keep_order:
        profile = replace(profile, order=())
    queue = AdoptedQueue(engine.connection(), TableName.parse(table), profile)
    engine.created.append(queue)
    return queue


def relational(
    engine: Engine, keep_order: bool = False, adopt: bool = True, audit: bool = True, **settings: object
) -> AdoptedQueue:
    """A seed-004 queue: EnqueuedAt is its key (no identity column), its statuses are a vocabulary in a
    table its Status references, and (``audit``) a trigger records every change of Status."""
    _, ts, text, string, integer = TYPES[engine.name]
    name = fresh_name("syncqueue")
    statuses = f"{name}_Status"
    statements = [
        f"CREATE TABLE {statuses} (Status {string} NOT NULL PRIMARY KEY)",
        f"INSERT INTO {statuses} (Status) VALUES ('Pending'), ('Processing'), ('Error'), ('Failed'), ('Completed')",
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
        statements += [
            f"CREATE TABLE {name}_Audit (EnqueuedAt {ts} NOT NULL, Status {string} NOT NULL)",
            *_audit_trigger(engine.name, name, f"{name}_Audit"),
        ]
    queue = _queue(engine, name, replace(PRESETS["relational"], **settings), keep_order)  # type: ignore[arg-type]
    run(queue, *statements)
    if adopt:
        queue.adopt()
    return queue


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


def enqueue_relational(queue: AdoptedQueue, engine: str, n: int, type_: str = "Sync", start: int = 0) -> None:
    """``n`` Pending rows as the table's producers insert them, in local time (the seed's SYSDATETIME()),
    due a minute ago. Each row's EnqueuedAt, its key, is a whole second apart from the others': Microsoft's
    driver sends DATETIME2 parameters to Babelfish without their fractional seconds."""
    now = dt.datetime.now().replace(microsecond=0)
    day_ago, due = now - dt.timedelta(days=1), now - dt.timedelta(minutes=1)
    rows = [(day_ago + dt.timedelta(seconds=start + i), now, "Pending", type_, due, f"p{start + i}") for i in range(n)]
    columns = "EnqueuedAt, UpdatedAt, Status, Type, ScheduledFor, Payload"
    _insert(queue, engine, columns, rows)


def _insert(queue: AdoptedQueue, engine: str, columns: str, rows: list[tuple]) -> None:
    """Rows inserted with parameters, one statement sent many times; SQLite takes times as ISO text."""
    if engine == "sqlite":
        rows = [tuple(v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v for v in row) for row in rows]
    marks = ", ".join(queue.dialect.marker for _ in columns.split(","))
    with queue.transaction() as cur:
        cur.executemany(f"INSERT INTO {queue.table} ({columns}) VALUES ({marks})", rows)


def _plus_ms(engine: str, now: str, ms: int) -> str:
    if engine == "sqlite":
        return f"strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime', '{ms / 1000:+.3f} seconds')"
    if engine == "postgres":
        return f"{now} + INTERVAL '{ms} milliseconds'"
    return f"DATEADD(MILLISECOND, {ms}, {now})"


def dequeue(engine: Engine) -> AdoptedQueue:
    """A seed-000 FIFO queue: an identity key and a payload; a dequeue deletes the row."""
    identity, _, text, _, _ = TYPES[engine.name]
    name = fresh_name("fifoqueue")
    queue = _queue(engine, name, PRESETS["dequeue"])
    run(queue, f"CREATE TABLE {name} (Id {identity}, Payload {text} NULL)")
    queue.adopt()
    return queue


def started_mark(engine: Engine) -> AdoptedQueue:
    """A seed-002 queue: ready while ProcessingStartedAt is NULL; done deletes the row."""
    identity, ts, text, _, _ = TYPES[engine.name]
    name = fresh_name("simplequeue")
    queue = _queue(engine, name, replace(PRESETS["started-mark"], clock="local"))
    run(
        queue, f"CREATE TABLE {name} (Id {identity}, Payload {text} NULL, ProcessingStartedAt {ts} NULL, Errors {text})"
    )
    queue.adopt()
    return queue


def insert_payloads(queue: AdoptedQueue, engine: str, n: int) -> None:
    _insert(queue, engine, "Payload", [(f"p{i}",) for i in range(n)])


class SeedWorker:
    """The table's own worker, written the way seed 004's procedures work: ``Next_`` claims one row
    (skipping locked ones) and returns its key and UpdatedAt; ``Modify_`` completes it only while
    UpdatedAt still holds that token (optimistic concurrency), else the update is rejected."""

    def __init__(self, queue: AdoptedQueue, engine: str) -> None:
        self.queue = AdoptedQueue(queue.spec, queue.table, queue.declared)  # a connection of its own
        self.engine = engine
        self.done: list[str] = []  # the payloads of the rows it completed
        self.rejected = 0

    def next_(self) -> tuple[object, object, str] | None:
        """The seed's Next_: in one transaction, pick the next row skipping locked ones (UPDLOCK, ROWLOCK,
        READPAST on SQL Server; FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite's one writer), claim it by its
        key, then read its key, token and payload back."""
        t, now, mark = self.queue.table, NOW[self.engine], self.queue.dialect.marker
        ready = f"Status IN ('Pending', 'Error') AND ScheduledFor <= {now} AND AttemptNum < 3"
        pick = {
            "sqlserver": f"SELECT TOP (1) EnqueuedAt FROM {t} WITH (UPDLOCK, ROWLOCK, READPAST) WHERE {ready} "
            "ORDER BY ScheduledFor",
            "postgres": f"SELECT EnqueuedAt FROM {t} WHERE {ready} ORDER BY ScheduledFor LIMIT 1 "
            "FOR UPDATE SKIP LOCKED",
            "sqlite": f"SELECT EnqueuedAt FROM {t} WHERE {ready} ORDER BY ScheduledFor LIMIT 1",
        }[self.engine]
        with self.queue.transaction() as cur:
            picked = cur.execute(pick).fetchall()
            if not picked:
                return None
            key = picked[0][0]
            cur.execute(
                f"UPDATE {t} SET Status = 'Processing', UpdatedAt = {now}, StartedAt = {now}, "
                f"AttemptNum = AttemptNum + 1 WHERE EnqueuedAt = {mark}",
                (key,),
            )
            row = cur.execute(f"SELECT EnqueuedAt, UpdatedAt, Payload FROM {t} WHERE EnqueuedAt = {mark}", (key,))
            return tuple(row.fetchall()[0])  # type: ignore[return-value]

    def modify(self, key: object, token: object, payload: str) -> None:
        now = NOW[self.engine]
        marker = self.queue.dialect.marker
        with self.queue.transaction() as cur:
            cur.execute(
                f"UPDATE {self.queue.table} SET Status = 'Completed', UpdatedAt = {now} "
                f"WHERE EnqueuedAt = {marker} AND UpdatedAt = {marker}",
                (key, token),
            )
            if cur.rowcount == 1:
                self.done.append(payload)
            else:
                self.rejected += 1

    def work(self, until: Callable[[], bool]) -> None:
        """Take rows one at a time until ``until()`` holds and the table has nothing for it."""
        while True:
            claimed = self.next_()
            if claimed is None:
                if until():
                    return
                continue
            self.modify(*claimed)
