"""Retries of idempotent queue steps across transient database errors, bounded by time.

A step that fails with a transient error (each dialect's ``is_transient`` says which: a lost or
refused connection once the address is proven, a server starting up or shutting down, a deadlock
victim, a busy database) runs again after a wait that starts at ``backoff_ms`` and doubles, no
single wait longer than ``MAX_WAIT_S``, until ``timeout_ms`` has gone by since the first failure.
Then the last error is raised, naming the option that bounds the retries. The bound is time, not a
count (as Kafka Connect's ``errors.retry.timeout``): what a job must ride out is an outage of some
seconds, a database restart or a failover, however many attempts fit in it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from time import monotonic, sleep
from typing import TypeVar

from .errors import DatabaseError, one_line

T = TypeVar("T")
log = logging.getLogger("sqlqueue.retry")
MAX_WAIT_S = 10.0  # the longest single wait: a database back after 40 s is found within 10 s
TIMEOUT_OPTION = "retryTimeout"  # the option that sets ``timeout_ms`` (options.py)


@dataclass(frozen=True)
class RetryPolicy:
    timeout_ms: int = 60_000
    backoff_ms: int = 1000

    def run(self, step: Callable[[], T], what: str) -> T:
        """Run ``step``; after a transient error wait (doubling each time) and run it again, until
        ``timeout_ms`` has gone by since the first failure."""
        first_failure: float | None = None
        retries = 0
        while True:
            try:
                return step()
            except DatabaseError as exc:
                if not exc.transient:
                    raise
                now = monotonic()
                first_failure = now if first_failure is None else first_failure
                elapsed = now - first_failure
                left = self.timeout_ms / 1000 - elapsed
                if left <= 0:
                    raise DatabaseError(
                        f"{what} still failed after {retries} retries in {elapsed:.1f} s (option {TIMEOUT_OPTION} "
                        f"= {self.timeout_ms / 1000:g} s): {one_line(exc)}"
                    ) from exc
                wait = min(self.backoff_ms / 1000 * 2 ** min(retries, 30), MAX_WAIT_S, left)
                retries += 1
                log.warning(
                    "%s failed (%s); retry %d in %.1f s (%.1f s of %s %g s gone)",
                    what,
                    one_line(exc),
                    retries,
                    wait,
                    elapsed,
                    TIMEOUT_OPTION,
                    self.timeout_ms / 1000,
                )
                sleep(wait)
