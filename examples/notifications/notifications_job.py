"""A notification sender, as a user writes it against the relational queue table their team already
runs (a status table with Pending, Processing, Error, Failed and Completed, attempts, a due time, and
the response and error of each row's last attempt).

Each micro-batch claims notifications with ``completion=ack``, sends each one through the
notification service (an HTTP endpoint), and acknowledges each row to the table by the service's
answer: done with the response, retry after a backoff on a busy service or a lost connection (the
table's Error status, due again later), failed for good on a refused one. Every attempt is recorded in
a Delta audit table, once per batch.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StringType, StructField, StructType

from sqlqueue.spark.delta import append_once

# What the source reads of each row: its key, the attempts it is on, and the notification.
READ = "EnqueuedAt, AttemptNum, Payload"
ANSWER = [StructField(name, StringType()) for name in ("outcome", "response", "error")]
BUSY = (429, 502, 503, 504)  # answers worth another try later


def send(url: str, payload: str, key: str) -> tuple[str, str | None, str | None]:
    """One notification through the service: (outcome, response, error). ``key`` names this attempt of this
    row (Idempotency-Key): a batch Spark replays after a crash sends its notifications again, and a service
    that keeps the keys it has answered can answer the same again instead of sending twice."""
    headers = {"Content-Type": "application/json", "Idempotency-Key": key}
    request = urllib.request.Request(url, data=payload.encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return "done", answer.read().decode(), None
    except urllib.error.HTTPError as refused:
        outcome = "retry" if refused.code in BUSY else "failed"
        return outcome, None, f"HTTP {refused.code}: {refused.read().decode()}"
    except OSError as lost:  # no answer: the service may have sent it or not; try again later
        return "retry", None, f"no answer: {lost}"


def sender(url: str):
    """The function each task runs over its Arrow batches: every row sent, its outcome beside it."""

    def send_each(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows = zip(*(batch.column(c).to_pylist() for c in ("Payload", "EnqueuedAt", "AttemptNum")))
            answers = [send(url, payload, f"{enqueued.isoformat()}/{attempt}") for payload, enqueued, attempt in rows]
            outcome, response, error = (pa.array(column, pa.string()) for column in zip(*answers))
            if not answers:
                outcome = response = error = pa.array([], pa.string())
            yield pa.RecordBatch.from_arrays(
                [*batch.columns, outcome, response, error],
                names=[*batch.schema.names, "outcome", "response", "error"],
            )

    return send_each


def start(
    spark: SparkSession,
    table_options: dict[str, str],
    url: str,
    audit: str,
    checkpoint: str,
    backoff_seconds: int | None = None,
) -> StreamingQuery:
    """The job: notifications from the table, sent, acknowledged to the table, and audited in Delta.
    ``backoff_seconds``: how long a retried notification waits (None: sqlqueue's backoff, doubled for
    each attempt)."""
    notifications = (
        spark.readStream.format("sqlqueue")
        .options(**table_options)
        .option("completion", "ack")
        .option("columns", READ)
        .load()
    )
    record = append_once(audit, app_id=checkpoint)

    def handle(batch: DataFrame, batch_id: int) -> None:
        attempts = batch.mapInArrow(sender(url), StructType([*batch.schema.fields, *ANSWER])).persist()
        record(attempts, batch_id)
        wait = F.lit(backoff_seconds).cast("int").alias("retryAfterSeconds")
        acks = attempts.select("EnqueuedAt", "outcome", "response", "error", wait)
        (
            acks.write.format("sqlqueue")
            .options(**table_options)
            .option("operation", "ack")
            .option("writerId", checkpoint)
            .option("batchId", batch_id)
            .mode("append")
            .save()
        )
        attempts.unpersist()

    return (
        notifications.writeStream.foreachBatch(handle)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
