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
from sqlqueue.options import SINK, SOURCE
from sqlqueue.spark.delta import append_once
from sqlqueue.spark.jobs import Job, queue_stream, run, start
from tests.support.acks import audit_then_acknowledge, fencing_columns

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
    key, attempts = fencing_columns(config.source)
    payload = F.col("payload")  # Spark resolves names ignoring case: an adopted table's Payload too

    def deliver(batch: DataFrame, batch_id: int) -> None:
        retry = payload.endswith("7") & (F.col(attempts) == 1)
        decided = batch.select(
            key,
            F.col(attempts).alias("attempts"),  # the acknowledgement's fencing token
            payload.alias("payload"),
            F.when(retry, F.lit("retry")).otherwise(F.lit("done")).alias("outcome"),
            F.when(retry, F.lit(1)).alias("retryAfterSeconds"),
        )
        audit_then_acknowledge(decided, batch_id, audit, config.sink, checkpoint)

    return start(queue_stream(spark, config).writeStream.foreachBatch(deliver), config)


if __name__ == "__main__":
    sys.exit(run(JOB, pipeline))
