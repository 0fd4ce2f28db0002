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

import uuid
from collections.abc import Callable, Sequence

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

BatchWriter = Callable[[DataFrame, int], None]
HISTORY_DEPTH = 100


def is_path(target: str) -> bool:
    """A folder or URI rather than a table name."""
    return "/" in target or ":" in target


def table_sql(target: str) -> str:
    """The target as Spark SQL names it: delta.`<path>` for a path, the table name as given."""
    return "delta.`{}`".format(target.replace("`", "``")) if is_path(target) else target


def sql_string(text: str) -> str:
    """``text`` as a Spark SQL string literal."""
    return "'{}'".format(text.replace("\\", "\\\\").replace("'", "\\'"))


def history(spark: SparkSession, target: str, depth: int | None = None) -> DataFrame | None:
    """The table's commits, newest first (``depth`` of them), or None when there is no Delta table.

    SQL rather than ``delta.tables.DeltaTable``, which a Spark Connect server without Delta's Connect
    plugin cannot serve (none is published for Delta 4.4): one code path for classic and Connect.
    """
    if not is_path(target) and not spark.catalog.tableExists(target):
        return None
    limit = f" LIMIT {depth}" if depth is not None else ""
    try:
        commits = spark.sql(f"DESCRIBE HISTORY {table_sql(target)}{limit}")
        _ = commits.columns  # analysed now: a folder without a Delta log fails here
    except AnalysisException as exc:
        if exc.getCondition() == "DELTA_TABLE_ONLY_OPERATION":
            return None
        raise
    return commits


def read_table(spark: SparkSession, target: str) -> DataFrame:
    return spark.sql(f"SELECT * FROM {table_sql(target)}")


def last_appended_batch(spark: SparkSession, target: str, app_id: str) -> int | None:
    """The batch id of this app's most recent append, from the markers of the table's commits.

    The latest ``HISTORY_DEPTH`` commits are read first; only if this app's marker is not among
    them (other writers committed more since, or the app never wrote here) is the whole history
    the log still keeps read, so a replay is never appended twice however busy the table was.
    """
    recent = history(spark, target, HISTORY_DEPTH)
    if recent is None:
        return None
    prefix = f"sqlqueue:{app_id}:"
    for commits in (recent, None):
        if commits is None:
            latest = history(spark, target, 1)
            newest = latest.first() if latest is not None else None
            if newest is None or newest.version < HISTORY_DEPTH:  # the recent commits were all of them
                return None
            commits = history(spark, target)
            assert commits is not None
        found = (
            commits.where(F.col("userMetadata").startswith(prefix))
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
    condition = " AND ".join("t.`{0}` = s.`{0}`".format(k.replace("`", "``")) for k in keys)

    def write(batch: DataFrame, batch_id: int) -> None:
        spark = batch.sparkSession
        table = table_sql(target)
        spark.sql(f"CREATE TABLE IF NOT EXISTS {table} ({batch.schema.toDDL()}) USING delta")
        # Within one batch a key may repeat (a row delivered twice); MERGE would insert both.
        view = f"sqlqueue_merge_{uuid.uuid4().hex}"
        batch.dropDuplicates(list(keys)).createOrReplaceTempView(view)
        try:
            spark.sql(f"MERGE INTO {table} AS t USING {view} AS s ON {condition} WHEN NOT MATCHED THEN INSERT *")
        finally:
            spark.catalog.dropTempView(view)

    return write
