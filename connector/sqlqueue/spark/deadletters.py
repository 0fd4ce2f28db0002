"""Dead letters in Delta: failed rows moved out of the queue exactly once, and redriven back from there.

**Where the move runs.** Not in the source: a DataSourceStreamReader's methods run in a Python worker
the JVM starts, with no SparkSession, so the reader cannot write Delta. The move runs where one is:
in the driver's Python process, inside ``foreachBatch``, after the micro-batch's own Delta commit.
``queue_to_delta`` does that when the source option ``deadLetterTable`` is set; in your own
``foreachBatch``, wrap your writer:

    write = with_dead_letters(my_write, source_options, mover_id="/checkpoints/orders")
    stream.writeStream.foreachBatch(write).option("checkpointLocation", "/checkpoints/orders").start()

The protocol (tag a chunk, append it once under its move number, delete it) is in
``sqlqueue.deadletters``; the append is ``append_once`` under the app id
``deadletters:<queue>:<mover id>``, each move number being its batch id.

**Redrive** (``sqlqueue redrive --from-delta``) marks the rows it picks with a redrive id in one Delta
UPDATE (SQL, as every Delta operation here, so that it runs on Spark Connect too), enqueues them in
chunks through the sink's ledger, then sets ``redriven_at`` in one more UPDATE. A redrive interrupted
anywhere is finished by the next ``sqlqueue redrive`` of that queue.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from ..deadletters import DeadLetters, Move, Redrive, dead_letter_columns
from ..errors import ConfigError, SchemaError, missing_option
from ..options import QueueAddress, SourceOptions
from ..queue import Queue
from ..retry import RetryPolicy
from ..schema import Column
from .delta import AppendOnce, BatchWriter, history, read_table, sql_string, table_sql
from .types import arrow_schema, record_batch, spark_ddl

log = logging.getLogger("sqlqueue.deadletters")

# A move reads the queue table without an index (none holds failed rows), so a job does it at most
# this often, and at its first micro-batch, which also finishes a move a crash interrupted.
MOVE_INTERVAL_S = 30.0
CHUNK = 10_000


class DeadLetterMover:
    """Moves one queue's failed rows into one Delta table. Runs on the driver, where Spark is.

    ``mover_id`` must be stable across restarts and used by one running job at a time (a streaming
    query's checkpoint location is both); ``chunk`` rows move per Delta commit.
    """

    def __init__(
        self,
        address: QueueAddress,
        target: str,
        mover_id: str,
        *,
        chunk: int | None = None,
        every_seconds: float = MOVE_INTERVAL_S,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.address = address
        self.target = target
        self.mover_id = mover_id
        self.chunk = chunk
        self.every_seconds = every_seconds
        self.retry = retry or RetryPolicy()
        self._append = AppendOnce(target, f"deadletters:{address.table}:{mover_id}")
        self._dead: DeadLetters | None = None
        self._recovered = False  # this process has finished the moves it found tagged
        self._last_move: float | None = None

    @classmethod
    def from_options(cls, options: Mapping[str, str], mover_id: str, **kwargs: Any) -> DeadLetterMover:
        """A mover for the queue and ``deadLetterTable`` of a source's options."""
        parsed = SourceOptions.parse(options)
        if not parsed.dead_letter_table:
            raise missing_option("deadLetterTable", "name the Delta table failed rows move to (a path or a table name)")
        kwargs.setdefault("chunk", parsed.claim_chunk_size)
        kwargs.setdefault("retry", parsed.retry)
        return cls(parsed.address, parsed.dead_letter_table, mover_id, **kwargs)

    def __repr__(self) -> str:
        return f"DeadLetterMover({self.address.table} to {self.target})"

    def after(self, write: BatchWriter) -> BatchWriter:
        """``write``, then a move (at most every ``every_seconds``): for ``foreachBatch``."""

        def write_then_move(batch: DataFrame, batch_id: int) -> None:
            write(batch, batch_id)
            self.move_now_and_then(batch.sparkSession)

        return write_then_move

    def move_now_and_then(self, spark: SparkSession) -> int:
        now = time.monotonic()
        if self._last_move is not None and now - self._last_move < self.every_seconds:
            return 0
        self._last_move = now
        return self.move(spark)

    def move(self, spark: SparkSession) -> int:
        """Move every failed row now; how many rows reached the Delta table. Transient database errors
        are retried: each attempt first finishes what the one before left tagged."""
        return self.retry.run(lambda: self._move(spark), f"moving dead letters of {self.address.table}")

    def close(self) -> None:
        if self._dead is not None:
            self._dead.queue.close()

    def _dead_letters(self) -> DeadLetters:
        if self._dead is None:
            queue = Queue(self.address.connection, self.address.table)
            queue.require_layout()
            self._dead = DeadLetters(queue, self.mover_id)
        return self._dead

    def _move(self, spark: SparkSession) -> int:
        dead = self._dead_letters()
        chunk = self.chunk or dead.queue.engine.default_chunk or CHUNK
        moved = 0
        try:
            if not self._recovered:
                for pending in dead.pending():
                    moved += self._finish(spark, dead, pending)
                self._recovered = True
            while True:
                # Above every move this mover appended; none of its moves is left tagged now.
                move = dead.mark((self._append.last(spark) or 0) + 1, chunk)
                if move is None:
                    break
                moved += self._finish(spark, dead, move)
                if move.rows < chunk:
                    break
        except BaseException:
            # A tag may have committed unseen, or an append may have: find out from the tables next time.
            self._recovered = False
            raise
        if moved:
            log.info("moved %d failed rows of %s to the dead-letter table %s", moved, dead.queue.table, self.target)
        return moved

    def _finish(self, spark: SparkSession, dead: DeadLetters, move: Move) -> int:
        """Append a tagged move unless Delta has it (a move at most the last appended one), then delete it."""
        self.before_append(move)
        domain = dead.queue.domain_columns()
        rows = dead.rows(move, domain)
        if rows:
            self._append(frame(spark, dead_letter_columns(domain), rows), move.number)
        self.before_delete(move)
        dead.delete(move)
        return len(rows)

    # Hooks for the crash tests, which stop a mover between the steps of a move.
    def before_append(self, move: Move) -> None:
        pass

    def before_delete(self, move: Move) -> None:
        pass


def frame(spark: SparkSession, columns: Sequence[Column], rows: list[tuple]) -> DataFrame:
    """Dead-letter rows as a DataFrame with the dead-letter table's ``columns``."""
    schema = StructType.fromDDL(spark_ddl(columns))
    assert isinstance(schema, StructType)
    return spark.createDataFrame(pa.Table.from_batches([record_batch(rows, arrow_schema(schema))]))


def with_dead_letters(
    write: BatchWriter, source_options: Mapping[str, str], mover_id: str, **kwargs: Any
) -> BatchWriter:
    """``write`` followed by a move of the queue's failed rows to the source's ``deadLetterTable``."""
    return DeadLetterMover.from_options(source_options, mover_id, **kwargs).after(write)


# ---- redrive -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Redriven:
    """One redrive: the rows it took from Delta, those that became queue rows in this run, those still
    in the queue from before (their dedup key), whether it finished an interrupted redrive, and the
    chunk it started at."""

    redrive_id: str
    rows: int
    enqueued: int
    in_queue: int
    resumed: bool
    first_chunk: int


def _condition(frame: DataFrame, where: str) -> str:
    """``where``, checked against the dead-letter table's columns, as SQL to put in parentheses."""
    try:
        frame.where(F.expr(where)).limit(0).collect()  # analysed now: an unknown column fails here
    except (ParseException, AnalysisException) as exc:
        first = str(exc).strip().splitlines()[0]
        raise ConfigError(f"--where {where!r} is not a condition on the dead-letter table's columns: {first}") from None
    return f"({where})"


def redrive(
    spark: SparkSession,
    queue: Queue,
    source: str,
    *,
    where: str | None = None,
    limit: int | None = None,
    chunk: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[Redriven]:
    """Send dead letters of ``queue`` in the Delta table ``source`` back to it, exactly once.

    An unfinished redrive of this queue is finished first, and then nothing else is picked (run
    again for more). Otherwise the rows not redriven yet that match ``where`` (a Spark SQL
    condition), the ``limit`` lowest ids of them, are marked and sent.
    """
    if history(spark, source, 1) is None:
        raise ConfigError(f"--from-delta {source}: there is no Delta table there")
    table = read_table(spark, source)
    mine = f"queue = {sql_string(str(queue.table))}"
    unfinished = table.where(f"{mine} AND redrive_id IS NOT NULL AND redriven_at IS NULL").select("redrive_id")
    resumed = sorted(r[0] for r in unfinished.distinct().collect())
    if resumed:
        return [_send(spark, source, queue, rid, progress, resumed=True) for rid in resumed]
    picked = f"{mine} AND redrive_id IS NULL"
    if where:
        picked += f" AND {_condition(table, where)}"
    if limit is not None:
        highest = table.where(picked).orderBy("id").limit(limit).agg(F.max("id")).first()
        cutoff = highest[0] if highest is not None else None
        if cutoff is None:
            return []
        picked += f" AND id <= {int(cutoff)}"
    # The chunk size travels in the id: a resumed redrive must cut the same chunks.
    rid = f"{uuid.uuid4().hex}:{chunk or queue.engine.default_chunk or CHUNK}"
    spark.sql(f"UPDATE {table_sql(source)} SET redrive_id = {sql_string(rid)} WHERE {picked}")
    return [_send(spark, source, queue, rid, progress, resumed=False)]


def _send(
    spark: SparkSession, source: str, queue: Queue, rid: str, progress: Callable[[int], None] | None, resumed: bool
) -> Redriven:
    chunk = int(rid.rpartition(":")[2])
    names = [c.name for c in queue.domain_columns()]
    table = read_table(spark, source)
    missing = [n for n in names if n not in table.columns]
    if missing:
        raise SchemaError(f"the dead-letter table has no column(s) {', '.join(missing)} of queue {queue.table}")
    mine = f"redrive_id = {sql_string(rid)}"
    rows = table.where(mine).orderBy("id").select("id", *names).toArrow()
    sender = Redrive(queue, rid)
    start = sender.chunks_done()
    enqueued = in_queue = 0
    for number in range(start, math.ceil(rows.num_rows / chunk)):
        part = rows.slice(number * chunk, chunk)
        ids = part.column(0).to_pylist()
        values = [part.column(i).to_pylist() for i in range(1, part.num_columns)]
        domain = list(zip(*values)) if values else [()] * len(ids)
        sent = sender.send(number, zip(ids, domain)) or 0
        enqueued, in_queue = enqueued + sent, in_queue + len(ids) - sent
        if progress is not None:
            progress(min((number + 1) * chunk, rows.num_rows) - start * chunk)
    spark.sql(f"UPDATE {table_sql(source)} SET redriven_at = current_timestamp() WHERE {mine}")
    sender.forget()
    return Redriven(rid, rows.num_rows, enqueued, in_queue, resumed, start)
