"""jobs/queue_to_delta.py rides out its PostgreSQL restarted twice mid-run (``pg_ctl stop -m immediate``,
started again 3 s later), and every key reaches Delta exactly once.

The job runs as spark-submit would run it, in a process of its own (tests/support/crash.py), with
Python workers not reused (``spark.python.worker.reuse=false``), as on a cluster whose executors come
and go: every read task opens its first connection in a fresh process. Each restart begins when a
micro-batch's read tasks start (the reader logs each at DEBUG), so the batch's later tasks, four on two
cores, connect while the database is down: the stream proved the address on the driver before it
planned them, and they ride the outage out.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from sqlqueue.connection import parse_connection
from sqlqueue.identifiers import TableName
from sqlqueue.queue import Queue
from sqlqueue.schema import Column
from sqlqueue.testing.pgserver import PASSWORD, PgServer
from tests.conftest import ROOT
from tests.support.crash import run_job
from tests.support.engines import PASSWORD_VARIABLE

pytestmark = [pytest.mark.crash, pytest.mark.spark]
JOB = ROOT / "jobs" / "queue_to_delta.py"
KEYS, ROWS_PER_BATCH = 1500, 500  # three micro-batches
RESTART_AT_CLAIMS = (1, 2)  # when the read tasks of these claims start
DOWN_SECONDS = 3.0
READING = re.compile(r"reading claims \d+\.\.(\d+), ids")
READ_RETRIED = re.compile(r"reading ids \d+\.\.\d+ failed \(postgres: .*\); retry 1 in")


def restart_when_reads_start(server: PgServer, log: Path, done: threading.Event, restarts: list[int]) -> None:
    """Restart ``server`` when the read tasks of each claim in RESTART_AT_CLAIMS start."""
    pending = list(RESTART_AT_CLAIMS)
    while pending and not done.wait(0.02):
        read = {int(claim) for claim in READING.findall(log.read_text(errors="replace"))} if log.exists() else set()
        if pending[0] in read:
            server.restart(DOWN_SECONDS, mode="immediate")
            restarts.append(pending.pop(0))


def test_queue_to_delta_rides_out_two_database_restarts_and_delivers_every_key_once(spark, tmp_path, monkeypatch):
    server = PgServer().start()
    try:
        queue = Queue(parse_connection(server.url, password=PASSWORD), TableName("restarted"))
        queue.create((Column("key", "bigint", nullable=False),))
        queue.enqueue([{"key": k} for k in range(KEYS)])
        queue.close()
        monkeypatch.setenv(PASSWORD_VARIABLE, PASSWORD)
        monkeypatch.setenv("SQLQUEUE_LOG_LEVEL", "DEBUG")  # the read tasks' processes (sqlqueue.spark.logs)
        conf = tmp_path / "job.toml"
        conf.write_text(
            f'[connection]\nurl = "{server.url}"\npasswordEnv = "{PASSWORD_VARIABLE}"\n'
            f'[source]\nqueue = "restarted"\nconsumer = "restart-test"\nmaxRowsPerTrigger = {ROWS_PER_BATCH}\n'
            "numPartitions = 4\n"
            f'[job]\ntarget = "{tmp_path / "delta"}"\ncheckpointLocation = "{tmp_path / "cp"}"\n'
            'trigger = "availableNow"\n[spark]\n"spark.python.worker.reuse" = "false"\n'
        )
        log, done, restarts = tmp_path / "job.log", threading.Event(), []
        watcher = threading.Thread(target=restart_when_reads_start, args=(server, log, done, restarts))
        watcher.start()
        try:
            outcome = run_job(JOB, ["-c", str(ROOT / "conf" / "spark-local.toml"), "-c", str(conf)], log)
        finally:
            done.set()
            watcher.join()
        assert outcome.returncode == 0, outcome.log[-4000:]
        assert restarts == list(RESTART_AT_CLAIMS)
        assert len(READ_RETRIED.findall(outcome.log)) >= 2, "no read task met a restart"

        delta = spark.read.format("delta").load(str(tmp_path / "delta"))
        assert delta.count() == KEYS
        assert delta.agg(F.countDistinct("key")).first()[0] == KEYS
        drained = Queue(parse_connection(server.url, password=PASSWORD), TableName("restarted"))
        assert drained.inspection.stats() == {}
        drained.close()
    finally:
        server.destroy()
