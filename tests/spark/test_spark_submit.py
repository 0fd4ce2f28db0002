"""A job started the way pipelines start it: spark-submit in its own JVM, not this test's session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from chispa import assert_df_equality

from sqlqueue.spark.session import DELTA_PACKAGE, delta_jars
from sqlqueue.testing import assert_queue_holds
from tests.conftest import ROOT
from tests.support.engines import Engine

pytestmark = pytest.mark.spark


def submit(tmp_path: Path, queue, *spark_args: str) -> subprocess.CompletedProcess:
    conf = tmp_path / "job.toml"
    conf.write_text(f'[connection]\nurl = "sqlite:///{tmp_path}/queue.db"\n')
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    return subprocess.run(
        [
            str(Path(sys.executable).parent / "spark-submit"),
            "--master",
            "local[1]",
            *spark_args,
            str(ROOT / "jobs/queue_to_delta.py"),
            "-c",
            str(conf),
            "--set",
            f"source.queue={queue.table}",
            "--set",
            "source.maxRowsPerTrigger=20",
            "--set",
            f"job.target={tmp_path / 'delta'}",
            "--set",
            f"job.checkpointLocation={tmp_path / 'cp'}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_spark_submit_with_delta_jars_runs_queue_to_delta_to_the_end(spark, tmp_path):
    engine = Engine("sqlite", {"url": f"sqlite:///{tmp_path}/queue.db"})
    queue = engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(50)])
    jars = delta_jars()
    done = submit(tmp_path, queue, *(("--jars", ",".join(jars)) if jars else ("--packages", DELTA_PACKAGE)))
    assert done.returncode == 0, done.stderr[-3000:]
    got = spark.read.format("delta").load(str(tmp_path / "delta")).select("payload")
    assert_df_equality(
        got,
        spark.createDataFrame([(f"p{i}",) for i in range(50)], "payload string"),
        ignore_row_order=True,
        ignore_nullable=True,
    )
    assert_queue_holds(queue)
    engine.close()


def test_spark_submit_without_delta_jars_says_how_to_pass_them(tmp_path):
    engine = Engine("sqlite", {"url": f"sqlite:///{tmp_path}/queue.db"})
    queue = engine.new_queue()
    queue.enqueue([{"payload": "p"}])
    done = submit(tmp_path, queue)
    assert done.returncode == 2
    # spark-submit passes the Python driver's stderr through its own stdout.
    errors = [line for line in done.stdout.splitlines() if line.startswith("queue-to-delta: error:")]
    assert len(errors) == 1 and f"Pass them to spark-submit: --packages {DELTA_PACKAGE}" in errors[0]
    assert queue.inspection.count_ready() == 1
    engine.close()
