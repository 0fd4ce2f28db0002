"""Spark's Python workers end without a traceback when the JVM has hung up first.

A worker's last act is to flush its output to the JVM. Where the JVM has closed the worker's socket by
then (a ``show()`` or ``limit`` that stopped reading a Python UDF's rows, a query stopped in the middle
of a micro-batch, an idle worker closed), the flush fails, and pyspark's daemon prints the
``BrokenPipeError`` to the console before the worker exits. pyspark's worker itself treats a write to a
socket the JVM closed as nothing to report (``pyspark.util.handle_worker_exception``); over loopback TCP
the same flush mostly goes through unnoticed, over Unix sockets (``tuning.UNIX_SOCKETS``) it fails every
time. ``quiet`` ends such a worker as pyspark's daemon would, with status 1, and prints nothing: the JVM
no longer reads it, and reports its own errors. The daemon raises the failed flush only with
``spark.python.daemon.killWorkerOnFlushFailure`` (on by default); turned off, it prints a message of its
own, which no wrapper reaches.

Two kinds of process take it. Task workers, forked from ``sqlqueue.spark.daemon`` on a local master. And
the processes Spark plans with on the driver (``pyspark.sql.worker.*``: a data source looked up and built,
its reads planned, its writes committed), which Spark forks from pyspark's daemon whatever
``spark.python.daemon.module`` says, and whose idle workers it closes a minute after their last use
(``PythonWorkerFactory``'s idle timeout): a session idle that long printed one traceback for each. Each of
those that serves sqlqueue's data source imports ``sqlqueue.spark`` on its first request, whose
``__init__`` runs ``quiet_planning``; a failure within that first request still prints.
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
    process with status 1 and no traceback when its flush finds the socket closed (with whatever error
    the worker was ending on: the JVM, gone, would not read it either)."""

    def quiet_worker(*args: Any, **kwargs: Any) -> int:
        try:
            return worker(*args, **kwargs)
        except BrokenPipeError:
            os._exit(1)

    return quiet_worker


def quiet_planning() -> None:
    """In a process forked from pyspark's daemon to plan (this one's ``__main__``), every request after
    the one running now goes through ``quiet``: the daemon's loop looks its worker up again for each.
    Anywhere else, and should pyspark's daemon have no ``worker`` to wrap, it does nothing."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    argument = sys.argv[1] if len(sys.argv) > 1 else ""
    if main is None or spec is None or spec.name != PYSPARK_DAEMON or not argument.startswith(PLANNING):
        return
    names = vars(main)  # the daemon's globals, where its loop looks ``worker`` up
    worker = names.get("worker")
    if callable(worker):
        names["worker"] = quiet(worker)
