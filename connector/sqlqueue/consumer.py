"""The claim protocol that makes a replayed micro-batch return exactly the rows it returned before.

An offset is a consumer identity and a claim number. Every row a consumer claims carries
the claim number it was claimed under (claim_seq), so "batch N" means "the rows this consumer
claimed in claim N" and can be read again by that number after any crash. Spark's checkpoint holds the numbers.

The claims Spark has not committed yet are *held*: the batch being processed, a claim made ahead,
or one held across a crash. A held claim keeps its lease alive (a heartbeat renews it, and a restart
renews it before anything else is claimed), a claim never takes back a row its own consumer holds, and
the rows another claimer took once a lease had run out anyway are fenced: counted and logged, never
completed or served by this consumer.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError, SqlQueueError
from .groups import Grouping
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
    # The read tasks a batch is split into (the source's numPartitions): a claim made ahead plans them too.
    partitions: int = 1
    # Claim by message group (the source's groupBy, or the table's profile.group): None claims ungrouped.
    groups: Grouping | None = None
    # Hold the rows a claim takes as runs of ids beside the table, writing nothing on them, where the table
    # allows it and the claim is neither grouped nor strict (Consuming.holds_as_runs): the source's choice for a
    # stream whose rows are completed when Spark commits them.
    runs: bool = False

    @property
    def heartbeat_s(self) -> float:
        """How often held claims are renewed: a fifth of the lease, as Hangfire's sliding invisibility
        timeout does, so a row's lease never runs below about half of it while its claim is held."""
        return max(self.lease_seconds / 5, 0.2)


class Consumer:
    """One consumer's view of the queue: advance by claiming, complete what Spark committed, and keep
    the claims Spark has not committed alive while they are held.

    With ``policy.prefetch`` the claim after the one just served is made in a background thread
    (on its own connection) while Spark works on the current batch; the next ``advance`` finds
    those rows already held and returns at once. Up to two claims are then held at a time.
    Only a full claim (``limit`` rows: a backlog) is followed by one ahead. After a short one the
    queue is drained, and a claim made ahead would take only the few rows that arrived since,
    leaving the ones that arrive while Spark works to the batch after next: at 500 rows/s into
    Delta that doubled the median latency, 0.74 s to 1.5 s (benchmarks/bench_latency.py).

    Every write of this consumer runs under one lock: the heartbeat, the claim made ahead and the
    foreground's completion and claim never interleave on the same rows (a renewal that rewrites a
    guard between completion's read of it and its write would fence out completion itself).
    """

    def __init__(self, queue: Queue, consumer_id: str, policy: ClaimPolicy) -> None:
        self.queue = queue
        self.id = consumer_id
        self.policy = policy
        self.last_claimed_rows = 0
        self.last_waits = Waits()
        self.fenced_rows = 0  # rows of this consumer's claims another claimer took, this run
        self._waits_ahead: tuple[int, Waits] | None = None  # (claim number, its waits) from the claim that took it
        self._taken_ahead: tuple[int, int] | None = None  # (claim number, rows it took) from the prefetch
        self._bounds: dict[int, list[tuple[int, int]]] = {}  # claim number -> its read tasks' row ranges
        self._made: dict[int, bool] = {}  # claim number -> whether runs hold it, for claims this run made
        self._prefetch: threading.Thread | None = None
        self._background: Queue | None = None  # the connection of the claim ahead and the heartbeat
        self._last_rescue = float("-inf")
        self._lock = threading.Lock()
        self._committed: int | None = None  # claims after this one are held
        self._renewed_at = float("-inf")
        self._served: dict[int, int] = {}  # claim number -> rows it served, for the fenced count
        self._first_completion = True  # claims a run before this one served may still be held
        self._completed = -1  # claims up to this one are completed (-1: none yet this run)
        self._completing = -1  # ... or are being completed by the thread that claims ahead
        self._beat: threading.Thread | None = None
        self._stopping = threading.Event()

    def advance(self, committed: int, limit: int, bound: Any = None, min_rows: int | None = None) -> int:
        """The claim number that ends the next batch, ``committed`` when there is nothing to read.

        1. Claims after ``committed`` are held: their leases are renewed before anything else is claimed.
        2. Rows already held under ``committed + 1`` were claimed just before a crash that kept the
           offset from being logged (or by a prefetch): serve those still this consumer's rather
           than claim more.
        3. Otherwise everything claimed up to ``committed`` is done (Spark logged those batches as
           committed), rows whose claimer's lease ran out are given back now and then, and up to
           ``limit`` rows are claimed under ``committed + 1``, if at least ``min_rows`` are ready (and only
           rows within ``bound``, Consuming.available_now_bound, when given).
        4. With ``policy.prefetch``, after a full claim (a backlog), a background thread does step 3 for
           the claim after: completes ``committed``, gives back expired rows and claims ``committed + 2``,
           off the batch's path. Otherwise ``committed`` is completed before this call returns.

        Completion always comes before a sweep or a claim that could take back the committed rows: after a
        restart their lease may have run out, and this consumer would otherwise serve them again.
        """
        self._await_prefetch()
        nxt = committed + 1
        with self._lock:
            self._hold(self.queue, committed)
            dropped = self.queue.consuming.drop_fenced(self.id, nxt)
            self._fence(dropped, f"claim {nxt}, made ahead or held across a restart")
            self.last_claimed_rows = self._held(nxt, dropped)
            if not self.last_claimed_rows:
                self._complete(self.queue, committed)
                self._rescue_now_and_then(self.queue)
                if self._enough_ready(self.queue, min_rows):
                    self.last_claimed_rows = self._claim(self.queue, nxt, limit, bound)
            if self.last_claimed_rows:
                self._served[nxt] = self.last_claimed_rows
        self.last_waits = self._waits(nxt) if self.last_claimed_rows else Waits()
        self._start_heartbeat()
        if self.policy.prefetch and self.last_claimed_rows >= limit:
            self._start_prefetch(nxt + 1, limit, bound, min_rows, committed)
        else:
            self.complete_through(committed)
        return nxt if self.last_claimed_rows else committed

    def replay(self, after: int, upto: int) -> None:
        """Spark reads claims (after, upto]: after a restart it reads them again before it asks for a new
        batch, so they are held, and their leases are renewed first (and kept alive from here on). Rows
        of those claims another claimer took while this stream was away are dropped first: serving them
        again would deliver them twice. Where the first attempt's batch reached the sink, a sink that is
        idempotent per batch discards the replay's rows anyway, so a replay needs only the rows still ours.

        Claims this run served itself (every batch but the first after a restart) need none of it, and
        return at once rather than wait for the lock a claim made ahead holds."""
        if after == self._committed and all(seq in self._served for seq in range(after + 1, upto + 1)):
            return
        with self._lock:
            self._hold(self.queue, after)
            for seq in range(after + 1, upto + 1):
                if seq not in self._served:  # held across a restart
                    self._fence(
                        self.queue.consuming.drop_fenced(self.id, seq), f"claim {seq}, replayed after a restart"
                    )
                    self._served[seq] = self.queue.consuming.count_claimed(self.id, seq)
        self._start_heartbeat()

    def partition_bounds(self, after: int, upto: int) -> list[tuple[Any, Any]]:
        """Row ranges that split the rows of claims (after, upto] into ``policy.partitions`` read tasks: as the
        claim planned them when it is one claim this run made, else asked of the table. A grouped claim's
        are ranges of group values, (None, None) for the rows of no group (Consuming.partition_bounds)."""
        planned = self._bounds.get(upto) if upto == after + 1 else None
        if planned:
            return planned
        group = self.policy.groups.column if self.policy.groups else None
        runs = self.held_as_runs(after, upto)
        return self.queue.consuming.partition_bounds(self.id, after, upto, self.policy.partitions, group, runs)

    def held_as_runs(self, after: int, upto: int) -> bool:
        """Whether runs of ids hold the rows of claims (after, upto] (ClaimPolicy.runs): as this run made them,
        or for a claim held across a restart, as the table shows (it may have been made under other options)."""
        made = [self._made.get(seq) for seq in range(after + 1, upto + 1)]
        if made and None not in made:
            return any(made)
        return self.queue.consuming.runs_hold(self.id, after, upto)

    def complete_through(self, seq: int) -> int:
        """Complete the rows of claims up to ``seq`` (Spark committed them); how many were done. Rows of
        those claims another claimer took after their lease ran out are left alone, counted and logged:
        those of claims this run served, and on a run's first completion, those of claims a run before
        it served and Spark committed (held across the restart, counted as they stand).

        Claims already completed, or being completed by the thread that claims ahead, return 0 at once:
        Spark's commit of a batch comes after the next batch's claim, on the batch's path."""
        if seq <= max(self._completed, self._completing):
            return 0
        with self._lock:
            return self._complete(self.queue, seq)

    def _complete(self, queue: Queue, seq: int) -> int:
        if seq <= self._completed:
            return 0
        if not self.policy.complete_on_commit:
            self._served = {s: n for s, n in self._served.items() if s > seq}
            self._bounds = {s: b for s, b in self._bounds.items() if s > seq}
            self._made = {s: r for s, r in self._made.items() if s > seq}
            self._completed = seq
            return 0
        inherited = 0
        if self._first_completion:
            below = min((s for s in self._served if s <= seq), default=seq + 1) - 1
            inherited = queue.consuming.count_claimed_through(self.id, below) if below > 0 else 0
            self._first_completion = False
        done = queue.consuming.complete(self.id, seq, keep=self.policy.keep_completed, chunk=self.policy.chunk)
        served = [self._served.pop(s) for s in sorted(self._served) if s <= seq]
        self._bounds = {s: b for s, b in self._bounds.items() if s > seq}
        self._made = {s: r for s, r in self._made.items() if s > seq}
        self._completed = seq
        if served or inherited:
            self._fence(sum(served) + inherited - done, f"claims up to {seq}, not completed")
        return done

    def _fence(self, rows: int, what: str) -> None:
        if rows > 0:
            self.fenced_rows += rows
            log.warning(
                "%s: %d rows of %s were taken by another claimer after their lease ran out (fenced out): "
                "left to it; a longer leaseSeconds than the longest outage keeps them",
                self.id,
                rows,
                what,
            )

    def _hold(self, queue: Queue, committed: int, beat: bool = False) -> None:
        """Claims after ``committed`` are held: renew the leases of theirs that have less than half left,
        on a heartbeat, or when no renewal ran within the last one (so the first call of a run, after a
        restart, renews before anything is claimed)."""
        self._committed = committed
        now = time.monotonic()
        if not beat and now - self._renewed_at < self.policy.heartbeat_s:
            return
        renewed = queue.consuming.renew(self.id, committed, self.policy.lease_seconds, self.policy.chunk)
        self._renewed_at = now
        if renewed:
            log.info("%s: renewed the lease of %d held rows (claims after %d)", self.id, renewed, committed)

    def _rescue_now_and_then(self, queue: Queue) -> None:
        """Give back rows whose consumer died, at most once per rescue interval (every consumer
        does this, so no separate process is needed)."""
        now = time.monotonic()
        if now - self._last_rescue >= self.policy.rescue_interval_s:
            self._last_rescue = now
            rescued = queue.consuming.rescue_expired(self.policy.max_attempts, self.policy.chunk)
            if rescued:
                log.info("%s: %d rows with expired leases returned to the queue (or failed)", self.id, rescued)

    def close(self) -> None:
        self._stopping.set()
        self._await_prefetch()
        if self._beat is not None:
            self._beat.join()
        self.queue.close()
        if self._background is not None:
            self._background.close()

    def _claim(self, queue: Queue, seq: int, limit: int, bound: Any) -> int:
        """Claim ``seq``; where the claim returns the ids it took, its read tasks' row ranges are planned
        from them, which spares partition_bounds a pass over the claimed rows, and with them their waits,
        which spares claim_waits one."""
        taken: list[int] = []
        waited: list[int] = []
        p = self.policy
        claimed = queue.consuming.claim(
            self.id,
            seq,
            limit,
            order=p.order,
            strict=p.strict,
            lease_seconds=p.lease_seconds,
            chunk=p.chunk,
            bound=bound,
            taken=taken,
            groups=p.groups,
            waited=waited,
            runs=p.runs,
        )
        self._made[seq] = queue.consuming.holds_as_runs(p.runs, p.order, p.strict, p.groups)
        if taken and p.groups is None:  # a grouped claim's read tasks take whole groups
            self._bounds[seq] = even_ranges(taken, p.partitions)
        if claimed and len(waited) == claimed:
            self._waits_ahead = (seq, Waits.ranked(waited))
        return claimed

    def _held(self, seq: int, dropped: int) -> int:
        """Rows held under claim ``seq``: as many as the claim made ahead took, when it made it and none was
        dropped since (a count of the claimed rows costs 155 ms at 500,000 on PostgreSQL), else counted."""
        if self._taken_ahead is not None and self._taken_ahead[0] == seq and not dropped:
            return self._taken_ahead[1]
        return self.queue.consuming.count_claimed(self.id, seq)

    def _waits(self, seq: int) -> Waits:
        """How long the rows of claim ``seq`` waited: as the claim returned them, or as the prefetch thread
        ranked them after its claim (ranking 50,000 rows' waits costs about 30 ms on PostgreSQL, off the
        batch's path there), else ranked now from the times the database recorded."""
        if self._waits_ahead is not None and self._waits_ahead[0] == seq:
            return self._waits_ahead[1]
        return self.queue.inspection.claim_waits(self.id, seq, self.held_as_runs(seq - 1, seq))

    @staticmethod
    def _enough_ready(queue: Queue, min_rows: int | None) -> bool:
        return not min_rows or queue.inspection.count_ready() >= min_rows

    def _background_queue(self) -> Queue:
        if self._background is None:
            self._background = self.queue.twin()
        return self._background

    def _start_heartbeat(self) -> None:
        """Renew held claims every ``policy.heartbeat_s`` until close, on the background connection."""
        if self._beat is not None:
            return

        def beat() -> None:
            while not self._stopping.wait(self.policy.heartbeat_s):
                with self._lock:
                    if self._committed is None or self._stopping.is_set():
                        continue
                    try:
                        self._hold(self._background_queue(), self._committed, beat=True)
                    except SqlQueueError as exc:  # the next beat, or the next batch, renews instead
                        log.warning("%s: renewing held claims failed: %s", self.id, exc)

        self._beat = threading.Thread(target=beat, name=f"sqlqueue-heartbeat-{self.id}", daemon=True)
        self._beat.start()

    def _start_prefetch(self, seq: int, limit: int, bound: Any, min_rows: int | None, committed: int) -> None:
        """In the background, on the background connection: complete the claims up to ``committed``, give back
        expired rows now and then, and claim ``seq`` ahead. A failed completion is done again by the next
        ``advance`` (or the next run) before it sweeps or claims."""
        queue = self._background_queue()
        self._completing = committed

        def claim_ahead() -> None:
            try:
                with self._lock:  # the heartbeat shares this connection
                    self._complete(queue, committed)
                    self._rescue_now_and_then(queue)
                    # A claim ahead honours min_rows too, or a trickle would be served in small batches.
                    if queue.consuming.count_claimed(self.id, seq) or not self._enough_ready(queue, min_rows):
                        return
                    self._taken_ahead = (seq, self._claim(queue, seq, limit, bound))
                    if self._waits_ahead is None or self._waits_ahead[0] != seq:  # not returned by the claim
                        self._waits_ahead = (seq, queue.inspection.claim_waits(self.id, seq, self._made[seq]))
            except SqlQueueError as exc:  # the next advance claims (and completes) in the foreground instead
                log.warning("%s: claiming %d ahead failed: %s", self.id, seq, exc)

        self._prefetch = threading.Thread(target=claim_ahead, name=f"sqlqueue-prefetch-{seq}", daemon=True)
        self._prefetch.start()

    def _await_prefetch(self) -> None:
        if self._prefetch is not None:
            self._prefetch.join()
            self._prefetch = None
        self._completing = self._completed  # what the background did not complete, a foreground call does


def even_ranges(ids: list[int], parts: int) -> list[tuple[int, int]]:
    """``ids`` split in order into ``parts`` ranges [lo, hi] of about as many ids each (as NTILE would)."""
    ids = sorted(ids)
    size, extra = divmod(len(ids), parts)
    ranges, start = [], 0
    for part in range(min(parts, len(ids))):
        end = start + size + (part < extra)
        ranges.append((ids[start], ids[end - 1]))
        start = end
    return ranges
