"""Less garbage collection in Spark's Python workers: what a worker held before its first task is frozen.

A reused Python worker runs a full garbage collection after every task (pyspark's daemon.py), and a
full collection walks every object the process holds, most of them the modules it imported before its
first task (pyspark, pyarrow): in a read task's worker about 75,000 objects, 30 ms of CPU each time on a
2-core host. No task waits for it, but on a host whose cores the database and Spark's JVM share it takes
CPU from both: two read tasks a micro-batch spent 60 ms of it a batch. Objects that have lived through
a collection and are frozen (``gc.freeze``) are left out of every collection after, so each then walks
the rest: what the first task brought (psycopg, the connection) and what the tasks made since
(docs/performance.md, "What runs off the batch's path").
"""

from __future__ import annotations

import gc
import os

# pyspark's daemon.py collects after a task only in a worker it reuses, which Spark says in this variable.
REUSED = "SPARK_REUSE_WORKER"

_frozen = False


def freeze_worker_heap() -> None:
    """Once per reused worker, at a task's start: collect, then freeze what is left, which the worker
    holds for good (its modules and what they keep), so that the collections after each task skip it.
    A frozen object is never collected: should a cycle of them become unreachable (the first task's own
    reader or writer, frozen with the rest), it stays until the worker ends. A worker that is not reused
    runs no collection after its task, so it has nothing to spare."""
    global _frozen
    if _frozen or not os.environ.get(REUSED):
        return
    gc.collect()
    gc.freeze()
    _frozen = True
