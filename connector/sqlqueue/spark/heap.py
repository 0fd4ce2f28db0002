"""What a task leaves to Spark's Python worker after it: the garbage collector's walk.

A reused Python worker runs a full garbage collection after every task (pyspark's daemon.py), and a
full collection walks every object the process holds, most of them the modules it imported once
(pyspark, pyarrow, psycopg): in a read task's worker about 75,000 objects, 30 ms of CPU each time on a
2-core host. No task waits for it, but on a host whose cores the database and Spark's JVM share it takes
CPU from both: two read tasks a micro-batch spent 60 ms of it a batch. Objects that have lived through
a collection and are frozen (``gc.freeze``) are left out of every collection after, so each then walks
only what the tasks made since (docs/performance.md, "What runs off the batch's path").
"""

from __future__ import annotations

import gc


def freeze_worker_heap() -> None:
    """Once per process, at a task's start: collect, then freeze what is left, which the process holds
    for good (its modules and what they keep), so that the collections after each task skip it. A frozen
    object is never collected: should a cycle of them become unreachable, it stays until the process
    ends. Only what the worker held before its first task is frozen, not a task's own objects."""
    if gc.get_freeze_count():
        return
    gc.collect()
    gc.freeze()
