"""The matrix's queue_to_queue transform: a row of any design enqueued by its payload alone (a user's
transform picks the columns the next queue takes; an adopted table's key and lifecycle are its own)."""

from __future__ import annotations

from pyspark.sql import DataFrame


def payload_only(df: DataFrame) -> DataFrame:
    return df.select(df[next(c for c in df.columns if c.lower() == "payload")].alias("payload"))
