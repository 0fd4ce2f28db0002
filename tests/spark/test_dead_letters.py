"""Dead letters in Delta on every engine: failed rows move out of the queue exactly once, with what the
queue knew of them, and `redrive` sends them back exactly once."""

from __future__ import annotations

import datetime as dt

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from sqlqueue.cli import main as cli
from sqlqueue.deadletters import Move
from sqlqueue.options import QueueAddress
from sqlqueue.queue import FAILED_OUTCOME, Ack
from sqlqueue.schema import Column
from sqlqueue.spark.deadletters import DeadLetterMover, redrive
from tests.support.engines import config_file

pytestmark = pytest.mark.spark
DOMAIN = (Column("payload", "text"), Column("n", "bigint"), Column("due", "timestamp"))
DEAD_LETTER_DDL = (
    "id BIGINT, payload STRING, n BIGINT, due TIMESTAMP, attempts INT, last_error STRING, enqueued_at TIMESTAMP, "
    "failed_at TIMESTAMP, queue STRING, consumer STRING, redrive_id STRING, redriven_at TIMESTAMP"
)
WHEN = dt.datetime(2024, 5, 17, 8, 30, 15, 250000, tzinfo=dt.timezone.utc)


def fail_rows(queue, count: int, consumer: str = "worker-7", seq: int = 1) -> list[int]:
    """Claim ``count`` rows and fail each through an acknowledgement, as a job's ack sink would."""
    queue.consuming.claim(consumer, seq, count, order="heap")
    ids = [
        r[0]
        for lo, hi in queue.consuming.partition_bounds(consumer, seq - 1, seq, 1)
        for rows in queue.consuming.read_claimed(consumer, seq - 1, seq, lo, hi, ["id"])
        for r in rows
    ]
    with queue.transaction() as cur:
        queue.consuming.apply_acks(
            cur, [Ack((i,), FAILED_OUTCOME, f"bad row {i}") for i in ids], keep=False, max_attempts=5
        )
    return sorted(ids)


def failed_rows(spark, queue):
    """The failed rows as the queue table holds them, read with plain SQL, in the agreed Delta schema."""
    d = queue.engine
    names = ["id", "payload", "n", "due", "attempts", "last_error", "enqueued_at", "completed_at", "consumer"]
    with queue.transaction() as cur:
        cur.execute(
            f"SELECT {', '.join(d.quote(n) for n in names)} FROM {d.table(queue.table)} "
            f"WHERE {d.quote('state')} = 'failed'"
        )
        found = cur.fetchall()
    times = {names.index(n) for n in ("due", "enqueued_at", "completed_at")}
    rows = [
        tuple(d.decode_timestamp(v) if i in times else v for i, v in enumerate(r[:-1]))
        + (str(queue.table), r[-1], None, None)
        for r in found
    ]
    return spark.createDataFrame(rows, DEAD_LETTER_DDL)


def new_queue(engine, ready: int = 5, failed: int = 25):
    queue = engine.new_queue(domain=DOMAIN)
    queue.enqueue([{"payload": f"p{i}", "n": i, "due": WHEN} for i in range(failed + ready)])
    return queue


def mover(engine, queue, target, mover_id: str = "/checkpoints/orders", **kwargs) -> DeadLetterMover:
    address = QueueAddress(engine.connection(), queue.table)
    return DeadLetterMover(address, str(target), mover_id, chunk=10, every_seconds=0, **kwargs)


def test_dead_letters_in_delta_equal_the_failed_rows_and_leave_the_queue(spark, engine, tmp_path):
    queue = new_queue(engine)
    fail_rows(queue, 25)
    expected = failed_rows(spark, queue)
    moving = mover(engine, queue, tmp_path / "dead")
    try:
        assert moving.move(spark) == 25
    finally:
        moving.close()
    moved = spark.read.format("delta").load(str(tmp_path / "dead"))
    assert_df_equality(moved, expected, ignore_row_order=True)
    assert {s: v["rows"] for s, v in queue.inspection.stats().items()} == {"ready": 5}


class Interrupted(Exception):
    pass


class StopsOnce(DeadLetterMover):
    """A mover that fails once at a chosen step of its second move, as a crash there would leave it."""

    def __init__(self, *args, step: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.step, self.moves = step, 0

    def before_append(self, move: Move) -> None:
        self.moves += 1
        if self.step == "append" and self.moves == 2:
            raise Interrupted

    def before_delete(self, move: Move) -> None:
        if self.step == "delete" and self.moves == 2:
            raise Interrupted


@pytest.mark.parametrize("step", ["append", "delete"])
def test_a_move_stopped_between_its_steps_is_finished_by_the_next_mover_once(spark, engine, tmp_path, step):
    queue = new_queue(engine)
    ids = fail_rows(queue, 25)
    stopping = mover(engine, queue, tmp_path / "dead")
    stopping.__class__ = StopsOnce
    stopping.step, stopping.moves = step, 0
    with pytest.raises(Interrupted):
        stopping.move(spark)
    stopping.close()
    restarted = mover(engine, queue, tmp_path / "dead")  # a new process: nothing known but the tables
    try:
        restarted.move(spark)
    finally:
        restarted.close()
    moved = [r.id for r in spark.read.format("delta").load(str(tmp_path / "dead")).select("id").collect()]
    assert sorted(moved) == ids
    assert "failed" not in queue.inspection.stats()


def test_requeue_leaves_rows_a_move_has_tagged(engine):
    queue = new_queue(engine, ready=0, failed=4)
    fail_rows(queue, 4)
    dead = mover(engine, queue, "/unused")._dead_letters()
    dead.mark(1, 3)
    assert queue.upkeep.requeue_failed() == 1
    assert queue.inspection.stats()["failed"]["rows"] == 3


def test_redrive_sends_picked_dead_letters_back_once_and_marks_them(spark, engine, tmp_path):
    queue = new_queue(engine, ready=0, failed=30)
    ids = fail_rows(queue, 30)
    target = str(tmp_path / "dead")
    moving = mover(engine, queue, target)
    moving.move(spark)
    moving.close()

    done = redrive(spark, queue, target, where="n % 2 = 0", limit=10, chunk=4)
    assert [(r.rows, r.enqueued, r.in_queue, r.resumed) for r in done] == [(10, 10, 0, False)]
    table = spark.read.format("delta").load(target)
    redriven = table.where(F.col("redrive_id").isNotNull())
    assert sorted(r.id for r in redriven.select("id").collect()) == sorted(ids)[::2][:10]  # n 0, 2, 4, ...
    assert redriven.where(F.col("redriven_at").isNull()).count() == 0
    back = queue.inspection.peek(100, columns=["payload", "n", "dedup_key", "attempts"])
    assert sorted(r["n"] for r in back) == sorted(r.n for r in redriven.select("n").collect())
    assert {r["attempts"] for r in back} == {0}
    assert redrive(spark, queue, target, where="n % 2 = 0", limit=10, chunk=4)[0].rows == 5  # the rest of them


def test_redrive_command_reports_what_it_sent(spark, engine, tmp_path, monkeypatch, capsys):
    queue = new_queue(engine, ready=0, failed=6)
    fail_rows(queue, 6)
    target = str(tmp_path / "dead")
    moving = mover(engine, queue, target)
    moving.move(spark)
    moving.close()
    conf = config_file(engine, tmp_path, monkeypatch)
    assert cli(["redrive", "-c", conf, "--queue", str(queue.table), "--from-delta", target, "--limit", "4"]) == 0
    out = capsys.readouterr()
    assert "4 dead letters" in out.out and "4 enqueued" in out.out, out
    assert "redriven into" in out.err
    assert queue.inspection.count_ready() == 4
