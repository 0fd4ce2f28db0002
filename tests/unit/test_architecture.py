"""ARCHITECTURE.md describes the code as it is: every module it names exists; and so do the tests
docs/guarantees.md says show each guarantee; what differs by table kind is asked of the kind; and no
function or class outgrows the size a reader takes in."""

from __future__ import annotations

import ast
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


def test_no_function_runs_over_50_lines_and_no_class_but_the_engines_has_over_30_public_methods():
    too_big = []
    for path in (ROOT / "connector" / "sqlqueue").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno >= 50:
                too_big.append(f"{path.name}:{node.name} ({node.end_lineno - node.lineno + 1} lines)")
            if isinstance(node, ast.ClassDef) and not node.name.endswith("Engine"):  # engines spell SQL per engine
                public = [m for m in node.body if isinstance(m, ast.FunctionDef) and m.name[0] != "_"]
                if len(public) > 30:
                    too_big.append(f"{path.name}:{node.name} ({len(public)} public methods)")
    assert not too_big, f"too big: {', '.join(too_big)}"
