"""A SparkSession with Delta Lake and the sqlqueue source registered, for jobs, tests and demos:
a classic one, or a Spark Connect one when asked for a remote.

Delta's jars are not in the delta-spark wheel. ``make jars`` puts them in the project's cache and
the Makefile exports SQLQUEUE_JARS_DIR; without it Spark resolves them from Maven Central itself.
Under spark-submit the JVM starts before this code runs, so the jars must come from spark-submit
(--packages or --jars); a session without them stops at once with an error that says so.

**Spark Connect.** ``remote`` (or ``spark.remote`` in ``conf``, or ``SPARK_REMOTE``) selects it.
``local[…]`` starts a Connect server in this process with the settings below (Delta's jars and SQL
extension, the tuning); ``sc://host:port`` reaches a running server, whose own settings stand: only
runtime SQL settings can be set from a client, and a setting the server refuses (Databricks
serverless allows few) is named in one warning line and left alone. A Connect session has no
``sparkContext``: nothing here touches it.
"""

from __future__ import annotations

import glob
import logging
import os
import sys
import warnings

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from ..errors import ConfigError
from .tuning import LOCAL_JVM_OPTIONS, LOCAL_TUNING, TUNING

log = logging.getLogger("sqlqueue.session")

LOG4J2 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")

DELTA_PACKAGE = "io.delta:delta-spark_4.2_2.13:4.4.0"
REMOTE = "spark.remote"
JAVA_OPTIONS = "spark.driver.extraJavaOptions"


def _has_delta(spark: SparkSession) -> bool:
    from py4j.java_gateway import JavaClass

    jvm = spark.sparkContext._jvm
    return jvm is not None and isinstance(jvm.io.delta.tables.DeltaTable, JavaClass)


def delta_jars_missing() -> ConfigError:
    return ConfigError(
        "Delta Lake's classes are not on the driver's classpath: spark-submit started the JVM "
        f"before sqlqueue could add them. Pass them to spark-submit: --packages {DELTA_PACKAGE}, "
        "or --jars with the jar files `make jars` put in .cache/jars (comma-separated)"
    )


def delta_jars() -> list[str]:
    folder = os.environ.get("SQLQUEUE_JARS_DIR")
    return sorted(glob.glob(os.path.join(folder, "*.jar"))) if folder else []


def server_settings(local: bool = True, java_options: str | None = None) -> dict[str, str]:
    """What a JVM this process starts needs (a classic driver, or a local Connect server). ``local``: a
    local master, whose JVM compiles with C1 alone (tuning.LOCAL_JVM_OPTIONS); ``java_options``: the
    user's spark.driver.extraJavaOptions, which come after ours, so a flag given there wins. A local master
    also writes its checkpoint files without forking (tuning.LOCAL_TUNING)."""
    jars = delta_jars()
    java = [java_options] if java_options else []
    # A JVM this process starts logs warnings without Spark's start-up noise (under spark-submit, which
    # sets PYSPARK_GATEWAY_PORT, the JVM already runs, with spark-submit's own logging and options).
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        java = [f"-Dlog4j2.configurationFile=file:{LOG4J2}", *(LOCAL_JVM_OPTIONS if local else ()), *java]
    return {
        **({"spark.jars": ",".join(jars)} if jars else {"spark.jars.packages": DELTA_PACKAGE}),
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        # Progress bars interleave with log lines and mean nothing in a job's log.
        "spark.ui.showConsoleProgress": "false",
        **({JAVA_OPTIONS: " ".join(java)} if java else {}),
        **TUNING,  # measured per-batch costs: see .tuning
        **(LOCAL_TUNING if local else {}),
    }


def build_session(
    app_name: str = "sqlqueue",
    master: str | None = "local[2]",
    conf: dict[str, str] | None = None,
    log_level: str = "WARN",
    remote: str | None = None,
) -> SparkSession:
    """``master`` None leaves the choice to spark-submit (--master) or spark.master in ``conf``.

    ``remote`` (else ``conf``'s spark.remote, else SPARK_REMOTE) makes it a Spark Connect session:
    ``local[…]`` starts a server here, ``sc://…`` reaches one; ``master`` and ``log_level`` are then
    the server's business.
    """
    # Python workers must run the interpreter that has sqlqueue installed.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    user = dict(conf or {})
    remote = remote or user.pop(REMOTE, None) or os.environ.get("SPARK_REMOTE")
    user.pop(REMOTE, None)
    if remote and not remote.startswith("local"):
        spark = _reach(remote, app_name, user)
    else:
        builder = SparkSession.builder.appName(app_name)
        if remote:
            builder = builder.remote(remote)
        elif master:
            builder = builder.master(master)
        # The master the JVM runs: spark.master in ``conf`` is set after ``master`` and wins.
        local = str(remote or user.get("spark.master") or master or "").startswith("local")
        settings = server_settings(local, user.pop(JAVA_OPTIONS, None))
        for key, value in {**settings, **user}.items():
            builder = builder.config(key, value)
        with warnings.catch_warnings():
            # A local Connect server starts with every setting, then pyspark 4.2 sets them all again
            # on the client session and warns for each one only a server takes (spark.jars, ...).
            warnings.filterwarnings("ignore", message="Failed to set", category=UserWarning)
            spark = builder.getOrCreate()
        if not remote:
            spark.sparkContext.setLogLevel(log_level)
            if not _has_delta(spark):
                spark.stop()
                raise delta_jars_missing()
    from .source import register

    register(spark)
    return spark


def _reach(remote: str, app_name: str, conf: dict[str, str]) -> SparkSession:
    """A session on a running Connect server, with the tuning and ``conf`` where the server allows them.

    A client sets runtime SQL settings only; the server keeps the rest (spark.jars, static SQL settings, …)
    and a platform may refuse more (Databricks serverless allows few): one warning names them.
    """
    spark = SparkSession.builder.remote(remote).appName(app_name).getOrCreate()
    tuning = {k: v for k, v in TUNING.items() if k.startswith(("spark.sql.", "spark.databricks."))}
    kept = []
    for key, value in {**tuning, **conf}.items():
        try:
            spark.conf.set(key, value)
        except PySparkException as exc:
            kept.append(f"{key} ({str(exc).strip().splitlines()[0]})")
    if kept:
        log.warning("the Connect server %s keeps its own value of: %s", remote, "; ".join(kept))
    return spark
