"""Spark adapters over the queue core. Only this package imports pyspark.

The data source is imported on first use (``sqlqueue.spark.register``), so importing a module of this
package loads no more than that module needs (and ``quiet``, a few lines of the standard library's): Spark
starts ``sqlqueue.spark.daemon`` before it forks Python workers, which must not have started Arrow's threads
by then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .quiet import quiet_planning

if TYPE_CHECKING:
    from .source import SqlQueueDataSource, register

__all__ = ["SqlQueueDataSource", "register"]

# Spark's driver plans with Python processes forked from pyspark's daemon; each that serves sqlqueue's
# data source imports this package before it runs anything else of sqlqueue's. There this keeps their
# idle workers' last flush quiet (quiet.py); anywhere else it does nothing.
quiet_planning()


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import source

        return getattr(source, name)
    raise AttributeError(f"module 'sqlqueue.spark' has no attribute {name!r}")
