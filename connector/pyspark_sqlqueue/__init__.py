"""sqlqueue's data source under the name Spark looks for: installed, ``format("sqlqueue")`` works.

At a session's first data-source lookup, pyspark 4 imports every installed top-level module whose name
starts with ``pyspark_`` and registers its ``DefaultSource`` under ``DefaultSource.name()``
(pyspark/sql/worker/lookup_data_sources.py), as Kafka's and Delta's users never register anything. It
happens in the process that serves the session: a local driver, a cluster's driver, a Spark Connect
server; each needs sqlqueue installed in the Python it runs workers with. ``sqlqueue.register(spark)``
still works, and is needed only where the package is not installed (code shipped with --py-files).
"""

from sqlqueue.spark.source import SqlQueueDataSource as DefaultSource

__all__ = ["DefaultSource"]
