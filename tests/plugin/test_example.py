"""The worked example runs as a user runs it: a fresh virtual environment outside the project, the
package installed by pip with the extras the README names, the example copied there, and pytest."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from .conftest import run, user_environment

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "orders"
NOTIFICATIONS = ROOT / "examples" / "notifications"

pytestmark = pytest.mark.spark
PYTEST = ("-m", "pytest", "-q", "-p", "no:cacheprovider")


def copy_example(home: Path, example: Path = EXAMPLE) -> Path:
    project = home / "project"
    project.mkdir()
    for source in example.glob("*.py"):
        shutil.copy(source, project)
    return project


def test_the_example_passes_in_a_fresh_environment_with_only_pip_installs(installed, tmp_path):
    done = run(installed / "python", *PYTEST, cwd=copy_example(tmp_path), env=user_environment(installed))
    assert "3 passed" in done.stdout, done.stdout


def test_the_example_passes_on_spark_connect(tmp_path):
    """The ``spark`` fixture as a Spark Connect session (``SPARK_REMOTE``), in a process of its own: a
    Connect session cannot share this process with the suite's classic one."""
    connect = {**user_environment(), "SPARK_REMOTE": "local[2]"}
    done = run(sys.executable, *PYTEST, cwd=copy_example(tmp_path), env=connect)
    assert "3 passed" in done.stdout, done.stdout


def test_the_notification_example_passes_outside_the_project(tmp_path):
    """The notification sender's tests, copied out of the project as a user would, in this environment."""
    done = run(sys.executable, *PYTEST, cwd=copy_example(tmp_path, NOTIFICATIONS), env=user_environment())
    assert "3 passed" in done.stdout, done.stdout


@pytest.mark.parametrize("example", [EXAMPLE, NOTIFICATIONS], ids=lambda p: p.name)
def test_the_examples_pass_unchanged_on_postgresql_whose_unquoted_names_are_lower_case(example, tmp_path):
    """The plugin's own PostgreSQL server (--sqlqueue-db postgres), tables made as users make them there:
    unquoted names, which PostgreSQL folds to lower case, while the examples spell them as SQL Server does."""
    environment = {**user_environment(), "SQLQUEUE_TEST_DB": "postgres"}
    done = run(sys.executable, *PYTEST, cwd=copy_example(tmp_path, example), env=environment)
    assert "3 passed" in done.stdout, done.stdout


@pytest.mark.sqlserver
@pytest.mark.parametrize("example", [EXAMPLE, NOTIFICATIONS], ids=lambda p: p.name)
def test_the_examples_pass_unchanged_on_sql_server(example, tmp_path):
    """The server of SQLQUEUE_TEST_SQLSERVER (Babelfish in make test-babelfish) as the plugin's database
    (on Babelfish its queues claim in no order: sqlqueue.testing.queues.Database.claims_in_order)."""
    from tests.support.engines import SQLSERVER_ENV

    url = os.environ.get(SQLSERVER_ENV, "")
    if not url.startswith(("sqlserver://", "mssql://")):
        pytest.skip(f"{SQLSERVER_ENV} names no sqlserver:// URL (make test-babelfish or make test-sqlserver)")
    environment = {**user_environment(), "SQLQUEUE_TEST_DB": url}
    done = run(sys.executable, *PYTEST, cwd=copy_example(tmp_path, example), env=environment)
    assert "3 passed" in done.stdout, done.stdout
