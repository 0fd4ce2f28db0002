"""Idempotent writes of a micro-batch into Delta, for ``foreachBatch``.

Delta's own streaming sink is idempotent too, but on a small machine it costs about 2.4 s per
micro-batch against about 0.3 s for a batch append. A plain append inside ``foreachBatch`` is not
idempotent: a batch Spark replays after a crash would be appended twice. Delta skips a write whose
``txnAppId`` has already committed that ``txnVersion``, so the append below is exactly once per
(app id, batch id). ``merge_on`` goes further: it inserts only keys the table does not hold, which
also absorbs rows that reach the sink twice through a second consumer (an expired lease).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from pyspark.sql import DataFrame

BatchWriter = Callable[[DataFrame, int], None]


def is_path(target: str) -> bool:
    """A folder or URI rather than a table name."""
    return "/" in target or ":" in target


def append_once(target: str, app_id: str) -> BatchWriter:
    def write(batch: DataFrame, batch_id: int) -> None:
        writer = (batch.write.format("delta").mode("append")
                  .option("txnAppId", app_id).option("txnVersion", batch_id))
        writer.save(target) if is_path(target) else writer.saveAsTable(target)

    return write


def merge_on(target: str, keys: Sequence[str]) -> BatchWriter:
    from delta.tables import DeltaTable

    condition = " AND ".join(f"t.`{k}` = s.`{k}`" for k in keys)

    def write(batch: DataFrame, batch_id: int) -> None:
        spark = batch.sparkSession
        builder = DeltaTable.createIfNotExists(spark).addColumns(batch.schema)
        (builder.location(target) if is_path(target) else builder.tableName(target)).execute()
        table = DeltaTable.forPath(spark, target) if is_path(target) else DeltaTable.forName(spark, target)
        # Within one batch a key may repeat (a row delivered twice); MERGE would insert both.
        (table.alias("t").merge(batch.dropDuplicates(list(keys)).alias("s"), condition)
         .whenNotMatchedInsertAll().execute())

    return write
