"""Portable column types as Spark SQL types and Arrow types; rows to and from Arrow record batches."""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as csv
from pyspark.sql.types import DataType, StructType

from ..errors import SchemaError
from ..schema import Column, Subtype

SPARK_TYPES = {
    "string": "STRING",
    "text": "STRING",
    "int": "INT",
    "bigint": "BIGINT",
    "double": "DOUBLE",
    "boolean": "BOOLEAN",
    "timestamp": "TIMESTAMP",
    "binary": "BINARY",
}
_ARROW_BY_SPARK = {
    "string": pa.string(),
    "integer": pa.int32(),
    "long": pa.int64(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "binary": pa.binary(),
    "short": pa.int16(),
    "byte": pa.int8(),
    "float": pa.float32(),
    "timestamp_ntz": pa.timestamp("us"),
}


_INTEGERS = ("byte", "short", "integer")
# Spark types (typeName) a sink may write into each portable column type: only lossless ones.
WRITABLE_SPARK_TYPES = {
    "string": ("string", "varchar", "char"),
    "text": ("string", "varchar", "char"),
    "int": _INTEGERS,
    "bigint": (*_INTEGERS, "long"),
    "double": (*_INTEGERS, "long", "float", "double"),
    "boolean": ("boolean",),
    "timestamp": ("timestamp", "timestamp_ntz"),
    "binary": ("binary",),
}
# A null in these optional lifecycle columns means the table's default, which a bulk load
# does not apply by itself.
_NULL_MEANS: dict[str, Callable[[], Any]] = {
    "priority": lambda: 0,
    "due_at": lambda: dt.datetime.now(dt.timezone.utc),
}
_UTC = pa.timestamp("us", tz="UTC")


def spark_ddl(columns: Sequence[Column], subtypes: Sequence[Subtype] = ()) -> str:
    """The source's schema: ``columns``, then a struct per subtype table (Profile.include) named after it,
    of its columns but the key."""
    structs = [
        f"`{s.name}` STRUCT<{', '.join(f'`{c.name}`: {SPARK_TYPES[c.type]}' for c in s.fields)}>" for s in subtypes
    ]
    return ", ".join([*(f"`{c.name}` {SPARK_TYPES[c.type]}" for c in columns), *structs])


def _arrow_type(spark_type: DataType) -> pa.DataType:
    if isinstance(spark_type, StructType):
        return pa.struct([pa.field(f.name, _arrow_type(f.dataType)) for f in spark_type.fields])
    return _ARROW_BY_SPARK[spark_type.typeName()]


def arrow_schema(schema: StructType) -> pa.Schema:
    return pa.schema([pa.field(f.name, _arrow_type(f.dataType)) for f in schema.fields])


def _array(values: list, target: pa.DataType) -> pa.Array:
    if pa.types.is_struct(target):  # a subtype table's row (a dict, or None), each field as its own column
        fields = [target.field(i) for i in range(target.num_fields)]
        children = [_array([None if v is None else v[f.name] for v in values], f.type) for f in fields]
        mask = pa.array([v is None for v in values], type=pa.bool_())
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
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


def csv_readable(schema: pa.Schema) -> bool:
    """Whether ``csv_batches`` reads every column of ``schema`` (not binary, which CSV text would carry
    escaped, nor a subtype table's struct)."""
    return not any(pa.types.is_binary(f.type) or pa.types.is_struct(f.type) for f in schema)


# What a read task joins COPY's rows into before Arrow's CSV reader reads them.
_COPY_BLOCK = 1 << 14


def _blocks(chunks: Iterator[bytes], size: int) -> Iterator[bytes]:
    """``chunks`` joined into blocks of at least ``size`` bytes (the last may be smaller). PostgreSQL's COPY
    yields a chunk per row, which cost a Python ``readinto`` call per row under Arrow's reads; joined, a
    read task takes about half the time (docs/evidence.md, "The read in blocks")."""
    parts: list[bytes] = []
    held = 0
    for chunk in chunks:
        parts.append(chunk)
        held += len(chunk)
        if held >= size:
            yield b"".join(parts)
            parts, held = [], 0
    if parts:
        yield b"".join(parts)


class _Stream(io.RawIOBase):
    """Chunks of bytes read as one file, as Arrow's CSV reader reads."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks, self._rest = chunks, memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._rest:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._rest = memoryview(chunk)
        size = min(len(buffer), len(self._rest))
        buffer[:size] = self._rest[:size]
        self._rest = self._rest[size:]
        return size


def csv_batches(chunks: Iterator[bytes], schema: pa.Schema, block_bytes: int = 1 << 20) -> Iterator[pa.RecordBatch]:
    """Record batches of ``schema`` from CSV text (Engine.copy_out): an unquoted empty field is NULL, a
    quoted one an empty string, booleans are t and f. Times are read as text, then each column as the
    session wrote it: with a zone offset (timestamptz) as that instant, without (timestamp) as UTC, as
    the row path takes a time without a zone (``_array``)."""
    times = [i for i, f in enumerate(schema) if pa.types.is_timestamp(f.type)]
    text = pa.schema([pa.field(f.name, pa.string()) if i in times else f for i, f in enumerate(schema)])
    reader = csv.open_csv(
        io.BufferedReader(_Stream(_blocks(chunks, _COPY_BLOCK)), buffer_size=block_bytes),
        read_options=csv.ReadOptions(column_names=schema.names, block_size=block_bytes),
        parse_options=csv.ParseOptions(newlines_in_values=True),
        convert_options=csv.ConvertOptions(
            column_types=text,
            null_values=[""],
            true_values=["t"],
            false_values=["f"],
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        ),
    )
    for batch in reader:
        columns = [_time(c, schema.field(i).type) if i in times else c for i, c in enumerate(batch.columns)]
        yield pa.RecordBatch.from_arrays(columns, schema=schema)


def _time(text: pa.Array, target: pa.DataType) -> pa.Array:
    if pc.any(pc.match_substring_regex(text, r"[+-]\d\d(:\d\d)*$")).as_py():
        return text.cast(target)
    return text.cast(pa.timestamp(target.unit)).cast(target)


def sink_columns(schema: StructType, columns: Sequence[Column]) -> tuple[Column, ...]:
    """The queue ``columns`` a DataFrame writes (picked by name), checked by type before anything is written."""
    for field, column in zip(schema.fields, columns):
        spark_type = field.dataType.typeName()
        if spark_type not in WRITABLE_SPARK_TYPES[column.type]:
            raise SchemaError(
                f"column {field.name!r} is {field.dataType.simpleString()} in the DataFrame, but queue column "
                f"{column.name!r} is {column.type} and takes {', '.join(WRITABLE_SPARK_TYPES[column.type])}: "
                f"cast it, e.g. col({field.name!r}).cast({SPARK_TYPES[column.type].lower()!r})"
            )
    return tuple(columns)


def _writable(array: pa.Array, column: Column, native: bool) -> pa.Array:
    if pa.types.is_timestamp(array.type):
        array = array.cast(_UTC)  # a naive (timestamp_ntz) value is taken as UTC
    fill = _NULL_MEANS.get(column.name) if native else None
    if fill is not None and array.null_count:
        array = pc.fill_null(array, pa.scalar(fill(), type=array.type))
    return array


def _struct_writable(array: pa.Array) -> pa.Array:
    """A struct column's times taken as UTC, as a plain column's (_writable)."""
    children = array.flatten()
    if not any(pa.types.is_timestamp(c.type) for c in children):
        return array
    children = [c.cast(_UTC) if pa.types.is_timestamp(c.type) else c for c in children]
    fields = [pa.field(array.type.field(i).name, c.type) for i, c in enumerate(children)]
    return pa.StructArray.from_arrays(children, fields=fields, mask=array.is_null())


def batch_rows(batches: Iterable[pa.RecordBatch], columns: Sequence[Column], native: bool = True) -> Iterator[tuple]:
    """Rows of Python values from record batches whose columns are ``columns``, in order, then any struct
    columns (a subtype table's row each: a dict, or None); ``native``: into sqlqueue's own layout, whose
    optional lifecycle columns take their default for a null."""
    for batch in batches:
        arrays = [_writable(batch.column(i), column, native) for i, column in enumerate(columns)]
        arrays += [_struct_writable(batch.column(i)) for i in range(len(columns), batch.num_columns)]
        yield from zip(*(a.to_pylist() for a in arrays))


class ArrowRows:
    """A sink task's record batches of plain columns (``columns``, in order, none binary), at least one row,
    read once as they arrive: as rows of Python values (batch_rows), or as bulk-load text written by Arrow
    (sqlqueue.textrows.TextRows), counting them."""

    def __init__(self, batches: Iterator[pa.RecordBatch], columns: Sequence[Column], native: bool) -> None:
        self.batches, self.columns, self.native = batches, columns, native
        self.count = 0

    def _counted(self) -> Iterator[pa.RecordBatch]:
        for batch in self.batches:
            self.count += batch.num_rows
            yield batch

    def __iter__(self) -> Iterator[tuple]:
        return batch_rows(self._counted(), self.columns, self.native)

    def text(self, tail: tuple[str, ...]) -> Iterator[bytes]:
        return (piece.text(None) for piece in self.pieces(tail))

    def pieces(self, tail: tuple[str, ...]) -> Iterator[_TextBatch]:
        return (_TextBatch(batch, self.columns, self.native, tail) for batch in self._counted())


class _TextBatch:
    """One record batch as bulk-load text (sqlqueue.numbering.Piece)."""

    # Arrow's CSV writer, quoting nothing, writes the tab-separated lines; _escaped leaves no character it
    # would have to quote in a value.
    LINES = csv.WriteOptions(include_header=False, delimiter="\t", quoting_style="none", null_string="\\N")

    def __init__(self, batch: pa.RecordBatch, columns: Sequence[Column], native: bool, tail: tuple[str, ...]) -> None:
        self.batch, self.columns, self.native, self.tail = batch, columns, native, tail
        self.rows = batch.num_rows

    def text(self, ids: Sequence[range] | None) -> bytes:
        batch, native = self.batch, self.native
        arrays = [_escaped(_as_text(_writable(batch.column(i), c, native))) for i, c in enumerate(self.columns)]
        arrays += [pa.repeat(value, self.rows) for value in self.tail]
        if ids is not None:
            arrays.insert(0, pa.concat_arrays([_numbers(part) for part in ids]))
        out = io.BytesIO()
        csv.write_csv(pa.RecordBatch.from_arrays(arrays, names=[str(i) for i in range(len(arrays))]), out, self.LINES)
        return out.getvalue()


def _numbers(ids: range) -> pa.Array:
    """``ids`` (a step of 1) as an int64 array, built in Arrow's C++: a running sum of ones."""
    ones = pa.repeat(pa.scalar(1, pa.int64()), len(ids))
    return pc.add(pc.cumulative_sum(ones), ids.start - 1)


# What COPY's text format escapes in a value, as it reads it back ("Text Format", postgresql.org/docs/
# current/sql-copy.html): the backslash first, then the tab, line feed and carriage return; and the double
# quote as its hex code, which the text format reads as the character and Arrow's CSV writer, quoting
# nothing, refuses to write as it is.
_ESCAPES = (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r"), ('"', "\\x22"))
# Any of them, as a regular expression (RE2, Arrow's engine, reads re.escape's escapes).
_ESCAPED = "[" + "".join(re.escape(character) for character, _ in _ESCAPES) + "]"


def _escaped(array: pa.Array) -> pa.Array:
    """A string column with COPY's text escapes (_ESCAPES) where a value needs one; any other column as it is."""
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return array
    if not pc.any(pc.match_substring_regex(array, _ESCAPED)).as_py():  # most values need none
        return array
    for character, escape in _ESCAPES:
        array = pc.replace_substring(array, character, escape)
    return array


def _as_text(array: pa.Array) -> pa.Array:
    """A float (Spark's FloatType) as the double the row path sends: Arrow writes a float's own shortest
    digits (0.1), where its exact value as a double is 0.10000000149011612."""
    return array.cast(pa.float64()) if pa.types.is_float32(array.type) else array


def sink_rows(batches: Iterable[pa.RecordBatch], columns: Sequence[Column], native: bool) -> Iterable[tuple]:
    """A sink task's rows (batch_rows), read as they arrive: ArrowRows where each column is plain and text
    carries it (not binary), so an engine that loads text rows gets them from Arrow; none where there are none."""
    it = (b for b in batches if b.num_rows)
    first = next(it, None)
    if first is None:
        return ()
    rest = chain([first], it)
    if first.num_columns != len(columns) or any(c.type == "binary" for c in columns):  # subtype rows, bytes
        return batch_rows(rest, columns, native)
    return ArrowRows(rest, columns, native)
