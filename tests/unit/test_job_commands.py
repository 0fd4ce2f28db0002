"""The job scripts as a user runs them: --help, and bad configuration ending in one line, exit 2,
before Spark starts (so these run as plain subprocesses, without a JVM)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

JOBS = ("queue_to_delta", "queue_to_queue", "table_to_queue")


def run_job(name: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "connector"), **(env or {})}
    environment.pop("SQLQUEUE_PASSWORD", None)
    return subprocess.run(
        [sys.executable, str(ROOT / "jobs" / f"{name}.py"), *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


@pytest.mark.parametrize("name", JOBS)
def test_help_describes_the_job_and_its_arguments(name):
    result = run_job(name, "--help")
    assert result.returncode == 0
    assert "--config" in result.stdout and "--set" in result.stdout and "Exit status" in result.stdout


def assert_one_line_error(result: subprocess.CompletedProcess, *expected: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    for text in expected:
        assert text in result.stderr


def test_a_bad_config_file_is_one_line_naming_the_file(tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[source\nqueue = 'x'\n")
    assert_one_line_error(
        run_job("queue_to_delta", "-c", str(bad)), "queue-to-delta: error:", "bad.toml is not valid TOML"
    )


def test_a_missing_secret_is_one_line_naming_the_variable():
    result = run_job(
        "queue_to_delta", "-c", str(ROOT / "conf/postgres.toml"), "-c", str(ROOT / "conf/jobs/orders-to-delta.toml")
    )
    assert_one_line_error(result, "environment variable SQLQUEUE_PASSWORD is not set")


def test_an_unknown_option_is_one_line_listing_the_valid_ones():
    result = run_job("queue_to_queue", "-c", str(ROOT / "conf/sqlite.toml"), "--set", "source.maxRowz=5")
    assert_one_line_error(result, "[source] unknown key 'maxRowz'; valid keys are:", "maxRowsPerTrigger")


def test_a_missing_required_setting_is_one_line_saying_what_it_is_for(tmp_path: Path):
    result = run_job(
        "queue_to_delta",
        "-c",
        str(ROOT / "conf/sqlite.toml"),
        "--set",
        f"connection.url=sqlite:///{tmp_path}/q.db",  # a folder that exists
        "--set",
        "source.queue=orders",
        "--set",
        f"job.checkpointLocation={tmp_path}",
    )
    assert_one_line_error(result, "[job] target is required")


def test_a_transform_that_cannot_be_imported_is_one_line(tmp_path: Path):
    result = run_job(
        "queue_to_queue",
        "-c",
        str(ROOT / "conf/sqlite.toml"),
        "--set",
        f"connection.url=sqlite:///{tmp_path}/q.db",  # a folder that exists
        "--set",
        "source.queue=a",
        "--set",
        "sink.queue=b",
        "--set",
        f"job.checkpointLocation={tmp_path}",
        "--set",
        "job.transform=no_such_module:fn",
    )
    assert_one_line_error(result, "module 'no_such_module' cannot be imported")


def test_a_queue_table_that_does_not_exist_is_one_line(tmp_path: Path):
    result = run_job(
        "queue_to_delta",
        "-c",
        str(ROOT / "conf/sqlite.toml"),
        "--set",
        f"source.url=sqlite:///{tmp_path}/q.db",
        "--set",
        "source.queue=orders",
        "--set",
        f"job.target={tmp_path}/t",
        "--set",
        f"job.checkpointLocation={tmp_path}/c",
    )
    assert_one_line_error(result, "queue table orders does not exist")
