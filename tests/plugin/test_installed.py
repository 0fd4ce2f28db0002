"""Installed is registered: in a fresh virtual environment holding only the built wheel, a plain
SparkSession finds format("sqlqueue") with no registration call (pyspark 4 registers the DefaultSource of
the installed module pyspark_sqlqueue), locally and through a Spark Connect server whose start-up runs
no sqlqueue code."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run, user_environment

pytestmark = [pytest.mark.spark, pytest.mark.venv]

# A user's script: a queue made with the command line, then a batch write, a streaming write and a
# streaming read through format("sqlqueue"), in a session that never calls sqlqueue.register.
SCRIPT = """
import sys
from pyspark.sql import SparkSession

folder, remote = sys.argv[1], sys.argv[2]
builder = SparkSession.builder.remote(remote) if remote != "-" else SparkSession.builder.master("local[2]")
spark = builder.getOrCreate()
url = f"sqlite:///{folder}/queue.db"

spark.createDataFrame([(f"p{i}",) for i in range(5)], "payload string").write.format("sqlqueue").mode(
    "append"
).option("url", url).option("queue", "orders").save()

written = (
    spark.readStream.format("parquet").schema("payload string").load(f"{folder}/incoming")
    .writeStream.format("sqlqueue").option("url", url).option("queue", "orders")
    .option("checkpointLocation", f"{folder}/checkpoint-in").trigger(availableNow=True).start()
)
written.awaitTermination()

read = (
    spark.readStream.format("sqlqueue").option("url", url).option("queue", "orders").load()
    .select("payload").writeStream.format("parquet").option("path", f"{folder}/out")
    .option("checkpointLocation", f"{folder}/checkpoint-out").trigger(availableNow=True).start()
)
read.awaitTermination()
print(sorted(r.payload for r in spark.read.parquet(f"{folder}/out").collect()))
"""
EXPECTED = str(sorted([f"p{i}" for i in range(5)] + [f"q{i}" for i in range(3)]))


def prepare(installed: Path, folder: Path) -> Path:
    """The queue (by the installed command line) and the streaming write's input files."""
    run(installed / "sqlqueue", "create", "--url", f"sqlite:///{folder}/queue.db", "--queue", "orders")
    incoming = ("import pyarrow as pa, pyarrow.parquet as pq, sys; "
                "pq.write_table(pa.table({'payload': [f'q{i}' for i in range(3)]}), sys.argv[1])")  # fmt: skip
    (folder / "incoming").mkdir()
    run(installed / "python", "-c", incoming, folder / "incoming" / "part-0.parquet")
    script = folder / "user.py"
    script.write_text(SCRIPT)
    return script


def test_an_installed_sqlqueue_is_found_by_a_plain_session_with_no_registration(installed, tmp_path):
    script = prepare(installed, tmp_path)
    done = run(installed / "python", script, tmp_path, "-", cwd=tmp_path, env=user_environment(installed))
    assert done.stdout.strip().splitlines()[-1] == EXPECTED, done.stdout


def test_an_installed_sqlqueue_is_found_through_a_spark_connect_server(installed, tmp_path):
    """A local Connect server, started by the client's builder with no sqlqueue code in its start-up."""
    script = prepare(installed, tmp_path)
    done = run(installed / "python", script, tmp_path, "local[2]", cwd=tmp_path, env=user_environment(installed))
    assert done.stdout.strip().splitlines()[-1] == EXPECTED, done.stdout
