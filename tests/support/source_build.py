"""One build of the project's source tree at a time. pip builds the project in place (setuptools writes
build/ and the egg-info into the tree), and make test's workers may each start a build at once."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def building_from_source() -> Iterator[None]:
    """Hold the tree's build lock (a file lock, released with the process should it die)."""
    lock = ROOT / ".cache" / "source-build.lock"
    lock.parent.mkdir(exist_ok=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield
