"""Subtype tables (profile.include) end to end: a stream reads each as a struct column, and a DataFrame's
struct columns are written into them with the base rows."""

from __future__ import annotations

from sqlqueue.testing import designs, run_to_end


def test_a_stream_reads_each_subtype_table_as_a_struct_column(spark, make_queue, tmp_path):
    table = make_queue.adopted("relational", rows=3, subtypes=True)
    keys = dict(table.fetch(table.engine.compile(f"SELECT Payload, EnqueuedAt FROM {table.table}"), {}))
    designs.run(
        table,
        f"INSERT INTO {table.table}_email (EnqueuedAt, Address, Subject) VALUES ('{keys['p0']}', 'a@x.org', 'Hi')",
        f"INSERT INTO {table.table}_reset (EnqueuedAt, Token) VALUES ('{keys['p1']}', 't1')",
    )
    query = (
        spark.readStream.format("sqlqueue")
        .options(**table.source_options())
        .load()
        .writeStream.format("memory")
        .queryName("subtypes_read")
        .option("checkpointLocation", str(tmp_path / "c"))
        .trigger(availableNow=True)
        .start()
    )
    run_to_end(query)
    email, reset = f"{table.table.name}_email", f"{table.table.name}_reset"
    got = {
        r["Payload"]: (r[email], r[reset])
        for r in spark.sql(f"SELECT Payload, `{email}`, `{reset}` FROM subtypes_read").collect()
    }
    assert got["p0"][0].asDict() == {"Address": "a@x.org", "Subject": "Hi"} and got["p0"][1] is None
    assert got["p1"][0] is None and got["p1"][1].asDict() == {"Token": "t1", "ExpiresAt": None}
    assert got["p2"] == (None, None)
