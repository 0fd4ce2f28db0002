"""Acknowledgement rows for the sink's ack operation: checked on the driver, turned into ``Ack``s.

An ack row names its row by the table's key: ``id`` in sqlqueue's own layout, an adopted table's key
column(s) (profile.key, matched as Spark matches names, whatever their case) as the source read them.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructType

from ..errors import SchemaError
from ..options import SinkOptions
from ..queue import OUTCOMES, RETRY_OUTCOME, Ack, retry_delay

# Column -> Spark types it may have; the key's columns and outcome are required.
ACK_COLUMNS = {
    "outcome": ("string",),
    "error": ("string",),
    "response": ("string",),
    "step": ("string",),
    "retryAfterSeconds": ("integer", "long"),
    "attempts": ("integer", "long"),
}
# sqlqueue's own layout's key; an adopted table's key columns take the types the source read them as.
OWN_KEY = {"id": ("long", "integer")}


def ack_key(options: SinkOptions) -> tuple[str, ...]:
    """The columns an ack row names its row by."""
    profile = options.address.profile
    return tuple(OWN_KEY) if profile is None else profile.key


def check_ack_schema(schema: StructType, key: Sequence[str]) -> None:
    names = {f.name.lower(): f for f in schema.fields}
    allowed = {**{k.lower(): OWN_KEY.get(k) for k in key}, **{c.lower(): t for c, t in ACK_COLUMNS.items()}}
    missing = [c for c in (*key, "outcome") if c.lower() not in names]
    unknown = [f.name for lower, f in names.items() if lower not in allowed]
    if missing or unknown:
        problem = f"missing column(s) {', '.join(missing)}" if missing else f"unknown column(s) {', '.join(unknown)}"
        raise SchemaError(
            f"the ack operation takes columns {', '.join(key)} and outcome, and optionally error, response, step, "
            f"retryAfterSeconds and attempts; {problem}: select exactly those"
        )
    for lower, field in names.items():
        types = allowed[lower]
        if types is not None and field.dataType.typeName() not in types:
            raise SchemaError(
                f"column {field.name!r} is {field.dataType.simpleString()}, but the ack operation takes "
                f"{' or '.join(types)} there"
            )


def _key_value(value: Any) -> Any:
    """A key value as the table holds it: the source hands Spark a table's time as UTC wall time (its
    values carry no zone), so that wall time, whatever zone Spark's Arrow batch gives it in."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


def acks_from(batches: Iterable[pa.RecordBatch], options: SinkOptions) -> Iterator[Ack]:
    rng = random.Random()
    key = ack_key(options)
    for batch in batches:
        spelled = {n.lower(): n for n in batch.schema.names}
        for row in batch.to_pylist():
            values = {name.lower(): value for name, value in row.items()}
            named = tuple(_key_value(values[k.lower()]) for k in key)
            given = values["outcome"]
            outcome = str(given).lower() if given is not None else None
            if outcome not in OUTCOMES:
                raise SchemaError(
                    f"row with {', '.join(spelled[k.lower()] for k in key)} {named} has outcome {given!r}; "
                    f"allowed outcomes: {', '.join(OUTCOMES)}"
                )
            attempts = values.get("attempts")
            delay = values.get("retryafterseconds")
            if outcome == RETRY_OUTCOME and delay is None:
                jitter = rng.uniform(0.9, 1.1)
                delay = retry_delay(attempts or 1, options.backoff_seconds, options.max_backoff_seconds, jitter)
            yield Ack(
                named,
                outcome,
                values.get("error"),
                int(delay or 0) if outcome == RETRY_OUTCOME else 0,
                None if attempts is None else int(attempts),
                values.get("response"),
                values.get("step"),
            )
