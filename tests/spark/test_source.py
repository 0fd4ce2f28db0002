"""spark.readStream.format("sqlqueue") end to end: real Spark, real engines, real Delta tables."""

from __future__ import annotations

import pytest

from sqlqueue.schema import Column
from sqlqueue.testing import assert_each_key_once, assert_frame_equal, assert_queue_holds, run_to_end


def drain(spark, options: dict, target: str, checkpoint: str):
    reader = spark.readStream.format("sqlqueue").options(**options)
    writer = reader.load().writeStream.format("delta").option("checkpointLocation", checkpoint)
    return run_to_end(writer.trigger(availableNow=True).start(target))


def test_stream_delivers_every_row_to_delta_once_and_empties_the_queue(spark, engine, delta_path, checkpoint_path):
    queue = engine.new_queue(domain=(Column("payload", "text"), Column("customer", "bigint")))
    queue.enqueue([{"payload": f"p{i}", "customer": i % 7} for i in range(2_500)])
    query = drain(spark, engine.source_options(queue, maxRowsPerTrigger=1000), delta_path, checkpoint_path)
    got = spark.read.format("delta").load(delta_path).select("payload", "customer")
    assert_frame_equal(got, [(f"p{i}", i % 7) for i in range(2_500)])
    assert [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]] == [1000, 1000, 500]
    assert_queue_holds(queue)


def test_schema_follows_the_queue_table(spark, engine):
    queue = engine.new_queue(domain=(Column("payload", "text"), Column("amount", "double"), Column("due", "timestamp")))
    reader = spark.readStream.format("sqlqueue")
    for key, value in engine.source_options(queue).items():
        reader = reader.option(key, value)
    assert reader.load().schema.simpleString() == (
        "struct<id:bigint,enqueued_at:timestamp,attempts:int,payload:string,amount:double,due:timestamp>"
    )


def test_columns_option_selects_lifecycle_and_domain_columns(spark, engine, delta_path, checkpoint_path):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "a", "priority": 3}])
    drain(spark, engine.source_options(queue, columns="payload,priority"), delta_path, checkpoint_path)
    got = spark.read.format("delta").load(delta_path)
    assert_frame_equal(got, spark.createDataFrame([("a", 3)], "payload string, priority int"))


def test_columns_option_matches_the_tables_names_ignoring_case_and_names_them_as_the_option_spells_them(
    spark, engine, delta_path, checkpoint_path
):
    """Code written against one engine's spelling (SQL Server's Payload) runs unchanged on PostgreSQL, which
    folds unquoted names to lower case."""
    queue = engine.new_queue()
    queue.enqueue([{"payload": "a", "priority": 3}])
    drain(spark, engine.source_options(queue, columns="Payload,PRIORITY"), delta_path, checkpoint_path)
    got = spark.read.format("delta").load(delta_path)
    assert_frame_equal(
        got, spark.createDataFrame([("a", 3)], "Payload string, PRIORITY int"), ignore_column_order=False
    )


def test_unknown_column_is_refused_with_the_table_columns_listed(spark, engine):
    queue = engine.new_queue()
    reader = spark.readStream.format("sqlqueue")
    for key, value in engine.source_options(queue, columns="payload,nope").items():
        reader = reader.option(key, value)
    with pytest.raises(Exception, match="'columns' names nope.*its columns are: id, state"):
        reader.load()


def test_restarted_query_continues_where_the_checkpoint_left_off(spark, engine, delta_path, checkpoint_path):
    queue = engine.new_queue()
    queue.enqueue([{"payload": f"a{i}"} for i in range(300)])
    options = engine.source_options(queue, maxRowsPerTrigger=200)
    drain(spark, options, delta_path, checkpoint_path)
    queue.enqueue([{"payload": f"b{i}"} for i in range(100)])
    drain(spark, options, delta_path, checkpoint_path)
    assert_each_key_once(delta_path, [f"a{i}" for i in range(300)] + [f"b{i}" for i in range(100)], column="payload")
    assert_queue_holds(queue)


def test_making_a_stream_reader_does_not_connect():
    """Spark makes a stream reader again, in a fresh process, to plan a query's first batch once
    latestOffset has claimed it: were it to connect, an outage at that moment would end the query (a
    fresh process has not yet proven the address, so a failed connection is not retried). The chaos
    matrix's postgres/queue-to-queue/dequeue cell caught it (seed 5203)."""
    from pyspark.sql.types import StringType, StructField, StructType

    from sqlqueue.spark.source import SqlQueueDataSource

    closed_port = {"url": "postgresql://127.0.0.1:9/nowhere", "queue": "jobs", "columns": "payload"}
    reader = SqlQueueDataSource(closed_port).streamReader(StructType([StructField("payload", StringType())]))
    assert reader.initialOffset()["seq"] == 0  # and it answered without a database


def test_error_in_read_fails_the_query_without_the_password(spark, engine, delta_path, checkpoint_path):
    if "password" not in engine.options:
        pytest.skip("this engine has no password to leak")
    queue = engine.new_queue()
    queue.enqueue([{"payload": "x"}])
    options = engine.source_options(queue)
    options["password"] = options["password"] + "-wrong"
    with pytest.raises(Exception) as failure:  # refused when the DataFrame is made, before the query starts
        drain(spark, options, delta_path, checkpoint_path)
    refusal = {"postgres": "password authentication failed", "sqlserver": "Login failed"}[engine.name]
    assert refusal in str(failure.value)
    assert options["password"] not in str(failure.value)


@pytest.mark.babelfish_gap("json_escapes")  # the enqueue's OPENJSON keeps the body's escapes there
def test_a_stream_reads_every_type_exactly_as_the_table_holds_it(spark, engine, delta_path, checkpoint_path):
    """Text that CSV must quote or could take for something else, NaN and infinities, microseconds,
    integers past 2**53, NULL of every type: PostgreSQL's rows come as COPY text that Arrow parses."""
    import datetime as dt

    domain = (
        Column("body", "text"),
        Column("at", "timestamp"),
        Column("big", "bigint"),
        Column("score", "double"),
        Column("flag", "boolean"),
    )
    at = dt.datetime(2026, 11, 23, 1, 2, 3, 456789, dt.timezone.utc)
    infinity = 1e308 if engine.name == "sqlserver" else float("inf")  # SQL Server's FLOAT has no infinity
    rows = [
        ('a,b "quoted"\nsecond line', at, 2**53 + 1, infinity, True),
        ("", dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc), -(2**62), -infinity, False),
        ("NULL", at, 0, 0.1, True),
        ("NaN", at, 1, -1e300, False),
        (None, None, None, None, None),
    ]
    queue = engine.new_queue(domain=domain)
    queue.enqueue([dict(zip([c.name for c in domain], row)) for row in rows])
    drain(spark, engine.source_options(queue, columns="body,at,big,score,flag"), delta_path, checkpoint_path)
    got = {tuple(r) for r in spark.read.format("delta").load(delta_path).collect()}
    expected = {
        (b, None if t is None else t.replace(tzinfo=None), n, s, f)  # the session reads times in UTC, naive
        for b, t, n, s, f in rows
    }
    if engine.name == "sqlite":  # SQLite keeps times to the millisecond
        expected = {
            (b, t and t.replace(microsecond=t.microsecond // 1000 * 1000), n, s, f) for b, t, n, s, f in expected
        }
    assert got == expected
