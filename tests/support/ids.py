"""The ids a queue's rows hold, in order: where the identity steps by more than one (sqlqueue.numbering,
PostgreSQL's queue tables), the n-th row enqueued does not hold id n."""

from __future__ import annotations


def ids(queue) -> list[int]:
    """Every row's id in the queue table, ascending."""
    e = queue.engine
    with queue.transaction() as cur:
        cur.execute(f"SELECT {e.quote('id')} FROM {e.table(queue.table)} ORDER BY {e.quote('id')}")
        return [int(r[0]) for r in cur.fetchall()]
