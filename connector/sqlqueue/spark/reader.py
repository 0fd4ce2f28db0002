"""The streaming source: one claim per micro-batch, replayed exactly by claim number.

Driver-side calls (initialOffset, latestOffset, partitions, commit) run in one long-lived process
on one reader instance, which keeps its connection. ``read`` runs in executors on a copy that has
only what was set in the constructor and what the partition carries.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from ..capabilities import Capability
from ..consumer import ClaimOffset, ClaimPolicy, Consumer
from ..options import QueueAddress, SourceOptions
from ..queue import UNLIMITED, GroupRead, Queue
from ..retry import RetryPolicy
from ..waits import BacklogGauge, duration
from .heap import freeze_worker_heap
from .logs import worker_logger
from .types import arrow_schema, csv_batches, csv_readable, record_batch

log = worker_logger("sqlqueue.source")

# Executor processes are reused across tasks: keep one queue connection per address.
_QUEUES: dict[tuple, Queue] = {}


def shared_queue(address: QueueAddress, *, proven: bool = False) -> Queue:
    """This process's queue at ``address``. ``proven``: the caller runs only after the stream reached
    the queue on the driver (a read task after latestOffset claimed, a write task or a commit after
    streamWriter checked the table), so a connection it cannot make, in a fresh executor process too,
    is an outage the retry policy rides out rather than a wrong address."""
    key = (address.connection.cache_key, address.table, address.profile)
    if key not in _QUEUES:
        _QUEUES[key] = Queue(address.connection, address.table, address.profile)
    queue = _QUEUES[key]
    queue.proven = queue.proven or proven
    return queue


# Queues whose layout this process found current: a table never goes back to an older layout.
_CURRENT_LAYOUT: set[tuple] = set()


def check_table(
    address: QueueAddress, needs: frozenset[Capability], retry: RetryPolicy, *, proven: bool = False
) -> None:
    """Refuse, on the driver before any task runs, a table that lacks a capability the options use
    (``needs``), or is not ready to serve (of another layout than this code's: one line naming `sqlqueue
    migrate`; an adopted table whose mapping does not fit), rather than fail halfway through a batch.
    The check rides out a transient error as every other step does; ``proven`` as for ``shared_queue``."""
    queue = shared_queue(address, proven=proven)

    def check() -> None:
        queue.require(*needs)
        key = (address.connection.cache_key, address.table)
        if key not in _CURRENT_LAYOUT:
            queue.require_layout()
            _CURRENT_LAYOUT.add(key)

    retry.run(check, f"checking table {address.table}")


@dataclass(frozen=True)
class ClaimRange(InputPartition):
    """Rows this consumer claimed under claims (after_seq, upto_seq] with ids (or groups) in [lo, hi]."""

    consumer: str
    after_seq: int
    upto_seq: int
    lo: Any
    hi: Any
    # A grouped claim's task: [lo, hi] is a range of group values (None: the rows of no group), read whole
    # groups in the claim order.
    grouped: GroupRead | None = None
    # Runs of ids beside the table hold the claims' rows (ClaimPolicy.runs), not marks on the rows.
    runs: bool = False


class QueueStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self._consumer: Consumer | None = None
        self._gauge: BacklogGauge | None = None
        self._counter: Queue | None = None  # the gauge's connection
        self._bound: Any = None  # set for Trigger.AvailableNow: only rows ready at the start
        self._available_now = False
        self._latest: dict | None = None
        self._last_batch_at: float | None = None  # monotonic time of the last batch, for maxTriggerDelay
        self._checked = False

    def _check(self) -> None:
        """The table check, on the stream's first call to the database (check_table): a wrong address or
        table fails the query in one line before any claim or task."""
        if not self._checked:
            check_table(self.options.address, self.options.needs, self.options.retry)
            self._checked = True

    def _consumer_for(self, consumer_id: str) -> Consumer:
        self._check()
        if self._consumer is None or self._consumer.id != consumer_id:
            if self._consumer is not None:  # only if someone edited the checkpoint's offsets
                self._consumer.close()
            o = self.options
            queue = Queue(o.address.connection, o.address.table, o.address.profile)
            groups = o.groups
            if groups is not None:  # the table's spelling, checked once on the driver
                column = groups.column
                spelled = o.retry.run(lambda: queue.group_column(column), "checking option groupBy")
                groups = replace(groups, column=spelled)
            policy = ClaimPolicy(
                o.order,
                o.strict_order,
                o.lease_seconds,
                o.claim_chunk_size,
                keep_completed=o.completion == "keep",
                prefetch=o.prefetch,
                complete_on_commit=o.completion != "ack",
                max_attempts=o.max_attempts,
                rescue_interval_s=min(max(o.lease_seconds / 4, 1.0), 60.0),
                partitions=o.num_partitions,
                groups=groups,
                runs=o.completion != "ack",
            )
            self._consumer = Consumer(queue, consumer_id, policy)
        return self._consumer

    def _backlog(self, consumer: Consumer) -> BacklogGauge:
        """The backlog's gauge, on a connection of its own (it counts in a thread of its own)."""
        if self._gauge is None:
            counter = self._counter = consumer.queue.twin()
            self._gauge = BacklogGauge(
                lambda: self.options.retry.run(counter.inspection.backlog, "counting the backlog")
            )
        return self._gauge

    def initialOffset(self) -> dict:
        consumer = self.options.consumer or f"sqlqueue-{uuid.uuid4().hex[:16]}"
        return ClaimOffset(consumer, 0).to_dict()

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.options.max_rows_per_trigger)

    def prepareForTriggerAvailableNow(self) -> None:
        self._check()
        address = self.options.address
        queue = Queue(address.connection, address.table, address.profile)
        try:
            self._bound = self.options.retry.run(queue.consuming.available_now_bound, "reading the available-now bound")
            self._available_now = True
        finally:
            queue.close()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        offset = ClaimOffset.from_dict(start)
        consumer = self._consumer_for(offset.consumer)
        max_rows = UNLIMITED if isinstance(limit, ReadAllAvailable) else getattr(limit, "max_rows", None)
        min_rows = self._min_rows(limit)
        # Every step of advance is idempotent, so a retry after a lost connection is safe.
        end = self.options.retry.run(
            lambda: consumer.advance(offset.seq, max_rows or self.options.max_rows_per_trigger, self._bound, min_rows),
            f"claim {offset.seq + 1}",
        )
        if end != offset.seq or self._last_batch_at is None:
            self._last_batch_at = time.monotonic()
        gauge = self._backlog(consumer)
        gauge.claimed(consumer.last_claimed_rows)
        backlog = gauge.read()
        waits = consumer.last_waits
        self._latest = {
            **ClaimOffset(offset.consumer, end).to_dict(),
            "claimedRows": consumer.last_claimed_rows,
            "readyRows": backlog.ready_rows,
            **waits.progress(),
            "oldestReadyAgeMs": backlog.oldest_age_ms,
            "fencedRows": consumer.fenced_rows,
        }
        if end == offset.seq:
            if not self._available_now:
                time.sleep(self.options.empty_poll_interval_ms / 1000)
        else:
            log.info(
                "%s: claim %d took %d rows from %s (queue wait %s), %d ready rows remain (oldest %s)",
                consumer.id,
                end,
                consumer.last_claimed_rows,
                self.options.address.table,
                waits,
                backlog.ready_rows,
                duration(backlog.oldest_age_ms),
            )
        return ClaimOffset(offset.consumer, end).to_dict()

    def _min_rows(self, limit: ReadLimit) -> int | None:
        """minRowsPerTrigger while it applies: not for AvailableNow, and not once maxTriggerDelay has
        gone by since the last batch (or since this run's first trigger)."""
        if self.options.min_rows_per_trigger is None or self._available_now or isinstance(limit, ReadAllAvailable):
            return None
        waited_ms = (time.monotonic() - (self._last_batch_at or time.monotonic())) * 1000
        return self.options.min_rows_per_trigger if waited_ms < self.options.max_trigger_delay_ms else None

    def reportLatestOffset(self) -> dict | None:
        """Shown as the source's latestOffset in query progress: the claim, its rows and the backlog."""
        return self._latest

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        first, last = ClaimOffset.from_dict(start), ClaimOffset.from_dict(end)
        consumer = self._consumer_for(last.consumer)

        def plan() -> list[tuple[int, int]]:
            consumer.replay(first.seq, last.seq)  # after a restart: held claims renewed before they are read
            return consumer.partition_bounds(first.seq, last.seq)

        bounds = self.options.retry.run(plan, f"planning claims {first.seq + 1}..{last.seq}")
        grouped = self._grouped(consumer)
        runs = self.options.retry.run(lambda: consumer.held_as_runs(first.seq, last.seq), "planning the read")
        return [ClaimRange(last.consumer, first.seq, last.seq, lo, hi, grouped, runs) for lo, hi in bounds]

    def _grouped(self, consumer: Consumer) -> GroupRead | None:
        """How a read task of a grouped claim reads: the group column, and the claim order (the key's where
        the claim takes any order)."""
        groups = consumer.policy.groups
        if groups is None:
            return None
        return groups.column, consumer.queue.consuming.claim_profile(self.options.order).ranking

    def read(self, partition: ClaimRange) -> Iterator[pa.RecordBatch]:  # type: ignore[override]  # Spark passes back the partitions planned here
        log.debug(
            "reading claims %d..%d, ids %d..%d", partition.after_seq + 1, partition.upto_seq, partition.lo, partition.hi
        )
        freeze_worker_heap()
        queue = shared_queue(self.options.address, proven=True)
        target = arrow_schema(self.schema)
        bounds = (partition.consumer, partition.after_seq, partition.upto_seq, partition.lo, partition.hi)

        grouped, runs = partition.grouped, partition.runs

        def first_rows() -> tuple[pa.RecordBatch | None, Iterator[pa.RecordBatch]]:
            readable = csv_readable(target)
            chunks = queue.consuming.export_claimed(*bounds, target.names, grouped, runs) if readable else None
            if chunks is not None:  # the engine streams the rows as text, which Arrow parses in C++
                batches = csv_batches(chunks, target)
            else:
                rows = queue.consuming.read_claimed(*bounds, target.names, self.options.fetch_size, grouped, runs)
                batches = (record_batch(chunk, target) for chunk in rows)
            return next(batches, None), batches

        # Retry only until the first rows are out: after that a retry would repeat them.
        first, rest = self.options.retry.run(first_rows, f"reading ids {partition.lo}..{partition.hi}")
        if first is not None:
            yield first
        yield from rest

    def commit(self, end: dict) -> None:
        offset = ClaimOffset.from_dict(end)
        consumer = self._consumer_for(offset.consumer)
        self.options.retry.run(lambda: consumer.complete_through(offset.seq), f"completing claim {offset.seq}")

    def stop(self) -> None:
        if self._gauge is not None:
            self._gauge.close()
        if self._counter is not None:
            self._counter.close()
        if self._consumer is not None:
            self._consumer.close()
