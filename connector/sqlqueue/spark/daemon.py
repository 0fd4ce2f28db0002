"""The daemon a local Spark forks its Python task workers from: pyspark's own, without a traceback
when the JVM hangs up first.

A worker's last act is to flush its output to the JVM. Where the JVM has closed the worker's socket by
then (a ``show()`` or ``limit`` that stopped reading a Python UDF's rows, a query stopped in the middle
of a micro-batch), the flush fails, and pyspark's daemon prints the ``BrokenPipeError`` to the console
before the worker exits. pyspark's worker itself treats a write to a socket the JVM closed as nothing
to report (``pyspark.util.handle_worker_exception``); over loopback TCP the same flush mostly goes
through unnoticed, over Unix sockets (``tuning.UNIX_SOCKETS``) it fails every time. Here the worker
exits as pyspark's daemon would, with status 1, and prints nothing: the JVM no longer reads it, and
reports its own errors.

Spark runs it as ``python -m sqlqueue.spark.daemon <worker module>`` when ``spark.python.daemon.module``
names it (SPARK-22959, the setting's purpose: "pluggable workarounds" in the worker processes), which
``tuning.LOCAL_TUNING`` does on a local master. The Python processes Spark plans with on the driver are
forked from pyspark's daemon whatever the setting says. This module imports only pyspark's daemon and
sqlqueue's core: the daemon forks after it, and must not have started threads by then.
"""

from __future__ import annotations

import os
from typing import Any

from pyspark import daemon

_pyspark_worker = daemon.worker


def worker(*args: Any, **kwargs: Any) -> int:
    # Whatever pyspark's manager passes its worker (4.2: the socket, and whether it authenticated).
    try:
        return _pyspark_worker(*args, **kwargs)
    except BrokenPipeError:
        os._exit(1)


daemon.worker = worker

if __name__ == "__main__":
    daemon.manager()
