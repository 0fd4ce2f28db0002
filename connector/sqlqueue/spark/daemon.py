"""The daemon a local Spark forks its Python task workers from: pyspark's own, with its worker ending
quietly when the JVM has hung up first (quiet.py).

Spark runs it as ``python -m sqlqueue.spark.daemon <worker module>`` when ``spark.python.daemon.module``
names it (SPARK-22959, the setting's purpose: "pluggable workarounds" in the worker processes), which
``tuning.LOCAL_TUNING`` does on a local master. It imports only pyspark's daemon and sqlqueue's
``quiet``: the daemon forks after its imports, and must not have started threads by then.
"""

from __future__ import annotations

from pyspark import daemon

from .quiet import quiet

if __name__ == "__main__":
    daemon.worker = quiet(daemon.worker)
    daemon.manager()
