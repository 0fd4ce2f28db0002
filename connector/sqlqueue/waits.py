"""Queue wait: how long rows sat in the queue before a consumer claimed them.

The figure an operator watches to know whether a stream keeps up: when it grows batch after batch,
rows arrive faster than the stream claims them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Waits:
    """Claim time minus enqueue time of a set of rows, in milliseconds (nearest-rank percentiles)."""

    rows: int = 0
    p50_ms: int | None = None
    p95_ms: int | None = None
    max_ms: int | None = None

    @classmethod
    def of(cls, millis: Iterable[int]) -> Waits:
        ordered = sorted(millis)
        if not ordered:
            return cls()

        def rank(p: float) -> int:
            return ordered[max(math.ceil(p * len(ordered)) - 1, 0)]

        return cls(len(ordered), rank(0.5), rank(0.95), ordered[-1])

    def progress(self) -> dict[str, int | None]:
        """The keys the source adds to its latestOffset in query progress."""
        return {"waitP50Ms": self.p50_ms, "waitP95Ms": self.p95_ms, "waitMaxMs": self.max_ms}

    def __str__(self) -> str:
        if not self.rows:
            return "no rows"
        return f"p50 {seconds(self.p50_ms)}, p95 {seconds(self.p95_ms)}, max {seconds(self.max_ms)}"


def seconds(millis: int | None) -> str:
    return "-" if millis is None else f"{millis / 1000:.1f} s"
