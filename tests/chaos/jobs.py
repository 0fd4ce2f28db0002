"""The jobs under test, run as a user runs them (python jobs/<job>.py -c file.toml), each in a session
of its own so that a kill takes every process of it, PySpark's workers included."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.chaos.databases import PASSWORD_ENV, Database
from tests.support.crash import kill_session, wait_for_session_end

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = {
    "queue-to-delta": ROOT / "jobs" / "queue_to_delta.py",
    "groups": ROOT / "jobs" / "queue_to_delta.py",
    "delta-to-queue": ROOT / "jobs" / "table_to_queue.py",
    "queue-to-queue": ROOT / "jobs" / "queue_to_queue.py",
    "ack": Path(__file__).with_name("ack_job.py"),
}
# Spark as conf/spark-local.toml runs it on a small machine.
SPARK = {
    "spark.master": "local[2]",
    "spark.databricks.delta.snapshotPartitions": "1",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "2",
    "spark.ui.enabled": "false",
}
# Long enough for a job's JVM to start and its stream to make its first trigger on a loaded 2-core host.
SETTLE_S = 90


def toml(sections: dict[str, dict[str, Any]]) -> str:
    """A TOML file of flat sections (strings, whole numbers and booleans)."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = []
    for name, entries in sections.items():
        lines.append(f"[{name}]")
        lines += [f'"{k}" = {value(v)}' for k, v in entries.items()]
        lines.append("")
    return "\n".join(lines)


class JobProcess:
    """One job, started and killed and started again from the same checkpoint."""

    def __init__(self, pipeline: str, config: Path, log: Path, db: Database, checkpoint: Path) -> None:
        self.script, self.config, self.log, self.db = SCRIPTS[pipeline], config, log, db
        self.commits = checkpoint / "commits"  # Spark's commit log: one file per committed batch
        self.proc: subprocess.Popen[bytes] | None = None
        self.deaths: list[int] = []  # exit statuses of runs that ended on their own (a job must not)
        self.starts: list[float] = []  # when each run began (this host's clock, as the database's)

    def settled(self) -> bool:
        """Whether this run has reached its database: it committed a batch, or has been up for SETTLE_S
        (a stream that finds nothing to read commits none). A fault sooner can meet the run's first
        connection, which fails at once by design: a wrong address is not an outage (docs/guarantees.md)."""
        began = self.starts[-1]
        if time.time() - began > SETTLE_S:
            return True
        return self.commits.is_dir() and any(f.stat().st_mtime >= began for f in self.commits.iterdir())

    def start(self) -> None:
        self.starts.append(time.time())
        env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'connector'}"}
        if self.db.password:
            env[PASSWORD_ENV] = self.db.password
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, str(self.script), "-c", str(self.config)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=ROOT,
                start_new_session=True,
            )

    def check(self) -> None:
        """A job that ended on its own died of something: note it, and start it again."""
        if self.proc is not None and self.proc.poll() is not None:
            self.deaths.append(self.proc.returncode)
            wait_for_session_end(self.proc.pid)
            self.start()

    def kill(self) -> None:
        if self.proc is None:
            return
        kill_session(self.proc.pid)
        self.proc.wait()
        wait_for_session_end(self.proc.pid)
        self.proc = None
