"""The sink: ``writeStream.format("sqlqueue")`` and ``write.format("sqlqueue").mode("append")``.

Each task writes its rows in one transaction, into the queue table under a stage tag no claim takes
while it is listed as unpublished (or, with dedup keys, into the staging table); the commit
publishes the batch in one transaction that also records it in the database's ledger, and an
abort deletes what the batch wrote. ``sqlqueue.producer`` explains why that is exactly once.

Every database step is retried over transient errors for up to retryTimeout (sqlqueue.retry). A
task keeps the Arrow batches it has read (Spark's iterator can be read once) until it ends,
so a retried write sends the same rows; it writes under the same stage tag, and its
transaction first deletes what that tag holds, so rows whose COMMIT landed although the connection
was lost before the answer are not left twice. Publish and discard are safe to repeat by the ledger.
A task that fails all the same is retried by Spark under a stage tag of its own, and publish deletes
what the failed attempt wrote.

Where things run: the DataFrame is checked against the table on the driver side when Spark asks
for a writer, before any task starts. ``write`` runs in executors on an unpickled copy of the
writer, and learns the batch and query from the task's local properties. For streams, ``commit``
and ``abort`` run on a writer that ``streamWriter`` builds afresh for each call, so everything
they need comes in the commit messages.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from ..acknowledger import Acknowledger
from ..errors import ConfigError, append_only
from ..options import SinkOptions
from ..producer import Producer, Written
from ..queue import Ack
from ..schema import Column, Included
from .acks import ack_key, acks_from, check_ack_schema
from .heap import freeze_worker_heap
from .logs import worker_logger
from .reader import check_table, shared_queue
from .types import sink_columns, sink_rows

log = worker_logger("sqlqueue.sink")

# Local properties Spark sets on the tasks of a streaming micro-batch.
BATCH_ID, QUERY_ID, RUN_ID = "streaming.sql.batchId", "sql.streaming.queryId", "spark.jobGroup.id"
# How long after an abort a task being killed may still commit its rows (Spark's killTimeout + margin).
LATE_TASK_GRACE_S = 3.0
# A batch write (df.write) is one batch of its own writer.
ONLY_BATCH = 0

# Driver-side Python workers are reused: check a DataFrame schema against a table once per process.
_CHECKED: dict[tuple, WrittenShape] = {}
T = TypeVar("T")


@dataclass(frozen=True)
class WrittenTask(WriterCommitMessage):
    """What one task wrote, for the commit to publish."""

    writer_id: str
    batch_id: int
    stage_tag: str
    rows: int
    subtype_rows: tuple[int, ...] = ()


@dataclass(frozen=True)
class AckTask(WriterCommitMessage):
    """One task's acknowledgements, applied by the commit in one transaction with the ledger."""

    writer_id: str
    acks: tuple[Ack, ...]


def task_context() -> TaskContext:
    ctx = TaskContext.get()
    assert ctx is not None, "writers run inside Spark tasks"
    return ctx


def stream_ids(options: SinkOptions) -> tuple[str, int, str]:
    """(writer id, batch id, run id) of the micro-batch this task belongs to."""
    ctx = task_context()
    writer_id = options.writer_id or ctx.getLocalProperty(QUERY_ID) or ""
    return writer_id, int(ctx.getLocalProperty(BATCH_ID) or 0), ctx.getLocalProperty(RUN_ID) or ""


@dataclass(frozen=True)
class WrittenShape:
    """What a DataFrame's columns write: the table's ``columns`` (its plain columns, in order), and the
    subtype tables its struct columns write (``included``, after them); ``order``: the DataFrame's column
    of each, in that order."""

    columns: tuple[Column, ...]
    included: tuple[Included, ...]
    order: tuple[int, ...]


def checked_columns(options: SinkOptions, schema: StructType) -> WrittenShape:
    address = options.address
    key = (address.connection.cache_key, address.table, address.profile, schema.json())
    if key not in _CHECKED:
        queue = shared_queue(address)
        plain = [i for i, f in enumerate(schema.fields) if not isinstance(f.dataType, StructType)]
        structs = [i for i, f in enumerate(schema.fields) if isinstance(f.dataType, StructType)]
        base = StructType([schema.fields[i] for i in plain])
        columns = sink_columns(base, queue.producing.writable(base.names))
        fields = {schema.fields[i].name: schema.fields[i].dataType for i in structs}
        included = queue.producing.included(base.names, {name: struct.names for name, struct in fields.items()})  # type: ignore[attr-defined]
        for each, struct in zip(included, fields.values()):
            sink_columns(struct, each.columns)  # type: ignore[arg-type]
        _CHECKED[key] = WrittenShape(columns, included, (*plain, *structs))
    return _CHECKED[key]


class Replayable(Generic[T]):
    """An iterator that can be read again from the start: what was read is kept (a task's Arrow
    batches: as much memory as the task's rows take in Arrow, until the task ends)."""

    def __init__(self, source: Iterable[T]) -> None:
        self._source = iter(source)
        self._read: list[T] = []

    def again(self) -> Iterator[T]:
        yield from self._read
        for item in self._source:
            self._read.append(item)
            yield item


class _Publishing:
    """What the batch and the streaming writer share: write in tasks, publish or discard after."""

    def __init__(self, options: SinkOptions, columns: tuple[Column, ...], shape: WrittenShape | None = None) -> None:
        self.options = options
        self.columns = columns
        # A DataFrame of plain columns only, in the order of ``columns``, unless a shape says otherwise.
        self.shape = shape or WrittenShape(columns, (), tuple(range(len(columns))))

    def _producer(self, writer_id: str, run_id: str = "") -> Producer:
        # Tasks, commits and aborts run after streamWriter (or writer) reached the queue on the driver.
        return Producer(shared_queue(self.options.address, proven=True), writer_id, run_id)

    def _write_task(self, batches: Iterator[pa.RecordBatch], writer_id: str, batch_id: int, run_id: str) -> WrittenTask:
        freeze_worker_heap()
        ctx = task_context()
        producer = self._producer(writer_id, run_id)
        kept = Replayable(batches)
        native = self.options.address.profile is None

        def write() -> Written:
            # The table's columns first, then the struct columns of its subtype tables (WrittenShape).
            ordered = (b.select(list(self.shape.order)) for b in kept.again())
            rows = sink_rows(ordered, self.columns, native)
            attempt = ctx.taskAttemptId()
            return producer.write(batch_id, ctx.partitionId(), self.columns, rows, attempt, self.shape.included)

        written = self.options.retry.run(write, f"writing task {ctx.partitionId()} of batch {batch_id}")
        return WrittenTask(writer_id, batch_id, written.stage_tag, written.rows, written.subtype_rows)

    def _publish(self, messages: Sequence[WrittenTask | None], batch_id: int) -> None:
        tasks = [m for m in messages if m is not None]
        if not tasks:
            return  # no task ran, so nothing was written
        producer = self._producer(tasks[0].writer_id)
        # Publishing again after a transient error is safe: the ledger says whether it happened.
        written = [Written(t.stage_tag, t.rows, t.subtype_rows) for t in tasks]
        included = self.shape.included
        published = self.options.retry.run(
            lambda: producer.publish(batch_id, self.columns, written, included), "publish"
        )
        if published is None:
            log.info("%r: batch %d was published before; nothing to do", producer, batch_id)
        else:
            log.info("%r: batch %d published %d rows", producer, batch_id, published)

    def _discard(self, writer_ids: set[str], batch_id: int) -> None:
        # Deletes the batch's whole tag range: a task that failed after writing sent no message.
        # Tasks Spark is still killing can commit their rows just after the abort; Spark ends a
        # lingering Python task within spark.python.task.killTimeout (2 s), so a second pass after
        # that removes whatever they committed.
        for attempt in range(2):
            if attempt:
                time.sleep(LATE_TASK_GRACE_S)
            for writer_id in writer_ids:
                producer = self._producer(writer_id)
                discarded = self.options.retry.run(functools.partial(producer.discard, batch_id), "discard")
                if discarded or not attempt:
                    log.warning("%r: batch %d aborted; discarded %d unpublished rows", producer, batch_id, discarded)


class _Acking:
    """The ack operation: tasks collect acknowledgements, the commit applies them exactly once."""

    def __init__(self, options: SinkOptions) -> None:
        self.options = options

    def _apply(self, messages: Sequence[AckTask | None], batch_id: int) -> None:
        tasks = [m for m in messages if m is not None]
        if not tasks:
            return
        acknowledger = Acknowledger(shared_queue(self.options.address, proven=True), tasks[0].writer_id)
        acks = [a for t in tasks for a in t.acks]
        o = self.options
        applied = o.retry.run(
            lambda: acknowledger.apply(batch_id, acks, keep=o.keep_done, max_attempts=o.max_attempts), "ack"
        )
        if applied is None:
            log.info("%r: acknowledgements of batch %d were applied before; nothing to do", acknowledger, batch_id)
        else:
            log.info("%r: batch %d acknowledged %d rows", acknowledger, batch_id, applied.acks)
        if applied is not None and applied.fenced:
            log.warning(
                "%r: %d acknowledgements of batch %d changed nothing: their rows were no longer under the claim "
                "that delivered them (fenced out: another claim took them after their lease ran out, or they "
                "were acknowledged before)",
                acknowledger,
                applied.fenced,
                batch_id,
            )


# commit and abort receive the messages this writer's write() returned: their narrower list types are
# why they carry type: ignore[override].
class QueueStreamAckWriter(_Acking, DataSourceStreamArrowWriter):
    def write(self, iterator: Iterator[pa.RecordBatch]) -> AckTask:
        freeze_worker_heap()
        return AckTask(stream_ids(self.options)[0], tuple(acks_from(iterator, self.options)))

    def commit(self, messages: list[AckTask | None], batchId: int) -> None:  # type: ignore[override]
        self._apply(messages, batchId)

    def abort(self, messages: list[AckTask | None], batchId: int) -> None:  # type: ignore[override]
        """Nothing was written: acknowledgements live in the messages until the commit."""


class QueueBatchAckWriter(_Acking, DataSourceArrowWriter):
    def __init__(self, options: SinkOptions) -> None:
        super().__init__(options)
        self.writer_id, self.batch_id = batch_identity(options)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> AckTask:
        freeze_worker_heap()
        return AckTask(self.writer_id, tuple(acks_from(iterator, self.options)))

    def commit(self, messages: list[AckTask | None]) -> None:  # type: ignore[override]
        self._apply(messages, self.batch_id)

    def abort(self, messages: list[AckTask | None]) -> None:  # type: ignore[override]
        """Nothing was written."""


def batch_identity(options: SinkOptions) -> tuple[str, int]:
    """A df.write is exactly once under writerId + batchId (inside foreachBatch); else a batch of its own."""
    if (options.writer_id is None) != (options.batch_id is None):
        raise ConfigError(
            "options 'writerId' and 'batchId' go together on a df.write (e.g. inside foreachBatch: "
            ".option('writerId', 'my-job').option('batchId', batch_id)); give both or neither"
        )
    if options.writer_id is not None and options.batch_id is not None:
        return options.writer_id, options.batch_id
    # Made once on the driver; every task and the commit get it pickled with the writer.
    return f"batch-{uuid.uuid4()}", ONLY_BATCH


class QueueStreamWriter(_Publishing, DataSourceStreamArrowWriter):
    def write(self, iterator: Iterator[pa.RecordBatch]) -> WrittenTask:
        writer_id, batch_id, run_id = stream_ids(self.options)
        return self._write_task(iterator, writer_id, batch_id, run_id)

    def commit(self, messages: list[WrittenTask | None], batchId: int) -> None:  # type: ignore[override]
        self._publish(messages, batchId)

    def abort(self, messages: list[WrittenTask | None], batchId: int) -> None:  # type: ignore[override]
        # With no message and no writerId the query id is unknown here; the restart replays the
        # batch, and its publish deletes whatever this run wrote.
        named = {self.options.writer_id} if self.options.writer_id else set()
        self._discard(named | {m.writer_id for m in messages if m is not None}, batchId)


class QueueBatchWriter(_Publishing, DataSourceArrowWriter):
    def __init__(self, options: SinkOptions, columns: tuple[Column, ...], shape: WrittenShape | None = None) -> None:
        super().__init__(options, columns, shape)
        self.writer_id, self.batch_id = batch_identity(options)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WrittenTask:
        return self._write_task(iterator, self.writer_id, self.batch_id, "")

    def commit(self, messages: list[WrittenTask | None]) -> None:  # type: ignore[override]
        self._publish(messages, self.batch_id)

    def abort(self, messages: list[WrittenTask | None]) -> None:  # type: ignore[override]
        self._discard({self.writer_id}, self.batch_id)


def stream_writer(
    raw: Mapping[str, str], schema: StructType, overwrite: bool
) -> QueueStreamWriter | QueueStreamAckWriter:
    if overwrite:
        raise append_only("outputMode 'complete'", "outputMode('append') or outputMode('update')")
    options = SinkOptions.parse(raw)
    # Spark builds a stream's writer again for every micro-batch, to plan it and to commit it, each time
    # in a Python worker that may be new, and nothing tells the query's first build from later ones: a
    # refused or lost connection here is an outage to ride out (a wrong host or port fails after
    # retryTimeout; a wrong password or database, which the server answers, fails at once).
    check_table(options.address, options.needs, options.retry, proven=True)
    if options.batch_id is not None:
        raise ConfigError("option 'batchId' is for df.write only: a stream's batch ids come from Spark; remove it")
    if options.operation == "ack":
        check_ack_schema(schema, ack_key(options))
        return QueueStreamAckWriter(options)
    shape = checked_columns(options, schema)
    return QueueStreamWriter(options, shape.columns, shape)


def batch_writer(raw: Mapping[str, str], schema: StructType, overwrite: bool) -> QueueBatchWriter | QueueBatchAckWriter:
    if overwrite:
        # Spark itself refuses 'ignore' and 'error' for Python data sources, before asking for a writer.
        raise append_only("mode 'overwrite'", "mode('append')")
    options = SinkOptions.parse(raw)
    check_table(options.address, options.needs, options.retry)
    if options.operation == "ack":
        check_ack_schema(schema, ack_key(options))
        return QueueBatchAckWriter(options)
    shape = checked_columns(options, schema)
    return QueueBatchWriter(options, shape.columns, shape)
