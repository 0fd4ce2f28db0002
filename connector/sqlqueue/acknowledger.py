"""Per-row outcomes a sink reports for rows it claimed (done, retry, failed), applied exactly once:
a batch's acknowledgements and its ledger entry commit in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .ledger import Ledger
from .queue import Ack, Queue


class Acknowledger:
    """One writer's acknowledgement batches for one queue."""

    def __init__(self, queue: Queue, writer_id: str) -> None:
        self.queue = queue
        self.ledger = Ledger(queue, writer_id)

    def __repr__(self) -> str:
        return f"Acknowledger({self.ledger.writer_id!r} into {self.queue})"

    def apply(self, batch_id: int, acks: Sequence[Ack], *, keep: bool, max_attempts: int) -> Applied | None:
        """Apply a batch's acknowledgements, or None when the batch was applied before."""
        with self.queue.transaction() as cur:
            if self.ledger.contains(cur, batch_id):
                return None
            fenced = self.queue.consuming.apply_acks(cur, acks, keep=keep, max_attempts=max_attempts)
            self.ledger.record(cur, batch_id, len(acks))
        return Applied(len(acks), fenced)


@dataclass(frozen=True)
class Applied:
    """A batch's acknowledgements: how many, and how many changed nothing because their row was no
    longer under the claim that delivered it (its lease ran out and another claim took it, or it was
    acknowledged already)."""

    acks: int
    fenced: int
