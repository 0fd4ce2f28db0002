"""One Spark Connect session for the Connect tests, in a process of its own.

A classic session and a Connect one cannot share a process: pyspark's builder refuses a Connect
session once a SparkContext runs (SESSION_ALREADY_EXIST, pyspark/sql/session.py), and a Connect
session turns every later ``pyspark.sql.functions`` call of the process into Connect's
(SPARK_CONNECT_MODE_ENABLED). The suite's ``spark`` fixture is classic, so each Connect test sends
its scenario, a module-level function taking the session first, to this process, which starts a
local Connect server (``build_session(remote="local[2]")``) once and keeps it for the whole run.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

_session: Any = None


def _start() -> None:
    global _session
    from sqlqueue.spark.session import build_session

    os.environ["PYSPARK_PYTHON"] = sys.executable
    _session = build_session("sqlqueue-connect-tests", remote="local[2]")


def _call(scenario: Callable[..., Any], args: tuple) -> Any:
    try:
        return scenario(_session, *args)
    except AssertionError:
        raise
    except Exception:  # Spark's exceptions do not all pickle: send the traceback as text
        raise RuntimeError(traceback.format_exc()) from None


class ConnectSession:
    """Runs scenarios on the Connect session of a child process."""

    def __init__(self) -> None:
        self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=_start)

    def run(self, scenario: Callable[..., Any], *args: Any) -> Any:
        """``scenario(session, *args)`` in the Connect process; its result, or its exception here."""
        return self._pool.submit(_call, scenario, args).result()

    def close(self) -> None:
        self._pool.shutdown()
