"""The streaming source: one claim per micro-batch, replayed exactly by the claim tags.

Driver-side calls (initialOffset, latestOffset, partitions, commit) run in one long-lived process
on one reader instance, which keeps its connection. ``read`` runs in executors on a copy that has
only what was set in the constructor and what the partition carries.
"""
from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from ..consumer import ClaimOffset, ClaimPolicy, Consumer
from ..options import QueueAddress, SourceOptions
from ..queue import UNLIMITED, Queue
from .types import arrow_schema, record_batch

log = logging.getLogger("sqlqueue.source")

# Executor processes are reused across tasks: keep one queue connection per address.
_QUEUES: dict[tuple, Queue] = {}


def shared_queue(address: QueueAddress) -> Queue:
    key = (address.connection.cache_key, address.table)
    if key not in _QUEUES:
        _QUEUES[key] = Queue(address.connection, address.table)
    return _QUEUES[key]


@dataclass(frozen=True)
class ClaimRange(InputPartition):
    """Rows this consumer claimed under claims (after_seq, upto_seq] with ids in [lo, hi]."""

    consumer: str
    after_seq: int
    upto_seq: int
    lo: int
    hi: int


class QueueStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self._consumer: Consumer | None = None
        self._max_id: int | None = None  # set for Trigger.AvailableNow: only rows ready at the start

    def _consumer_for(self, consumer_id: str) -> Consumer:
        if self._consumer is None or self._consumer.id != consumer_id:
            o = self.options
            policy = ClaimPolicy(o.order, o.strict_order, o.lease_seconds, o.claim_chunk_size, o.keep_completed)
            self._consumer = Consumer(Queue(o.address.connection, o.address.table), consumer_id, policy)
        return self._consumer

    def initialOffset(self) -> dict:
        consumer = self.options.consumer or f"sqlqueue-{uuid.uuid4().hex[:16]}"
        return ClaimOffset(consumer, 0).to_dict()

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.options.max_rows_per_trigger)

    def prepareForTriggerAvailableNow(self) -> None:
        queue = Queue(self.options.address.connection, self.options.address.table)
        try:
            self._max_id = queue.max_ready_id() or 0
        finally:
            queue.close()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        offset = ClaimOffset.from_dict(start)
        consumer = self._consumer_for(offset.consumer)
        max_rows = UNLIMITED if isinstance(limit, ReadAllAvailable) else getattr(limit, "max_rows", None)
        end = consumer.advance(offset.seq, max_rows or self.options.max_rows_per_trigger, self._max_id)
        if end == offset.seq:
            if self._max_id is None:
                time.sleep(self.options.empty_poll_interval_ms / 1000)
        else:
            log.info(
                "sqlqueue %s: claim %d took %d rows from %s", consumer.id, end, consumer.last_claimed,
                self.options.address.table,
            )
        return ClaimOffset(offset.consumer, end).to_dict()

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        first, last = ClaimOffset.from_dict(start), ClaimOffset.from_dict(end)
        queue = self._consumer_for(last.consumer).queue
        bounds = queue.partition_bounds(last.consumer, first.seq, last.seq, self.options.num_partitions)
        return [ClaimRange(last.consumer, first.seq, last.seq, lo, hi) for lo, hi in bounds]

    def read(self, partition: ClaimRange) -> Iterator[pa.RecordBatch]:
        queue = shared_queue(self.options.address)
        target = arrow_schema(self.schema)
        for rows in queue.read_claimed(
            partition.consumer, partition.after_seq, partition.upto_seq, partition.lo, partition.hi,
            target.names, self.options.fetch_size,
        ):
            yield record_batch(rows, target)

    def commit(self, end: dict) -> None:
        offset = ClaimOffset.from_dict(end)
        self._consumer_for(offset.consumer).complete_through(offset.seq)

    def stop(self) -> None:
        if self._consumer is not None:
            self._consumer.queue.close()
