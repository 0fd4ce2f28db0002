"""Run a small Spark workload once, so that its JVM, started with -XX:ArchiveClassesAtExit, leaves a class
data sharing archive of the classes Spark, Delta and sqlqueue's tests load (`make` builds it into .cache).

The test targets start every Spark JVM with -XX:SharedArchiveFile pointing at it: a local session's start,
first queries and a Delta write and read took 26.6 CPU seconds instead of 38.6 here (both on C1 alone).
The archive holds to this JDK and Spark's class path; a JVM whose class path differs (another pyspark,
as test-pyspark-upper's) or another JDK ignores it and starts as before (-Xlog:cds*=off keeps that quiet).
JDK 17's dynamic archive: https://docs.oracle.com/en/java/javase/17/vm/class-data-sharing.html
"""

from __future__ import annotations

import tempfile

from pyspark import SparkContext

from sqlqueue.spark.session import build_session


def main() -> None:
    spark = build_session("sqlqueue-class-archive", "local[2]")
    with tempfile.TemporaryDirectory() as folder:
        spark.range(1000).selectExpr("id % 7 AS k").groupBy("k").count().collect()
        spark.range(10).write.format("delta").mode("overwrite").save(folder)
        spark.read.format("delta").load(folder).count()
    launcher = SparkContext._gateway.proc  # type: ignore[union-attr]  # pyspark's spark-submit, the JVM's parent
    spark.stop()
    # The JVM writes the archive as it exits, which it does once its stdin closes (PythonGatewayServer);
    # wait for that, or make would move a file not written yet.
    launcher.stdin.close()
    launcher.wait(timeout=600)


if __name__ == "__main__":
    main()
