"""The sink ledger: the batches one writer applied to one queue, each recorded in the transaction
that applied it, so a batch Spark replays after a crash finds itself there and is not applied twice."""

from __future__ import annotations

from typing import Any

from .dialects.engine import execute, scalar
from .queue import Queue

# Entries kept per writer: Spark only ever replays its latest batch.
LEDGER_KEEP = 1000


class Ledger:
    """One writer's entries for one queue; every call runs inside the caller's transaction ``cur``."""

    def __init__(self, queue: Queue, writer_id: str) -> None:
        self.table = queue.table
        self.sql = queue.dialect.sink
        self.writer_id = writer_id

    def _key(self, batch_id: int) -> dict[str, Any]:
        return {"queue": str(self.table), "writer": self.writer_id, "batch": batch_id}

    def contains(self, cur: Any, batch_id: int) -> bool:
        return scalar(cur, self.sql.ledger_contains(self.table), **self._key(batch_id)) > 0

    def record(self, cur: Any, batch_id: int, row_count: int) -> None:
        """Enter the batch, and forget entries Spark can no longer replay."""
        key = self._key(batch_id)
        execute(cur, self.sql.ledger_record(self.table), **key, row_count=row_count)
        execute(cur, self.sql.ledger_prune(self.table), **key, before=batch_id - LEDGER_KEEP)

    def last(self, cur: Any) -> int | None:
        """The highest batch entered (the ledger keeps only the latest LEDGER_KEEP of them)."""
        return scalar(cur, self.sql.ledger_last(self.table), **self._key(0))

    def forget(self, cur: Any) -> None:
        """Delete every entry, once nothing the writer wrote can be written again."""
        execute(cur, self.sql.ledger_prune(self.table), **self._key(0), before=2**62)
