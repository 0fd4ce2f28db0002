"""What ``sqlqueue doctor`` reports: a finding per check, with its severity and the statements that fix it.

Low in the package, beside the doctor that gathers them: a table's kind and each engine's doctor part
judge what they know and return findings in these terms.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .errors import DatabaseError

PROBLEM, NOTE, OK = "problem", "note", "ok"


@dataclass(frozen=True)
class Finding:
    severity: str
    check: str
    message: str
    fix: tuple[str, ...] = ()
    # Checks this finding says the server cannot be judged by (a server that is not what it answers for):
    # their findings are left out rather than propose fixes that cannot apply.
    unjudged: tuple[str, ...] = ()


def guarded(check: str, findings: Callable[[], Iterable[Finding]]) -> list[Finding]:
    """The findings of one check; a check the database cannot answer (a missing permission, a
    catalog view or statement the server lacks) is a finding that says so, and the others still run."""
    try:
        return list(findings())
    except DatabaseError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return [Finding(NOTE, check, f"{check} not checked: {reason}")]
