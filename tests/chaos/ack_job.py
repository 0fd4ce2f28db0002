"""The matrix's ack-mode pipeline, written as a user would with sqlqueue's job plumbing: claim with
completion=ack, record every delivery in a Delta audit table exactly once, then acknowledge each row
through the sink's ack operation (exactly once per batch, by its ledger). A key that ends in 7 is
retried once (after a second) before it is done, so give-backs run under the faults too.

    python -m tests.chaos.ack_job -c chaos.toml     # [source] and [sink] name the same queue

The acknowledgements name rows by the table's key and carry the attempts the claim delivered (the
fencing token): sqlqueue's own layout's id and attempts, or the key and attempts column of the profile
an adopted table is read through.
"""

from __future__ import annotations

import sys

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from sqlqueue.config import Config
from sqlqueue.options import SINK, SOURCE, SourceOptions
from sqlqueue.spark.delta import append_once
from sqlqueue.spark.jobs import Job, queue_stream, run, start

JOB = Job(
    "chaos-ack",
    __doc__,
    roles=(SOURCE, SINK),
    settings=("checkpointLocation", "target", "trigger", "queryName"),
    required=("checkpointLocation", "target"),
)


def pipeline(config: Config, spark: SparkSession) -> StreamingQuery:
    checkpoint = config.required("checkpointLocation")
    audit = append_once(config.required("target"), checkpoint)
    sink = config.sink
    profile = SourceOptions.parse(config.source).address.profile
    key, attempts = ("id", "attempts") if profile is None else (profile.key[0], str(profile.attempts))
    payload = F.col("payload")  # Spark resolves names ignoring case: an adopted table's Payload too

    def deliver(batch: DataFrame, batch_id: int) -> None:
        retry = payload.endswith("7") & (F.col(attempts) == 1)
        decided = batch.select(
            key,
            F.col(attempts).alias("attempts"),  # the acknowledgement's fencing token
            payload.alias("payload"),
            F.when(retry, F.lit("retry")).otherwise(F.lit("done")).alias("outcome"),
            F.when(retry, F.lit(1)).alias("retryAfterSeconds"),
        ).persist()
        audit(decided, batch_id)
        acks = decided.drop("payload").write.format("sqlqueue").options(**sink).option("operation", "ack")
        acks.option("writerId", checkpoint).option("batchId", batch_id).mode("append").save()
        decided.unpersist()

    return start(queue_stream(spark, config).writeStream.foreachBatch(deliver), config)


if __name__ == "__main__":
    sys.exit(run(JOB, pipeline))
