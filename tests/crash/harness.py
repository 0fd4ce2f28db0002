"""Start a Spark job in a process session of its own and SIGKILL the whole session.

A process group is not enough: PySpark's daemon moves itself into a group of its own
(``os.setpgid(0, 0)`` in pyspark/daemon.py), so the kill goes to every process of the session.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

RUN_TIMEOUT = 240


def kill_session(sid: int) -> None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getsid(int(entry.name)) == sid:
                    os.kill(int(entry.name), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue


def run(script: Path, env: dict[str, str], log: Path, kill_when: Callable[[float], bool] | None = None) -> bool:
    """Run ``script`` until it exits (False) or ``kill_when(seconds since start)`` says so (True)."""
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, str(script)], stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYSPARK_PYTHON": sys.executable, **env},
        )
    started = time.monotonic()
    try:
        while proc.poll() is None:
            elapsed = time.monotonic() - started
            if elapsed > RUN_TIMEOUT:
                raise TimeoutError(f"{script.name} ran over {RUN_TIMEOUT}s; see {log}")
            if kill_when is not None and kill_when(elapsed):
                kill_session(proc.pid)
                proc.wait()
                return True
            time.sleep(0.05)
        if proc.returncode != 0:
            raise RuntimeError(f"{script.name} failed with exit code {proc.returncode}; see {log}")
        return False
    finally:
        if proc.poll() is None:
            kill_session(proc.pid)
            proc.wait()
        kill_session(proc.pid)  # orphans of the session (Python workers) that outlived the leader
