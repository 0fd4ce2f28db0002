"""A local SparkSession with Delta Lake and the sqlqueue source registered, for jobs, tests and demos.

Delta's jars are not in the delta-spark wheel. ``make jars`` puts them in the project's cache and
the Makefile exports SQLQUEUE_JARS_DIR; without it Spark resolves them from Maven Central itself.
"""
from __future__ import annotations

import glob
import os
import sys

from pyspark.sql import SparkSession

DELTA_PACKAGE = "io.delta:delta-spark_4.2_2.13:4.4.0"


def delta_jars() -> list[str]:
    folder = os.environ.get("SQLQUEUE_JARS_DIR")
    return sorted(glob.glob(os.path.join(folder, "*.jar"))) if folder else []


def build_session(
    app_name: str = "sqlqueue", master: str | None = "local[2]", conf: dict[str, str] | None = None,
    log_level: str = "WARN",
) -> SparkSession:
    """``master`` None leaves the choice to spark-submit (--master) or spark.master in ``conf``."""
    # Python workers must run the interpreter that has sqlqueue installed.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    builder = builder.master(master) if master else builder
    jars = delta_jars()
    builder = builder.config("spark.jars", ",".join(jars)) if jars else builder.config("spark.jars.packages", DELTA_PACKAGE)
    settings = {
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        **(conf or {}),
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level)
    from .source import register

    register(spark)
    return spark
