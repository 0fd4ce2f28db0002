"""Portable column types as Spark SQL types and Arrow types, and rows as Arrow record batches."""
from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql.types import StructType

from ..schema import Column

SPARK_TYPES = {
    "string": "STRING", "text": "STRING", "int": "INT", "bigint": "BIGINT", "double": "DOUBLE",
    "boolean": "BOOLEAN", "timestamp": "TIMESTAMP", "binary": "BINARY",
}
_ARROW_BY_SPARK = {
    "string": pa.string(), "integer": pa.int32(), "long": pa.int64(), "double": pa.float64(),
    "boolean": pa.bool_(), "timestamp": pa.timestamp("us", tz="UTC"), "binary": pa.binary(),
    "short": pa.int16(), "byte": pa.int8(), "float": pa.float32(), "timestamp_ntz": pa.timestamp("us"),
}


def spark_ddl(columns: Sequence[Column]) -> str:
    return ", ".join(f"`{c.name}` {SPARK_TYPES[c.type]}" for c in columns)


def arrow_schema(schema: StructType) -> pa.Schema:
    return pa.schema([pa.field(f.name, _ARROW_BY_SPARK[f.dataType.typeName()]) for f in schema.fields])


def _array(values: list, target: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, type=target)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # Engines without the type hand back a stand-in: SQLite gives ISO text for timestamps and
        # integers for booleans. Let Arrow infer, then cast (through naive time for UTC text).
        array = pa.array(values)
        if pa.types.is_timestamp(target) and pa.types.is_string(array.type):
            array = array.cast(pa.timestamp(target.unit))
        return array.cast(target)


def record_batch(rows: Sequence[tuple], schema: pa.Schema) -> pa.RecordBatch:
    columns = list(zip(*rows)) if rows else [()] * len(schema)
    return pa.RecordBatch.from_arrays(
        [_array(list(col), field.type) for col, field in zip(columns, schema)], schema=schema
    )
