"""Queues whose claims hold rows for a lease, and time moved past that lease in SQL, for the lease tests.

Time is moved, not waited for (River's rescuer tests back-date attempted_at the same way): an outage
of ``seconds`` is the held rows' lease end (sqlqueue's own layout: on the rows a claim marked, and on the
runs of ids a claim holds beside them) or started-at (an adopted table, and the copies in its claims table,
which hold the same started-at) set that much earlier.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlqueue.dialects.statements.lifecycle import LEASE, TAKEN, runs_table
from sqlqueue.queue import Queue
from tests.support import user_tables
from tests.support.engines import Engine

LEASE_SECONDS = 15


@dataclass
class Leased:
    """A queue of one design with ``rows`` ready rows, payloads p0 up, in column ``payload``."""

    queue: Queue
    payload: str
    fill: Callable[[int, int], None]  # (n, first payload number)


def leased(engine: Engine, design: str, rows: int) -> Leased:
    """A queue of ``design`` (native: sqlqueue's own layout; relational and claimer: adopted tables whose
    claims take back rows abandoned past the lease) with ``rows`` ready rows."""
    if design == "native":
        native = engine.new_queue()
        made = Leased(
            native, "payload", lambda n, start: native.enqueue([{"payload": f"p{i}"} for i in range(start, start + n)])
        )
    elif design == "relational":
        relational = user_tables.relational(engine, lease_seconds=LEASE_SECONDS)
        made = Leased(
            relational, "Payload", lambda n, start: user_tables.enqueue_relational(relational, n, start=start)
        )
    else:
        claimer = user_tables.claimer(engine, lease_seconds=LEASE_SECONDS)
        made = Leased(claimer, "Payload", lambda n, start: user_tables.designs.fill(claimer, "claimer", n, start))
    made.fill(rows, 0)
    return made


def outage(queue: Queue, seconds: int) -> None:
    """Move the held rows' lease ``seconds`` into the past, as if their stream had been down that long."""
    d = queue.engine

    def earlier(column: str) -> str:
        return f"{d.quote(column)} = {d.add_seconds(d.quote(column), 'shift')}"

    if queue.declared is not None:
        started = str(queue.profile.started)
        targets = [(queue.table, started), (queue.dialect.lifecycle.claims_table(queue.table), started)]
    else:
        runs = runs_table(queue.table)
        targets = [(queue.table, "lease_until"), (queue.table, "claimed_at"), (runs, LEASE), (runs, TAKEN)]
    with queue.transaction() as cur:
        for table, column in targets:
            statement = d.compile(f"UPDATE {d.table(table)} SET {earlier(column)} WHERE {d.quote(column)} IS NOT NULL")
            cur.execute(statement.sql, statement.bind({"shift": -seconds}))


def held_payloads(queue: Queue, payload: str, consumer: str, after: int, upto: int) -> list[str]:
    """The payloads of the rows ``consumer`` holds under claims (after, upto], as a replay reads them."""
    found: list[str] = []
    for lo, hi in queue.consuming.partition_bounds(consumer, after, upto, 2):
        for rows in queue.consuming.read_claimed(consumer, after, upto, lo, hi, [payload]):
            found += [str(r[0]) for r in rows]
    return sorted(found)
