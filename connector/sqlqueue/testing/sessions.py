"""The plugin's SparkSession: ``build_session`` (Delta, the micro-batch tuning, quiet logs; Spark
Connect when ``SPARK_REMOTE`` is set), with Delta's jars found the documented way and, when they
cannot be, one line saying what is missing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

JARS_ENV = "SQLQUEUE_JARS_DIR"  # what build_session reads


def missing_jars(folder: str, package: str) -> list[str]:
    """The jar files of Delta's Maven ``package`` (group:artifact:version) absent from ``folder``."""
    _, artifact, version = package.split(":")
    wanted = (f"{artifact}-{version}.jar", f"delta-storage-{version}.jar")
    return [name for name in wanted if not (Path(folder) / name).is_file()]


def start_session(jars_folder: str | None) -> Any:
    """A session named ``sqlqueue-tests`` on local[2]. Raises ``RuntimeError`` with one line when
    Delta's jars are missing from ``jars_folder`` or Spark could not start with them."""
    from ..spark.session import DELTA_PACKAGE, build_session

    remote = os.environ.get("SPARK_REMOTE", "")
    if jars_folder and not remote.startswith("sc://"):  # a running Connect server has its own jars
        missing = missing_jars(jars_folder, DELTA_PACKAGE)
        if missing:
            raise RuntimeError(
                f"Delta Lake's jars are missing from {jars_folder}: {', '.join(missing)} (put the jars of "
                f"{DELTA_PACKAGE} and its delta-storage there, or unset {JARS_ENV} and --sqlqueue-jars to let "
                "Spark fetch them from Maven Central)"
            )
    if jars_folder:  # for this session and any job a test starts
        os.environ[JARS_ENV] = jars_folder
    try:
        return build_session("sqlqueue-tests", "local[2]")
    except Exception as exc:
        where = f"the jars in {jars_folder}" if jars_folder else f"{DELTA_PACKAGE} fetched from Maven Central"
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise RuntimeError(
            f"Spark did not start with Delta Lake from {where}: {first} (set {JARS_ENV} or --sqlqueue-jars to a "
            "folder holding Delta's jars)"
        ) from exc
