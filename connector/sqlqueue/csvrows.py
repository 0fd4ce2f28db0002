"""Rows that can also render themselves as CSV, which an engine's bulk load sends as they are.

The sink's tasks get Arrow record batches. Turned into Python values and sent a row at a time
(psycopg's ``write_row``), 1,000,000 rows of two columns cost a task's Python about 1 CPU second; written
as CSV by Arrow's C++ writer and sent in chunks, about a third of that, on the cores the database
needs for the COPY itself (benchmarks/bench_sink.py, docs/performance.md, "The sink").

The CSV is RFC 4180 as PostgreSQL's ``COPY ... WITH (FORMAT csv)`` reads it: a null is an unquoted
empty field, text is always quoted (an empty string is ``""``), timestamps are ISO 8601 with their
offset, and each value reads back as the row at a time path stores it
(tests/spark/test_sink_values.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class CsvRows(Protocol):
    """Rows of Python values, as any write path takes them, that can render themselves as CSV too: one
    row at least, read once either way, as they arrive."""

    count: int  # the rows read so far

    def __iter__(self) -> Iterator[Sequence[Any]]: ...

    def csv(self, tail: tuple[str, ...]) -> Iterator[bytes]:
        """The rows as CSV chunks, each row followed by the values ``tail``."""
        ...
