"""ARCHITECTURE.md describes the code as it is: every module it names exists; and so do the tests
docs/guarantees.md says show each guarantee."""

from __future__ import annotations

import re

from tests.support.golden import ROOT

SOURCES = ("connector", "jobs", "tests", "benchmarks", "examples")


def test_every_module_the_architecture_names_exists():
    named = set(re.findall(r"\b([\w/]+\.py)\b", (ROOT / "ARCHITECTURE.md").read_text()))
    modules = {p.relative_to(ROOT).as_posix() for folder in SOURCES for p in (ROOT / folder).rglob("*.py")}
    missing = sorted(n for n in named if not any(m == n or m.endswith(f"/{n}") for m in modules))
    assert not missing, f"ARCHITECTURE.md names modules that do not exist: {', '.join(missing)}"


def test_every_test_path_the_guarantees_page_names_exists():
    named = set(re.findall(r"`(tests/[\w/.]*)`", (ROOT / "docs" / "guarantees.md").read_text()))
    assert named, "docs/guarantees.md names no test suite"
    missing = sorted(n for n in named if not (ROOT / n).exists())
    assert not missing, f"docs/guarantees.md names tests that do not exist: {', '.join(missing)}"
