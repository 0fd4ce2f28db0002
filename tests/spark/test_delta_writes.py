"""Idempotent Delta writes for foreachBatch: a replayed micro-batch adds nothing."""
from __future__ import annotations

import pytest
from chispa import assert_df_equality

from sqlqueue.spark.delta import append_once, last_appended_batch

pytestmark = pytest.mark.spark


def test_a_replayed_batch_is_not_appended_again(spark, tmp_path):
    target = str(tmp_path / "t")
    write = append_once(target, "job-1")
    first = spark.createDataFrame([(1, "a"), (2, "b")], "id bigint, payload string")
    write(first, 0)
    write(first, 0)  # Spark replays batch 0 after a crash between the Delta commit and its commit log
    write(spark.createDataFrame([(3, "c")], "id bigint, payload string"), 1)
    expected = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id bigint, payload string")
    assert_df_equality(spark.read.format("delta").load(target), expected, ignore_row_order=True)


def test_a_restarted_writer_skips_the_batch_appended_before_the_crash(spark, tmp_path):
    target = str(tmp_path / "t")
    batch = spark.createDataFrame([(1, "a")], "id bigint, payload string")
    append_once(target, "job-1")(batch, 7)
    append_once(target, "job-1")(batch, 7)  # a new process: learns batch 7 from the table's markers
    assert_df_equality(spark.read.format("delta").load(target), batch)


def test_markers_of_another_app_do_not_count(spark, tmp_path):
    target = str(tmp_path / "t")
    append_once(target, "other")(spark.createDataFrame([(1,)], "id bigint"), 5)
    assert last_appended_batch(spark, target, "job-1") is None
    assert last_appended_batch(spark, target, "other") == 5
