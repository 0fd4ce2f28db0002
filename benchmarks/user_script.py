"""What a user would write instead of queue_to_delta, with no sqlqueue code: one statement takes a batch
of ready rows out of the queue (DELETE ... RETURNING, skipping rows others hold), delta-rs appends them to
a Delta table, and the transaction commits after the append. No Spark starts.

    .venv/bin/python benchmarks/user_script.py URL TABLE BATCH TARGET      # password in PGPASSWORD
    .venv/bin/python benchmarks/user_script.py URL TABLE BATCH -           # the client alone, no Delta

At least once: a crash between the Delta append and the commit appends the batch again on the next run.
The claim is `id = ANY(ARRAY(SELECT ...))` rather than `id IN (SELECT ...)`, which PostgreSQL may plan as a
hash join over the whole table: the fastest form of the statement measured here, so the baseline is strong.
"""

from __future__ import annotations

import sys
import time

import psycopg
import pyarrow as pa
from deltalake import write_deltalake

TAKE = (
    'DELETE FROM "{t}" WHERE id = ANY(ARRAY(SELECT id FROM "{t}" WHERE state = \'ready\' ORDER BY id '
    "LIMIT %s FOR UPDATE SKIP LOCKED)) RETURNING id, enqueued_at, attempts, payload, customer"
)
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("enqueued_at", pa.timestamp("us", tz="UTC")),
        ("attempts", pa.int32()),
        ("payload", pa.string()),
        ("customer", pa.int64()),
    ]
)


def drain(url: str, table: str, batch: int, target: str | None) -> None:
    """Take batches until the queue is empty; print each batch's commit time and rows."""
    with psycopg.connect(url) as conn:
        while rows := conn.execute(TAKE.format(t=table), (batch,)).fetchall():
            if target:
                columns = [pa.array(values, type=field.type) for values, field in zip(zip(*rows), SCHEMA)]
                write_deltalake(target, pa.Table.from_arrays(columns, schema=SCHEMA), mode="append")
            conn.commit()
            print(time.time(), len(rows), flush=True)


if __name__ == "__main__":
    url, table, batch, target = sys.argv[1:5]
    drain(url, table, int(batch), None if target == "-" else target)
