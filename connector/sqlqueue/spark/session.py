"""A local SparkSession with Delta Lake and the sqlqueue source registered, for jobs, tests and demos.

Delta's jars are not in the delta-spark wheel. ``make jars`` puts them in the project's cache and
the Makefile exports SQLQUEUE_JARS_DIR; without it Spark resolves them from Maven Central itself.
Under spark-submit the JVM starts before this code runs, so the jars must come from spark-submit
(--packages or --jars); a session without them stops at once with an error that says so.
"""

from __future__ import annotations

import glob
import os
import sys

from pyspark.sql import SparkSession

from ..errors import ConfigError
from .tuning import TUNING

LOG4J2 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")

DELTA_PACKAGE = "io.delta:delta-spark_4.2_2.13:4.4.0"


def _has_delta(spark: SparkSession) -> bool:
    from py4j.java_gateway import JavaClass

    jvm = spark.sparkContext._jvm
    return jvm is not None and isinstance(jvm.io.delta.tables.DeltaTable, JavaClass)


def delta_jars() -> list[str]:
    folder = os.environ.get("SQLQUEUE_JARS_DIR")
    return sorted(glob.glob(os.path.join(folder, "*.jar"))) if folder else []


def build_session(
    app_name: str = "sqlqueue",
    master: str | None = "local[2]",
    conf: dict[str, str] | None = None,
    log_level: str = "WARN",
) -> SparkSession:
    """``master`` None leaves the choice to spark-submit (--master) or spark.master in ``conf``."""
    # Python workers must run the interpreter that has sqlqueue installed.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    builder = builder.master(master) if master else builder
    jars = delta_jars()
    builder = (
        builder.config("spark.jars", ",".join(jars)) if jars else builder.config("spark.jars.packages", DELTA_PACKAGE)
    )
    settings = {
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        # Progress bars interleave with log lines and mean nothing in a job's log.
        "spark.ui.showConsoleProgress": "false",
        # A JVM this process starts logs warnings without Spark's start-up noise (under spark-submit,
        # which sets PYSPARK_GATEWAY_PORT, the JVM already runs with spark-submit's own logging).
        **(
            {}
            if "PYSPARK_GATEWAY_PORT" in os.environ
            else {"spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{LOG4J2}"}
        ),
        **TUNING,  # measured per-batch costs: see .tuning
        **(conf or {}),
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level)
    if not _has_delta(spark):
        spark.stop()
        raise ConfigError(
            "Delta Lake's classes are not on the driver's classpath: spark-submit started the JVM before "
            f"sqlqueue could add them. Pass them to spark-submit: --packages {DELTA_PACKAGE}, or --jars with "
            "the jar files `make jars` put in .cache/jars (comma-separated)"
        )
    from .source import register

    register(spark)
    return spark
