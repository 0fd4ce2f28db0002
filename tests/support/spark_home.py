"""Make a Spark home for the test targets whose pyspark.zip carries compiled bytecode (`make` builds it
into .cache and exports it as SPARK_HOME for the suites).

Spark puts $SPARK_HOME/python/lib/pyspark.zip first on the path of every Python process it starts (its
workers, the daemon, the Python Data Source's planners, the streaming source's runner). pip's pyspark
ships that zip with sources only, and Python cannot cache bytecode inside a zip, so each of those
processes compiles what it imports from source: importing pyspark.sql and a worker's modules took 1.1 s
from pip's zip here, 0.4 s from this one, as from site-packages. tests/spark/test_jobs.py ran in 74 s
instead of 84-89 s with it.

Everything else in this home is a link to the installed pyspark: the same jars, scripts and zip
contents. The bytecode is unchecked-hash (PEP 552): valid for this interpreter's version only, which
is the one that made it (another version compiles from the sources beside it, as before).
"""

from __future__ import annotations

import compileall
import py_compile
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import pyspark

ZIP = Path("python", "lib", "pyspark.zip")


def compiled_zip(source: Path, dest: Path, final: Path) -> None:
    """``source``'s files and each module's bytecode beside it (``name.pyc``, where zipimport looks),
    stored uncompressed (inflating cost more than it saved), written to ``dest``, which becomes ``final``."""
    with tempfile.TemporaryDirectory() as folder:
        with zipfile.ZipFile(source) as archive:
            archive.extractall(folder)
        # ddir: the file names tracebacks show are the zip's, as when the sources are compiled from it.
        done = compileall.compile_dir(
            folder,
            ddir=str(final),
            legacy=True,
            quiet=1,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
        if not done:
            raise SystemExit(f"could not compile every module of {source}")
        with zipfile.ZipFile(dest, "w", zipfile.ZIP_STORED) as archive:
            for path in sorted(Path(folder).rglob("*")):
                if path.is_file():
                    archive.write(path, path.relative_to(folder))


def _link_beside(installed: Path, made: Path, kept: tuple[str, ...]) -> None:
    """In ``made``, a link to each entry of ``installed`` but the one on the way to the zip (``kept``),
    a folder whose entries are linked the same way down to the zip's own folder."""
    made.mkdir(parents=True)
    for entry in installed.iterdir():
        if entry.name != kept[0]:
            (made / entry.name).symlink_to(entry)
    if len(kept) > 1:
        _link_beside(installed / kept[0], made / kept[0], kept[1:])


def build(home: Path) -> None:
    """``home``: links to every entry of the installed pyspark but its python/lib zip, compiled."""
    installed = Path(pyspark.__file__).resolve().parent
    part = home.with_name(home.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    _link_beside(installed, part, ZIP.parts)
    compiled_zip(installed / ZIP, part / ZIP, home / ZIP)
    shutil.rmtree(home, ignore_errors=True)
    part.rename(home)


if __name__ == "__main__":
    build(Path(sys.argv[1]).resolve())
