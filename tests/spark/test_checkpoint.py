"""A kill during the first offset write leaves a temporary file that Spark 4.2 refuses to start on;
the jobs delete it before they start, and nothing else."""

from __future__ import annotations

from sqlqueue.spark.checkpoint import clear_interrupted_start


def interrupted(tmp_path):
    offsets = tmp_path / "checkpoint" / "offsets"
    offsets.mkdir(parents=True)
    (offsets / ".0.5d1c.tmp").write_text("v1\n{")
    (offsets / "..0.5d1c.tmp.crc").write_bytes(b"crc")
    return tmp_path / "checkpoint"


def start(spark, checkpoint):
    stream = spark.readStream.format("rate").option("rowsPerSecond", 1).load()
    return stream.writeStream.format("noop").option("checkpointLocation", str(checkpoint)).trigger(availableNow=True)


def test_a_query_starts_on_a_checkpoint_whose_first_offset_write_was_interrupted(spark, tmp_path):
    checkpoint = interrupted(tmp_path)
    assert sorted(clear_interrupted_start(str(checkpoint))) == ["..0.5d1c.tmp.crc", ".0.5d1c.tmp"]
    query = start(spark, checkpoint).start()
    query.awaitTermination()
    assert query.exception() is None
    assert (checkpoint / "offsets" / "0").exists()


def test_a_checkpoint_with_a_logged_batch_is_left_to_spark(tmp_path):
    checkpoint = interrupted(tmp_path)
    (checkpoint / "offsets" / "0").write_text("v1\n{}")
    assert clear_interrupted_start(f"file://{checkpoint}") == []
    assert (checkpoint / "offsets" / ".0.5d1c.tmp").exists()


def test_a_remote_checkpoint_is_left_to_spark():
    assert clear_interrupted_start("s3a://bucket/checkpoints/q") == []
