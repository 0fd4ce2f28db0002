"""A local session's Python workers exit quietly when the JVM stops reading them (sqlqueue.spark.daemon).

Each case starts a session of its own in a subprocess: what a worker prints reaches the JVM's stderr,
which a test cannot capture inside the session it shares.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.spark

# Each query reads two rows of a Python UDF's five million, then closes the workers' sockets while they
# still write.
SHOWS = """
import sys
from pyspark.sql.functions import udf
from sqlqueue.spark.session import build_session

conf = {"spark.python.daemon.module": sys.argv[1]} if len(sys.argv) > 1 else {}
spark = build_session("worker-daemon", conf=conf)
twice = udf(lambda x: 2 * x, "long")
for _ in range(3):
    rows = spark.range(0, 5_000_000, numPartitions=2).select(twice("id").alias("d")).limit(2).collect()
    print("rows", sorted(r.d for r in rows), flush=True)
spark.stop()
"""


def shows(*daemon: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "connector")}
    done = subprocess.run([sys.executable, "-c", SHOWS, *daemon], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("rows [0, 2]") == 3
    return done


def test_a_show_of_a_python_udf_prints_no_traceback():
    assert "Traceback" not in shows().stderr


def test_pyspark_s_own_daemon_prints_the_failed_flush():
    """Why sqlqueue's daemon exists: pyspark's prints the failed flush of a worker the JVM stopped
    reading (over Unix sockets, which build_session turns on, about once per show())."""
    assert "BrokenPipeError" in shows("pyspark.daemon").stderr
