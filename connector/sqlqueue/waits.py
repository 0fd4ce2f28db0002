"""Queue wait: how long rows sat in the queue before a consumer claimed them, and how old the oldest
ready row is.

The figures an operator watches to know whether a stream keeps up: when they grow batch after batch,
rows arrive faster than the stream claims them. A row's wait is ``claimed_at - enqueued_at``, both
written by the database's clock, so no clock of the Spark driver enters. A retried row keeps its
first ``enqueued_at``: its wait includes its earlier attempts and backoff. A claim of sqlqueue's own
layout returns its rows' waits, ranked here (``Waits.ranked``); otherwise the dialect ranks the waits
in SQL, as it ages the backlog (``dialect.claims.claim_waits`` and ``backlog``,
``dialect.inspection.recent_waits``); this module holds the figures and how they are shown.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

log = logging.getLogger("sqlqueue.waits")


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
    def ranked(cls, waits_ms: Sequence[int]) -> Waits:
        """The figures of the waits a claim returned with its rows, ranked here as the dialect's statement
        ranks them (Claims.rank_waits)."""
        ordered = sorted(waits_ms)
        n = len(ordered)
        if not n:
            return cls()
        return cls(n, ordered[(n + 1) // 2 - 1], ordered[(19 * n + 19) // 20 - 1], ordered[-1])

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


class BacklogGauge:
    """The backlog a stream reports with each batch, counted off the batch's path.

    Counting the ready rows is a pass over all of them: 408 ms a batch with 1,000,000 ready on
    PostgreSQL, which made a batch cost more the longer the queue. While a count is quick (the last
    took under ``quick_s``: a small backlog) the gauge counts each time it is read. Otherwise it counts in
    a thread of its own, at most once every ``interval_s`` and never more than ``share`` of the time
    (a count that took 2 s waits 40 s for the next), and between counts it reports the last count less
    the rows claimed since, and the oldest age plus the time gone by (rows enqueued since are not in it
    until the next count). ``measure`` runs on the thread that calls it: give it a connection of its own.
    """

    def __init__(
        self,
        measure: Callable[[], Backlog],
        *,
        quick_s: float = 0.02,
        interval_s: float = 10.0,
        share: float = 0.05,
    ) -> None:
        self._measure = measure
        self.quick_s, self.interval_s, self.share = quick_s, interval_s, share
        self._last: Backlog | None = None
        self._at = float("-inf")  # monotonic time of the last count
        self._took = 0.0
        self._claimed = 0  # rows claimed since the last count
        self._counting: threading.Thread | None = None
        self._lock = threading.Lock()

    def claimed(self, rows: int) -> None:
        with self._lock:
            self._claimed += rows

    def read(self) -> Backlog:
        """The backlog now: counted, or estimated from the last count (and a count started when due)."""
        counting = self._counting is not None
        if self._last is None or (self._took < self.quick_s and not counting):
            return self._count()
        if not counting and time.monotonic() - self._at >= max(self.interval_s, self._took / self.share):
            self._counting = threading.Thread(target=self._count_quietly, name="sqlqueue-backlog", daemon=True)
            self._counting.start()
        return self._estimate()

    def close(self) -> None:
        if self._counting is not None:
            self._counting.join()

    def _count(self) -> Backlog:
        started = time.monotonic()
        with self._lock:
            claimed_before = self._claimed
        counted = self._measure()
        with self._lock:
            # Rows claimed while the count ran may or may not be in it: taken as not (the smaller figure).
            self._last, self._at, self._took = counted, started, time.monotonic() - started
            self._claimed -= claimed_before
        return self._estimate()

    def _count_quietly(self) -> None:
        try:
            self._count()
        except Exception as exc:  # the next due count tries again; meanwhile the estimate stands
            log.warning("counting the backlog failed: %s", exc)
        finally:
            self._counting = None

    def _estimate(self) -> Backlog:
        with self._lock:
            last, claimed, since = self._last, self._claimed, time.monotonic() - self._at
        assert last is not None
        ready = max(last.ready_rows - claimed, 0)
        if not ready or last.oldest_age_ms is None:
            return Backlog(ready, None)
        return replace(last, ready_rows=ready, oldest_age_ms=last.oldest_age_ms + round(since * 1000))


def duration(ms: int | None) -> str:
    """A wait or an age for people: '812 ms', '12.3 s', '1:02:05' (h:mm:ss from 100 s on), '-'."""
    if ms is None:
        return "-"
    if abs(ms) < 1000:
        return f"{ms} ms"
    if abs(ms) < 100_000:
        return f"{ms / 1000:.1f} s"
    return hms(round(ms / 1000))


def hms(seconds: int) -> str:
    """Seconds as h:mm:ss."""
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
