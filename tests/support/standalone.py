"""A Spark standalone cluster on this host, for tests and benchmarks: a master and workers started
from the pyspark installation's own bin/spark-class, bound to 127.0.0.1, each worker with its own
work directory (where its executors' logs and the files they fetched from the driver land).

Each daemon runs in a process session of its own, and everything it starts (executor JVMs and their
Python workers) stays in that session, so ``stop`` ends all of it, even after a failure. An
application submitted with ``submit`` runs the same way, and writes a plain event log that
``Application`` reads: the record of which executor ran which task, once the driver has gone.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

from sqlqueue.testing import wait_until
from tests.support.crash import kill_session, wait_for_session_end

# The test targets' Spark home (the Makefile's SPARK_HOME: compiled bytecode in its pyspark.zip), else pyspark's.
SPARK_HOME = Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).resolve().parent)
HOST = "127.0.0.1"
START_TIMEOUT = 120.0
SUBMIT_TIMEOUT = 360.0
_UI_PORT = re.compile(r"Successfully started service 'MasterUI' on port (\d+)")


def package_zip(dest: Path) -> Path:
    """The sqlqueue package this process imports, zipped for --py-files / addPyFile: the code under
    test reaches the executors from the driver, ahead of any copy installed in their Python."""
    import sqlqueue

    root = Path(sqlqueue.__file__).resolve().parent
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(root.parent))
    return dest


def _spark_env(root: Path) -> dict[str, str]:
    """The environment of the daemons and of spark-submit. Without PYTHONPATH: the executors get the
    package from the driver (--py-files), as they would on other hosts."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {
        **env,
        "SPARK_HOME": str(SPARK_HOME),
        # Scratch space (shuffle files, fetched files) inside the cluster's folder, not all over /tmp.
        "SPARK_LOCAL_DIRS": str(root / "local"),
        # Web UIs bind to SPARK_LOCAL_IP, not to --host (0.0.0.0 otherwise).
        "SPARK_LOCAL_IP": HOST,
        "SPARK_DAEMON_MEMORY": "512m",
        # The master's REST submission server would take port 6066, shared by every cluster on the host.
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
    }


@dataclass
class Task:
    executor: str
    records_read: int
    records_written: int
    python_bytes_returned: int


@dataclass
class Application:
    """One spark-submit run: its exit status, its output, and what its event log recorded."""

    returncode: int
    output: str
    events: list[dict] = field(default_factory=list)

    @property
    def app_id(self) -> str:
        return next(e["App ID"] for e in self.events if e["Event"] == "SparkListenerApplicationStart")

    def executors(self) -> dict[str, str]:
        """Executor id -> the web UI of the worker that started it (from the executor's log links)."""
        return {
            e["Executor ID"]: e["Executor Info"]["Log Urls"]["stderr"].split("/logPage/")[0]
            for e in self.events
            if e["Event"] == "SparkListenerExecutorAdded"
        }

    def tasks(self) -> list[Task]:
        done = []
        for e in self.events:
            if e["Event"] != "SparkListenerTaskEnd" or not e.get("Task Metrics"):
                continue
            metrics = e["Task Metrics"]
            updates = {a["Name"]: a.get("Update") for a in e["Task Info"].get("Accumulables", [])}
            done.append(
                Task(
                    e["Task Info"]["Executor ID"],
                    metrics["Input Metrics"]["Records Read"],
                    metrics["Output Metrics"]["Records Written"],
                    int(updates.get("data returned from Python workers") or 0),
                )
            )
        return done

    def rows_read_by_executor(self) -> dict[str, int]:
        return self._by_executor(lambda task: task.records_read)

    def rows_written_by_executor(self) -> dict[str, int]:
        """Rows Spark's own writers wrote (Delta's files; a Python data source's writer counts none)."""
        return self._by_executor(lambda task: task.records_written)

    def _by_executor(self, count: Callable[[Task], int]) -> dict[str, int]:
        totals: dict[str, int] = {}
        for task in self.tasks():
            if count(task):
                totals[task.executor] = totals.get(task.executor, 0) + count(task)
        return totals


class StandaloneCluster:
    def __init__(self, root: Path, workers: int = 2, cores: int = 1, memory: str = "1g") -> None:
        self.root, self.workers, self.cores, self.memory = root, workers, cores, memory
        self._procs: list[subprocess.Popen] = []
        self._ui: str | None = None
        self._submits = 0

    @property
    def url(self) -> str:
        """The master's spark:// URL, as the master itself reports it."""
        state = self.state()
        if state is None:
            raise RuntimeError(f"the master does not answer; see {self.root / 'master.log'}")
        return state["url"]

    def work_dir(self, worker: int) -> Path:
        return self.root / f"worker{worker}"

    def _daemon(self, name: str, main_class: str, *args: str) -> subprocess.Popen:
        with open(self.root / f"{name}.log", "ab") as log:
            proc = subprocess.Popen(
                [str(SPARK_HOME / "bin/spark-class"), main_class, *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_spark_env(self.root),
                cwd=self.root,
                start_new_session=True,
            )
        self._procs.append(proc)
        return proc

    def _wait(self, what: str, condition: Callable[[], bool]) -> None:
        """Wait for ``condition``; fail at once if a daemon exits, with the log to read."""

        def met() -> bool:
            for proc in self._procs:
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"a Spark daemon ({proc.args[1]}) exited while waiting for {what}; see {self.root}"
                    )
            return condition()

        if not wait_until(met, START_TIMEOUT):
            raise TimeoutError(f"no {what} after {START_TIMEOUT:.0f} s; see the logs in {self.root}")

    def _ui_port(self) -> int | None:
        found = _UI_PORT.search((self.root / "master.log").read_text(errors="replace"))
        return int(found.group(1)) if found else None

    def state(self) -> dict | None:
        """The master's status page as JSON (workers and their state, applications), or None."""
        if self._ui is None:
            return None
        try:
            with urllib.request.urlopen(f"{self._ui}/json/", timeout=5) as response:
                return json.load(response)
        except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
            return None  # not up yet: the UI answers before the master has a page to show

    def alive_workers(self) -> int:
        state = self.state()
        return sum(w["state"] == "ALIVE" for w in state["workers"]) if state else 0

    def start(self) -> StandaloneCluster:
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            # Port 0 everywhere: the master's RPC port comes back in its status page, the UI's in its log.
            self._daemon(
                "master", "org.apache.spark.deploy.master.Master", "--host", HOST, "--port", "0", "--webui-port", "0"
            )
            self._wait("master web UI", lambda: self._ui_port() is not None)
            self._ui = f"http://{HOST}:{self._ui_port()}"
            self._wait("master status", lambda: (self.state() or {}).get("status") == "ALIVE")
            master = self.url
            for i in range(self.workers):
                self.work_dir(i).mkdir(exist_ok=True)
                self._daemon(
                    f"worker{i}",
                    "org.apache.spark.deploy.worker.Worker",
                    *("--host", HOST, "--port", "0", "--webui-port", "0"),
                    *("--cores", str(self.cores), "--memory", self.memory, "--work-dir", str(self.work_dir(i))),
                    master,
                )
            self._wait(f"{self.workers} ALIVE workers", lambda: self.alive_workers() == self.workers)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for proc in reversed(self._procs):
            kill_session(proc.pid)
            proc.wait()
            wait_for_session_end(proc.pid)
        self._procs.clear()

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def submit(
        self,
        script: Path,
        args: Sequence[str],
        *,
        spark_args: Sequence[str] = (),
        conf: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Application:
        """spark-submit ``script`` in client mode, the way a user submits a job to this cluster;
        ``spark_args`` are spark-submit's own (--jars, --py-files, ...)."""
        self._submits += 1
        events = self.root / f"events-{self._submits}"
        events.mkdir()
        settings = {
            # Executors run this interpreter: it has pyarrow and the database drivers.
            "spark.pyspark.python": sys.executable,
            "spark.pyspark.driver.python": sys.executable,
            "spark.driver.host": HOST,
            "spark.ui.enabled": "false",
            "spark.executor.memory": "512m",
            # One executor per worker, and no task before both executors have registered.
            "spark.cores.max": str(self.workers * self.cores),
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": events.as_uri(),
            "spark.eventLog.compress": "false",
            "spark.eventLog.rolling.enabled": "false",
            **(conf or {}),
        }
        command = [str(SPARK_HOME / "bin/spark-submit"), "--master", self.url, *spark_args]
        for key, value in settings.items():
            command += ["--conf", f"{key}={value}"]
        log = self.root / f"submit-{self._submits}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [*command, str(script), *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**_spark_env(self.root), **(env or {})},
                cwd=self.root,
                start_new_session=True,
            )
        try:
            returncode = proc.wait(timeout=SUBMIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            returncode = -1
        finally:
            kill_session(proc.pid)
            proc.wait()
            wait_for_session_end(proc.pid)
        recorded = [json.loads(line) for path in sorted(events.iterdir()) for line in path.read_text().splitlines()]
        return Application(returncode, log.read_text(errors="replace"), recorded)
