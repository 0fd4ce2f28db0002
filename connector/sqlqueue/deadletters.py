"""Dead letters, the queue's side: failed rows leave for the dead-letter table exactly once, and come back.

**The move.** A mover (one per queue and dead-letter table; ``queue_to_delta`` uses its checkpoint)
numbers its moves 1, 2, 3 ... Move N tags up to a chunk of failed rows with ``deadletter:<mover>:<N>``
in one transaction (``stage_tag``, which a failed row otherwise never carries), appends them to the
dead-letter table under N, then deletes them. A mover finishes every move it finds tagged before it
tags more, so only its latest move can be unfinished, and an append keyed by N (the Spark side's
``append_once``: N is appended unless N is at most the latest N appended) writes each move once.
Rows are deleted only after their move is appended; a crash anywhere leaves them tagged, and the
next move finishes them. No layout change: failed rows carry tags the way sink rows do.

**The redrive.** Rows picked in the dead-letter table are marked there with a redrive id first. They
go back to the queue in chunks in id order, each chunk published with a ledger entry (writer
``redrive:<id>``, batch = chunk number) in one transaction, so a chunk is enqueued once even after
its rows were consumed and deleted; the original id becomes the new row's dedup key, so a row still
in the queue is not enqueued twice either. A redrive resumes after the last chunk in the ledger.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .capabilities import Capability
from .dialects.engine import execute
from .errors import SchemaError
from .producer import Producer
from .queue import Queue
from .schema import PAST_HEX, Column, writable_columns

TAG_PREFIX = "deadletter:"
# After the domain columns: what the move keeps of each row, and the columns redrive fills in.
KEPT = (
    Column("attempts", "int"),
    Column("last_error", "text"),
    Column("enqueued_at", "timestamp"),
    Column("failed_at", "timestamp"),
    Column("queue", "string"),
    Column("consumer", "string"),
    Column("redrive_id", "string"),
    Column("redriven_at", "timestamp"),
)
# The queue column each kept column is read from; the others are set by the move (queue) or by redrive.
READ_AS = {"failed_at": "completed_at"}
READ = ("attempts", "last_error", "enqueued_at", "failed_at", "consumer")
DEDUP_KEY = "dedup_key"


def dead_letter_columns(domain: Sequence[Column]) -> tuple[Column, ...]:
    """The dead-letter table's columns for a queue with these domain columns."""
    clash = sorted({c.name for c in domain} & {c.name for c in KEPT})
    if clash:
        raise SchemaError(
            f"domain column(s) {', '.join(clash)} clash with the dead-letter table's own columns "
            f"({', '.join(c.name for c in KEPT)}); rename them to move dead letters"
        )
    return (Column("id", "bigint", False), *domain, *KEPT)


def dedup_key(original_id: int) -> str:
    """A redriven row's dedup key: its id in the queue it failed in (the dead letter's id)."""
    return f"{TAG_PREFIX}{original_id}"


@dataclass(frozen=True)
class Move:
    """One move's tagged rows: the ids lie in [lo, hi]."""

    number: int
    tag: str
    lo: int
    hi: int
    rows: int


class DeadLetters:
    """One mover's moves out of one queue. ``mover_id`` must be stable across restarts and belong to
    one mover at a time (two processes moving under one id could finish each other's moves)."""

    def __init__(self, queue: Queue, mover_id: str) -> None:
        queue.require(Capability.DEAD_LETTERS)
        self.queue = queue
        self.mover_id = mover_id
        self.prefix = f"{TAG_PREFIX}{hashlib.sha256(mover_id.encode()).hexdigest()[:16]}:"

    def tag(self, number: int) -> str:
        return f"{self.prefix}{number:016x}"

    def pending(self) -> list[Move]:
        """This mover's tagged moves still in the queue, oldest first."""
        rows = self.queue.fetch(
            self.queue.dialect.housekeeping.pending_dead_letters(self.queue.table),
            {"lo": self.prefix, "hi": self.prefix + PAST_HEX},
        )
        return [Move(int(tag[len(self.prefix) :], 16), tag, int(lo), int(hi), int(n)) for tag, lo, hi, n in rows]

    def mark(self, number: int, limit: int) -> Move | None:
        """Tag up to ``limit`` failed rows as move ``number``, in one transaction; None when none is failed."""
        tag = self.tag(number)
        statement = self.queue.dialect.housekeeping.mark_dead_letters(self.queue.table)
        with self.queue.transaction() as cur:
            execute(cur, statement, tag=tag, limit=limit)
            ids = [int(r[0]) for r in cur.fetchall()]
        return Move(number, tag, min(ids), max(ids), len(ids)) if ids else None

    def rows(self, move: Move, domain: Sequence[Column]) -> list[tuple]:
        """A move's rows in the dead-letter table's column order, redrive columns empty."""
        names = ("id", *(c.name for c in domain), *(READ_AS.get(n, n) for n in READ))
        statement = self.queue.dialect.housekeeping.read_dead_letters(self.queue.table, names)
        queue_name = str(self.queue.table)
        found = self.queue.fetch(statement, {"tag": move.tag, "lo": move.lo, "hi": move.hi})
        # id, domain..., attempts, last_error, enqueued_at, failed_at, then queue, consumer, redrive_id, redriven_at
        return [(*row[:-1], queue_name, row[-1], None, None) for row in found]

    def delete(self, move: Move) -> int:
        statement = self.queue.dialect.housekeeping.delete_dead_letters(self.queue.table)
        with self.queue.transaction() as cur:
            execute(cur, statement, tag=move.tag, lo=move.lo, hi=move.hi)
            return max(cur.rowcount, 0)


class Redrive:
    """One redrive's chunks back into the queue: chunk k holds its rows k*chunk .. (k+1)*chunk - 1 in id
    order, so a resumed redrive cuts the same chunks."""

    def __init__(self, queue: Queue, redrive_id: str) -> None:
        self.queue = queue
        self.redrive_id = redrive_id
        self.producer = Producer(queue, f"redrive:{redrive_id}", run_id=uuid.uuid4().hex)
        domain = queue.domain_columns()
        self.columns = writable_columns([*(c.name for c in domain), DEDUP_KEY], queue.columns(), queue.table)

    def chunks_done(self) -> int:
        """Chunks already enqueued: every one up to the last in the ledger (they are published in order)."""
        last = self.producer.last_published()
        return 0 if last is None else int(last) + 1

    def send(self, number: int, rows: Iterable[tuple[int, Sequence[Any]]]) -> int | None:
        """Enqueue chunk ``number`` of (original id, domain values) rows; how many rows became new queue
        rows (fewer when some are still in the queue), or None when the chunk was enqueued before."""
        values = [(*domain, dedup_key(original)) for original, domain in rows]
        written = self.producer.write(number, 0, self.columns, values)
        return self.producer.publish(number, self.columns, [written])

    def forget(self) -> None:
        """Drop the redrive's ledger entries once the dead-letter table records it as done."""
        self.producer.forget()
