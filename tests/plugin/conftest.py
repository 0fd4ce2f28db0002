"""A user's environment: a fresh virtual environment outside the project with sqlqueue's built wheel
installed by pip, and nothing else of the project's. Built once for the tests that need it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.source_build import building_from_source

ROOT = Path(__file__).resolve().parents[2]


def run(*command: str | Path, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, command))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> Path:
    """The ``bin`` folder of a fresh virtual environment holding the built wheel with the extras the README
    names (testing, delta, connect)."""
    home = tmp_path_factory.mktemp("user")
    assert not home.is_relative_to(ROOT)
    with building_from_source():
        run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", home / "dist", ROOT)
    (wheel,) = (home / "dist").glob("sqlqueue-*.whl")
    run(sys.executable, "-m", "venv", home / "venv")
    run(home / "venv" / "bin" / "python", "-m", "pip", "install", "-q", f"{wheel}[testing,delta,connect]")
    return home / "venv" / "bin"


def user_environment(bin_folder: Path | None = None) -> dict[str, str]:
    """This process's environment without what ties it to the project: its Python path, Spark's
    settings for its own interpreter, the plugin's database choice; with ``bin_folder`` first on PATH, as
    an activated virtual environment has it (Spark's workers run the ``python3`` found there)."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_", "PYTHON", "VIRTUAL_ENV"))}
    kept.pop("SQLQUEUE_TEST_DB", None)
    if bin_folder is not None:
        kept["PATH"] = os.pathsep.join([str(bin_folder), kept.get("PATH", "")])
        kept["VIRTUAL_ENV"] = str(bin_folder.parent)
    return {**kept, "SQLQUEUE_JARS_DIR": os.environ.get("SQLQUEUE_JARS_DIR", str(ROOT / ".cache" / "jars"))}
