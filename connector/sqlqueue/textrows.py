"""Rows that can also render themselves as bulk-load text, which an engine's bulk load sends as they are.

The sink's tasks get Arrow record batches. Turned into Python values and sent a row at a time
(psycopg's ``write_row``), 1,000,000 rows of two columns cost a task's Python about 1 CPU second; written
by Arrow's C++ CSV writer and sent in chunks, about a third of that, on the cores the database needs for
the load itself (benchmarks/bench_sink.py, docs/performance.md, "The sink").

The text is the tab-separated format of PostgreSQL's ``COPY ... FROM STDIN`` (its default, "Text
Format" in postgresql.org/docs/current/sql-copy.html): one line a row, ``\\N`` for a null, and a
backslash escape for a backslash, tab, line feed, carriage return or double quote in a value. PostgreSQL
parses it with less CPU than its CSV format (5% fewer CPU seconds for the same 1,000,000 rows, docs/evidence.md),
and the database's CPU sets the sink's pace. Timestamps are ISO 8601 with their offset, and each value
reads back as the row at a time path stores it (tests/spark/test_sink_values.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from .numbering import Piece


@runtime_checkable
class TextRows(Protocol):
    """Rows of Python values, as any write path takes them, that can render themselves as bulk-load text
    too: one row at least, read once either way, as they arrive."""

    count: int  # the rows read so far

    def __iter__(self) -> Iterator[Sequence[Any]]: ...

    def text(self, tail: tuple[str, ...]) -> Iterator[bytes]:
        """The rows as chunks of text, each row followed by the values ``tail``."""
        ...

    def pieces(self, tail: tuple[str, ...]) -> Iterator[Piece]:
        """The rows as pieces that render as ``text`` does, each led by the ids it is given, if any."""
        ...
