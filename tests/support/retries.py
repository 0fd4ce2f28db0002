"""The retry policy's log lines (sqlqueue.retry), for tests that wait on them: an outage a test stages
ends when the policy has logged its n-th retry, a condition rather than a clock."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Retries(logging.Handler):
    """The lines logged; ``then`` runs when the ``after``-th is logged."""

    def __init__(self, after: int, then: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []
        self.after, self.then = after, then

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
        if len(self.lines) == self.after:
            self.then()


@contextmanager
def retry_lines(after: int = 0, then: Callable[[], None] = lambda: None) -> Iterator[Retries]:
    """Collect the retry policy's lines in this process; run ``then`` at the ``after``-th."""
    logger = logging.getLogger("sqlqueue.retry")
    handler, level = Retries(after, then), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
