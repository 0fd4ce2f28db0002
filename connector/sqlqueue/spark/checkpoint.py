"""Restarting from a checkpoint that a kill interrupted before its first offset was written.

Spark writes each offset and commit file to a hidden temporary file and then renames it. Spark 4.2
refuses to start a query for the first time while offsets/ or commits/ holds any file
(STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY, MicroBatchExecution.verifyNewCheckpointDirectory), so a
SIGKILL during the very first offset write leaves a checkpoint no restart can use until someone
deletes that temporary file by hand. Spark never reads temporary files: deleting them is what the
rename would have done had it run.
"""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import urlparse

log = logging.getLogger(__name__)

_LOGS = ("offsets", "commits")


def _local(checkpoint: str) -> Path | None:
    """The checkpoint as a local folder, or None for a remote file system (left to Spark)."""
    parsed = urlparse(checkpoint)
    if parsed.scheme in ("", "file"):
        return Path(parsed.path if parsed.scheme else checkpoint)
    return None


def clear_interrupted_start(checkpoint: str) -> list[str]:
    """Delete the temporary files of an offset or commit write that never finished, when no batch has
    been logged yet; returns the names deleted. A checkpoint with a logged batch is left to Spark."""
    root = _local(checkpoint)
    if root is None or not (root / "offsets").is_dir():
        return []
    if any(f.name.isdigit() for f in (root / "offsets").iterdir()):
        return []  # a query has run here: Spark resumes it and ignores temporary files
    stray = [f for name in _LOGS if (root / name).is_dir() for f in (root / name).iterdir() if _temporary(f.name)]
    for f in stray:
        f.unlink()
    if stray:
        log.warning("checkpoint %s: deleted %d files of an interrupted first offset write", checkpoint, len(stray))
    return [f.name for f in stray]


def _temporary(name: str) -> bool:
    # Hadoop's CheckpointFileManager names them .<file>.<uuid>.tmp (and its local file system adds .crc).
    return name.startswith(".") and ".tmp" in name
