"""Golden files: checked-in text that generated output must equal, regenerated on request.

Run the owning test with SQLQUEUE_UPDATE_GOLDEN=1 to rewrite the files from the generator; without
it a difference fails with a unified diff, so every change to emitted SQL shows up in review.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

UPDATE_ENV = "SQLQUEUE_UPDATE_GOLDEN"
ROOT = Path(__file__).resolve().parents[2]


def updating() -> bool:
    return os.environ.get(UPDATE_ENV) == "1"


def regenerate_hint(test_file: str) -> str:
    return f"{UPDATE_ENV}=1 .venv/bin/python -m pytest {test_file}"


def check_golden(path: Path, expected: str, test_file: str) -> None:
    """Fail unless ``path`` holds exactly ``expected``; in update mode, write it instead."""
    if updating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(expected, encoding="utf-8", newline="")
        return
    shown = path.relative_to(ROOT)
    if not path.exists():
        pytest.fail(f"{shown} is missing; create it with: {regenerate_hint(test_file)}", pytrace=False)
    actual = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                actual.splitlines(keepends=True),
                expected.splitlines(keepends=True),
                fromfile=f"{shown} (checked in)",
                tofile=f"{shown} (generated now)",
            )
        )
        pytest.fail(
            f"{shown} differs from what the code generates:\n{diff}\n"
            f"If the change is intended, regenerate with: {regenerate_hint(test_file)}",
            pytrace=False,
        )
