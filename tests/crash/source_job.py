"""A queue-to-Delta job for the crash tests: the connector used as a pipeline would use it.

With SQLQUEUE_TEST_PAUSE_AT set, the source (subclassed here, so Spark pickles the subclass by
value into its Python processes) drops a marker file when it enters that window and pauses, so the
test can kill the driver there:
  claimed     after a claim, before Spark logs the offset
  reading     in a read task: the offset is logged, the sink has not committed
  committed   (foreach sink) after the Delta commit, before Spark's commit log
  acked       (ack sink) after the acknowledgements were applied, before Spark's commit log
  completing  in the source's commit, before the committed rows are completed
  progress    no pause: a marker once this run has served --progress-after batches, so a random
              kill lands mid-stream however fast the machine is
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from sqlqueue.options import SourceOptions
from sqlqueue.spark.checkpoint import clear_interrupted_start
from sqlqueue.spark.delta import append_once
from sqlqueue.spark.reader import QueueStreamReader
from sqlqueue.spark.session import build_session
from sqlqueue.spark.source import SqlQueueDataSource
from tests.support.acks import audit_then_acknowledge, fencing_columns

PAUSE_AT = os.environ.get("SQLQUEUE_TEST_PAUSE_AT", "")
MARKERS = os.environ.get("SQLQUEUE_TEST_MARKERS", "")


def pause(window: str) -> None:
    if window == PAUSE_AT:
        Path(MARKERS, f"{window}-{os.getpid()}-{time.time_ns()}").touch()
        time.sleep(60)


class PausingReader(QueueStreamReader):
    progress_after = 0  # set from --progress-after: drop a "progress" marker after that many batches
    _batches = 0

    def latestOffset(self, start, limit):
        end = super().latestOffset(start, limit)
        if end != start:
            self._batches += 1
            if PAUSE_AT == "progress" and self._batches == self.progress_after:
                Path(MARKERS, f"progress-{os.getpid()}-{time.time_ns()}").touch()  # kill me mid-stream
            pause("claimed")
        return end

    def read(self, partition):
        pause("reading")
        yield from super().read(partition)

    def commit(self, end):
        pause("completing")
        super().commit(end)


class PausingSource(SqlQueueDataSource):
    def streamReader(self, schema):
        return PausingReader(SourceOptions.parse(self.options), schema)


def acknowledging(delta: str, writer_id: str, source: dict[str, str], sink: dict[str, str]):
    """foreachBatch for completion=ack on a relational table: every delivery once into the Delta audit, then
    each row acknowledged through the sink's ack operation, exactly once per batch by its ledger. Payload
    p<n>: n ending in 3 fails (error "refused"), in 7 is retried once at once, every other is done."""
    from pyspark.sql import functions as F

    key, attempts = fencing_columns(source)
    audit = append_once(delta, writer_id)

    def acknowledge(df, batch_id: int) -> None:
        n = F.substring(F.col("payload"), 2, 9).cast("int") % 10  # Spark resolves Payload ignoring case
        failed, retry = n == 3, (n == 7) & (F.col(attempts) == 1)
        decided = df.select(
            key,
            F.col(attempts).alias("attempts"),  # the acknowledgement's fencing token
            F.col("payload").alias("payload"),
            F.when(failed, "failed").when(retry, "retry").otherwise("done").alias("outcome"),
            F.when(failed, F.lit("refused")).alias("error"),
            F.when(retry, F.lit(0)).alias("retryAfterSeconds"),
        )
        audit_then_acknowledge(decided, batch_id, audit, sink, writer_id)
        pause("acked")

    return acknowledge


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--connection", required=True, help="connection options as JSON; password from SQLQUEUE_PASSWORD"
    )
    parser.add_argument("--queue", required=True)
    parser.add_argument("--consumer", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--delta", required=True)
    parser.add_argument("--sink", choices=("delta", "foreach", "ack"), default="delta")
    parser.add_argument("--ack-options", help="ack sink: the sink's options as JSON (the password added)")
    parser.add_argument("--max-rows", default="1000")
    parser.add_argument("--progress-after", type=int, default=0)
    parser.add_argument("--remote", help="a Spark Connect remote, e.g. local[2]: a Connect server in this process")
    args = parser.parse_args()
    PausingReader.progress_after = args.progress_after

    spark = build_session("crash-source-job", "local[2]", remote=args.remote)
    spark.dataSource.register(PausingSource)
    options = {
        **json.loads(args.connection),
        "queue": args.queue,
        "consumer": args.consumer,
        "maxRowsPerTrigger": args.max_rows,
        "claimChunkSize": "700",
        "emptyPollIntervalMs": "200",
    }
    if os.environ.get("SQLQUEUE_PASSWORD"):
        options["password"] = os.environ["SQLQUEUE_PASSWORD"]
    stream = spark.readStream.format("sqlqueue").options(**options).load()
    clear_interrupted_start(args.checkpoint)  # as the jobs do: a kill may interrupt the first offset write
    writer = stream.writeStream.option("checkpointLocation", args.checkpoint).trigger(availableNow=True)
    if args.sink == "delta":
        query = writer.format("delta").start(args.delta)
    elif args.sink == "ack":
        sink = {**json.loads(args.ack_options), **({"password": options["password"]} if "password" in options else {})}
        query = writer.foreachBatch(acknowledging(args.delta, args.consumer, options, sink)).start()
    else:
        append = append_once(args.delta, args.consumer)  # what jobs/queue_to_delta.py writes with

        def write_batch(df, batch_id: int) -> None:
            append(df, batch_id)
            pause("committed")

        query = writer.foreachBatch(write_batch).start()
    query.awaitTermination()
    print("JOB FINISHED", flush=True)


if __name__ == "__main__":
    main()
