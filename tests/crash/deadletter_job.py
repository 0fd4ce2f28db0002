"""The crash tests' jobs for dead letters: queue_to_delta's own pipeline (the move), or `sqlqueue redrive`.

With SQLQUEUE_TEST_PAUSE_AT set, the job drops a marker file when it enters that window and pauses
there, so the test can kill it (the hooks are patched into this process, where foreachBatch and
the command run):
  marked      move: a chunk of failed rows is tagged, not appended to Delta yet
  appended    move: the chunk is in Delta, not deleted from the queue yet
  chosen      redrive: the rows are marked with a redrive id in Delta, no chunk sent yet
  sent        redrive: after the chunk named by SQLQUEUE_TEST_CHUNK was enqueued
  progress    no pause: a marker at the move (or chunk) named by SQLQUEUE_TEST_CHUNK, so a kill a
              random moment later lands anywhere in the work that follows
"""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path

from sqlqueue import cli
from sqlqueue import deadletters as core
from sqlqueue.spark import deadletters

PAUSE_AT = os.environ.get("SQLQUEUE_TEST_PAUSE_AT", "")
MARKERS = os.environ.get("SQLQUEUE_TEST_MARKERS", "")
CHUNK_AT = int(os.environ.get("SQLQUEUE_TEST_CHUNK", "1"))


def mark(window: str) -> None:
    Path(MARKERS, f"{window}-{os.getpid()}-{time.time_ns()}").touch()


def pause(window: str) -> None:
    if window == PAUSE_AT:
        mark(window)
        time.sleep(60)


def patch_mover() -> None:
    moves = 0

    def before_append(self, move) -> None:
        nonlocal moves
        moves += 1
        if PAUSE_AT == "progress" and moves == CHUNK_AT:
            mark("progress")
        if moves == CHUNK_AT:
            pause("marked")

    def before_delete(self, move) -> None:
        if moves == CHUNK_AT:
            pause("appended")

    deadletters.DeadLetterMover.before_append = before_append  # type: ignore[method-assign]
    deadletters.DeadLetterMover.before_delete = before_delete  # type: ignore[method-assign]


def patch_redrive() -> None:
    # Many chunks from a small table, on every engine (the chunk size travels in the redrive id; the
    # command passes none, and SQL Server's own default, 4,000, would make one chunk of it).
    deadletters.redrive = functools.partial(deadletters.redrive, chunk=100)
    chunks_done, send = core.Redrive.chunks_done, core.Redrive.send

    def chunks_done_then_pause(self) -> int:
        pause("chosen")
        return chunks_done(self)

    def send_then_pause(self, number, rows):
        sent = send(self, number, rows)
        if number + 1 == CHUNK_AT:
            if PAUSE_AT == "progress":
                mark("progress")
            pause("sent")
        return sent

    core.Redrive.chunks_done = chunks_done_then_pause  # type: ignore[method-assign]
    core.Redrive.send = send_then_pause  # type: ignore[method-assign]


def main() -> int:
    what, argv = sys.argv[1], sys.argv[2:]
    if what == "move":
        import importlib.util

        from sqlqueue.spark.jobs import run

        patch_mover()
        spec = importlib.util.spec_from_file_location(
            "queue_to_delta", Path(__file__).parents[2] / "jobs/queue_to_delta.py"
        )
        job = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(job)
        status = run(job.JOB, job.pipeline, argv)
    else:
        patch_redrive()
        status = cli.main(["redrive", *argv])
    print(f"JOB FINISHED {status}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
