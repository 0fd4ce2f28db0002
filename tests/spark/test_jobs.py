"""The spark-submit jobs in jobs/, end to end in local mode on every engine, in this process's
Spark session (a job's own session would cost a JVM start per test)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest
from chispa import assert_df_equality

from sqlqueue.queue import FAILED_OUTCOME, Ack
from sqlqueue.spark.jobs import run
from sqlqueue.testing import assert_queue_holds
from tests.conftest import ROOT
from tests.support.engines import config_file
from tests.support.ids import ids


def job(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"jobs_{name}", ROOT / "jobs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_job(name: str, *argv: str) -> int:
    module = job(name)
    return run(module.JOB, module.pipeline, list(argv))


@pytest.fixture
def conf(engine, tmp_path, monkeypatch) -> str:
    return config_file(engine, tmp_path, monkeypatch)


def test_queue_to_delta_delivers_every_row_once_and_empties_the_queue(spark, engine, conf, tmp_path):
    queue = engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(250)])
    status = run_job(
        "queue_to_delta",
        "-c",
        conf,
        "--set",
        f"source.queue={queue.table}",
        "--set",
        "source.maxRowsPerTrigger=100",
        "--set",
        f"job.target={tmp_path / 'delta'}",
        "--set",
        f"job.checkpointLocation={tmp_path / 'cp'}",
    )
    got = spark.read.format("delta").load(str(tmp_path / "delta")).select("payload")
    assert status == 0
    assert_df_equality(
        got,
        spark.createDataFrame([(f"p{i}",) for i in range(250)], "payload string"),
        ignore_row_order=True,
        ignore_nullable=True,
    )
    assert_queue_holds(queue)


def test_queue_to_delta_with_a_dead_letter_table_moves_the_failed_rows_there(spark, engine, conf, tmp_path):
    queue = engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(30)])
    queue.consuming.claim("worker", 1, 10, order=engine.order)
    poison = [Ack((i,), FAILED_OUTCOME, "poison") for i in ids(queue)[:10]]
    with queue.transaction() as cur:
        queue.consuming.apply_acks(cur, poison, keep=False, max_attempts=5)
    status = run_job(
        "queue_to_delta",
        "-c",
        conf,
        "--set",
        f"source.queue={queue.table}",
        "--set",
        f"source.deadLetterTable={tmp_path / 'dead'}",
        "--set",
        f"job.target={tmp_path / 'delta'}",
        "--set",
        f"job.checkpointLocation={tmp_path / 'cp'}",
    )
    assert status == 0
    dead = spark.read.format("delta").load(str(tmp_path / "dead"))
    assert sorted(r.payload for r in dead.collect()) == sorted(f"p{i}" for i in range(10))
    assert spark.read.format("delta").load(str(tmp_path / "delta")).count() == 20
    assert_queue_holds(queue)


def test_queue_to_delta_merge_on_id_adds_no_row_the_table_already_holds(spark, engine, conf, tmp_path):
    """Rows a consumer wrote before its lease expired come again through another consumer."""
    queue = engine.new_queue()
    queue.enqueue([{"payload": f"p{i}"} for i in range(100)])
    written_before = [(r["id"], r["payload"]) for r in queue.inspection.peek(30, columns=("id", "payload"))]
    target = str(tmp_path / "delta")
    spark.createDataFrame(written_before, "id bigint, payload string").write.format("delta").save(target)
    status = run_job(
        "queue_to_delta",
        "-c",
        conf,
        "--merge-on",
        "id",
        "--set",
        f"source.queue={queue.table}",
        "--set",
        "source.columns=id,payload",
        "--set",
        f"job.target={target}",
        "--set",
        f"job.checkpointLocation={tmp_path / 'cp'}",
    )
    got = spark.read.format("delta").load(target)
    assert status == 0
    assert got.count() == 100 and got.select("id").distinct().count() == 100


def test_two_stage_pipeline_delivers_every_key_exactly_once(spark, engine, conf, tmp_path):
    first, second = engine.new_queue(), engine.new_queue()
    first.enqueue([{"payload": f"k{i}"} for i in range(400)])
    assert (
        run_job(
            "queue_to_queue",
            "-c",
            conf,
            "--set",
            f"source.queue={first.table}",
            "--set",
            "source.maxRowsPerTrigger=150",
            "--set",
            f"sink.queue={second.table}",
            "--set",
            "job.transform=tests.spark.job_transforms:keep_payload_as_key",
            "--set",
            f"job.checkpointLocation={tmp_path / 'cp-ab'}",
        )
        == 0
    )
    assert (
        run_job(
            "queue_to_delta",
            "-c",
            conf,
            "--set",
            f"source.queue={second.table}",
            "--set",
            f"job.target={tmp_path / 'delta'}",
            "--set",
            f"job.checkpointLocation={tmp_path / 'cp-b'}",
        )
        == 0
    )
    got = spark.read.format("delta").load(str(tmp_path / "delta")).select("payload")
    assert_df_equality(
        got,
        spark.createDataFrame([(f"k{i}@a",) for i in range(400)], "payload string"),
        ignore_row_order=True,
        ignore_nullable=True,
    )
    assert first.inspection.stats() == {} and second.inspection.stats() == {}


def test_table_to_queue_enqueues_every_row_of_a_delta_table(spark, engine, conf, tmp_path):
    queue = engine.new_queue()
    table = str(tmp_path / "input")
    spark.createDataFrame([(f"r{i}", i % 3) for i in range(120)], "payload string, priority int").write.format(
        "delta"
    ).save(table)
    assert (
        run_job(
            "table_to_queue",
            "-c",
            conf,
            "--set",
            f"sink.queue={queue.table}",
            "--set",
            f"job.input={table}",
            "--set",
            f"job.checkpointLocation={tmp_path / 'cp'}",
        )
        == 0
    )
    rows = queue.inspection.peek(1000, columns=("payload", "priority"))
    assert sorted((r["payload"], r["priority"]) for r in rows) == sorted((f"r{i}", i % 3) for i in range(120))
