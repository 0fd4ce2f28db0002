"""A session's Python workers exit quietly when the JVM stops reading them: task workers forked from
sqlqueue.spark.daemon, and the processes Spark plans sqlqueue's data source with (sqlqueue.spark.quiet).

Each case starts a session of its own in a subprocess: what a worker prints reaches the JVM's stderr,
which a test cannot capture inside the session it shares.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.support.engines import Engine

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


# A session writes through sqlqueue, then waits until Spark has closed the idle workers of the Python
# processes it planned with (a minute after their last use): the children of the pyspark daemons that
# this script's JVM started for pyspark.sql.worker modules.
IDLES = """
import os, sys
from sqlqueue.spark.session import build_session
from sqlqueue.testing.streams import wait_until

def planning_workers():
    processes = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\\0")
            with open(f"/proc/{pid}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        planning = b"pyspark.daemon" in args and any(a.startswith(b"pyspark.sql.worker.") for a in args)
        processes[int(pid)] = (parent, planning)
    jvms = {pid for pid, (parent, _) in processes.items() if parent == os.getpid()}
    daemons = {pid for pid, (parent, planning) in processes.items() if planning and parent in jvms}
    return [pid for pid, (parent, _) in processes.items() if parent in daemons]

spark = build_session("planning-idle")
rows = spark.range(3).selectExpr("cast(id as string) as payload")
rows.write.format("sqlqueue").option("url", sys.argv[1]).option("queue", sys.argv[2]).mode("append").save()
print("planning", len(planning_workers()), flush=True)
wait_until(lambda: not planning_workers(), timeout=240, interval=1)
print("left", len(planning_workers()), flush=True)
spark.stop()
"""


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "connector")}
    done = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "RuntimeWarning" not in done.stderr, done.stderr[-3000:]
    return done


def shows(*daemon: str) -> subprocess.CompletedProcess:
    done = run(SHOWS, *daemon)
    assert done.stdout.count("rows [0, 2]") == 3
    return done


def test_a_show_of_a_python_udf_prints_no_traceback():
    assert "Traceback" not in shows().stderr


def test_pyspark_s_own_daemon_prints_the_failed_flush():
    """Why sqlqueue's daemon exists: pyspark's prints the failed flush of a worker the JVM stopped
    reading (over Unix sockets, which build_session turns on, about once per show())."""
    assert "BrokenPipeError" in shows("pyspark.daemon").stderr


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the planning processes in /proc")
def test_the_processes_spark_plans_with_close_their_idle_workers_quietly(tmp_path):
    """Spark plans a Python data source's writes (and reads) in processes forked from pyspark's daemon
    whatever spark.python.daemon.module says, and closes their idle workers a minute after their last
    use: over Unix sockets each printed a BrokenPipeError then, in any session idle that long."""
    engine = Engine("sqlite", {"url": f"sqlite:///{tmp_path}/queue.db"})
    queue = engine.new_queue()
    done = run(IDLES, engine.options["url"], str(queue.table))
    counts = dict(line.split() for line in done.stdout.splitlines() if line.startswith(("planning", "left")))
    assert int(counts["planning"]) > 0, "the write forked no planning worker to wait for"
    assert counts["left"] == "0", done.stderr[-3000:]
    assert "Traceback" not in done.stderr
