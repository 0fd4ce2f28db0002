"""Move a queue's clock in SQL instead of waiting for it.

A test that needs an expired lease, a retry that is due or a row finished a week ago sets that
time column in the past, in the engine's own clock and spelling (the same expressions its
dialect uses for "now"), rather than sleeping until the real clock gets there. A test that needs
exact times (a wait of exactly 10 s) sets them outright.
"""

from __future__ import annotations

import datetime as dt

from sqlqueue.schema import LIFECYCLE_TYPES

_AGO = {
    "sqlite": "strftime('%Y-%m-%d %H:%M:%f', 'now', '-{seconds} seconds')",
    "postgres": "now() - {seconds} * INTERVAL '1 second'",
    "sqlserver": "DATEADD(SECOND, -{seconds}, SYSUTCDATETIME())",
}


def move_back(queue, column: str, seconds: int, ids=None) -> int:
    """Set ``column`` (lease_until, due_at, completed_at, ...) to ``seconds`` before the database's
    now, on the rows ``ids`` (default: every row where it is set); returns the rows changed."""
    d = queue.engine
    where = f"{d.quote(column)} IS NOT NULL"
    if ids is not None:
        where = f"{d.quote('id')} IN ({', '.join(str(int(i)) for i in ids)})"
    with queue.transaction() as cur:
        cur.execute(
            f"UPDATE {d.table(queue.table)} SET {d.quote(column)} = "
            f"{_AGO[d.name].format(seconds=int(seconds))} WHERE {where}"
        )
        return cur.rowcount


def set_times(queue, column: str, at: dict[int, dt.datetime]) -> None:
    """Set ``column`` of each row id to a given time (bound through the dialect, as sqlqueue's writes are)."""
    d = queue.engine
    statement = d.compile(f"UPDATE {d.table(queue.table)} SET {d.quote(column)} = :at WHERE {d.quote('id')} = :id")
    with queue.transaction() as cur:
        for row_id, when in at.items():
            cur.execute(statement.sql, statement.bind({"at": d.encode(LIFECYCLE_TYPES[column], when), "id": row_id}))
