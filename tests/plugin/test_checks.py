"""The assertions on delivered data: each failure lists exactly what is wrong."""

from __future__ import annotations

import pytest
from chispa import DataFramesNotEqualError

from sqlqueue.testing import assert_dead_lettered, assert_each_key_once, assert_frame_equal, assert_queue_holds
from tests.spark.test_dead_letters import fail_rows

pytestmark = pytest.mark.spark


def keys(spark, *values: int):
    return spark.createDataFrame([(v,) for v in values], "id bigint")


def test_each_key_once_passes_when_every_key_arrived_once(spark):
    assert_each_key_once(keys(spark, 3, 1, 2), range(1, 4))


def test_each_key_once_lists_the_missing_keys(spark):
    with pytest.raises(AssertionError) as failure:
        assert_each_key_once(keys(spark, 1, 4), range(1, 5))
    assert str(failure.value) == ("the DataFrame does not hold each of 4 keys (id) exactly once:\n  missing (2): 2, 3")


def test_each_key_once_lists_the_duplicated_keys_with_their_counts(spark):
    with pytest.raises(AssertionError, match=r"\n  duplicated \(2\): 1 \(2 times\), 3 \(3 times\)$"):
        assert_each_key_once(keys(spark, 1, 1, 2, 3, 3, 3), [1, 2, 3])


def test_each_key_once_lists_unexpected_keys_of_a_delta_table(spark, delta_path):
    keys(spark, 1, 2, 9).write.format("delta").save(delta_path)
    with pytest.raises(AssertionError, match=rf"^Delta table {delta_path} does .*\n  unexpected \(1\): 9$"):
        assert_each_key_once(delta_path, [1, 2])


def test_each_key_once_shows_at_most_twenty_keys_of_a_kind(spark):
    with pytest.raises(AssertionError, match=r"missing \(30\): 0, 1, .*, 19, … and 10 more$"):
        assert_each_key_once(keys(spark, 99), [*range(30), 99])


def test_queue_holds_names_each_state_that_differs(make_queue):
    queue = make_queue(rows=[{"payload": "a"}, {"payload": "b"}])
    assert_queue_holds(queue, ready=2)
    with pytest.raises(AssertionError) as failure:
        assert_queue_holds(queue, failed=1)
    assert (
        str(failure.value) == f"queue {queue.table} holds rows per state: ready 2 (expected 0), failed 0 (expected 1)"
    )


def test_queue_holds_refuses_an_unknown_state(make_queue):
    with pytest.raises(ValueError, match="unknown state\\(s\\) redy: use ready, claimed, done, failed, unpublished"):
        assert_queue_holds(make_queue(), redy=1)


def test_dead_lettered_lists_missing_unexpected_and_other_errors(make_queue):
    queue = make_queue(rows=[{"payload": p} for p in "abcd"])
    first, second, *_ = fail_rows(queue, 2)  # fails each with "bad row <id>"
    assert_dead_lettered(queue, {first: "bad row", second: f"row {second}"})
    with pytest.raises(AssertionError) as failure:
        assert_dead_lettered(queue, {first: "timeout", 99: "bad row"})
    assert str(failure.value) == (
        f"queue {queue.table} did not dead-letter what was expected (id):\n"
        "  missing (1): 99\n"
        f"  unexpected (1): {second}: 'bad row {second}'\n"
        f"  another error (1): {first}: 'bad row {first}' lacks 'timeout'"
    )


def test_dead_lettered_reads_a_dead_letter_delta_table(spark, delta_path):
    spark.createDataFrame([(7, "lease expired")], "id bigint, last_error string").write.format("delta").save(delta_path)
    assert_dead_lettered(delta_path, {7: "lease"})
    with pytest.raises(AssertionError, match=rf"^Delta table {delta_path} did not .*\n  missing \(1\): 8"):
        assert_dead_lettered(delta_path, {7: "lease", 8: "lease"})


def test_frame_equal_takes_rows_in_the_actual_schema_and_ignores_their_order(spark):
    actual = spark.createDataFrame([(1, "a"), (2, "b")], "id bigint, payload string")
    assert_frame_equal(actual, [(2, "b"), (1, "a")])
    with pytest.raises(DataFramesNotEqualError):
        assert_frame_equal(actual, [(1, "a"), (2, "c")])
