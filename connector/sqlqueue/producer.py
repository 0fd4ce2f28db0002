"""Exactly-once enqueueing of batches that may be written twice: stage, then publish with a ledger.

A batch is written by several tasks. Each task stages its rows in the queue's staging table
(which no claim reads) under a tag of its own, in one transaction. Then one transaction publishes
the batch: it copies the staged rows of the tasks that succeeded into the queue, ready, deletes
every staged row of the batch (including attempts that failed and runs that crashed) and records
(queue, writer, batch) in the ledger. Dedup keys are checked then, against the queue itself.

So a batch becomes visible all at once or not at all; a batch written again after it was published
finds itself in the ledger and writes nothing; and a task that runs again replaces what its
earlier attempt staged. All of it lives in the database, none in process memory.

Tags are fixed-width lowercase hex, ``writer(16) batch(16) run(8) task(8)``, so the tags of one
batch (or of one run of it) are a prefix, selected as the range [prefix, prefix + "g"]: hex digits
sort below "g" in every collation, which a separator such as "/" does not guarantee.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from .errors import DatabaseError
from .queue import Ack, Queue
from .schema import Column

# Ledger rows kept per writer: Spark only ever replays its latest batch.
LEDGER_KEEP = 1000
_PAST_HEX = "g"


def _hex(text: str, width: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:width]


@dataclass(frozen=True)
class Staged:
    """What one task staged: its tag (to publish) and how many rows it sent."""

    tag: str
    rows: int


class _Counted:
    """Passes rows through and counts them."""

    def __init__(self, rows: Iterable[Sequence[Any]]) -> None:
        self.rows = rows
        self.count = 0

    def __iter__(self) -> Iterator[Sequence[Any]]:
        for row in self.rows:
            self.count += 1
            yield row


class Producer:
    """One writer's batches into one queue.

    ``writer_id`` must be stable across restarts of the same logical writer (a streaming query's
    id); ``run_id`` names one run of it, so a run can clear what a crashed run staged.
    """

    def __init__(self, queue: Queue, writer_id: str, run_id: str = "") -> None:
        self.queue = queue
        self.writer_id = writer_id
        self._writer_key = _hex(writer_id, 16)
        self._run_key = _hex(run_id, 8)
        d, t = queue.dialect, queue.table
        self._contains, self._record, self._prune = d.ledger_contains(t), d.ledger_record(t), d.ledger_prune(t)
        self._delete, self._count = d.delete_staged(t), d.count_staged(t)

    def __repr__(self) -> str:
        return f"Producer({self.writer_id!r} into {self.queue})"

    # ---- tags -----------------------------------------------------------------------------------
    def _batch_prefix(self, batch_id: int) -> str:
        return f"{self._writer_key}{batch_id:016x}"

    def tag(self, batch_id: int, task_id: int) -> str:
        return f"{self._batch_prefix(batch_id)}{self._run_key}{task_id:08x}"

    def _ledger_key(self, batch_id: int) -> dict[str, Any]:
        return {"queue": str(self.queue.table), "writer": self.writer_id, "batch": batch_id}

    def _published(self, cur: Any, batch_id: int) -> bool:
        cur.execute(self._contains.sql, self._contains.bind(self._ledger_key(batch_id)))
        return cur.fetchone()[0] > 0

    def _record_batch(self, cur: Any, batch_id: int, row_count: int) -> None:
        """Enter the batch in the ledger and forget entries Spark can no longer replay."""
        key = self._ledger_key(batch_id)
        cur.execute(self._record.sql, self._record.bind({**key, "row_count": row_count}))
        cur.execute(self._prune.sql, self._prune.bind({**key, "before": batch_id - LEDGER_KEEP}))

    def _delete_ranges(self, cur: Any, ranges: Sequence[tuple[str, str]]) -> int:
        deleted = 0
        for lo, hi in ranges:
            cur.execute(self._delete.sql, self._delete.bind({"lo": lo, "hi": hi}))
            deleted += max(cur.rowcount, 0)
        return deleted

    # ---- the protocol ---------------------------------------------------------------------------
    def published(self, batch_id: int) -> bool:
        with self.queue.transaction() as cur:
            return self._published(cur, batch_id)

    def stage(self, batch_id: int, task_id: int, columns: Sequence[Column], rows: Iterable[Sequence[Any]]) -> Staged:
        """Stage one task's rows in one transaction; nothing if the batch is already published.

        Before inserting, the transaction deletes what an earlier attempt of this task staged
        (a retried task stages under the same tag). What crashed runs staged for the batch has
        other tags, which publish deletes.
        """
        tag = self.tag(batch_id, task_id)
        it = iter(rows)
        first = next(it, None)
        if first is None:  # an empty task needs no connection
            return Staged(tag, 0)
        counted = _Counted(chain([first], it))
        with self.queue.transaction() as cur:
            if self._published(cur, batch_id):
                return Staged(tag, 0)
            self._delete_ranges(cur, [(tag, tag)])
            self.queue.stage(cur, columns, counted, tag)
        return Staged(tag, counted.count)

    def _check_staged(self, cur: Any, batch_id: int, task: Staged) -> None:
        # PostgreSQL empties its unlogged staging table in crash recovery: never publish a batch
        # short. Failing the commit makes Spark run the batch again when the query restarts.
        cur.execute(self._count.sql, self._count.bind({"tag": task.tag}))
        found = cur.fetchone()[0]
        if found != task.rows:
            staging = self.queue.dialect.staging(self.queue.table)
            raise DatabaseError(
                f"batch {batch_id} of writer {self.writer_id!r} was not published: a task staged {task.rows} "
                f"rows but {found} are in {staging} (was the database restarted after a crash?); restart "
                "the query (or run the write again) to stage the batch anew"
            )

    def publish(self, batch_id: int, columns: Sequence[Column], tasks: Iterable[Staged]) -> int | None:
        """Move the rows the ``tasks`` staged into the queue, in one transaction with the ledger entry.

        Returns how many rows became claimable (fewer than staged when dedup keys repeat), or None
        when the batch was published before.
        """
        batch = self._batch_prefix(batch_id)
        publish = self.queue.dialect.publish_staged(self.queue.table, [c.name for c in columns])
        with self.queue.transaction() as cur:
            if self._published(cur, batch_id):
                return None
            published = 0
            for task in tasks:
                self._check_staged(cur, batch_id, task)
                cur.execute(publish.sql, publish.bind({"tag": task.tag}))
                published += max(cur.rowcount, 0)
            self._delete_ranges(cur, [(batch, batch + _PAST_HEX)])  # this batch's staging, published or not
            self._record_batch(cur, batch_id, published)
        return published

    def acknowledge(self, batch_id: int, acks: Sequence[Ack], *, keep: bool, max_attempts: int) -> int | None:
        """Apply a batch's per-row outcomes in one transaction with its ledger entry.

        Returns how many acknowledgements were applied, or None when the batch was applied before.
        """
        with self.queue.transaction() as cur:
            if self._published(cur, batch_id):
                return None
            self.queue.apply_acks(cur, acks, keep=keep, max_attempts=max_attempts)
            self._record_batch(cur, batch_id, len(acks))
        return len(acks)

    def discard(self, batch_id: int) -> int:
        """Delete everything staged for a batch that will not be published (an aborted batch)."""
        batch = self._batch_prefix(batch_id)
        with self.queue.transaction() as cur:
            return self._delete_ranges(cur, [(batch, batch + _PAST_HEX)])
