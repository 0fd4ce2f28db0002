"""make_queue.adopted: a throwaway table of a design sqlqueue adopts, streamed as a user's table would be."""

from __future__ import annotations

import pytest

from sqlqueue.errors import ConfigError
from sqlqueue.testing import assert_each_key_once, run_to_end


@pytest.mark.parametrize("design", ["relational", "started-mark", "claimer", "dequeue"])
def test_a_table_of_each_design_is_adopted_and_filled(make_queue, design):
    table = make_queue.adopted(design, rows=5)
    assert table.backlog().ready_rows == 5
    assert table.claim("test", 1, 2) == 2


def test_an_unknown_design_lists_the_designs(make_queue):
    with pytest.raises(ConfigError, match="design 'fifo' is not allowed: use one of relational, started-mark"):
        make_queue.adopted("fifo")


@pytest.mark.spark
def test_an_adopted_table_streams_into_delta_through_its_source_options(spark, make_queue, delta_path, checkpoint_path):
    table = make_queue.adopted("relational", rows=50)
    stream = spark.readStream.format("sqlqueue").options(**table.source_options()).load()
    query = stream.writeStream.format("delta").option("checkpointLocation", checkpoint_path)
    run_to_end(query.trigger(availableNow=True).start(delta_path))
    assert_each_key_once(delta_path, [f"p{i}" for i in range(50)], "Payload")
