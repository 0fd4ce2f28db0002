"""Table to queue: stream a Delta table (or any streaming-capable table) into a sqlqueue queue.

    spark-submit jobs/table_to_queue.py -c conf/sqlserver-odbc18.toml -c refunds.toml \\
        --set job.input=/lake/refunds

Streams [job] input (a path or a table name, format inputFormat, default delta), applies the
transform hook, and enqueues into [sink]; each micro-batch is published once, by the sink's
ledger. The transform must leave only columns the queue takes (domain columns and priority,
due_at, dedup_key, max_attempts).
"""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from sqlqueue.config import Config
from sqlqueue.options import SINK
from sqlqueue.spark.delta import is_path
from sqlqueue.spark.jobs import Job, into_queue, load_transform, run

JOB = Job(
    "table-to-queue",
    __doc__,
    roles=(SINK,),
    settings=("checkpointLocation", "input", "inputFormat", "trigger", "transform", "queryName"),
    required=("checkpointLocation", "input"),
)


def pipeline(config: Config, spark: SparkSession) -> StreamingQuery:
    source = config.required("input")
    reader = spark.readStream.format(config.setting("inputFormat"))
    stream = reader.load(source) if is_path(source) else reader.table(source)
    return into_queue(load_transform(config.setting("transform"))(stream), config)


if __name__ == "__main__":
    sys.exit(run(JOB, pipeline))
