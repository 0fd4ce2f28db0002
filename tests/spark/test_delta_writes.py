"""Idempotent Delta writes for foreachBatch: a replayed micro-batch adds nothing."""

from __future__ import annotations

import threading

import pytest
from chispa import assert_df_equality
from delta.tables import DeltaTable

from sqlqueue.spark import delta
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


# append_once's failure modes (issue 12): the marker must be found however the table was written.


def rows_of(spark, target):
    return sorted(tuple(r) for r in spark.read.format("delta").load(target).collect())


def test_a_replay_after_more_than_history_depth_foreign_commits_is_still_skipped(spark, tmp_path, monkeypatch):
    monkeypatch.setattr(delta, "HISTORY_DEPTH", 2)
    target = str(tmp_path / "t")
    append_once(target, "job-1")(spark.createDataFrame([(1, "job")], "id bigint, payload string"), 4)
    for i in range(3):  # other writers commit more than HISTORY_DEPTH times before the restart
        spark.createDataFrame([(100 + i, "other")], "id bigint, payload string").write.format("delta").mode(
            "append"
        ).save(target)
    assert last_appended_batch(spark, target, "job-1") == 4  # found past the recent commits
    append_once(target, "job-1")(spark.createDataFrame([(1, "job")], "id bigint, payload string"), 4)  # the replay
    assert rows_of(spark, target) == [(1, "job"), (100, "other"), (101, "other"), (102, "other")]


def test_a_new_app_on_a_table_with_a_long_history_reads_it_all_once(spark, tmp_path, monkeypatch):
    monkeypatch.setattr(delta, "HISTORY_DEPTH", 2)
    target = str(tmp_path / "t")
    for i in range(3):
        spark.createDataFrame([(i,)], "id bigint").write.format("delta").mode("append").save(target)
    assert last_appended_batch(spark, target, "job-1") is None


def test_a_concurrent_writer_neither_blocks_nor_defeats_the_marker(spark, tmp_path):
    target = str(tmp_path / "t")
    spark.createDataFrame([(0, "seed")], "id bigint, payload string").write.format("delta").save(target)
    errors = []

    def other_writer():
        try:
            for i in range(4):
                spark.createDataFrame([(1000 + i, "other")], "id bigint, payload string").write.format("delta").mode(
                    "append"
                ).save(target)
        except Exception as exc:  # reported below: the test fails if the other writer could not append
            errors.append(exc)

    thread = threading.Thread(target=other_writer)
    thread.start()
    write = append_once(target, "job-1")
    for batch_id in range(3):
        write(spark.createDataFrame([(batch_id + 1, "job")], "id bigint, payload string"), batch_id)
    thread.join()
    assert errors == []
    append_once(target, "job-1")(spark.createDataFrame([(3, "job")], "id bigint, payload string"), 2)  # replay
    assert [r for r in rows_of(spark, target) if r[1] == "job"] == [(1, "job"), (2, "job"), (3, "job")]
    assert len([r for r in rows_of(spark, target) if r[1] == "other"]) == 4


def test_a_session_user_metadata_does_not_hide_the_marker(spark, tmp_path):
    target = str(tmp_path / "t")
    key = "spark.databricks.delta.commitInfo.userMetadata"
    spark.conf.set(key, "nightly-etl run 42")
    try:
        batch = spark.createDataFrame([(1, "a")], "id bigint, payload string")
        append_once(target, "job-1")(batch, 0)
        batch.write.format("delta").mode("append").save(target)  # the user's own commit carries theirs
        assert last_appended_batch(spark, target, "job-1") == 0
        append_once(target, "job-1")(batch, 0)  # the replay in a new process
    finally:
        spark.conf.unset(key)
    history = {r.version: r.userMetadata for r in DeltaTable.forPath(spark, target).history().collect()}
    assert history == {0: "sqlqueue:job-1:0", 1: "nightly-etl run 42"}
    assert rows_of(spark, target) == [(1, "a"), (1, "a")]
