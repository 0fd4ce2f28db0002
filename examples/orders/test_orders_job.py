"""Tests of the orders pipeline with sqlqueue's pytest plugin (installed with sqlqueue; `pip install
'sqlqueue[testing,delta]'`). Copy this file beside your job and run `python -m pytest`."""

from __future__ import annotations

from orders_job import price, start

from sqlqueue.testing import assert_each_key_once, assert_frame_equal, assert_queue_holds, run_to_end

ORDERS = "order_id bigint not null, customer text, quantity int, unit_price double, cancelled boolean"


def orders(ids, cancelled=()):
    return [
        {"order_id": i, "customer": f"c{i % 7}", "quantity": 2, "unit_price": 1.5, "cancelled": i in cancelled}
        for i in ids
    ]


def test_price_totals_each_order_and_drops_cancelled_ones(spark):
    placed = spark.createDataFrame(
        [(1, "ada", 2, 2.5, False), (2, "bob", 1, 9.0, True)],
        "order_id bigint, customer string, quantity int, unit_price double, cancelled boolean",
    )
    assert_frame_equal(price(placed), [(1, "ada", 5.0)])


def test_every_order_reaches_delta_once_and_leaves_the_queue(spark, make_queue, delta_path, checkpoint_path):
    queue = make_queue(ORDERS, rows=orders(range(1_000), cancelled={7}))
    run_to_end(start(spark, queue.source_options(maxRowsPerTrigger=400), delta_path, checkpoint_path))
    assert_each_key_once(delta_path, set(range(1_000)) - {7}, column="order_id")
    assert_queue_holds(queue)  # empty: every row completed


def test_a_rerun_takes_only_the_orders_placed_since(spark, make_queue, delta_path, checkpoint_path):
    queue = make_queue(ORDERS, rows=orders(range(100)))
    run_to_end(start(spark, queue.source_options(), delta_path, checkpoint_path))
    queue.enqueue(orders(range(100, 150)))
    run_to_end(start(spark, queue.source_options(), delta_path, checkpoint_path))
    assert_each_key_once(delta_path, range(150), column="order_id")
