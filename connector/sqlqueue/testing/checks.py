"""Assertions on what a pipeline delivered, each failing with the keys or states that are wrong.

They read small test data whole (keys and counts are collected to the driver).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ..queue import Queue
from ..schema import UNPUBLISHED

SHOWN = 20  # keys listed per kind of mismatch


def assert_each_key_once(data: Any, keys: Iterable[Any], column: str = "id", spark: Any = None) -> None:
    """``data`` (a DataFrame, a Delta table's path or a table name) holds each of ``keys`` in ``column``
    exactly once and no other key. Fails listing the missing, duplicated and unexpected keys."""
    frame, described = _frame(data, spark)
    held = Counter(row[0] for row in frame.select(column).collect())  # no shuffle: test data is small
    expected = set(keys)
    problems = {
        "missing": _sorted(expected - held.keys()),
        "duplicated": [f"{k} ({n} times)" for k, n in _sorted(held.items()) if n > 1],
        "unexpected": _sorted(held.keys() - expected),
    }
    if any(problems.values()):
        lines = [f"  {kind} ({len(found)}): {_listed(found)}" for kind, found in problems.items() if found]
        raise AssertionError(
            f"{described} does not hold each of {len(expected):,} keys ({column}) exactly once:\n" + "\n".join(lines)
        )


def assert_queue_holds(queue: Queue, **rows_per_state: int) -> None:
    """The queue holds these many rows in each state and none in the states not named:
    ``assert_queue_holds(queue)`` says it is empty. sqlqueue's own layout's states are ready, claimed,
    done, failed and unpublished; an adopted table's are its profile's status values, as the profile
    spells them (``Pending=1, Completed=2, Error=1``), and unpublished (rows of sink batches not
    committed yet)."""
    p = queue.profile
    values = (*p.ready, p.in_flight, p.done, p.failed, p.retry)
    known = (*dict.fromkeys(v for v in values if v is not None), UNPUBLISHED)
    unknown = sorted(set(rows_per_state) - set(known))
    if unknown:
        raise ValueError(f"unknown state(s) {', '.join(unknown)}: use {', '.join(known)}")
    held = {state: figures["rows"] for state, figures in queue.inspection.stats().items()}
    if p.tag is None:  # no tag column: unpublished batches wait in the staging table, not among the rows
        held[UNPUBLISHED] = queue.inspection.unpublished_rows()
    wrong = [
        f"{state} {held.get(state, 0)} (expected {rows_per_state.get(state, 0)})"
        for state in known
        if held.get(state, 0) != rows_per_state.get(state, 0)
    ]
    if wrong:
        raise AssertionError(f"queue {queue.table} holds rows per state: {', '.join(wrong)}")


def assert_dead_lettered(source: Any, errors: Mapping[Any, str], column: str | None = None, spark: Any = None) -> None:
    """Exactly the rows whose ``column`` values are the keys of ``errors`` were dead-lettered, each with
    a last error containing its value. ``source``: a queue (its failed rows: sqlqueue's own layout's
    state failed, or an adopted table's failed status with the text of its error column) or a
    dead-letter Delta table (a DataFrame, path or name). ``column``: the queue's key where it has one
    column, else id. Fails listing missing, unexpected and wrongly explained rows."""
    if isinstance(source, Queue):
        column, failed = _failed_rows(source, column)
        described = f"queue {source.table}"
    else:
        column = column or "id"
        frame, described = _frame(source, spark)
        failed = {row[0]: row[1] for row in frame.select(column, "last_error").collect()}
    problems = {
        "missing": _sorted(errors.keys() - failed.keys()),
        "unexpected": [f"{k}: {failed[k]!r}" for k in _sorted(failed.keys() - errors.keys())],
        "another error": [
            f"{k}: {failed[k]!r} lacks {errors[k]!r}"
            for k in _sorted(errors.keys() & failed.keys())
            if errors[k] not in (failed[k] or "")
        ],
    }
    if any(problems.values()):
        lines = [f"  {kind} ({len(found)}): {_listed(found)}" for kind, found in problems.items() if found]
        raise AssertionError(f"{described} did not dead-letter what was expected ({column}):\n" + "\n".join(lines))


def assert_frame_equal(actual: Any, expected: Any, **options: Any) -> None:
    """chispa's ``assert_df_equality``, ignoring row order and nullability unless ``options`` say
    otherwise. ``expected`` is a DataFrame or rows (tuples or dicts) read with ``actual``'s schema."""
    try:
        from chispa import assert_df_equality
    except ImportError as exc:
        raise ImportError("assert_frame_equal needs chispa: pip install 'sqlqueue[testing]'") from exc
    if not hasattr(expected, "schema"):
        expected = actual.sparkSession.createDataFrame(list(expected), actual.schema)
    assert_df_equality(actual, expected, **{"ignore_row_order": True, "ignore_nullable": True, **options})


def _frame(data: Any, spark: Any) -> tuple[Any, str]:
    """A DataFrame and how to name it in a message."""
    if not isinstance(data, str):
        return data, "the DataFrame"
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
    if "/" in data:
        return spark.read.format("delta").load(data), f"Delta table {data}"
    return spark.table(data), f"table {data}"


def _key_of(queue: Queue) -> str:
    key = queue.profile.key
    if len(key) != 1:
        raise ValueError(f"table {queue.table} has a key of {len(key)} columns ({', '.join(key)}): name one in column=")
    return key[0]


def _failed_rows(queue: Queue, column: str | None) -> tuple[str, dict[Any, str | None]]:
    """The key column, and {key: error text} of the rows in the profile's failed status (of the
    stream's filter)."""
    p, d = queue.profile, queue.engine
    if p.status is None or p.failed is None:
        raise ValueError(
            f"table {queue.table} (profile {p.name}) has no failed status (profile.failed): no row is dead-lettered"
        )
    column = column or _key_of(queue)
    error = d.quote(p.error) if p.error is not None else "NULL"
    where = f"{d.quote(p.status)} = {d.literal(p.failed)}" + (f" AND ({p.filter})" if p.filter else "")
    (spelled,) = queue.spelled([column])  # as the user names it, in any case (PostgreSQL folds to lower)
    with queue.transaction() as cur:
        cur.execute(f"SELECT {d.quote(spelled)}, {error} FROM {d.table(queue.table)} WHERE {where}")
        return column, {key: error for key, error in cur.fetchall()}


def _sorted(items: Iterable[Any]) -> list[Any]:
    """In their own order where they have one (numbers as numbers), else by their text."""
    items = list(items)
    try:
        return sorted(items)
    except TypeError:
        return sorted(items, key=repr)


def _listed(items: list[Any]) -> str:
    shown = ", ".join(str(item) for item in items[:SHOWN])
    return shown + (f", … and {len(items) - SHOWN} more" if len(items) > SHOWN else "")
