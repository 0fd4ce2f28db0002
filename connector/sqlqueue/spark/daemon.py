"""The daemon a local Spark forks its Python task workers from: pyspark's own, without a traceback
when the JVM hangs up first; and the same quiet for the processes Spark plans with.

A worker's last act is to flush its output to the JVM. Where the JVM has closed the worker's socket by
then (a ``show()`` or ``limit`` that stopped reading a Python UDF's rows, a query stopped in the middle
of a micro-batch, an idle worker closed), the flush fails, and pyspark's daemon prints the
``BrokenPipeError`` to the console before the worker exits. pyspark's worker itself treats a write to a
socket the JVM closed as nothing to report (``pyspark.util.handle_worker_exception``); over loopback TCP
the same flush mostly goes through unnoticed, over Unix sockets (``tuning.UNIX_SOCKETS``) it fails every
time. Here the worker exits as pyspark's daemon would, with status 1, and prints nothing: the JVM no
longer reads it, and reports its own errors.

Spark runs it as ``python -m sqlqueue.spark.daemon <worker module>`` when ``spark.python.daemon.module``
names it (SPARK-22959, the setting's purpose: "pluggable workarounds" in the worker processes), which
``tuning.LOCAL_TUNING`` does on a local master. The Python processes Spark plans with on the driver
(``pyspark.sql.worker.*``: the data source looked up, created, its reads planned, its writes committed)
are forked from pyspark's daemon whatever the setting says, and Spark closes their idle workers a minute
after their last use (``PythonWorkerFactory``'s idle timeout): a stream that ran a minute printed one
traceback for each. Each of those processes imports this package (the data source looked up, or a data
source, reader or writer unpickled) before it runs anything else of sqlqueue's, so the package's
``__init__`` runs ``quiet_planning`` there.
This module imports nothing of Spark's until it runs as the daemon, which forks after its imports and
must not have started threads by then.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

PYSPARK_DAEMON = "pyspark.daemon"
# The package of the modules Spark's driver plans with (create_data_source, plan_data_source_read,
# python_streaming_sink_runner, ...), which its daemon is started with as its first argument.
PLANNING = "pyspark.sql.worker."


def quiet(worker: Callable[..., int]) -> Callable[..., int]:
    """pyspark's daemon's worker (4.2: called with the socket, and whether it authenticated), ending the
    process with status 1 and no traceback when its flush finds the socket closed."""

    def quiet_worker(*args: Any, **kwargs: Any) -> int:
        try:
            return worker(*args, **kwargs)
        except BrokenPipeError:
            os._exit(1)

    return quiet_worker


def quiet_planning() -> None:
    """In a process forked from pyspark's daemon to plan (this one's ``__main__``), every request after
    the one running now goes through ``quiet``: the daemon's loop looks its worker up again for each."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if main is None or spec is None or spec.name != PYSPARK_DAEMON or not sys.argv[1:2]:
        return
    if sys.argv[1].startswith(PLANNING):
        names = vars(main)  # the daemon's globals, where its loop looks ``worker`` up
        names["worker"] = quiet(names["worker"])


if __name__ == "__main__":
    from pyspark import daemon

    daemon.worker = quiet(daemon.worker)
    daemon.manager()
