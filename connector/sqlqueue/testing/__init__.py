"""sqlqueue.testing: a pytest plugin for pipelines built on sqlqueue, enabled by installing the package
(a ``pytest11`` entry point; ``-p no:sqlqueue`` turns it off, ``-p sqlqueue.testing`` names it).

Fixtures: ``spark`` (one local SparkSession for the run, with Delta, the micro-batch tuning and quiet
logs; Spark Connect when ``SPARK_REMOTE`` is set), ``make_queue`` (throwaway queues on SQLite, or on
the database of ``--sqlqueue-db``), ``postgres_server``, ``delta_path`` and ``checkpoint_path``.
Helpers: ``run_to_end``, ``run_until``, ``wait_until``, ``assert_each_key_once``, ``assert_queue_holds``,
``assert_dead_lettered`` and ``assert_frame_equal``. Settings: see ``sqlqueue.testing.settings``.

Importing it imports no Spark: the session starts in the ``spark`` fixture, the helpers import
pyspark (and chispa) when called.
"""

from __future__ import annotations

import pytest

from .checks import assert_dead_lettered, assert_each_key_once, assert_frame_equal, assert_queue_holds
from .fixtures import checkpoint_path, delta_path, make_queue, postgres_server, spark, sqlqueue_database
from .queues import Database, QueueFactory, ScratchQueue
from .settings import add_options
from .streams import run_to_end, run_until, wait_until

__all__ = [
    "Database",
    "QueueFactory",
    "ScratchQueue",
    "assert_dead_lettered",
    "assert_each_key_once",
    "assert_frame_equal",
    "assert_queue_holds",
    "checkpoint_path",
    "delta_path",
    "make_queue",
    "postgres_server",
    "run_to_end",
    "run_until",
    "spark",
    "sqlqueue_database",
    "wait_until",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)
