"""Queue tables as users already have them (the designs in shared/seeds), made on each engine.

Each maker creates a table of one design under a fresh name and returns a ``Queue`` adopting it
with the matching preset, its key set to the table's key. Rows are inserted the way the table's own
producers would, with plain SQL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sqlqueue.identifiers import TableName
from sqlqueue.profile import PRESETS, Profile
from sqlqueue.queue import Queue
from sqlqueue.testing import designs
from tests.support.engines import Engine, fresh_name

NOW = designs.LOCAL_NOW
run = designs.run


def _queue(engine: Engine, table: str, profile: Profile, keep_order: bool = False) -> Queue:
    """Babelfish cannot UPDATE or DELETE through a CTE (the ordered claims): there the profile claims in
    no order unless the order is the test's subject, as the engine's own tests do (tests/support/engines.py)."""
    if engine.babelfish and not keep_order:
        profile = replace(profile, order=())
    queue = Queue(engine.connection(), TableName.parse(table), profile)
    engine.created.append(queue)
    return queue


def relational(
    engine: Engine, keep_order: bool = False, adopt: bool = True, audit: bool = True, **settings: object
) -> Queue:
    """A seed-004 queue (sqlqueue.testing.designs.relational), with (``audit``) a trigger recording every
    change of Status; ``settings`` set profile fields over the preset."""
    name = fresh_name("syncqueue")
    queue = _queue(engine, name, replace(PRESETS["relational"], **settings), keep_order)  # type: ignore[arg-type]
    run(queue, *designs.DESIGNS["relational"].make(engine.name, name, audit))
    if adopt:
        queue.adopt()
    return queue


def enqueue_relational(queue: Queue, n: int, type_: str = "Sync", start: int = 0) -> None:
    """``n`` Pending rows as the table's producers insert them (sqlqueue.testing.designs.fill)."""
    designs.fill(queue, "relational", n, start, type_)


def _plus_ms(engine: str, now: str, ms: int) -> str:
    if engine == "sqlite":
        return f"strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime', '{ms / 1000:+.3f} seconds')"
    if engine == "postgres":
        return f"{now} + INTERVAL '{ms} milliseconds'"
    return f"DATEADD(MILLISECOND, {ms}, {now})"


def dequeue(engine: Engine) -> Queue:
    """A seed-000 FIFO queue: an identity key and a payload; a dequeue deletes the row."""
    name = fresh_name("fifoqueue")
    queue = _queue(engine, name, PRESETS["dequeue"])
    run(queue, *designs.DESIGNS["dequeue"].make(engine.name, name))
    queue.adopt()
    return queue


def started_mark(engine: Engine) -> Queue:
    """A seed-002 queue: ready while ProcessingStartedAt is NULL; done deletes the row."""
    name = fresh_name("simplequeue")
    queue = _queue(engine, name, replace(PRESETS["started-mark"], clock="local"))
    run(queue, *designs.DESIGNS["started-mark"].make(engine.name, name))
    queue.adopt()
    return queue


def claimer(engine: Engine, **settings: object) -> Queue:
    """A seed-003 retry table (sqlqueue.testing.designs.claimer): in_process, app_server, attempts, and
    start and end dates that default to now; ``settings`` set profile fields over the preset."""
    name = fresh_name("fourqueue")
    queue = _queue(engine, name, replace(PRESETS["claimer"], **settings))  # type: ignore[arg-type]
    # Without the computed duration on Babelfish: it crashes on an OUTPUT of one (babelfish.GAPS, computed_output)
    run(queue, *designs.DESIGNS["claimer"].make(engine.name, name, computed=not engine.babelfish))
    queue.adopt()
    return queue


def keyed_dequeue(engine: Engine) -> Queue:
    """A seed-000 FIFO queue whose rows carry a key of the producer's, k, beside the payload."""
    name = fresh_name("keyedqueue")
    queue = _queue(engine, name, PRESETS["dequeue"])
    t = designs.TYPES[engine.name]
    run(queue, f"CREATE TABLE {name} (Id {t.identity}, k BIGINT NOT NULL, payload {t.text} NULL)")
    queue.adopt()
    return queue


def insert_payloads(queue: Queue, n: int, design: str = "dequeue") -> None:
    """``n`` rows as the table's own producers insert them, payloads p0 up (sqlqueue.testing.designs.fill)."""
    designs.fill(queue, design, n)


class TableWorker:
    """The table's own worker, written the way seed 004's procedures work: ``Next_`` claims one row
    (skipping locked ones) and returns its key and UpdatedAt; ``Modify_`` completes it only while
    UpdatedAt still holds that token (optimistic concurrency), else the update is rejected. On SQL Server
    they are the seed's stored procedures, created beside the table; elsewhere the same statements."""

    def __init__(self, queue: Queue, engine: str) -> None:
        self.queue = queue.twin()  # a connection of its own
        self.engine = engine
        self.done: list[str] = []  # the payloads of the rows it completed
        self.rejected = 0
        t, now = self.queue.table, NOW[engine]
        self.ready = f"Status IN ('Pending', 'Error') AND ScheduledFor <= {now} AND AttemptNum < 3"
        self.claim = (
            f"UPDATE {t} SET Status = 'Processing', UpdatedAt = {now}, StartedAt = {now}, "
            f"AttemptNum = AttemptNum + 1 WHERE EnqueuedAt = {{key}}"
        )
        self.complete = f"UPDATE {t} SET Status = 'Completed', UpdatedAt = {now} WHERE EnqueuedAt = {{key}} "
        self.complete += "AND UpdatedAt = {token}"
        if engine == "sqlserver":
            run(self.queue, *self._procedures())

    def _procedures(self) -> list[str]:
        """Seed 004's Next_ and Modify_ (its 5-block shape, trimmed to what a test worker needs): pick with
        UPDLOCK, ROWLOCK, READPAST, claim by key, return key, token and payload after the commit; complete
        only while UpdatedAt holds the token, returning how many rows that touched."""
        t = self.queue.table
        return [
            f"""CREATE PROCEDURE {t}_Next AS BEGIN
SET NOCOUNT ON;
DECLARE @EnqueuedAt DATETIME2(6);
BEGIN TRANSACTION;
SELECT TOP (1) @EnqueuedAt = EnqueuedAt FROM {t} WITH (UPDLOCK, ROWLOCK, READPAST)
WHERE {self.ready} ORDER BY ScheduledFor;
IF @EnqueuedAt IS NOT NULL {self.claim.format(key="@EnqueuedAt")};
COMMIT TRANSACTION;
SELECT EnqueuedAt, UpdatedAt, Payload FROM {t} WHERE EnqueuedAt = @EnqueuedAt;
END""",
            f"""CREATE PROCEDURE {t}_Modify @EnqueuedAt DATETIME2(6), @UpdatedAt DATETIME2(6) AS BEGIN
SET NOCOUNT ON;
{self.complete.format(key="@EnqueuedAt", token="@UpdatedAt")};
SELECT @@ROWCOUNT;
END""",
        ]

    def next_(self) -> tuple[object, object, str] | None:
        """The seed's Next_: in one transaction, pick the next row skipping locked ones (UPDLOCK, ROWLOCK,
        READPAST on SQL Server; FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite's one writer), claim it by its
        key, then read its key, token and payload back."""
        t, mark = self.queue.table, self.queue.engine.marker
        if self.engine == "sqlserver":
            with self.queue.transaction() as cur:
                cur.execute(f"EXEC {t}_Next")
                rows = cur.fetchall()
            return tuple(rows[0]) if rows else None  # type: ignore[return-value]
        pick = {
            "postgres": f"SELECT EnqueuedAt FROM {t} WHERE {self.ready} ORDER BY ScheduledFor LIMIT 1 "
            "FOR UPDATE SKIP LOCKED",
            "sqlite": f"SELECT EnqueuedAt FROM {t} WHERE {self.ready} ORDER BY ScheduledFor LIMIT 1",
        }[self.engine]
        with self.queue.transaction() as cur:
            picked = cur.execute(pick).fetchall()
            if not picked:
                return None
            key = picked[0][0]
            cur.execute(self.claim.format(key=mark), (key,))
            row = cur.execute(f"SELECT EnqueuedAt, UpdatedAt, Payload FROM {t} WHERE EnqueuedAt = {mark}", (key,))
            return tuple(row.fetchall()[0])  # type: ignore[return-value]

    def modify(self, key: object, token: object, payload: str) -> None:
        mark = self.queue.engine.marker
        with self.queue.transaction() as cur:
            if self.engine == "sqlserver":
                cur.execute(f"EXEC {self.queue.table}_Modify {mark}, {mark}", (key, token))
                changed = cur.fetchall()[0][0]
            else:
                changed = cur.execute(self.complete.format(key=mark, token=mark), (key, token)).rowcount
            if changed == 1:
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


def notifications(engine: Engine, exclusive: bool = True, adopt: bool = True) -> Queue:
    """A relational queue with subtype tables ``<name>_email`` (Address, Subject) and ``<name>_reset`` (Token,
    ExpiresAt) keyed by its EnqueuedAt (sqlqueue.testing.designs.subtypes), both in its profile's include."""
    name = fresh_name("notification")
    include = tuple(f"{name}_{s}" for s in designs.SUBTYPES)
    profile = replace(PRESETS["relational"], include=include, include_exclusive=exclusive)
    queue = _queue(engine, name, profile)
    run(queue, *designs.DESIGNS["relational"].make(engine.name, name, False), *designs.subtypes(engine.name, name))
    if adopt:
        queue.adopt()
    return queue


def add_subtype_rows(queue: Queue, subtype: str, columns: str, rows: dict[str, tuple]) -> None:
    """Rows of ``<queue>_<subtype>`` for the base rows of the given payloads: {payload: values of ``columns``}."""
    keys = dict(queue.fetch(queue.engine.compile(f"SELECT Payload, EnqueuedAt FROM {queue.table}"), {}))
    marks = ", ".join(queue.engine.marker for _ in range(len(columns.split(",")) + 1))
    with queue.transaction() as cur:
        cur.executemany(
            f"INSERT INTO {queue.table}_{subtype} (EnqueuedAt, {columns}) VALUES ({marks})",
            [(keys[payload], *values) for payload, values in rows.items()],
        )
