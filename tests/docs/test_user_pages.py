"""The user pages say what is true now: no commit hash, run date or seed value. Those belong to the
evidence page (docs/evidence.md) and the CHANGELOG, which keep what was run and when."""

from __future__ import annotations

import re

import pytest

from tests.support.docs import PAGES
from tests.support.golden import ROOT

EVIDENCE = ROOT / "docs" / "evidence.md"
USER_PAGES = [p for p in PAGES if p != EVIDENCE]
# A word of 7 to 40 hexadecimal digits with a digit and a letter in it, standing alone (not inside an
# identifier such as a generated consumer id, sqlqueue-3c7840b8b7954dda).
COMMIT = re.compile(r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
SEED = re.compile(r"(?i)\bseed[ =]+\d+|SEED=\d+|--seed \d+|seed (?:value )?\d+")


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_user_page_names_no_commit_run_date_or_seed(page):
    text = page.read_text(encoding="utf-8")
    found = [m.group(0) for pattern in (COMMIT, DATE, SEED) for m in pattern.finditer(text)]
    assert found == [], f"{page.relative_to(ROOT)} holds {found}: move dated runs to docs/evidence.md"


def test_the_check_finds_what_it_looks_for():
    text = "at commit 5d5913a on 2026-11-26: make chaos SEED=5129, seed 29, consumer sqlqueue-3c7840b8b7954dda"
    assert [m.group(0) for m in COMMIT.finditer(text)] == ["5d5913a"]
    assert [m.group(0) for m in DATE.finditer(text)] == ["2026-11-26"]
    assert [m.group(0) for m in SEED.finditer(text)] == ["SEED=5129", "seed 29"]
