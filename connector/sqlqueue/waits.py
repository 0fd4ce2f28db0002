"""Queue wait: how long rows waited between enqueue and claim, and how old the oldest ready row is.

A row's wait is ``claimed_at - enqueued_at``, both written by the database's clock, so the figures
need no clock of the Spark driver. A retried row keeps its first ``enqueued_at``: its wait includes
its earlier attempts and backoff, and a row enqueued with a later ``due_at`` waits by design. A
claim returns each row's wait with its id; the dialect's statements rank the waits of rows already
claimed (``Dialect.claim_waits``, ``recent_waits``) and age the backlog (``backlog``). This module
holds the figures and how they are shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Waits:
    """The waits of a set of claimed rows in milliseconds: nearest-rank percentiles (the value at rank
    ceil(p * n) in wait order, what PostgreSQL's percentile_disc returns) and the longest. None
    when ``rows`` is 0."""

    rows: int
    p50_ms: int | None
    p95_ms: int | None
    max_ms: int | None

    @classmethod
    def of(cls, waits_ms: Sequence[int]) -> Waits:
        """The figures of the waits a claim returned, ranked as the dialect's statement ranks them."""
        if not waits_ms:
            return NO_WAITS
        ranked, n = sorted(waits_ms), len(waits_ms)
        return cls(n, ranked[(n + 1) // 2 - 1], ranked[(19 * n + 19) // 20 - 1], ranked[-1])

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Waits:
        """From the dialect's (rows, p50, p95, max) row, whose figures are NULL when no row matched."""
        rows, p50, p95, longest = (None if v is None else int(v) for v in row)
        return cls(rows or 0, p50, p95, longest)

    def describe(self) -> str:
        """'p50 812 ms, p95 1.5 s, max 1.7 s', for log lines and the stats command."""
        if not self.rows:
            return "no rows"
        return f"p50 {duration(self.p50_ms)}, p95 {duration(self.p95_ms)}, max {duration(self.max_ms)}"


NO_WAITS = Waits(0, None, None, None)


@dataclass(frozen=True)
class Backlog:
    """The ready rows a claim could take now (due, not in an unpublished sink batch), and the age of
    the oldest of them (the database's now minus its ``enqueued_at``); None when there is none."""

    ready_rows: int
    oldest_age_ms: int | None

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Backlog:
        count, age = row
        return cls(int(count), None if age is None else int(age))

    def describe(self) -> str:
        """'75000 ready rows remain, the oldest enqueued 4.1 s ago', for log lines."""
        oldest = "" if self.oldest_age_ms is None else f", the oldest enqueued {duration(self.oldest_age_ms)} ago"
        return f"{self.ready_rows} ready rows remain{oldest}"


def duration(ms: int | None) -> str:
    """A wait or an age for people: '812 ms', '12.3 s', '1:02:05' (h:mm:ss from 100 s on), '-'."""
    if ms is None:
        return "-"
    if abs(ms) < 1000:
        return f"{ms} ms"
    if abs(ms) < 100_000:
        return f"{ms / 1000:.1f} s"
    seconds = round(ms / 1000)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
