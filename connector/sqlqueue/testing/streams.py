"""Run a streaming query in a test: to its end, or until a condition holds, never past a timeout.

A failure says what a test needs to see: the query's own error (the line that ends the Python
traceback it carries, else its first line; the whole exception is chained) or, on a timeout, that
the query was still running; and its last progress either way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

DEFAULT_TIMEOUT = 120.0


def wait_until(condition: Callable[[], object], timeout: float, interval: float = 0.2) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` seconds pass; whether it held (checked once more at the end)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return bool(condition())


def run_to_end(query: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """Wait for a query started with ``trigger(availableNow=True)`` (or ``once``) to finish; returns it.

    Fails with the query's exception when it failed, and stops it and fails when it is still running
    after ``timeout`` seconds; both messages end with its last progress.
    """
    try:
        finished = query.awaitTermination(timeout)
    except Exception as exc:  # the query's own failure (StreamingQueryException, or Connect's)
        raise AssertionError(_failed(query, exc)) from exc
    if not finished:
        query.stop()
        raise AssertionError(f"{_name(query)} did not finish within {timeout:g} s; {_last_progress(query)}")
    return query


def run_until(
    query: Any, condition: Callable[[], object], timeout: float = DEFAULT_TIMEOUT, interval: float = 0.2
) -> Any:
    """Let a running query run until ``condition()`` holds, then stop it; returns it.

    Fails, having stopped it, when the query fails or ends first (with its exception) or when the
    condition still does not hold after ``timeout`` seconds; each message ends with its last progress.
    """
    try:
        held = wait_until(lambda: condition() or not query.isActive, timeout, interval) and bool(condition())
        ended = not query.isActive
        failure = query.exception() if ended else None
    finally:
        query.stop()
    if failure is not None:
        raise AssertionError(_failed(query, failure)) from failure
    if not held:
        what = "ended before the condition held" if ended else f"ran {timeout:g} s without the condition holding"
        raise AssertionError(f"{_name(query)} {what}; {_last_progress(query)}")
    return query


def _name(query: Any) -> str:
    return f"streaming query {query.name!r}" if query.name else f"streaming query {query.id}"


def _failed(query: Any, exc: BaseException) -> str:
    return f"{_name(query)} failed: {_cause(str(exc))}; {_last_progress(query)}"


def _cause(text: str) -> str:
    """The line that says what went wrong: the error ending the Python traceback a query's exception
    carries (a foreachBatch function's, a reader's), else the exception's first line."""
    lines = text.strip().splitlines() or ["(no message)"]
    after = next((i for i, line in enumerate(lines) if "Traceback (most recent call last)" in line), None)
    if after is not None:
        raised = next((line for line in lines[after + 1 :] if line and not line[0].isspace()), None)
        if raised:
            return raised
    return lines[0]


def _last_progress(query: Any) -> str:
    """The query's last progress as one JSON line (batch, input rows, each source's offsets), or that it made none."""
    progress = query.lastProgress
    if not progress:
        return "it reported no progress (no micro-batch completed)"
    summary = {
        "batchId": progress["batchId"],
        "numInputRows": progress["numInputRows"],
        "sources": [
            {key: source[key] for key in ("description", "startOffset", "endOffset", "latestOffset") if key in source}
            for source in progress["sources"]
        ],
    }
    return f"last progress: {json.dumps(summary, default=str)}"
