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


def test_a_dataframe_writes_its_struct_columns_into_the_subtype_tables_with_the_base_rows(spark, make_queue):
    table = make_queue.adopted("relational", subtypes=True)
    email, reset = f"{table.table.name}_email", f"{table.table.name}_reset"
    df = spark.sql(
        "SELECT timestamp'2026-01-01 10:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) AS EnqueuedAt, 'Sync' AS Type, "
        f"concat('s', id) AS Payload, "
        f"CASE WHEN id = 0 THEN named_struct('Address', 'a@x.org', 'Subject', 'Hi') END AS `{email}`, "
        f"CASE WHEN id = 1 THEN named_struct('Token', 't1') END AS `{reset}` FROM range(3)"
    )
    df.write.format("sqlqueue").options(**table.sink_options()).mode("append").save()
    rows = table.fetch(
        table.engine.compile(
            f"SELECT b.Payload, e.Address, e.Subject, r.Token FROM {table.table} AS b "
            f"LEFT JOIN {email} AS e ON e.EnqueuedAt = b.EnqueuedAt "
            f"LEFT JOIN {reset} AS r ON r.EnqueuedAt = b.EnqueuedAt ORDER BY b.Payload"
        ),
        {},
    )
    assert rows == [("s0", "a@x.org", "Hi", None), ("s1", None, None, "t1"), ("s2", None, None, None)]
