"""Every engine's SQL is pinned in readable files: tests/golden/<dialect>/<statement name>.sql.

Each file holds exactly the emitted text plus one final newline. A change to any statement fails
with a diff until the files are regenerated on purpose:

    SQLQUEUE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_tsql_golden.py

T-SQL is the reason this exists (no SQL Server runs here), but PostgreSQL and SQLite are pinned the
same way so a shared change in dialects/base.py shows its effect on every engine in review.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sqlqueue.dialects import dialect_for
from tests.support.golden import ROOT, check_golden, regenerate_hint, updating
from tests.support.statements import DIALECTS, statements

GOLDEN = ROOT / "tests" / "golden"
THIS = "tests/unit/test_tsql_golden.py"
CATALOG = {name: statements(dialect_for(name)) for name in DIALECTS}
CASES = [(dialect, name) for dialect in DIALECTS for name in CATALOG[dialect]]


def golden_path(dialect: str, name: str) -> Path:
    return GOLDEN / dialect / f"{name}.sql"


@pytest.mark.parametrize(("dialect", "name"), CASES, ids=[f"{d}-{n}" for d, n in CASES])
def test_emitted_statement_equals_its_golden_file(dialect: str, name: str) -> None:
    check_golden(golden_path(dialect, name), CATALOG[dialect][name] + "\n", THIS)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_golden_directory_holds_no_file_for_a_statement_that_is_gone(dialect: str) -> None:
    stale = sorted(p for p in (GOLDEN / dialect).glob("*.sql") if p.stem not in CATALOG[dialect])
    if updating():
        for path in stale:
            path.unlink()
        return
    assert not stale, f"no statement is named {[p.name for p in stale]}; remove them with: {regenerate_hint(THIS)}"
