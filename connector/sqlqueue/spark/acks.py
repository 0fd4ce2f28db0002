"""Acknowledgement rows for the sink's ack operation: checked on the driver, turned into ``Ack``s."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator

import pyarrow as pa
from pyspark.sql.types import StructType

from ..errors import SchemaError
from ..options import SinkOptions
from ..queue import OUTCOMES, RETRY_OUTCOME, Ack, retry_delay

# Column -> Spark types it may have; id and outcome are required.
ACK_COLUMNS = {
    "id": ("long", "integer"),
    "outcome": ("string",),
    "error": ("string",),
    "retryAfterSeconds": ("integer", "long"),
    "attempts": ("integer", "long"),
}
REQUIRED = ("id", "outcome")


def check_ack_schema(schema: StructType) -> None:
    names = {f.name: f for f in schema.fields}
    missing = [c for c in REQUIRED if c not in names]
    unknown = [n for n in names if n not in ACK_COLUMNS]
    if missing or unknown:
        problem = f"missing column(s) {', '.join(missing)}" if missing else f"unknown column(s) {', '.join(unknown)}"
        raise SchemaError(
            f"the ack operation takes columns id and outcome, and optionally error, retryAfterSeconds and attempts; "
            f"{problem}: select exactly those"
        )
    for name, field in names.items():
        if field.dataType.typeName() not in ACK_COLUMNS[name]:
            raise SchemaError(
                f"column {name!r} is {field.dataType.simpleString()}, but the ack operation takes "
                f"{' or '.join(ACK_COLUMNS[name])} there"
            )


def acks_from(batches: Iterable[pa.RecordBatch], options: SinkOptions) -> Iterator[Ack]:
    rng = random.Random()
    for batch in batches:
        for row in batch.to_pylist():
            outcome = str(row["outcome"]).lower() if row["outcome"] is not None else None
            if outcome not in OUTCOMES:
                raise SchemaError(
                    f"row with id {row['id']} has outcome {row['outcome']!r}; allowed outcomes: {', '.join(OUTCOMES)}"
                )
            delay = 0
            if outcome == RETRY_OUTCOME:
                delay = row.get("retryAfterSeconds")
                if delay is None:
                    delay = retry_delay(
                        row.get("attempts") or 1,
                        options.backoff_seconds,
                        options.max_backoff_seconds,
                        rng.uniform(0.9, 1.1),
                    )
            attempts = row.get("attempts")
            yield Ack(
                (int(row["id"]),), outcome, row.get("error"), int(delay), None if attempts is None else int(attempts)
            )
