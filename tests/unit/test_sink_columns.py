"""How a producer's columns map onto a queue table, and how Arrow batches become rows."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType, TimestampNTZType

from sqlqueue.errors import ConfigError, SchemaError
from sqlqueue.identifiers import TableName
from sqlqueue.options import SinkOptions
from sqlqueue.schema import LIFECYCLE_TYPES, Column, writable_columns
from sqlqueue.spark.types import batch_rows, sink_columns

TABLE = TableName("jobs")
COLUMNS = (
    LIFECYCLE_TYPES["id"],
    LIFECYCLE_TYPES["state"],
    LIFECYCLE_TYPES["priority"],
    Column("payload", "text"),
    Column("customer", "int", nullable=False),
)


def schema(**types) -> StructType:
    return StructType([StructField(name, t) for name, t in types.items()])


def checked(df_schema: StructType) -> tuple[Column, ...]:
    return sink_columns(df_schema, writable_columns(df_schema.names, COLUMNS, TABLE))


def test_domain_and_writable_lifecycle_columns_map_by_name_in_the_given_order():
    assert writable_columns(["priority", "Customer", "payload"], COLUMNS, TABLE) == (
        LIFECYCLE_TYPES["priority"],
        COLUMNS[4],
        COLUMNS[3],
    )


def test_an_unknown_column_is_named_with_the_writable_ones_listed():
    with pytest.raises(SchemaError, match="column 'colour' is not in queue table jobs.*payload, customer, priority"):
        writable_columns(["customer", "colour"], COLUMNS, TABLE)


def test_a_lifecycle_column_sqlqueue_manages_is_refused():
    with pytest.raises(SchemaError, match="column 'attempts' is managed by sqlqueue"):
        writable_columns(["customer", "attempts"], COLUMNS, TABLE)


def test_a_missing_not_null_domain_column_is_named():
    with pytest.raises(SchemaError, match="'customer' are required"):
        writable_columns(["payload"], COLUMNS, TABLE)


def test_a_column_given_twice_in_different_case_is_refused():
    with pytest.raises(SchemaError, match="column 'CUSTOMER' is given twice"):
        writable_columns(["customer", "CUSTOMER"], COLUMNS, TABLE)


def test_a_wider_spark_type_than_the_column_is_refused_with_a_cast_to_use():
    with pytest.raises(SchemaError, match=r"column 'customer' is bigint.*is int.*cast\('int'\)"):
        checked(schema(customer=LongType()))


def test_a_narrower_integer_type_is_accepted():
    assert checked(schema(customer=IntegerType(), payload=StringType()))


def test_null_priority_and_due_time_take_the_table_defaults():
    batch = pa.record_batch(
        {"priority": pa.array([None, 3], pa.int32()), "due_at": pa.array([None, None], pa.timestamp("us", "UTC"))}
    )
    before = dt.datetime.now(dt.timezone.utc)
    (p1, due1), (p2, _) = batch_rows([batch], (LIFECYCLE_TYPES["priority"], LIFECYCLE_TYPES["due_at"]))
    assert (p1, p2) == (0, 3)
    assert before <= due1 <= dt.datetime.now(dt.timezone.utc)


def test_a_timestamp_without_zone_is_taken_as_utc():
    naive = pa.array([dt.datetime(2030, 1, 1, 12)], pa.timestamp("us"))
    [(due,)] = batch_rows([pa.record_batch({"due_at": naive})], (LIFECYCLE_TYPES["due_at"],))
    assert due == dt.datetime(2030, 1, 1, 12, tzinfo=dt.timezone.utc)


def test_timestamp_ntz_is_writable_into_a_timestamp_column():
    assert checked(schema(customer=IntegerType(), due_at=TimestampNTZType()))


def test_sink_options_refuse_source_options_and_list_the_valid_ones():
    with pytest.raises(ConfigError, match="(?i)unknown option\\(s\\) maxRowsPerTrigger.*writerId"):
        SinkOptions.parse({"url": "sqlite:///q.db", "queue": "jobs", "maxRowsPerTrigger": "5"})


def test_writer_id_must_not_be_empty():
    with pytest.raises(ConfigError, match="option 'writerId'"):
        SinkOptions.parse({"url": "sqlite:///q.db", "queue": "jobs", "writerId": " "})
