"""Queue to Delta: stream a sqlqueue queue into a Delta table, exactly once per micro-batch.

    spark-submit jobs/queue_to_delta.py -c conf/postgres.toml -c conf/spark-cluster.toml -c orders.toml
    python jobs/queue_to_delta.py -c conf/sqlite.toml --set source.queue=orders \\
        --set job.target=/lake/orders --set job.checkpointLocation=/checkpoints/orders

Reads [source] (the queue), applies the [job] transform hook, and appends each micro-batch exactly
once (a commit marker makes a replayed batch a no-op; see sqlqueue.spark.delta), or with
--merge-on KEY as a MERGE that inserts only keys the table does not hold. With the source option
deadLetterTable, failed rows move from the queue into that Delta table after each batch's commit
(at most every 30 s; see sqlqueue.spark.deadletters).
"""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from sqlqueue.config import Config
from sqlqueue.options import SOURCE
from sqlqueue.spark.deadletters import with_dead_letters
from sqlqueue.spark.delta import append_once, merge_on
from sqlqueue.spark.jobs import Job, load_transform, queue_stream, run, start

JOB = Job(
    "queue-to-delta",
    __doc__,
    roles=(SOURCE,),
    settings=("checkpointLocation", "target", "trigger", "transform", "mergeOn", "queryName"),
    required=("checkpointLocation", "target"),
    flags={"--merge-on": "mergeOn"},
)


def pipeline(config: Config, spark: SparkSession) -> StreamingQuery:
    target = config.required("target")
    keys = config.setting("mergeOn")
    # The checkpoint names the query for good, so it is the Delta transaction's app id.
    checkpoint = config.required("checkpointLocation")
    write = merge_on(target, keys.split(",")) if keys else append_once(target, checkpoint)
    if config.source_options().dead_letter_table:
        # After each batch's commit, in this (the driver's) process: the source's reader has no SparkSession.
        write = with_dead_letters(write, config.source, mover_id=checkpoint)
    stream = load_transform(config.setting("transform"))(queue_stream(spark, config))
    return start(stream.writeStream.foreachBatch(write), config)


if __name__ == "__main__":
    sys.exit(run(JOB, pipeline))
