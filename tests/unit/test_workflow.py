"""The CI workflows pass actionlint, and the SQL Server one runs what the README says it runs.

actionlint is a Go module: `make lint-workflows` runs it with `go run` at a pinned version (and
shellcheck on every `run:` script when shellcheck is on PATH).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from tests.conftest import ROOT

WORKFLOW = ROOT / ".github/workflows/sqlserver.yml"
# A make run from inside `make test` must not inherit the outer make's flags or jobserver.
MAKE_ENV = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}


def test_workflows_pass_actionlint():
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: actionlint runs through `go run` (make lint-workflows)")
    result = subprocess.run(
        ["make", "-s", "lint-workflows"], cwd=ROOT, env=MAKE_ENV, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, f"actionlint found problems:\n{result.stdout}{result.stderr}"


def test_sqlserver_workflow_runs_every_driver_both_isolation_settings_and_make_test_sqlserver():
    text = WORKFLOW.read_text()
    assert "image: mcr.microsoft.com/mssql/server:2022-latest" in text
    assert 'driver: ["ODBC Driver 18 for SQL Server", "FreeTDS", "mssql-python"]' in text
    assert 'rcsi: ["OFF", "ON"]' in text
    assert "SET READ_COMMITTED_SNAPSHOT $(RCSI) WITH ROLLBACK IMMEDIATE" in text
    assert "msodbcsql18" in text and "system-packages" in text  # FreeTDS (tdsodbc) is in the Makefile's list
    assert 'python-version: "3.11"' in text and 'java-version: "17"' in text
    assert re.search(r"^\s+run: make test-sqlserver$", text, re.M)


def test_no_password_is_written_in_a_workflow():
    for path in (ROOT / ".github/workflows").glob("*.yml"):
        for line in path.read_text().splitlines():
            assigned = re.match(r"\s*[A-Z_]*(PASSWORD|PWD)[A-Z_]*:\s*(\S.*)$", line)
            if assigned:
                assert assigned.group(2).startswith("${{ secrets."), f"{path.name}: {line.strip()}"
