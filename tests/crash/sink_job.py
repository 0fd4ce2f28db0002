"""A streaming job for the sink crash test: parquet files of keyed rows into a queue, availableNow.

Run by tests/crash/test_sink_crash.py through tests/support/crash.py, killed with SIGKILL and
started again from the same checkpoint. Its one argument is JSON: master, input, checkpoint,
evidence (a folder for proof that a scenario happened), run (a fresh folder for this run),
progress_after (a count of batches, or null) and the sink options; the password comes in
SQLQUEUE_PASSWORD.

The sink is sqlqueue's, subclassed here (classes of __main__ are pickled by value) to
- with SQLQUEUE_TEST_PAUSE_AT=published, drop a marker and pause right after a batch was published,
  before Spark logs the commit, so the test kills the driver there;
- drop a ``progress`` marker, without pausing, once this run has published ``progress_after``
  batches: the test kills the driver a random moment later, wherever the next batch then is;
- leave evidence: ``replayed-<batch>`` when Spark commits a batch the ledger already holds;
- fail tasks once: every fourth batch, task 0's first attempt dies after its rows are staged and
  task 1's first attempt dies halfway through staging (evidence ``retried-...``). Master
  local[N,M] retries them.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from pyspark import TaskContext

from sqlqueue.spark.checkpoint import clear_interrupted_start
from sqlqueue.spark.session import build_session
from sqlqueue.spark.source import SqlQueueDataSource
from sqlqueue.spark.writer import BATCH_ID, QueueStreamWriter, stream_writer

CONFIG = json.loads(sys.argv[1])
EVIDENCE, RUN = Path(CONFIG["evidence"]), Path(CONFIG["run"])
PAUSE_AT = os.environ.get("SQLQUEUE_TEST_PAUSE_AT", "")
MARKERS = os.environ.get("SQLQUEUE_TEST_MARKERS", "")


def mark(name: str) -> None:
    (EVIDENCE / name).touch()


def pause(window: str) -> None:
    if window == PAUSE_AT:
        Path(MARKERS, f"{window}-{os.getpid()}-{time.time_ns()}").touch()
        time.sleep(60)


class CrashTestWriter(QueueStreamWriter):
    def write(self, iterator):
        ctx = TaskContext.get()
        batch, task = int(ctx.getLocalProperty(BATCH_ID)), ctx.partitionId()
        first_attempt_of_a_failing_batch = ctx.attemptNumber() == 0 and batch % 4 == 1
        if first_attempt_of_a_failing_batch and task == 0:
            super().write(iterator)
            mark(f"retried-after-staging-{batch}")
            raise RuntimeError("injected: task died after staging its rows")
        if first_attempt_of_a_failing_batch and task == 1:
            return super().write(self._dying_halfway(iterator, batch))
        return super().write(iterator)

    @staticmethod
    def _dying_halfway(iterator, batch: int):
        first = next(iterator, None)
        if first is None:
            return
        yield first.slice(0, first.num_rows // 2)  # sent to the database inside the open transaction
        mark(f"retried-while-staging-{batch}")
        raise RuntimeError("injected: task died while staging its rows")

    def commit(self, messages, batchId):
        tasks = [m for m in messages if m is not None]
        if tasks and self._producer(tasks[0].writer_id).published(batchId):
            mark(f"replayed-{batchId}")
        super().commit(messages, batchId)
        (RUN / f"published-{batchId}").touch()
        if len(list(RUN.glob("published-*"))) == CONFIG["progress_after"]:
            Path(MARKERS, f"progress-{batchId}").touch()
        pause("published")


class CrashTestSink(SqlQueueDataSource):
    @classmethod
    def name(cls) -> str:
        return "sqlqueue_crash_test"

    def streamWriter(self, schema, overwrite):
        checked = stream_writer(self.options, schema, overwrite)
        return CrashTestWriter(checked.options, checked.columns)


def main() -> None:
    spark = build_session("sink-crash-job", CONFIG["master"])
    spark.dataSource.register(CrashTestSink)
    rows = (
        spark.readStream.schema("k bigint, payload string")
        .option("maxFilesPerTrigger", 1)
        .parquet(CONFIG["input"])
        .repartition(2)
    )
    clear_interrupted_start(CONFIG["checkpoint"])  # as the jobs do: a kill may interrupt the first offset write
    writer = rows.writeStream.format(CrashTestSink.name()).option("checkpointLocation", CONFIG["checkpoint"])
    for key, value in CONFIG["options"].items():
        writer = writer.option(key, value)
    if os.environ.get("SQLQUEUE_PASSWORD"):
        writer = writer.option("password", os.environ["SQLQUEUE_PASSWORD"])
    writer.trigger(availableNow=True).start().awaitTermination()
    print("sink crash job: source drained", flush=True)


if __name__ == "__main__":
    main()
