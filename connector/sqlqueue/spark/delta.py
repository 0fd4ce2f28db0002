"""Idempotent writes of a micro-batch into Delta, for ``foreachBatch``.

A plain append inside ``foreachBatch`` is not idempotent: a batch Spark replays after a crash
would be appended twice. Delta's ``txnAppId``/``txnVersion`` options (and its streaming sink) make
it so, but they read the table's full state for every commit: even with Delta's snapshot
partitions at 1 (see .tuning), queue -> Delta with txnAppId/txnVersion cost 1.65-1.8x (50k-row
batches) to 2.1-2.3x (10k) what it costs with this module per micro-batch on 2 cores
(benchmarks/bench_source.py, two runs). ``append_once`` gets the same guarantee more cheaply: each
append carries a marker ``sqlqueue:<app id>:<batch id>`` in the commit's userMetadata, and a batch
whose marker is in the table's history is skipped. That suffices because Spark only ever replays
its latest batch, whose append, if it happened, is this app's most recent marker. Other writers
may append to the table at the same time: their commits carry no marker of this app (if they
set ``spark.databricks.delta.commitInfo.userMetadata`` it does not reach this module's commits,
whose option wins). The marker replaces any userMetadata of the session on this module's commits.

``merge_on`` goes further: it inserts only keys the table does not hold, which also absorbs rows
that reach the sink twice through a second consumer (an expired lease).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

BatchWriter = Callable[[DataFrame, int], None]
HISTORY_DEPTH = 100


def is_path(target: str) -> bool:
    """A folder or URI rather than a table name."""
    return "/" in target or ":" in target


def delta_table(spark: SparkSession, target: str) -> Any:
    """The Delta table at a path or of a name, or None when there is none yet."""
    from delta.tables import DeltaTable

    if is_path(target):
        return DeltaTable.forPath(spark, target) if DeltaTable.isDeltaTable(spark, target) else None
    return DeltaTable.forName(spark, target) if spark.catalog.tableExists(target) else None


def last_appended_batch(spark: SparkSession, target: str, app_id: str) -> int | None:
    """The batch id of this app's most recent append, from the markers of the table's commits.

    The latest ``HISTORY_DEPTH`` commits are read first; only if this app's marker is not among
    them (other writers committed more since, or the app never wrote here) is the whole history
    the log still keeps read, so a replay is never appended twice however busy the table was.
    """
    table = delta_table(spark, target)
    if table is None:
        return None
    prefix = f"sqlqueue:{app_id}:"
    for history in (table.history(HISTORY_DEPTH), None):
        if history is None:
            if table.history(1).first().version < HISTORY_DEPTH:  # the recent commits were all of them
                return None
            history = table.history()
        found = (
            history.where(F.col("userMetadata").startswith(prefix))
            .orderBy(F.col("version").desc())
            .select("userMetadata")
            .first()
        )
        if found:
            return int(found.userMetadata[len(prefix) :])
    return None


class AppendOnce:
    """A BatchWriter that appends each batch id at most once (see the module's docstring).

    The table is asked once per process (a restart is a new process or a new writer); after that,
    this writer's own appends are the latest markers, which saves a Spark job per batch.
    """

    def __init__(self, target: str, app_id: str) -> None:
        self.target = target
        self.app_id = app_id
        self._last: int | None = None
        self._asked = False

    def last(self, spark: SparkSession) -> int | None:
        """The highest batch id this app appended to the table."""
        if not self._asked:
            self._last, self._asked = last_appended_batch(spark, self.target, self.app_id), True
        return self._last

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        last = self.last(batch.sparkSession)
        if last is not None and last >= batch_id:
            return  # a replay of a batch that was appended before the crash
        self._asked = False  # an append that raises may still have committed: ask the table next time
        writer = batch.write.format("delta").mode("append").option("userMetadata", f"sqlqueue:{self.app_id}:{batch_id}")
        writer.save(self.target) if is_path(self.target) else writer.saveAsTable(self.target)
        self._last, self._asked = batch_id, True


def append_once(target: str, app_id: str) -> AppendOnce:
    return AppendOnce(target, app_id)


def merge_on(target: str, keys: Sequence[str]) -> BatchWriter:
    from delta.tables import DeltaTable

    condition = " AND ".join(f"t.`{k}` = s.`{k}`" for k in keys)

    def write(batch: DataFrame, batch_id: int) -> None:
        spark = batch.sparkSession
        builder = DeltaTable.createIfNotExists(spark).addColumns(batch.schema)
        (builder.location(target) if is_path(target) else builder.tableName(target)).execute()
        table = DeltaTable.forPath(spark, target) if is_path(target) else DeltaTable.forName(spark, target)
        # Within one batch a key may repeat (a row delivered twice); MERGE would insert both.
        (
            table.alias("t")
            .merge(batch.dropDuplicates(list(keys)).alias("s"), condition)
            .whenNotMatchedInsertAll()
            .execute()
        )

    return write
