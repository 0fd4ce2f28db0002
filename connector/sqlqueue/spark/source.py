"""The ``sqlqueue`` data source: a thin factory that checks options on the driver and builds readers
and writers.

    spark.dataSource.register(SqlQueueDataSource)
    (spark.readStream.format("sqlqueue")
        .option("url", "sqlite:///var/queues/jobs.db").option("queue", "jobs")
        .option("maxRowsPerTrigger", 50000)
        .load())
    (df.writeStream.format("sqlqueue")
        .option("url", "sqlite:///var/queues/jobs.db").option("queue", "jobs")
        .option("checkpointLocation", "/checkpoints/enqueue-jobs")
        .start())
    df.write.format("sqlqueue").mode("append").option(...).save()

DataFrame columns map by name to the queue's domain columns and to priority, due_at, dedup_key
and max_attempts.

Options are listed with their defaults and meaning in ``sqlqueue.options.OPTIONS`` and docs/reference.md.
"""

from __future__ import annotations

from dataclasses import replace

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, DataSourceStreamWriter, DataSourceWriter
from pyspark.sql.types import StructType

from ..errors import SchemaError
from ..options import SourceOptions
from ..queue import Queue
from .tuning import warn_once_if_untuned
from .types import spark_ddl


class SqlQueueDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        # spark.dataSource.register calls this in the application's process, the one place the
        # source sees the user's SparkSession: warn there about settings that cost seconds a batch.
        warn_once_if_untuned()
        return "sqlqueue"

    def schema(self) -> str:
        """The returned columns as the queue table defines them (the table is read on the driver)."""
        options = SourceOptions.parse(self.options)
        address = options.address
        queue = Queue(address.connection, address.table, address.profile)
        try:
            queue.require(*options.needs)
            queue.require_layout()
            columns = queue.columns()
            wanted = options.columns or [c.name for c in queue.source_columns()]
            subtypes = queue.subtypes()
            declared = queue.declared
        finally:
            queue.close()
        # Names match ignoring case, as Spark's and the profile's do: PostgreSQL folds an unquoted
        # EnqueuedAt to enqueuedat. A column comes back spelled as the option names it, else as the
        # profile does, else as the table does, so code written against one engine's names runs on another.
        by_name = {c.name.lower(): c for c in columns}
        missing = [n for n in wanted if n.lower() not in by_name]
        if missing:
            raise SchemaError(
                f"option 'columns' names {', '.join(missing)}, which queue table {options.address.table} does not "
                f"have; its columns are: {', '.join(c.name for c in columns)}"
            )
        spelling = {n.lower(): n for n in (declared.columns() if declared is not None else ())}
        spelling |= {n.lower(): n for n in options.columns or ()}
        shown = [replace(by_name[n.lower()], name=spelling.get(n.lower(), by_name[n.lower()].name)) for n in wanted]
        return spark_ddl(shown, subtypes)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from .reader import QueueStreamReader

        # No connection here: Spark also makes a stream reader, in a fresh process, to plan a query's
        # first batch after latestOffset has claimed. The reader checks the table on its first call.
        return QueueStreamReader(SourceOptions.parse(self.options), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from .writer import batch_writer

        return batch_writer(self.options, schema, overwrite)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        from .writer import stream_writer

        return stream_writer(self.options, schema, overwrite)


def register(spark: SparkSession) -> None:
    """Make format("sqlqueue") known to ``spark``: needed only where the package is not installed in the
    Python Spark looks data sources up with (installed, pyspark_sqlqueue registers it). A session that found it
    installed is left as it is: registering again makes Spark warn that it replaced it. Either way, warn once
    about the session's costly settings."""
    warn_once_if_untuned()
    if not _installed_in(spark):
        spark.dataSource.register(SqlQueueDataSource)


def _installed_in(spark: SparkSession) -> bool:
    """Whether a classic session already has the data source (Spark Connect's client cannot ask)."""
    from py4j.protocol import Py4JError

    session = getattr(spark, "_jsparkSession", None)
    if session is None:
        return False
    try:
        return bool(session.sessionState().dataSourceManager().dataSourceExists(SqlQueueDataSource.name()))
    except Py4JError:
        return False
