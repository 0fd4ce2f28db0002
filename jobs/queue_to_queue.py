"""Stage: stream one sqlqueue queue into another, so that pipelines of stages can be chained.

    spark-submit jobs/queue_to_queue.py -c conf/postgres.toml -c enrich-orders.toml

Reads [source] (queue A), applies the [job] transform hook, and enqueues into [sink] (queue B,
on the same database or another one). The sink publishes each micro-batch once, by its ledger,
and queue A's rows are completed only after Spark has committed the batch.
"""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from sqlqueue.config import Config
from sqlqueue.options import SINK, SOURCE
from sqlqueue.spark.jobs import Job, into_queue, load_transform, queue_stream, run

JOB = Job(
    "queue-to-queue",
    __doc__,
    roles=(SOURCE, SINK),
    settings=("checkpointLocation", "trigger", "transform", "queryName"),
)


def pipeline(config: Config, spark: SparkSession) -> StreamingQuery:
    return into_queue(load_transform(config.setting("transform"))(queue_stream(spark, config)), config)


if __name__ == "__main__":
    sys.exit(run(JOB, pipeline))
