"""sqlqueue doctor on real engines: a healthy queue passes, each deliberately broken one is named
with the statement that fixes it, and running that statement makes the finding go away."""

from __future__ import annotations

import sqlite3

import pytest

from sqlqueue import cli
from sqlqueue.doctor import OK, PROBLEM, examine
from sqlqueue.queue import Queue
from sqlqueue.schema import LAYOUT
from sqlqueue.testing import wait_until
from tests.support.engines import config_file
from tests.support.layouts import layout1_queue


def inspected(queue: Queue) -> Queue:
    return Queue(queue.spec, queue.table, inspecting=True)


def problems(queue: Queue, order: str = "fifo") -> dict[str, tuple[str, ...]]:
    looker = inspected(queue)
    try:
        return {f.check: f.fix for f in examine(looker, order) if f.severity == PROBLEM}
    finally:
        looker.close()


def drop(queue: Queue, index: str) -> str:
    """``index`` as DROP INDEX names it (SQL Server wants the table too: DROP INDEX ix ON t)."""
    return queue.engine.index_name(queue.table, index)


def run_fixes(queue: Queue, fixes) -> None:
    with queue.transaction() as cur:
        for sql in fixes:
            cur.execute(sql)


def test_a_queue_made_by_sqlqueue_has_no_problems(engine):
    """On Babelfish too: the doctor names it and judges none of the catalog values it reports without acting on."""
    assert problems(engine.new_queue()) == {}


@pytest.mark.parametrize("order", ["heap", "fifo"])
def test_the_doctor_changes_nothing_in_the_queue(engine, order):
    # On a server that ignores SET SHOWPLAN_XML ON the plan check would run the claim it asks about.
    queue = engine.new_queue()
    queue.enqueue([{"payload": p} for p in "abc"])
    problems(queue, order)
    assert {state: counts["rows"] for state, counts in queue.inspection.stats().items()} == {"ready": 3}


@pytest.mark.babelfish_gap("catalog", "index_names")
def test_missing_ready_and_claimed_indexes_are_problems_fixed_by_the_printed_statements(engine):
    queue = engine.new_queue()
    t = queue.table.name
    run_fixes(
        queue,
        [f"DROP INDEX {drop(queue, f'ix_{t}_ready')}", f"DROP INDEX {drop(queue, f'ix_{t}_claimed')}"],
    )
    found = problems(queue)
    assert set(found) == {"ready index", "claimed index"}
    assert f"ix_{t}_ready" in found["ready index"][0]
    run_fixes(queue, found["ready index"] + found["claimed index"])
    assert problems(queue) == {}


@pytest.mark.babelfish_gap("catalog", "index_names")
def test_an_index_for_another_claim_order_does_not_serve_this_one(engine):
    queue = engine.new_queue(order="pending")
    assert set(problems(queue, order="priority")) == {"ready index"}


def test_sqlite_without_wal_is_a_problem_fixed_by_the_printed_pragma(engine):
    if engine.name != "sqlite":
        pytest.skip("journal modes are SQLite's")
    queue = engine.new_queue()
    queue.close()
    conn = sqlite3.connect(queue.spec.param("path"))
    conn.execute("PRAGMA journal_mode=DELETE")
    found = problems(queue)
    assert found == {"journal mode": ("PRAGMA journal_mode = WAL",)}
    conn.execute(found["journal mode"][0])
    conn.close()
    assert problems(queue) == {}


def test_postgres_dead_tuple_build_up_is_a_problem_fixed_by_vacuum(engine):
    if engine.name != "postgres":
        pytest.skip("dead tuples are PostgreSQL's")
    queue = engine.new_queue()
    run_fixes(queue, [f"ALTER TABLE {queue.engine.table(queue.table)} SET (autovacuum_enabled = false)"])
    queue.enqueue([{"payload": str(i)} for i in range(1500)])
    queue.consuming.claim("c", 1, 1500, order=engine.order)
    queue.consuming.complete("c", 1)
    queue.conn.execute("SELECT pg_stat_force_next_flush()")
    queue.close()  # a backend flushes its statistics when it ends
    assert wait_until(lambda: "dead tuples" in problems(queue), timeout=20)
    fixes = problems(queue)["dead tuples"]
    assert fixes[0].startswith("VACUUM (ANALYZE)") and "autovacuum_vacuum_threshold" in fixes[1]
    for sql in fixes:
        queue.conn.execute(sql)  # VACUUM refuses to run inside a transaction
    queue.conn.execute("SELECT pg_stat_force_next_flush()")
    queue.close()
    assert wait_until(lambda: "dead tuples" not in problems(queue), timeout=20)


@pytest.mark.babelfish_gap("catalog", "index_names")
def test_doctor_command_prints_findings_and_fixes_and_fails_on_a_problem(engine, tmp_path, monkeypatch, capsys):
    queue = engine.new_queue()
    run_fixes(queue, [f"DROP INDEX {drop(queue, f'ix_{queue.table.name}_ready')}"])
    status = cli.main(["doctor", "-c", config_file(engine, tmp_path, monkeypatch), "--queue", str(queue.table)])
    out, err = capsys.readouterr()
    assert status == 1, err
    assert "PROBLEM  ready index: no index seeks the ready rows in fifo order" in out
    assert "CREATE INDEX IF NOT EXISTS" in out and out.rstrip().endswith("1 problem(s) found")


@pytest.mark.babelfish_gap("catalog", "index_names")
def test_doctor_reports_what_is_healthy_too(engine):
    looker = inspected(engine.new_queue())
    try:
        assert {f.check for f in examine(looker, "fifo") if f.severity == OK} >= {"ready index", "claimed index"}
    finally:
        looker.close()


def test_a_layout_1_table_is_a_problem_that_names_migrate(engine, tmp_path, monkeypatch, capsys):
    old = layout1_queue(engine)
    assert problems(old) == {"layout": ()}
    status = cli.main(["doctor", "-c", config_file(engine, tmp_path, monkeypatch), "--queue", str(old.table)])
    out, err = capsys.readouterr()
    assert (
        status == 1
        and (
            f"PROBLEM  layout: layout 1 is older than this sqlqueue's layout {LAYOUT}, so sources and sinks refuse to "
            "start: run `sqlqueue migrate` (`sqlqueue migrate --print` prints the script)\n"
        )
        in out
    ), err
