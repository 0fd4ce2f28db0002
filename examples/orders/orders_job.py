"""A user's pipeline, as docs/testing.md ("Testing your pipeline") tests it: orders from a queue, priced,
appended to a Delta table exactly once."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from sqlqueue.spark.delta import append_once


def price(orders: DataFrame) -> DataFrame:
    """The transform: each order's total; cancelled orders are dropped."""
    total = (F.col("quantity") * F.col("unit_price")).alias("total")
    return orders.filter(~F.col("cancelled")).select("order_id", "customer", total)


def start(spark: SparkSession, queue_options: dict[str, str], target: str, checkpoint: str) -> StreamingQuery:
    """The job: drain the queue into ``target``, each micro-batch appended once (a replay adds nothing)."""
    orders = spark.readStream.format("sqlqueue").options(**queue_options).load()
    return (
        price(orders)
        .writeStream.foreachBatch(append_once(target, app_id=checkpoint))
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
