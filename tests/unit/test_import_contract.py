"""The layering contract in pyproject.toml catches the imports it exists to refuse."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(tree / "pyproject.toml")],
        cwd=tree,
        env={"PYTHONPATH": str(tree / "connector"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "connector" / "sqlqueue", tmp_path / "connector" / "sqlqueue")
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def test_the_package_keeps_its_contracts(tree):
    assert lint_imports(tree).returncode == 0


@pytest.mark.parametrize(
    ("module", "planted", "broken"),
    [
        ("queue.py", "import pyspark", "Only sqlqueue.spark imports Spark"),
        ("dialects/base.py", "from sqlqueue import queue", "Layers"),
        ("dialects/sqlserver.py", "from sqlqueue.dialects import sqlserver_doctor", "Dialects:"),
        ("dialects/statements/claims.py", "from sqlqueue.dialects import sqlite", "Dialects:"),
    ],
)
def test_a_planted_import_breaks_a_contract(tree, module, planted, broken):
    target = tree / "connector" / "sqlqueue" / module
    target.write_text(target.read_text() + f"\n{planted}  # planted\n")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert f"{broken}" in result.stdout and "BROKEN" in result.stdout
