"""The test targets' Spark home: pyspark.zip's modules load from the bytecode put beside them."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from tests.support.spark_home import compiled_zip


def test_modules_of_the_compiled_zip_load_from_their_bytecode_and_name_the_zip_in_tracebacks(tmp_path):
    source = tmp_path / "source.zip"
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("pkg/__init__.py", "")
        archive.writestr("pkg/mod.py", "def fail():\n    raise ValueError('from the zip')\n")
    final = tmp_path / "home" / "pyspark.zip"
    final.parent.mkdir()
    compiled_zip(source, final, final)

    probe = "\n".join(
        ["import traceback, pkg.mod as m", "try:", "    m.fail()", "except ValueError:", "    print(m.__file__)"]
        + ["    traceback.print_exc()"]
    )
    run = subprocess.run([sys.executable, "-c", probe], env={"PYTHONPATH": str(final)}, capture_output=True, text=True)

    assert run.stdout.strip() == f"{final}/pkg/mod.pyc"
    assert f'File "{final}/pkg/mod.py", line 2, in fail' in run.stderr
