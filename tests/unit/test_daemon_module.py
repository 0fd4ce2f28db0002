"""sqlqueue's worker daemon (sqlqueue.spark.daemon) forks Spark's Python workers: what it imports before
the fork is in every worker, and a thread started by then would be lost in each (pyspark's daemon.py
imports the worker module after the fork for that reason: Arrow and pandas start threads)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

IMPORTED = """
import json, sys, threading
import sqlqueue.spark.daemon
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"pyarrow", "pandas", "psycopg", "pyodbc"})
print(json.dumps({"threads": threading.active_count(), "heavy": heavy}))
"""


def test_the_daemon_imports_no_arrow_or_driver_and_starts_no_thread_before_it_forks():
    done = subprocess.run(
        [sys.executable, "-c", IMPORTED],
        env={"PYTHONPATH": str(ROOT / "connector"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == {"threads": 1, "heavy": []}


def test_the_daemon_runs_as_a_module_without_a_warning():
    """Python warns when a module it is about to run with -m was imported already (by its package's
    __init__): the JVM would copy that warning to the console at every session's first task."""
    done = subprocess.run(
        [sys.executable, "-W", "default", "-m", "sqlqueue.spark.daemon", "pyspark.worker"],
        env={"PYTHONPATH": str(ROOT / "connector"), "PATH": "/usr/bin:/bin"},
        stdin=subprocess.DEVNULL,  # the daemon ends when its JVM's end of stdin closes
        stdout=subprocess.DEVNULL,  # where it writes its port, in binary
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    assert "RuntimeWarning" not in done.stderr
