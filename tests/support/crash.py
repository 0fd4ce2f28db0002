"""Run a Spark job in its own process session and kill it with SIGKILL at a chosen moment.

A kill is either timed (after N seconds) or aimed: the job drops a marker file when it enters a
window (it then pauses there), and the harness kills it a random moment after the marker appears.
Every process of the job's session dies, Spark's Python daemon and workers included.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JOB_TIMEOUT = 240


@dataclass
class Outcome:
    killed: bool
    returncode: int | None
    log: str


def session_members(sid: int) -> list[int]:
    """The live processes of session ``sid`` (zombies left to an init that does not reap them are
    dead already and do not count)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) != sid:
                continue
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except (ProcessLookupError, PermissionError, FileNotFoundError):
            continue
        if state != "Z":
            members.append(int(entry.name))
    return members


def kill_session(sid: int) -> None:
    """SIGKILL every process whose session is ``sid`` (process groups are not enough: PySpark's
    daemon moves itself into a group of its own)."""
    for pid in session_members(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue


def wait_for_session_end(sid: int, timeout: float = 30.0) -> None:
    """Kill what is left of the session and wait until none of it runs, so that the next run
    starts on a quiet machine (a killed job's orphans can still hold ports, files and locks)."""
    deadline = time.monotonic() + timeout
    while session_members(sid):
        if time.monotonic() > deadline:
            raise TimeoutError(f"processes of session {sid} still run {timeout:.0f} s after SIGKILL")
        kill_session(sid)
        time.sleep(0.05)


def run_job(
    script: Path,
    args: list[str],
    log: Path,
    *,
    kill_after: float | None = None,
    marker_dir: Path | None = None,
    window: str | None = None,
    rng: random.Random | None = None,
) -> Outcome:
    """Run the job; kill it ``kill_after`` seconds in, or soon after it enters ``window``."""
    # The project's root on the path, so that a job in tests/ imports from tests.support as the chaos jobs do.
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": path}
    if window:
        env["SQLQUEUE_TEST_PAUSE_AT"] = window
        env["SQLQUEUE_TEST_MARKERS"] = str(marker_dir)
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, str(script), *args], stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    started = time.monotonic()
    killed = False
    try:
        while proc.poll() is None:
            elapsed = time.monotonic() - started
            if elapsed > JOB_TIMEOUT:
                raise TimeoutError(f"job ran over {JOB_TIMEOUT}s; see {log}")
            timed_out = kill_after is not None and elapsed >= kill_after
            entered = window is not None and marker_dir is not None and any(marker_dir.glob(f"{window}*"))
            if timed_out or entered:
                if entered:
                    time.sleep((rng or random).uniform(0.0, 0.5))
                kill_session(proc.pid)
                killed = True
                break
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            kill_session(proc.pid)
        proc.wait()
        wait_for_session_end(proc.pid)
    for marker in marker_dir.glob("*") if marker_dir else ():
        marker.unlink()
    return Outcome(killed, None if killed else proc.returncode, log.read_text(errors="replace"))
