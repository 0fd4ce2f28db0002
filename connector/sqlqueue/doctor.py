"""``sqlqueue doctor``: look at a live queue table and its database for what would hurt a queue.

Each finding says what is wrong, why it hurts, and the statement that fixes it. The queries and
the fix statements come from the dialect (so they are in the statement catalog, parsed and
pinned); the table's kind judges the table (``kinds``: its layout and indexes, or its profile, the
tables adopting it made and the index its claim seeks), and each dialect what only its engine has
(``dialect.doctor.checks``). The doctor connects without changing any setting.
"""

from __future__ import annotations

from collections.abc import Callable

from .findings import NOTE, OK, PROBLEM, Finding
from .queue import Queue

__all__ = ["NOTE", "OK", "PROBLEM", "Finding", "examine", "report"]


def examine(queue: Queue, order: str) -> list[Finding]:
    """Every finding for the queue table, whose claims use ``order``; none of a check a finding says the
    server cannot be judged by (``Finding.unjudged``)."""
    found = queue.findings(order)
    unjudged = {check for f in found for check in f.unjudged}
    return [f for f in found if f.check not in unjudged]


def report(findings: list[Finding], script: Callable[[list[str]], str]) -> str:
    """Findings as text: one line each, the fix statements indented under it."""
    lines = []
    for f in findings:
        lines.append(f"{f.severity.upper():8} {f.check}: {f.message}")
        if f.fix:
            lines.append("         fix:")
            lines += [f"           {line}" for line in script(list(f.fix)).rstrip().splitlines() if line]
    problems = sum(f.severity == PROBLEM for f in findings)
    lines.append(f"{problems} problem(s) found" if problems else "no problems found")
    return "\n".join(lines)
