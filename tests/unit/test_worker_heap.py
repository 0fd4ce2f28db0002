"""A task's worker freezes what it held before its first task, so the collections Spark runs after each
task walk only what the tasks made since. Each case runs in a process of its own: a frozen object stays
frozen for the life of its process, this test session's included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONNECTOR = Path(__file__).resolve().parents[2] / "connector"


def run(code: str) -> str:
    """What ``code`` prints, run after ``import gc`` and the heap module in a fresh Python process."""
    env = {**os.environ, "PYTHONPATH": str(CONNECTOR)}
    prelude = "import gc, weakref\nfrom sqlqueue.spark.heap import freeze_worker_heap\n"
    done = subprocess.run([sys.executable, "-c", prelude + code], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_first_task_freezes_what_the_worker_already_held():
    code = "held = [object()]\nfreeze_worker_heap()\nprint(any(o is held for o in gc.get_objects()))"
    assert run(code) == "False"


def test_what_a_task_leaves_unreachable_is_still_collected():
    code = (
        "class Node: pass\n"
        "freeze_worker_heap()\n"
        "a, b = Node(), Node()\n"
        "a.peer, b.peer = b, a\n"
        "gone = weakref.ref(a)\n"
        "del a, b\n"
        "gc.collect()\n"
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
