"""sqlqueue.spark.quiet wraps pyspark's daemon's worker in the processes Spark plans with, and nowhere
else: not in task workers, not in a user's own program."""

from __future__ import annotations

import os
import sys
import types
from importlib.machinery import ModuleSpec

import pytest

from sqlqueue.spark.quiet import quiet, quiet_planning


def worker(sock: object, authenticated: bool) -> int:
    return 0


def running(monkeypatch, main: str, argument: str) -> types.ModuleType:
    """This process as if ``python -m <main> <argument>`` had started it."""
    module = types.ModuleType("__main__")
    module.__spec__ = ModuleSpec(main, None)
    module.worker = worker
    monkeypatch.setitem(sys.modules, "__main__", module)
    monkeypatch.setattr(sys, "argv", [f"{main}.py", argument])
    return module


def test_a_planning_process_forked_from_pyspark_s_daemon_gets_a_quiet_worker(monkeypatch):
    main = running(monkeypatch, "pyspark.daemon", "pyspark.sql.worker.create_data_source")
    quiet_planning()
    assert main.worker is not worker
    assert main.worker(None, True) == 0


@pytest.mark.parametrize(
    ("main", "argument"),
    [
        ("pyspark.daemon", "pyspark.worker"),  # a task worker: a cluster's executors keep pyspark's daemon
        ("sqlqueue.spark.daemon", "pyspark.worker"),  # a local task worker, quiet already
        ("jobs.queue_to_delta", "pyspark.sql.worker.create_data_source"),  # a program of the user's
    ],
)
def test_any_other_process_is_left_as_it_is(monkeypatch, main, argument):
    module = running(monkeypatch, main, argument)
    quiet_planning()
    assert module.worker is worker


def test_a_quiet_worker_ends_the_process_with_status_1_when_the_jvm_has_hung_up(monkeypatch):
    def hung_up(sock: object, authenticated: bool) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def exit_with(status: int) -> None:
        raise SystemExit(f"exit {status}")

    monkeypatch.setattr(os, "_exit", exit_with)
    with pytest.raises(SystemExit, match="exit 1"):
        quiet(hung_up)(None, True)
