"""Bounded retries of idempotent queue steps across transient database errors."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from .errors import DatabaseError

T = TypeVar("T")
log = logging.getLogger("sqlqueue.retry")
MAX_DELAY_S = 30.0


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    backoff_ms: int = 1000

    def run(self, step: Callable[[], T], what: str) -> T:
        """Run ``step``; after a transient error wait (doubling each time) and run it again."""
        attempt = 0
        while True:
            try:
                return step()
            except DatabaseError as exc:
                if not exc.transient or attempt >= self.attempts:
                    raise
                delay = min(self.backoff_ms / 1000 * 2**attempt, MAX_DELAY_S)
                attempt += 1
                log.warning("%s failed (%s); retry %d of %d in %.1f s", what, exc, attempt, self.attempts, delay)
                time.sleep(delay)
