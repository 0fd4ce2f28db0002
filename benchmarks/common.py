"""Shared set-up for benchmark scripts: a PostgreSQL server of their own and a figure printer."""

from __future__ import annotations

import atexit
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# Delta's jars from `make jars` where they are (the Makefile exports this too), else Spark fetches them.
if (ROOT / ".cache" / "jars").is_dir():
    os.environ.setdefault("SQLQUEUE_JARS_DIR", str(ROOT / ".cache" / "jars"))

from sqlqueue.testing.pgserver import PgServer  # noqa: E402
from tests.support.standalone import package_zip  # noqa: E402


def start_postgres() -> PgServer:
    return PgServer().start()


def pg_options(server: PgServer) -> dict[str, str]:
    return server.options


def postmaster(server: PgServer) -> int:
    """The server's postmaster: its processes' tree is the database's CPU (drains.tree_cpu)."""
    return int((server.data / "postmaster.pid").read_text().split()[0])


def percentiles(samples_ms: list[float]) -> str:
    if len(samples_ms) < 2:
        return f"p50 {samples_ms[0]:.0f} ms" if samples_ms else "no samples"
    q = statistics.quantiles(samples_ms, n=100, method="inclusive")
    return f"p50 {q[49]:.0f} ms, p95 {q[94]:.0f} ms, max {max(samples_ms):.0f} ms"


def report(title: str, rows: int, seconds: float, extra: str = "") -> float:
    rate = rows / seconds
    print(f"  {title:<44} {rows:>8} rows in {seconds:7.2f} s = {rate:>9,.0f} rows/s {extra}", flush=True)
    return rate


def median_of(repeat: int, prepare: Callable[[], Callable[[], None]]) -> float:
    """Seconds of the median of ``repeat`` runs; ``prepare`` makes a fresh table and returns the write to time."""
    return statistics.median(timed(prepare()) for _ in range(repeat))


def timed(write: Callable[[], None]) -> float:
    """Seconds ``write`` takes."""
    started = time.perf_counter()
    write()
    return time.perf_counter() - started


def spread(values: list[float]) -> str:
    """The median of ``values`` with their smallest and largest: '51,234 (49,870-53,002)'."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return f"{ordered[0]:,.0f}"
    return f"{statistics.median(ordered):,.0f} ({ordered[0]:,.0f}-{ordered[-1]:,.0f})"


def ratio_spread(values: list[float]) -> str:
    ordered = sorted(values)
    if len(ordered) == 1:
        return f"{ordered[0]:.2f}"
    return f"{statistics.median(ordered):.2f} ({ordered[0]:.2f}-{ordered[-1]:.2f})"


def spark_session(app: str, master: str, conf: dict[str, str] | None = None):
    """build_session on ``master``. On a cluster (spark://...) the executors get this sqlqueue
    package from the driver (addPyFile), as a submitted job's get it from --py-files."""
    from sqlqueue.spark.session import build_session

    spark = build_session(app, master, conf)
    if master.startswith("spark://"):
        folder = tempfile.mkdtemp(prefix="sqlqueue-bench-package-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        shipped = package_zip(Path(folder) / "sqlqueue.zip")
        spark.sparkContext.addPyFile(str(shipped))
    return spark
