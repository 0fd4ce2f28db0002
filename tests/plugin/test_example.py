"""The worked example runs as a user runs it: a fresh virtual environment outside the project, the
package installed by pip with the extras the README names, the example copied there, and pytest."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "orders"
NOTIFICATIONS = ROOT / "examples" / "notifications"

pytestmark = pytest.mark.spark
PYTEST = ("-m", "pytest", "-q", "-p", "no:cacheprovider")


def run(*command: str | Path, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, command))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def copy_example(home: Path, example: Path = EXAMPLE) -> Path:
    project = home / "project"
    project.mkdir()
    for source in example.glob("*.py"):
        shutil.copy(source, project)
    return project


def user_environment() -> dict[str, str]:
    """This process's environment without what ties it to the project: its Python path, Spark's
    settings for its own interpreter, the plugin's database choice."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_", "PYTHON", "VIRTUAL_ENV"))}
    kept.pop("SQLQUEUE_TEST_DB", None)
    return {**kept, "SQLQUEUE_JARS_DIR": os.environ.get("SQLQUEUE_JARS_DIR", str(ROOT / ".cache" / "jars"))}


def test_the_example_passes_in_a_fresh_environment_with_only_pip_installs(tmp_path_factory):
    home = tmp_path_factory.mktemp("user")
    assert not home.is_relative_to(ROOT)
    venv = home / "venv"
    run(sys.executable, "-m", "venv", venv)
    run(venv / "bin" / "python", "-m", "pip", "install", "-q", f"{ROOT}[testing,delta]")
    done = run(venv / "bin" / "python", *PYTEST, cwd=copy_example(home), env=user_environment())
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
