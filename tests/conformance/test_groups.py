"""Message groups on every engine: a group's rows are claimed in order, one claim at a time, never while
another of its rows is in flight or waits for a retry; different groups are claimed side by side."""

from __future__ import annotations

import threading
from collections import defaultdict

import pytest

from sqlqueue import layouts
from sqlqueue.connection import parse_connection
from sqlqueue.errors import DatabaseError, SchemaError
from sqlqueue.groups import Grouping
from sqlqueue.queue import Ack, Queue
from sqlqueue.schema import Column

DOMAIN = (Column("account", "string"), Column("payload", "text"))


def grouped_queue(engine):
    return engine.new_queue(DOMAIN, group="account")


def fill(queue, accounts: list[str | None]) -> None:
    """One row per item, in order: its account, and a payload numbering the account's rows from 0."""
    seen: dict[str | None, int] = defaultdict(int)
    rows = []
    for account in accounts:
        rows.append({"account": account, "payload": str(seen[account])})
        seen[account] += 1
    queue.enqueue(rows)


def claim(queue, engine, consumer: str, seq: int, limit: int = 100, per_group: int = 2) -> int:
    return queue.consuming.claim(consumer, seq, limit, order=engine.order, groups=Grouping("account", per_group))


def tasks(queue, consumer: str, after: int, upto: int, parts: int, columns: list[str]) -> list[list[tuple]]:
    """The rows of the claims, read task by task as a grouped source plans them, each in its read order."""
    grouped = ("account", (("id", "ASC"),))
    return [
        [
            row
            for chunk in queue.consuming.read_claimed(consumer, after, upto, lo, hi, columns, grouped=grouped)
            for row in chunk
        ]
        for lo, hi in queue.consuming.partition_bounds(consumer, after, upto, parts, "account")
    ]


def held(queue, consumer: str, after: int, upto: int) -> list[tuple]:
    """(account, number within the account) of the rows the claims hold, task by task."""
    return [(a, int(p)) for task in tasks(queue, consumer, after, upto, 2, ["account", "payload"]) for a, p in task]


def test_a_claim_takes_at_most_per_group_rows_of_each_group_in_order(engine):
    queue = grouped_queue(engine)
    fill(queue, ["a", "a", "a", "b", "a", "b", "b", "c"])
    assert claim(queue, engine, "c1", 1, per_group=2) == 5
    assert sorted(held(queue, "c1", 0, 1)) == [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("c", 0)]


def test_a_group_with_a_row_in_flight_is_not_claimed(engine):
    queue = grouped_queue(engine)
    fill(queue, ["a", "a", "b"])
    assert claim(queue, engine, "c1", 1, per_group=1) == 2
    fill(queue, ["c"])
    assert claim(queue, engine, "c2", 1) == 1
    assert held(queue, "c2", 0, 1) == [("c", 0)]


def test_a_group_is_claimed_again_once_its_rows_are_done(engine):
    queue = grouped_queue(engine)
    fill(queue, ["a", "a", "a"])
    assert claim(queue, engine, "c1", 1, per_group=2) == 2
    assert claim(queue, engine, "c1", 2) == 0
    queue.consuming.complete("c1", 1)
    assert claim(queue, engine, "c1", 2) == 1
    assert held(queue, "c1", 1, 2) == [("a", 2)]


def test_a_row_waiting_for_a_retry_holds_its_group_back(engine):
    queue = grouped_queue(engine)
    fill(queue, ["a", "a", "b"])
    assert claim(queue, engine, "c1", 1, per_group=1) == 2
    rows = [row for task in tasks(queue, "c1", 0, 1, 1, ["id", "account"]) for row in task]
    acks = [Ack((i,), "retry", "later", delay_seconds=3600) if a == "a" else Ack((i,), "done") for i, a in rows]
    with queue.transaction() as cur:
        queue.consuming.apply_acks(cur, acks, keep=False, max_attempts=5)
    assert claim(queue, engine, "c2", 1) == 0


def test_rows_of_no_group_are_claimed_as_in_an_ungrouped_queue(engine):
    queue = grouped_queue(engine)
    fill(queue, [None, None, None, "a", "a"])
    assert claim(queue, engine, "c1", 1, per_group=1) == 4
    assert sorted(held(queue, "c1", 0, 1), key=repr) == sorted([(None, 0), (None, 1), (None, 2), ("a", 0)], key=repr)


def test_a_read_task_reads_each_group_whole_in_claim_order(engine):
    queue = grouped_queue(engine)
    accounts = [f"k{i % 7}" for i in range(70)]
    fill(queue, accounts)
    assert claim(queue, engine, "c1", 1, per_group=10) == 70
    read = [[(a, int(p)) for a, p in task] for task in tasks(queue, "c1", 0, 1, 3, ["account", "payload"])]
    assert len(read) == 3
    owner = {}
    for n, rows in enumerate(read):
        for account, _ in rows:
            assert owner.setdefault(account, n) == n, f"group {account} is split between read tasks"
        for account in {a for a, _ in rows}:
            assert [p for a, p in rows if a == account] == list(range(10))


def test_group_by_names_a_column_of_the_table(engine):
    queue = grouped_queue(engine)
    with pytest.raises(SchemaError, match="option 'groupBy' = 'acount' is not a column of queue table .*: account"):
        queue.group_column("acount")
    assert queue.group_column("ACCOUNT") == "account"


def test_a_claim_waits_for_a_groups_first_row_held_locked_rather_than_pass_it_over(engine):
    """Another statement (a sweep, a renewal re-checking a row taken back, a table's own worker) may hold a
    ready row locked for a moment: a claim that skipped it would hand out the rows after it first."""
    queue = grouped_queue(engine)
    fill(queue, ["a", "a", "a"])
    table = queue.engine.table(queue.table)
    holder = engine.queue(str(queue.table))
    claimed: list[int] = []
    claimer = threading.Thread(target=lambda: claimed.append(claim(queue, engine, "c1", 1, per_group=3)))
    with holder.transaction() as cur:  # the group's first row locked, nothing about it changed
        cur.execute(f"UPDATE {table} SET payload = payload WHERE id = (SELECT MIN(id) FROM {table})")
        claimer.start()
        claimer.join(timeout=2)  # a claim that passes over the locked row is back at once
        waited = claimer.is_alive()
    claimer.join(timeout=60)
    assert waited, "the claim did not wait for the locked row"
    assert claimed == [3]
    assert held(queue, "c1", 0, 1) == [("a", 0), ("a", 1), ("a", 2)]


def test_a_lock_timeout_on_the_connection_bounds_a_grouped_claims_wait_with_an_error_it_retries(engine):
    """A transaction that keeps a group's first row locked holds grouped claims back until it ends; the
    connection's lock_timeout (libpq's options in the URL) bounds that wait, with a transient error."""
    if engine.name != "postgres":
        pytest.skip("a URL sets lock_timeout through libpq's options on PostgreSQL only")
    queue = grouped_queue(engine)
    fill(queue, ["a", "a"])
    table = queue.engine.table(queue.table)
    url = engine.options["url"]
    url += ("&" if "?" in url else "?") + "options=-c%20lock_timeout%3D300ms"
    bounded = Queue(parse_connection(url, password=engine.options.get("password")), queue.table)
    holder = engine.queue(str(queue.table))
    raised: list[Exception] = []

    def claimer() -> None:
        try:
            claim(bounded, engine, "c1", 1)
        except DatabaseError as error:
            raised.append(error)

    waiting = threading.Thread(target=claimer)
    try:
        with holder.transaction() as cur:
            cur.execute(f"UPDATE {table} SET payload = payload WHERE id = (SELECT MIN(id) FROM {table})")
            waiting.start()
            waiting.join(timeout=30)  # the holder's transaction lasts until the claim gave up
            assert not waiting.is_alive(), "the claim still waits past the connection's lock timeout"
        assert [(e.transient, "lock timeout" in str(e)) for e in raised] == [(True, True)], raised
        assert claim(bounded, engine, "c1", 1) == 2  # once the holder is done
    finally:
        waiting.join()
        bounded.close()


def test_competing_grouped_claimers_never_hold_one_group_at_once(engine):
    queue = grouped_queue(engine)
    groups, per = 12, 25
    fill(queue, [f"g{i % groups}" for i in range(groups * per)])
    processed: dict[str, list[int]] = defaultdict(list)
    holders: dict[str, str] = {}
    guard = threading.Lock()
    failures: list[str] = []

    total = groups * per
    done = [0]

    def worker(name: str) -> None:
        q = engine.queue(str(queue.table))
        seq = 0
        while done[0] < total and not failures:
            if not q.consuming.claim(name, seq + 1, 7, order=engine.order, groups=Grouping("account", 3)):
                continue  # every group with rows left is another worker's now
            seq += 1
            rows = held(q, name, seq - 1, seq)
            with guard:
                for account in {a for a, _ in rows}:
                    if holders.setdefault(account, name) != name:
                        failures.append(f"{account} held by {holders[account]} and {name}")
                for account, n in rows:
                    processed[account].append(n)
            with guard:
                for account in {a for a, _ in rows}:
                    holders.pop(account, None)
            q.consuming.complete(name, seq)
            with guard:
                done[0] += len(rows)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert {a: sorted(ns) for a, ns in processed.items()} == {f"g{i}": list(range(per)) for i in range(groups)}
    assert all(ns == sorted(ns) for ns in processed.values()), "a group's rows were processed out of order"


@pytest.mark.babelfish_gap("index_names")  # the second run re-runs the group indexes' guarded CREATE
def test_migrate_adds_message_groups_to_an_existing_queue(engine):
    queue = engine.new_queue()
    queue.enqueue([{"payload": "9"}])
    layouts.add_groups(queue, Column("account", "string"), say=lambda _: None)
    layouts.add_groups(queue, Column("account", "string"), say=lambda _: None)  # again: nothing to do
    queue.enqueue([{"payload": "0", "account": "a"}, {"payload": "1", "account": "a"}])
    assert claim(queue, engine, "c1", 1, per_group=1) == 2  # the row of no group, and a's first
    assert sorted(held(queue, "c1", 0, 1), key=repr) == sorted([(None, 9), ("a", 0)], key=repr)
