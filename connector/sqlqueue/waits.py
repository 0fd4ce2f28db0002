"""Queue wait: how long rows sat in the queue before a consumer claimed them, and how old the oldest
ready row is.

The figures an operator watches to know whether a stream keeps up: when they grow batch after batch,
rows arrive faster than the stream claims them. A row's wait is ``claimed_at - enqueued_at``, both
written by the database's clock, so no clock of the Spark driver enters. A retried row keeps its
first ``enqueued_at``: its wait includes its earlier attempts and backoff. The dialect ranks the
waits and ages the backlog in SQL (``dialect.claims.claim_waits`` and ``backlog``,
``dialect.doctor.recent_waits``); this module holds the figures and how they are shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Waits:
    """Claim time minus enqueue time of a set of rows, in milliseconds: nearest-rank percentiles (the
    value at rank ceil(p * n) in wait order, what PostgreSQL's percentile_disc returns) and the
    longest; None when ``rows`` is 0."""

    rows: int = 0
    p50_ms: int | None = None
    p95_ms: int | None = None
    max_ms: int | None = None

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Waits:
        """From the dialect's (rows, p50, p95, max) row, whose figures are NULL when no row matched."""
        rows, p50, p95, longest = (None if v is None else int(v) for v in row)
        return cls(rows or 0, p50, p95, longest)

    def progress(self) -> dict[str, int | None]:
        """The keys the source adds to its latestOffset in query progress."""
        return {"waitP50Ms": self.p50_ms, "waitP95Ms": self.p95_ms, "waitMaxMs": self.max_ms}

    def __str__(self) -> str:
        if not self.rows:
            return "no rows"
        return f"p50 {duration(self.p50_ms)}, p95 {duration(self.p95_ms)}, max {duration(self.max_ms)}"


@dataclass(frozen=True)
class Backlog:
    """The ready rows a claim could take now (due, not in an unpublished sink batch), and the age of
    the oldest of them (the database's now minus its ``enqueued_at``); None when none is ready."""

    ready_rows: int
    oldest_age_ms: int | None

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Backlog:
        count, age = row
        return cls(int(count), None if age is None else int(age))


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
