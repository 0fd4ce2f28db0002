"""How the read path turns COPY's CSV text into Arrow batches, however the text arrives in chunks."""

from __future__ import annotations

import pyarrow as pa

from sqlqueue.spark.types import csv_batches

SCHEMA = pa.schema([("id", pa.int64()), ("payload", pa.string())])
ROWS = 5_000  # about 170 KB of text: several of the blocks the reader joins chunks into


def rows_as_csv() -> list[bytes]:
    """One chunk per row, as PostgreSQL's COPY yields them; payloads hold quotes, commas and newlines."""
    return [f'{i},"row {i}, ""quoted""\nand on"\n'.encode() for i in range(ROWS)]


def read(chunks: list[bytes]) -> pa.Table:
    return pa.Table.from_batches(list(csv_batches(iter(chunks), SCHEMA)), schema=SCHEMA)


def expected() -> pa.Table:
    payloads = [f'row {i}, "quoted"\nand on' for i in range(ROWS)]
    return pa.table({"id": pa.array(range(ROWS), pa.int64()), "payload": payloads}, schema=SCHEMA)


def test_rows_arriving_one_chunk_each_are_all_read_in_order():
    assert read(rows_as_csv()).equals(expected())


def test_chunks_that_split_rows_anywhere_are_read_as_one_text():
    text = b"".join(rows_as_csv())
    chunks = [text[start : start + 7] for start in range(0, len(text), 7)]
    assert read(chunks).equals(expected())
