"""The acknowledging end of the ack-mode jobs the crash test and the fault matrix run: what names a row in
an acknowledgement, and the audit-then-acknowledge step of each batch."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pyspark.sql import DataFrame

from sqlqueue.options import SourceOptions


def fencing_columns(source: Mapping[str, str]) -> tuple[str, str]:
    """(key, attempts) columns an acknowledgement names its row by and carries as its fencing token:
    sqlqueue's own layout's id and attempts, or those of the profile an adopted table is read through."""
    profile = SourceOptions.parse(source).address.profile
    return ("id", "attempts") if profile is None else (profile.key[0], str(profile.attempts))


def audit_then_acknowledge(
    decided: DataFrame, batch_id: int, audit: Callable[[DataFrame, int], None], sink: Mapping[str, str], writer: str
) -> None:
    """Every row of ``decided`` (key, attempts, payload, outcome and its details) once into the Delta
    ``audit``, then acknowledged through the sink's ack operation, exactly once per batch by its ledger."""
    decided = decided.persist()
    audit(decided, batch_id)
    acks = decided.drop("payload").write.format("sqlqueue").options(**sink).option("operation", "ack")
    acks.option("writerId", writer).option("batchId", batch_id).mode("append").save()
    decided.unpersist()
