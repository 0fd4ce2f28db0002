"""sqlqueue: SQL Server, PostgreSQL and SQLite queue tables as a Spark structured-streaming source and sink.

The core (``Queue`` and the option and error types) imports no Spark. ``register`` and ``build_session``
live in ``sqlqueue.spark`` and are imported on first use, so ``import sqlqueue`` stays cheap on a host
without pyspark (the command line, a DBA's shell).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import ConfigError, DatabaseError, MissingDriverError, SchemaError, SqlQueueError
from .options import OPTIONS, SinkOptions, SourceOptions
from .queue import Queue

if TYPE_CHECKING:
    from .spark.session import build_session
    from .spark.source import register

__version__ = "0.2.0"

__all__ = [
    "OPTIONS",
    "ConfigError",
    "DatabaseError",
    "MissingDriverError",
    "Queue",
    "SchemaError",
    "SinkOptions",
    "SourceOptions",
    "SqlQueueError",
    "__version__",
    "build_session",
    "register",
]

_SPARK_NAMES = {"register": "sqlqueue.spark.source", "build_session": "sqlqueue.spark.session"}


def __getattr__(name: str) -> Any:
    if name in _SPARK_NAMES:
        import importlib

        return getattr(importlib.import_module(_SPARK_NAMES[name]), name)
    raise AttributeError(f"module 'sqlqueue' has no attribute {name!r}")
