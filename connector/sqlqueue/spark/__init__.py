"""Spark adapters over the queue core. Only this package imports pyspark."""

from .source import SqlQueueDataSource, register

__all__ = ["SqlQueueDataSource", "register"]
