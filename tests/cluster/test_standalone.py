"""The jobs on a Spark standalone cluster: a master and two 1-core workers on this host, started
from pyspark's own scripts, each executor a JVM of its own with Python workers of its own, the jobs
submitted with spark-submit as users submit them. The queues are on PostgreSQL, so every read and
write of a queue is a network connection made by an executor (a SQLite file could be opened by any
process on the host).

The package reaches the executors only through --py-files (the workers' environment has no
PYTHONPATH), Delta's jars only through --jars. Each job runs once per module; the tests read its
outcome, the rows it delivered and the event log, Spark's record of which executor ran which task.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from chispa import assert_df_equality

from sqlqueue.queue import Queue
from sqlqueue.spark.session import DELTA_PACKAGE, delta_jars
from sqlqueue.testing.pgserver import PASSWORD
from tests.conftest import ROOT
from tests.support.engines import PASSWORD_VARIABLE, Engine
from tests.support.standalone import Application, StandaloneCluster, package_zip

pytestmark = pytest.mark.cluster

ROWS = 1000
KEYS = [f"k{i}" for i in range(ROWS)]


@dataclass
class Run:
    app: Application
    source: Queue
    folder: Path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with StandaloneCluster(tmp_path_factory.mktemp("cluster"), workers=2, cores=1) as running:
        yield running


@pytest.fixture(scope="module")
def postgres(postgres_server):
    engine = Engine("postgres", {"url": postgres_server.url, "password": PASSWORD})
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def submit_job(cluster, postgres, tmp_path_factory):
    """spark-submit a job of jobs/ to the cluster with the package and Delta's jars, as the README says."""
    shipped = package_zip(tmp_path_factory.mktemp("package") / "sqlqueue.zip")
    jars = delta_jars()
    delta = ("--jars", ",".join(jars)) if jars else ("--packages", DELTA_PACKAGE)

    def submit(name: str, folder: Path, *settings: str) -> Application:
        conf = folder / "job.toml"
        conf.write_text(f'[connection]\nurl = "{postgres.options["url"]}"\npasswordEnv = "{PASSWORD_VARIABLE}"\n')
        app = cluster.submit(
            ROOT / "jobs" / f"{name}.py",
            ["-c", str(conf), *(arg for setting in settings for arg in ("--set", setting))],
            spark_args=("--py-files", str(shipped), *delta),
            env={PASSWORD_VARIABLE: PASSWORD},
        )
        assert app.returncode == 0, app.output[-4000:]
        return app

    return submit


def filled(postgres: Engine) -> Queue:
    queue = postgres.new_queue()
    queue.enqueue([{"payload": key} for key in KEYS])
    return queue


@pytest.fixture(scope="module")
def to_delta(submit_job, postgres, tmp_path_factory) -> Run:
    folder = tmp_path_factory.mktemp("queue_to_delta")
    source = filled(postgres)
    app = submit_job(
        "queue_to_delta",
        folder,
        f"source.queue={source.table}",
        "source.maxRowsPerTrigger=300",
        f"job.target={folder / 'delta'}",
        f"job.checkpointLocation={folder / 'cp'}",
    )
    return Run(app, source, folder)


@pytest.fixture(scope="module")
def to_queue(submit_job, postgres, tmp_path_factory) -> tuple[Run, Queue]:
    folder = tmp_path_factory.mktemp("queue_to_queue")
    source, sink = filled(postgres), postgres.new_queue()
    app = submit_job(
        "queue_to_queue",
        folder,
        f"source.queue={source.table}",
        "source.columns=payload",
        "source.maxRowsPerTrigger=300",
        f"sink.queue={sink.table}",
        f"job.checkpointLocation={folder / 'cp'}",
    )
    return Run(app, source, folder), sink


def assert_two_executors_of_their_own(app: Application) -> None:
    executors = app.executors()
    assert "driver" not in executors and len(executors) == 2, executors
    assert len(set(executors.values())) == 2, f"both executors on one worker: {executors}"


def assert_both_executors_read(app: Application) -> None:
    """Every task ran on an executor (none in the driver), each executor read some of the rows in its
    own Python workers, and together they read each row once."""
    read = app.rows_read_by_executor()
    assert len(read) == 2 and set(read) == set(app.executors()) and sum(read.values()) == ROWS, read
    assert all(t.python_bytes_returned > 0 for t in app.tasks() if t.records_read)


def test_queue_to_delta_on_the_cluster_writes_every_key_once(spark, to_delta):
    got = spark.read.format("delta").load(str(to_delta.folder / "delta")).select("payload")
    assert_df_equality(
        got, spark.createDataFrame([(k,) for k in KEYS], "payload string"), ignore_row_order=True, ignore_nullable=True
    )
    assert to_delta.source.inspection.stats() == {}


def test_queue_to_delta_reads_the_queue_on_two_executors_of_their_own(to_delta):
    assert_two_executors_of_their_own(to_delta.app)
    assert_both_executors_read(to_delta.app)


def test_queue_to_delta_writes_the_delta_files_on_the_executors(to_delta):
    written = to_delta.app.rows_written_by_executor()
    assert len(written) == 2 and set(written) == set(to_delta.app.executors()), written
    assert sum(written.values()) == ROWS


def test_each_worker_launched_an_executor_jvm_that_fetched_the_jars_and_the_package(cluster, to_delta):
    folders = [p for i in range(cluster.workers) for p in (cluster.work_dir(i) / to_delta.app.app_id).iterdir()]
    assert sorted(p.name for p in folders) == sorted(to_delta.app.executors())
    assert {p.parent.parent for p in folders} == {cluster.work_dir(i) for i in range(cluster.workers)}
    for folder in folders:
        fetched = {p.name for p in folder.iterdir()}
        assert "sqlqueue.zip" in fetched and {Path(j).name for j in delta_jars()} <= fetched, fetched
        launch = (folder / "stderr").read_text(errors="replace").splitlines()[0]
        assert launch.startswith("Spark Executor Command:") and "CoarseGrainedExecutorBackend" in launch


def test_queue_to_queue_on_the_cluster_publishes_every_key_once(to_queue):
    run, sink = to_queue
    assert sorted(r["payload"] for r in sink.inspection.peek(2 * ROWS, columns=("payload",))) == sorted(KEYS)
    assert run.source.inspection.stats() == {}


def test_queue_to_queue_reads_and_publishes_on_two_executors_of_their_own(to_queue):
    """A micro-batch is one stage: the task that reads a claimed range stages the same rows into the
    sink queue, so rows read on an executor are rows its sink writer wrote."""
    run, _ = to_queue
    assert_two_executors_of_their_own(run.app)
    assert_both_executors_read(run.app)
