"""Spark and Delta settings for micro-batches, and a warning for sessions that lack the costly ones.

Figures are medians of benchmarks/delta_settings.py (local[2] on a 2-core host, appends of 10,000 rows;
docs/performance.md, "Tuning Spark and Delta for micro-batches").

``build_session`` sets ``TUNING``. A user who builds their own SparkSession gets, once per process,
a warning from the source naming each setting in ``COSTLY`` that is left at a value that costs
seconds per micro-batch.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("sqlqueue.tuning")

SNAPSHOT_PARTITIONS = "spark.databricks.delta.snapshotPartitions"
SESSION_TIME_ZONE = "spark.sql.session.timeZone"
CHECKPOINT_INTERVAL = "spark.databricks.delta.properties.defaults.checkpointInterval"
CHECKSUM_FILE = "spark.databricks.delta.writeChecksumFile.enabled"
UNIX_SOCKETS = "spark.python.unix.domain.socket.enabled"

TUNING: dict[str, str] = {
    # Delta rebuilds a table's state in this many tasks (50 when unset) whenever it needs the full
    # state: txnAppId/txnVersion commits, the streaming Delta sink, every log checkpoint. Measured
    # 50 -> 1: txnAppId commit 9.9 -> 3.0 s, streaming sink batch 11.5 -> 0.8 s, checkpoint 25 -> 6 s.
    SNAPSHOT_PARTITIONS: "1",
    # Queue times are UTC; and Delta re-checks a table's full state on every commit when the session
    # is not in UTC (allFilesInCrc.verificationMode.forceOnNonUTC): plain append 2.7 -> 1.1 s.
    SESSION_TIME_ZONE: "UTC",
    # Tables created in the session (a job's target, its dead letters) write Delta's log checkpoint
    # inside every 100th commit rather than every 10th: that commit took 2.5-5 s instead of 0.5 (50k-row
    # appends), 0.4 s a batch on average at every tenth. A reader that opens the table cold replays
    # up to 99 small JSON commits instead of 9. A table that exists keeps its own (ALTER TABLE ... SET
    # TBLPROPERTIES ('delta.checkpointInterval' = '100') changes it).
    CHECKPOINT_INTERVAL: "100",
    # Delta writes a checksum file (.crc: size, file count, protocol, metadata) beside every commit by
    # default (delta-io/delta#3919). Without it append_once's commit took 0.19 s instead of 0.26, and
    # queue_to_delta at 50k-row batches drained 1.13x faster (four alternated pairs). Readers opening the
    # table cold then take protocol and metadata from the log instead, and no checksum is there to
    # check a rebuilt state against (docs/performance.md, "Tuning").
    CHECKSUM_FILE: "false",
    # Few tasks for Spark's own shuffles of small batches (no effect measured on Delta appends).
    "spark.sql.shuffle.partitions": "2",
    # No web UI on a job that runs unattended (no effect measured on Delta appends).
    "spark.ui.enabled": "false",
    # The JVM and its Python workers talk over Unix sockets instead of loopback TCP (SPARK-51688, Spark
    # 4.1; off by default). Over TCP each Python read task of a micro-batch waited about 40 ms for its
    # partition, TCP's delayed acknowledgement (with `quickack 1` on the loopback route the wait went too):
    # a one-row read task took ~100 ms from its job's start to its rows, ~50 ms over Unix sockets. At
    # 50,000-row batches queue_to_delta's micro-batch took 406-455 ms over TCP, 360-402 over Unix sockets
    # (benchmarks/bench_stages.py; docs/performance.md, "Tuning"). A Python process whose JVM side closes
    # first (a show() of a UDF's rows, a query stopped mid-batch) then fails its last write, where over TCP
    # that write mostly goes through: pyspark prints the BrokenPipeError, which DAEMON_MODULE keeps out
    # of a local master's task workers, and sqlqueue.spark.quiet out of the idle processes Spark plans
    # sqlqueue's data source with.
    # Where the platform has no Unix sockets pyspark refuses the setting, so it is left unset there.
    **({UNIX_SOCKETS: "true"} if hasattr(socket, "AF_UNIX") else {}),
}


# The JVM a local session starts (local[N], or a local Spark Connect server) compiles with C1 alone. On
# this project's 2-core host a fresh queue_to_delta drain spent most of its driver JVM's CPU in the C2
# compiler (24 of 39 CPU s over twenty 50,000-row batches), on the same cores as the database and the
# Python workers. C1 alone, queue_to_delta on 1,000,000 PostgreSQL rows (benchmarks/bench_source.py, 3
# runs each): 49,699 -> 56,818+ rows/s at 50,000-row batches (and 102,712 -> 128,205+ at 500,000, timed
# the benchmark's earlier way, without the claim at that size); JVM CPU per 100,000 rows 3.0 -> 1.9. Work
# that is the JVM's alone runs slower on C1 code (Spark's floor into Delta: 621,891 -> about 330,000
# rows/s), so a machine with cores to spare may do better without it: a flag given later in
# spark.driver.extraJavaOptions wins (-XX:TieredStopAtLevel=4). C1 alone, the JVM reserves 48 MB for
# compiled code instead of the 240 MB it reserves with C2 (-XX:+PrintFlagsFinal, JDK 17): a long-lived
# test session filled it ("CodeCache is full. Compiler has been disabled."), then failed a Delta UPDATE
# with "VirtualMachineError: Out of space in CodeCache for adapters". The 240 MB are reserved address
# space, taken as code is compiled.
LOCAL_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m")

CHECKPOINT_FILE_MANAGER = "spark.sql.streaming.checkpointFileManagerClass"
DAEMON_MODULE = "spark.python.daemon.module"
# A local master keeps its checkpoints on the local file system, whose Hadoop client, without Hadoop's
# native library (pyspark ships none), forks a `readlink` for each side of each rename made through
# FileContext, Spark's default for checkpoint files: four renames per micro-batch (the offset and commit
# logs, each with its checksum file), about 30 ms each of walCommit and commitOffsets on the batch's path.
# Spark's FileSystem-based manager renames with FileSystem.rename, which forks nothing: 31 -> 7 ms each
# (Spark's floor into Delta, 50,000-row batches: 490 -> 420 ms a batch; docs/performance.md, "Tuning").
# Its rename is atomic on a local disk and on HDFS, as FileContext's is; it only checks that a batch's
# file is not there yet before renaming, where FileContext's rename refuses one atomically, which matters
# to two queries writing one checkpoint at once, something Spark refuses anyway within a session.
LOCAL_TUNING: dict[str, str] = {
    CHECKPOINT_FILE_MANAGER: (
        "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager"
    ),
    # Python task workers forked from pyspark's daemon less its traceback when the JVM closes a worker's
    # socket first (sqlqueue.spark.daemon): over Unix sockets every show() of a Python UDF's rows printed
    # one. Local only: there the workers run this process's interpreter, which has sqlqueue.
    DAEMON_MODULE: "sqlqueue.spark.daemon",
}


@dataclass(frozen=True)
class Costly:
    """A setting whose default costs seconds per micro-batch, and how to tell it is left so."""

    key: str
    advice: str
    is_costly: Callable[[str | None], bool]


COSTLY: tuple[Costly, ...] = (
    Costly(
        SNAPSHOT_PARTITIONS,
        "set it to 1 (or 2): Delta's default of 50 tasks per state rebuild cost "
        "7-10 s per micro-batch with txnAppId/txnVersion or writeStream.format('delta') on 2 cores",
        lambda value: value is None or int(value) > 8,
    ),
    Costly(
        SESSION_TIME_ZONE,
        "set it to UTC: Delta re-checks the table's full state on every commit of a "
        "session that is not in UTC (a plain append took 2.5x as long)",
        lambda value: value is not None and value.upper() not in ("UTC", "ETC/UTC", "Z"),
    ),
)

_warned = False


def costly_settings(get: Callable[[str], str | None]) -> list[str]:
    """One line per setting in ``COSTLY`` that ``get`` (a session's conf lookup) shows left costly."""
    return [f"{c.key} = {get(c.key) or '(unset)'}: {c.advice}" for c in COSTLY if c.is_costly(get(c.key))]


def untuned_warning(lines: list[str]) -> str:
    """The warning for a session whose settings ``lines`` (costly_settings) cost seconds per micro-batch."""
    return (
        "this SparkSession leaves settings that cost seconds per micro-batch (sqlqueue's build_session sets "
        'them; docs: Performance, "Tuning Spark and Delta"):\n  ' + "\n  ".join(lines)
    )


def warn_once_if_untuned() -> None:
    """Warn, once per process, about costly settings of the active SparkSession, if there is one.

    Called where the source runs in the application's own Python process (its registration), so
    Spark's Python workers, which have no session, never warn.
    """
    global _warned
    if _warned:
        return
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    lines = costly_settings(lambda key: spark.conf.get(key, None)) if spark is not None else []
    if lines:
        _warned = True
        log.warning("%s", untuned_warning(lines))
