"""The docs' examples as data: every fenced block of README.md and docs/*.md, with what the HTML comment
just above it tells the docs' tests.

    <!-- example: not run: needs a SQL Server -->           the test skips it, giving the reason
    <!-- example: given queue orders with 1000 rows -->     the test makes that SQLite queue first
    <!-- example: sqlserver quick start -->                 run against a live SQL Server instead
                                                            (tests/docs/test_sqlserver_quick_start.py)

Examples run in a folder of the test's own that stands for /tmp/sqlqueue, the folder the examples
(and conf/sqlite.toml) keep their queue and Delta tables in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.support.golden import ROOT

PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
PYTHON, SHELL = frozenset({"python", "py"}), frozenset({"bash", "sh", "shell"})
SANDBOXED = "/tmp/sqlqueue"  # what an example's paths start with; the test gives it a folder of its own

FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
DIRECTIVE = re.compile(r"<!--\s*example:\s*(?P<text>.*?)\s*-->", re.S)
NOT_RUN = re.compile(r"not run:\s*(?P<reason>\S.*)", re.S)
SQLSERVER = "sqlserver quick start"
GIVEN = re.compile(r"given\s+(?P<queues>.+)", re.S)
GIVEN_QUEUE = re.compile(r"queue (?P<name>\w+)(?: with (?P<rows>\d+) rows)?")


@dataclass(frozen=True)
class Example:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    source: str
    directive: str  # the comment's text after "example:", or ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def runnable(self) -> bool:
        return self.lang in PYTHON | SHELL

    @property
    def not_run(self) -> str | None:
        """The reason the example is not run, when its comment gives one."""
        found = NOT_RUN.fullmatch(self.directive)
        return found["reason"] if found else None

    @property
    def on_sqlserver(self) -> bool:
        """A block of the SQL Server quick start: run against a live server, not in the SQLite sandbox."""
        return self.directive == SQLSERVER

    @property
    def given_queues(self) -> list[tuple[str, int]]:
        """(queue, rows) the example expects to exist, from "given queue orders with 1000 rows, queue x"."""
        found = GIVEN.fullmatch(self.directive)
        if not found:
            return []
        return [(m["name"], int(m["rows"] or 0)) for m in GIVEN_QUEUE.finditer(found["queues"])]

    def problem(self) -> str | None:
        """What is wrong with the example's comment, if anything."""
        if not self.directive:
            return None
        if not self.runnable:
            return f"{self.where}: an example comment above a {self.lang or 'plain'} block, which never runs"
        if self.not_run is None and not self.given_queues and not self.on_sqlserver:
            return (
                f"{self.where}: the comment 'example: {self.directive}' says neither 'not run: <reason>' "
                f"nor 'given queue <name> [with <n> rows]' nor '{SQLSERVER}'"
            )
        return None

    def in_sandbox(self, folder: Path) -> str:
        return self.source.replace(SANDBOXED, str(folder))


def examples(page: Path) -> list[Example]:
    """Every fenced block of ``page``, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for block in FENCE.finditer(text):
        before = directive(text[: block.start()])
        lines = [line[len(block["indent"]) :] for line in block["body"].splitlines(keepends=True)]
        found.append(
            Example(
                page=page,
                line=text.count("\n", 0, block.start()) + 1,
                lang=block["lang"].strip().split(" ")[0].lower(),
                source="".join(lines),
                directive=before,
            )
        )
    return found


def directive(before: str) -> str:
    """The text of an example comment that ends ``before`` (only blank space after it), or ""."""
    head = before.rstrip()
    if not head.endswith("-->"):
        return ""
    found = DIRECTIVE.fullmatch(head[head.rfind("<!--") :])
    return found["text"] if found else ""


def prose(page: Path) -> str:
    """The page without its fenced blocks."""
    return FENCE.sub("", page.read_text(encoding="utf-8"))
