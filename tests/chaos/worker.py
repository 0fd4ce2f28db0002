"""A table's own worker, as its team wrote it, beside sqlqueue: run as a process the matrix kills.

    python -m tests.chaos.worker DATABASE_JSON DESIGN TABLE TIMEOUT_SECONDS STOP_FILE

It takes one row at a time the design's way, works on it, and completes it. What it completed is its
output: the row's payload goes into ``<table>_worked`` in the transaction that completes the row, so a
worker killed before its commit has done nothing, and a completion another claimer fenced out (the
row's token, started-at or claimer changed since this worker took it) records nothing either. Beside
the payload it records when it took the row (this host's clock, seconds) and whether the row was in
flight then: taken from another claimer whose lease had run out (``Expired`` 1), which the verifier
tells apart (verify.after_expiry).

- relational: Next_ takes a Pending or Error row, or one in flight whose StartedAt is older than the
  timeout (abandoned), sets Processing, StartedAt and AttemptNum; Modify_ completes it only while
  UpdatedAt still holds the token Next_ read (optimistic concurrency).
- claimer: takes a row not in process (or abandoned past the timeout) with its app_server, start date
  and attempts, and sets its end date only while its start date and app_server are still its own.
- dequeue: deletes the first row and records it, in one transaction.
- grouped: sqlqueue's own layout read by message group, by the protocol docs/streaming.md gives a table's own
  worker: in one transaction, take the table's turn (the lock every grouped claim takes), then the first ready
  row of a group with no row in flight or waiting for a retry; complete it while it is still its own.
"""

from __future__ import annotations

import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.chaos.databases import Database
from tests.chaos.designs import NOW

WHO = "worker"
# sqlqueue's own layout's clock (UTC) and the turn of a grouped claim, as docs/streaming.md spells them.
UTC_NOW = {"postgres": "now()", "sqlite": "strftime('%Y-%m-%d %H:%M:%f', 'now')", "babelfish": "SYSUTCDATETIME()"}
# A worker killed holding a row leaves it to the streams' sweep once this lease runs out.
LEASE = {
    "postgres": "now() + INTERVAL '30 seconds'",
    "sqlite": "strftime('%Y-%m-%d %H:%M:%f', 'now', '+30 seconds')",
    "babelfish": "DATEADD(SECOND, 30, SYSUTCDATETIME())",
}
TURN = {
    "postgres": "SELECT pg_advisory_xact_lock(1397835600, CAST(CAST(CAST('{t}' AS regclass) AS oid) AS integer))",
    "babelfish": "DECLARE @resource NVARCHAR(255) = CONCAT('sqlqueue.groups ', OBJECT_ID('{t}')); "
    "EXEC sp_getapplock @Resource = @resource, @LockMode = 'Exclusive', @LockOwner = 'Transaction'",
}


@dataclass(frozen=True)
class Taken:
    payload: str
    at: float  # time.time() when the row was taken
    expired: bool  # the row was in flight: another claimer's, whose lease had run out


def picker(db: Database, table: str, where: str, order: str, key: str) -> str:
    """SELECT the key of the first row ``where`` selects, locked, skipping rows others hold."""
    if db.name == "postgres":
        return f"SELECT {key} FROM {table} WHERE {where} ORDER BY {order} LIMIT 1 FOR UPDATE SKIP LOCKED"
    if db.name == "sqlite":
        return f"SELECT {key} FROM {table} WHERE {where} ORDER BY {order} LIMIT 1"
    return f"SELECT TOP (1) {key} FROM {table} WITH (UPDLOCK, ROWLOCK, READPAST) WHERE {where} ORDER BY {order}"


class Worker:
    def __init__(self, db: Database, design: str, table: str, timeout: int) -> None:
        # The claim number of the row a grouped worker took last: one of its own per row, unlike any a run before
        # it took.
        self.taken = int(time.time() * 1000)
        self.db, self.design, self.table = db, design, table
        self.conn = db.connect()
        self.mark = db.marker
        now = NOW[db.name]
        expired = f"StartedAt < {_plus(db.name, now, -timeout)}"
        if design == "relational":
            self.ready = f"(Status IN ('Pending', 'Error') OR (Status = 'Processing' AND {expired})) AND AttemptNum < 3"
        elif design == "claimer":
            gone = f"start_date < {_plus(db.name, now, -timeout)}"
            self.ready = f"(in_process = '0' OR (in_process = '1' AND end_date IS NULL AND {gone})) AND attempts < 3"

    def transaction(self, work):
        cur = self.conn.cursor()
        if self.db.name == "postgres":
            with self.conn.transaction():
                return work(cur)
        if self.db.name == "sqlite":
            cur.execute("BEGIN IMMEDIATE")
        else:
            self.conn.autocommit = False
        try:
            result = work(cur)
            self.conn.commit() if self.db.name != "sqlite" else cur.execute("COMMIT")
            return result
        except BaseException:
            self.conn.rollback() if self.db.name != "sqlite" else cur.execute("ROLLBACK")
            raise
        finally:
            if self.db.name == "babelfish":
                self.conn.autocommit = True

    def once(self) -> bool:
        """Take, work on and complete one row; False when none was ready."""
        if self.design == "dequeue":
            return self.transaction(self._dequeue)
        if self.design == "grouped":
            return self._grouped()
        taken = self.transaction(self._take)
        if taken is None:
            return False
        time.sleep(random.uniform(0, 0.05))  # the work itself
        self.transaction(lambda cur: self._complete(cur, *taken))
        return True

    def _take(self, cur):
        t, m, now = self.table, self.mark, NOW[self.db.name]
        if self.design == "relational":
            cur.execute(picker(self.db, t, self.ready, "ScheduledFor, EnqueuedAt", "EnqueuedAt, Status"))
            rows = cur.fetchall()
            if not rows:
                return None
            key, expired = rows[0][0], rows[0][1] == "Processing"
            cur.execute(
                f"UPDATE {t} SET Status = 'Processing', StartedAt = {now}, AttemptNum = AttemptNum + 1 "
                f"WHERE EnqueuedAt = {m}",
                (key,),
            )
            cur.execute(f"SELECT UpdatedAt, Payload FROM {t} WHERE EnqueuedAt = {m}", (key,))
            token, payload = cur.fetchall()[0]
            return key, token, Taken(payload, time.time(), expired)
        cur.execute(picker(self.db, t, self.ready, "id", "id, in_process"))
        rows = cur.fetchall()
        if not rows:
            return None
        key, expired = rows[0][0], str(rows[0][1]).lower() in ("1", "true")
        cur.execute(
            f"UPDATE {t} SET in_process = '1', app_server = '{WHO}', start_date = {now}, end_date = NULL, "
            f"attempts = attempts + 1 WHERE id = {m}",
            (key,),
        )
        cur.execute(f"SELECT start_date, Payload FROM {t} WHERE id = {m}", (key,))
        token, payload = cur.fetchall()[0]
        return key, token, Taken(payload, time.time(), expired)

    def _complete(self, cur, key, token, taken: Taken) -> None:
        t, m, now = self.table, self.mark, NOW[self.db.name]
        if self.design == "relational":
            cur.execute(f"UPDATE {t} SET Status = 'Completed' WHERE EnqueuedAt = {m} AND UpdatedAt = {m}", (key, token))
        else:
            cur.execute(
                f"UPDATE {t} SET end_date = {now} WHERE id = {m} AND in_process = '1' AND app_server = '{WHO}' "
                f"AND start_date = {m} AND end_date IS NULL",
                (key, token),
            )
        if cur.rowcount == 1:
            cur.execute(
                f"INSERT INTO {t}_worked (Payload, TakenAt, Expired) VALUES ({m}, {m}, {m})",
                (taken.payload, f"{taken.at:.3f}", "1" if taken.expired else "0"),
            )

    def _grouped(self) -> bool:
        t, m, now = self.table, self.mark, UTC_NOW[self.db.name]
        self.taken += 1

        def take(cur):
            if self.db.name in TURN:  # SQLite's BEGIN IMMEDIATE is the turn
                cur.execute(TURN[self.db.name].format(t=t))
            busy = (
                f"SELECT grp FROM {t} WHERE attempts > 0 AND state IN ('ready', 'claimed') "
                f"AND (state = 'claimed' OR due_at > {now}) AND grp IS NOT NULL"
            )
            free = f"state = 'ready' AND due_at <= {now} AND grp NOT IN ({busy})"
            first = f"id, payload FROM {t} WHERE {free} ORDER BY id"
            cur.execute(f"SELECT TOP (1) {first}" if self.db.name == "babelfish" else f"SELECT {first} LIMIT 1")
            rows = cur.fetchall()
            if not rows:
                return None
            cur.execute(
                f"UPDATE {t} SET state = 'claimed', consumer = '{WHO}', claim_seq = {m}, claimed_at = {now}, "
                f"lease_until = {LEASE[self.db.name]}, attempts = attempts + 1 WHERE id = {m}",
                (self.taken, rows[0][0]),
            )
            return rows[0]

        row = self.transaction(take)
        if row is None:
            return False
        time.sleep(random.uniform(0, 0.05))  # the work itself

        def complete(cur) -> None:
            cur.execute(
                f"UPDATE {t} SET state = 'done', completed_at = {now} WHERE id = {m} AND state = 'claimed' "
                f"AND consumer = '{WHO}' AND claim_seq = {m}",
                (row[0], self.taken),
            )
            if cur.rowcount == 1:
                cur.execute(
                    f"INSERT INTO {t}_worked (Payload, TakenAt, Expired) VALUES ({m}, {m}, '0')",
                    (row[1], f"{time.time():.3f}"),
                )

        self.transaction(complete)
        return True

    def _dequeue(self, cur) -> bool:
        t, m = self.table, self.mark
        cur.execute(picker(self.db, t, "1 = 1", "Id", "Id, Payload"))
        rows = cur.fetchall()
        if not rows:
            return False
        cur.execute(f"DELETE FROM {t} WHERE Id = {m}", (rows[0][0],))
        cur.execute(
            f"INSERT INTO {t}_worked (Payload, TakenAt, Expired) VALUES ({m}, {m}, '0')",
            (rows[0][1], f"{time.time():.3f}"),
        )
        return True


def _plus(engine: str, now: str, seconds: int) -> str:
    if engine == "sqlite":
        return f"strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime', '{seconds:+d} seconds')"
    if engine == "postgres":
        return f"{now} + INTERVAL '{seconds} seconds'"
    return f"DATEADD(SECOND, {seconds}, {now})"


def main(argv: list[str]) -> None:
    spec, design, table, timeout, stop = argv
    db = Database(**json.loads(spec))
    worker = Worker(db, design, table, int(timeout))
    while not Path(stop).exists():
        try:
            if not worker.once():
                time.sleep(0.05)
        except Exception as exc:  # a restarted database: reconnect and go on, as a service would
            print(f"worker: {exc}", flush=True)
            time.sleep(0.5)
            try:
                worker.conn = db.connect()
            except Exception as down:  # still down: the next turn tries again
                print(f"worker: {down}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
