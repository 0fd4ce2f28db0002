"""The claim protocol that makes a replayed micro-batch return exactly the rows it returned before.

An offset is a consumer identity and a claim number. Every row a consumer claims carries
the claim number it was claimed under (claim_seq), so "batch N" means "the rows this consumer
claimed in claim N" and can be read again by that number after any crash. Spark's checkpoint holds the numbers.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError, SqlQueueError
from .queue import Queue
from .waits import Waits

log = logging.getLogger("sqlqueue.consumer")


@dataclass(frozen=True)
class ClaimOffset:
    """``seq`` is the number of the last claim whose rows belong to the stream so far."""

    consumer: str
    seq: int

    def to_dict(self) -> dict:
        return {"consumer": self.consumer, "seq": self.seq}

    @classmethod
    def from_dict(cls, value: dict | str) -> ClaimOffset:
        data = json.loads(value) if isinstance(value, str) else value
        try:
            return cls(str(data["consumer"]), int(data["seq"]))
        except (KeyError, TypeError, ValueError):
            raise ConfigError(
                f'offset {value!r} is not a sqlqueue offset; expected e.g. {{"consumer": "etl-1", "seq": 42}}'
            ) from None


@dataclass(frozen=True)
class ClaimPolicy:
    order: str = "fifo"
    strict: bool = False
    lease_seconds: int = 300
    chunk: int | None = None
    keep_completed: bool = False
    prefetch: bool = False
    # False: rows stay claimed after Spark commits until acknowledged row by row (or their lease expires).
    complete_on_commit: bool = True
    max_attempts: int = 5
    rescue_interval_s: float = 30.0


class Consumer:
    """One consumer's view of the queue: advance by claiming, complete what Spark committed.

    With ``policy.prefetch`` the claim after the one just served is made in a background thread
    (on its own connection) while Spark works on the current batch; the next ``advance`` finds
    those rows already held and returns at once. Up to two claims are then held at a time.
    Only a full claim (``limit`` rows: a backlog) is followed by one ahead. After a short one the
    queue is drained, and a claim made ahead would take only the few rows that arrived since,
    leaving the ones that arrive while Spark works to the batch after next: at 500 rows/s into
    Delta that doubled the median latency, 0.74 s to 1.5 s (benchmarks/bench_latency.py).
    """

    def __init__(self, queue: Queue, consumer_id: str, policy: ClaimPolicy) -> None:
        self.queue = queue
        self.id = consumer_id
        self.policy = policy
        self.last_claimed_rows = 0
        self.last_waits = Waits()
        self._waits_ahead: tuple[int, Waits] | None = None  # (claim number, its waits) from the prefetch
        self._prefetch: threading.Thread | None = None
        self._prefetch_queue: Queue | None = None
        self._last_rescue = float("-inf")

    def advance(self, committed: int, limit: int, bound: Any = None, min_rows: int | None = None) -> int:
        """The claim number that ends the next batch, ``committed`` when there is nothing to read.

        1. Everything claimed up to ``committed`` is done: Spark logged those batches as committed.
        2. Rows already held under ``committed + 1`` were claimed just before a crash that kept the
           offset from being logged (or by a prefetch): serve them rather than claim more.
        3. Otherwise claim up to ``limit`` rows under ``committed + 1``, if at least ``min_rows``
           are ready (and only rows within ``bound``, Queue.available_now_bound, when given).
        """
        self.complete_through(committed)
        self._await_prefetch()
        self._rescue_now_and_then()
        nxt = committed + 1
        self.last_claimed_rows = self.queue.count_claimed(self.id, nxt)
        if not self.last_claimed_rows and self._enough_ready(self.queue, min_rows):
            self.last_claimed_rows = self._claim(self.queue, nxt, limit, bound)
        self.last_waits = self._waits(nxt) if self.last_claimed_rows else Waits()
        if self.policy.prefetch and self.last_claimed_rows >= limit:
            self._start_prefetch(nxt + 1, limit, bound, min_rows)
        return nxt if self.last_claimed_rows else committed

    def complete_through(self, seq: int) -> int:
        if not self.policy.complete_on_commit:
            return 0
        return self.queue.complete(self.id, seq, keep=self.policy.keep_completed, chunk=self.policy.chunk)

    def _rescue_now_and_then(self) -> None:
        """Give back rows whose consumer died, at most once per rescue interval (every consumer
        does this, so no separate process is needed)."""
        now = time.monotonic()
        if now - self._last_rescue >= self.policy.rescue_interval_s:
            self._last_rescue = now
            rescued = self.queue.rescue_expired(self.policy.max_attempts, self.policy.chunk)
            if rescued:
                log.info("%s: %d rows with expired leases returned to the queue (or failed)", self.id, rescued)

    def close(self) -> None:
        self._await_prefetch()
        self.queue.close()
        if self._prefetch_queue is not None:
            self._prefetch_queue.close()

    def _claim(self, queue: Queue, seq: int, limit: int, bound: Any) -> int:
        p = self.policy
        return queue.claim(
            self.id,
            seq,
            limit,
            order=p.order,
            strict=p.strict,
            lease_seconds=p.lease_seconds,
            chunk=p.chunk,
            bound=bound,
        )

    def _waits(self, seq: int) -> Waits:
        """How long the rows of claim ``seq`` waited: measured by the prefetch thread when it made the
        claim (ranking 50,000 rows' waits costs about 30 ms on PostgreSQL, off the batch's path
        there), else ranked now from the times the database recorded."""
        if self._waits_ahead is not None and self._waits_ahead[0] == seq:
            return self._waits_ahead[1]
        return self.queue.claim_waits(self.id, seq)

    @staticmethod
    def _enough_ready(queue: Queue, min_rows: int | None) -> bool:
        return not min_rows or queue.count_ready() >= min_rows

    def _start_prefetch(self, seq: int, limit: int, bound: Any, min_rows: int | None) -> None:
        if self._prefetch_queue is None:
            self._prefetch_queue = self.queue.twin()
        queue = self._prefetch_queue

        def claim_ahead() -> None:
            try:
                # A claim ahead honours min_rows too, or a trickle would be served in small batches.
                if not queue.count_claimed(self.id, seq) and self._enough_ready(queue, min_rows):
                    self._claim(queue, seq, limit, bound)
                    self._waits_ahead = (seq, queue.claim_waits(self.id, seq))
            except SqlQueueError as exc:  # the next advance claims in the foreground instead
                log.warning("%s: claiming %d ahead failed: %s", self.id, seq, exc)

        self._prefetch = threading.Thread(target=claim_ahead, name=f"sqlqueue-prefetch-{seq}", daemon=True)
        self._prefetch.start()

    def _await_prefetch(self) -> None:
        if self._prefetch is not None:
            self._prefetch.join()
            self._prefetch = None
