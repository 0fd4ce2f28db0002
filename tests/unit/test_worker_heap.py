"""A task's reused worker freezes what it held before its first task, so the collections Spark runs after
each task walk only what came later. Each case runs in a process of its own: a frozen object stays
frozen for the life of its process, this test session's included. ``gc.get_objects()`` leaves frozen
objects out (CPython)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlqueue.spark.heap import REUSED

CONNECTOR = Path(__file__).resolve().parents[2] / "connector"


def run(code: str, reused: bool = True) -> str:
    """What ``code`` prints, run after ``import gc`` and the heap module in a fresh Python process, as a
    worker Spark reuses (``reused``) or not."""
    env = {k: v for k, v in os.environ.items() if k != REUSED}
    env.update({"PYTHONPATH": str(CONNECTOR), **({REUSED: "1"} if reused else {})})
    prelude = "import gc, weakref\nfrom sqlqueue.spark.heap import freeze_worker_heap\n"
    done = subprocess.run([sys.executable, "-c", prelude + code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_first_task_freezes_what_the_worker_already_held():
    code = "held = [object()]\nfreeze_worker_heap()\nprint(any(o is held for o in gc.get_objects()))"
    assert run(code) == "False"


def test_garbage_from_before_the_first_task_is_collected_not_frozen():
    code = (
        "gc.disable()\n"  # only the collection under test may find the cycle
        "class Node: pass\n"
        "a, b = Node(), Node()\n"
        "a.peer, b.peer = b, a\n"
        "gone = weakref.ref(a)\n"
        "del a, b\n"
        "freeze_worker_heap()\n"
        "print(gone() is None)"
    )
    assert run(code) == "True"


def test_a_later_task_freezes_nothing_more():
    code = (
        "freeze_worker_heap()\n"
        "frozen = gc.get_freeze_count()\n"
        "made = [[i] for i in range(1000)]\n"
        "freeze_worker_heap()\n"
        "print(gc.get_freeze_count() == frozen, any(o is made for o in gc.get_objects()))"
    )
    assert run(code) == "True True"


def test_a_worker_spark_does_not_reuse_freezes_nothing():
    assert run("freeze_worker_heap()\nprint(gc.get_freeze_count())", reused=False) == "0"
