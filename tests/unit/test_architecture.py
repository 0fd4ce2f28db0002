"""ARCHITECTURE.md describes the code as it is: every module it names exists; and so do the tests
docs/guarantees.md says show each guarantee; and what differs by table kind is asked of the kind."""

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


def test_only_the_table_kinds_ask_which_kind_a_table_is():
    package = ROOT / "connector" / "sqlqueue"
    asking = re.compile(r"\.(owned|in_place)\b|^\s*from \S*kinds(\.(adopted|own)\b| import .*\b(adopted|own)\b)")
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in package.rglob("*.py")
        if p.parent.name != "kinds"
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if asking.search(line)
    ]
    assert not found, f"the kind is asked outside kinds/: {', '.join(found)}"
