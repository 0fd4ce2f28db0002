"""A queue step rides out a database outage shorter than retryTimeout, and fails after a longer one with
one line naming the option, on every engine.

On PostgreSQL and SQL Server the database goes away behind a Toxiproxy proxy (tests/support/toxiproxy.py):
its open connections are closed and new ones refused. A file has no connection to lose, so on SQLite
another connection holds the write lock, with SQLite's busy timeout cut from 60 s so that each attempt
gives up quickly. An outage that the step rides out ends once the retry policy has logged its second
retry: a condition, not a clock.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from sqlqueue.consumer import ClaimPolicy, Consumer
from sqlqueue.dialects import sqlite as sqlite_dialect
from sqlqueue.errors import DatabaseError
from sqlqueue.queue import Queue
from sqlqueue.retry import RetryPolicy
from tests.support.retries import retry_lines

ROWS = 30
RETRIED_BY = RetryPolicy(timeout_ms=30_000, backoff_ms=100)  # far longer than the outages it rides out
GIVES_UP = RetryPolicy(timeout_ms=1500, backoff_ms=100)


@dataclass
class Outage:
    """The engine's database unreachable for ``queue``, from ``begin`` until ``end``."""

    queue: Queue
    begin: Callable[[], object]
    end: Callable[[], object]


@pytest.fixture
def outage(engine, request, monkeypatch):
    if engine.name == "sqlite":
        monkeypatch.setattr(sqlite_dialect, "BUSY_TIMEOUT_S", 0.05)
        queue = engine.new_queue()
        holder = sqlite3.connect(queue.spec.param("path"), isolation_level=None)
        yield Outage(queue, lambda: holder.execute("BEGIN IMMEDIATE"), lambda: holder.execute("ROLLBACK"))
        holder.close()
        return
    proxy = request.getfixturevalue("toxiproxy").proxy(engine.server_address())
    table = engine.new_queue().table
    queue = engine.queue_through(proxy.listen, table)
    yield Outage(queue, proxy.disable, proxy.enable)
    queue.close()


def claimer(engine, outage: Outage) -> Consumer:
    """A consumer of the queue under the outage, with rows to claim and its connection made."""
    outage.queue.enqueue([{"payload": f"p{i}"} for i in range(ROWS)])
    assert outage.queue.inspection.count_ready() == ROWS  # connected: the address is proven
    return Consumer(outage.queue, "outage-test", ClaimPolicy(order=engine.order))


@pytest.fixture
def consumer(engine, outage: Outage):
    """``claimer``, closed after the test: its heartbeat would go on renewing against a proxy that is gone."""
    consumer = claimer(engine, outage)
    yield consumer
    consumer.close()


def test_a_claim_rides_out_an_outage_shorter_than_retry_timeout(outage, consumer):
    with retry_lines(after=2, then=outage.end) as logged:
        outage.begin()
        assert RETRIED_BY.run(lambda: consumer.advance(0, 10), "claim 1") == 1
    assert outage.queue.consuming.count_claimed("outage-test", 1) == 10
    assert len(logged.lines) >= 2
    assert all("claim 1 failed (" in line and "of retryTimeout 30 s gone" in line for line in logged.lines)


def test_a_claim_fails_after_an_outage_longer_than_retry_timeout_naming_the_option(outage, consumer):
    outage.begin()
    try:
        with retry_lines() as logged, pytest.raises(DatabaseError) as failure:
            GIVES_UP.run(lambda: consumer.advance(0, 10), "claim 1")
    finally:
        outage.end()
    # The last attempt may overrun the bound by its own length: Microsoft's drivers spend their 15 s
    # login timeout on a refused connection.
    message = str(failure.value)
    assert "\n" not in message
    assert re.match(
        rf"claim 1 still failed after {len(logged.lines)} retries in [\d.]+ s \(option retryTimeout = 1.5 s\)", message
    )
    assert RETRIED_BY.run(lambda: consumer.advance(0, 10), "claim 1") == 1  # and works once it is back


@pytest.fixture
def server_engine(engine):
    if engine.name == "sqlite":
        pytest.skip("a SQLite file has no address to get wrong: its first connection is no different")
    return engine


def test_a_first_connection_to_a_database_that_is_down_fails_at_once(server_engine, toxiproxy):
    """A brand-new job whose database does not answer: a wrong address as far as it knows."""
    proxy = toxiproxy.proxy(server_engine.server_address())
    queue = server_engine.queue_through(proxy.listen, server_engine.new_queue().table)
    proxy.disable()
    with retry_lines() as logged, pytest.raises(DatabaseError) as failure:
        RETRIED_BY.run(queue.inspection.count_ready, "counting")
    assert not failure.value.transient and logged.lines == []


def test_a_queue_whose_address_the_stream_proved_rides_out_a_refused_first_connection(server_engine, toxiproxy):
    """What a Spark task's queue meets in a fresh executor process during a restart (spark/reader.py shared_queue)."""
    proxy = toxiproxy.proxy(server_engine.server_address())
    queue = server_engine.queue_through(proxy.listen, server_engine.new_queue().table)
    queue.proven = True
    proxy.disable()
    try:
        with retry_lines(after=1, then=proxy.enable) as logged:
            assert RETRIED_BY.run(queue.inspection.count_ready, "counting") == 0
    finally:
        queue.close()
    assert "counting failed (" in logged.lines[0]


def test_an_error_from_a_connection_that_no_longer_answers_is_retried_on_a_new_one(engine):
    """Whatever a driver says first about a connection it lost (FreeTDS: 'Unknown error', HY000), a
    connection that no longer answers a query is lost, and the step is tried again on a new one."""
    queue = engine.new_queue()
    queue.enqueue([{"payload": "p"}])
    queue.conn.close()  # underneath the queue, as a dropped connection would be
    with retry_lines() as logged:
        assert RETRIED_BY.run(queue.inspection.count_ready, "counting") == 1
    assert len(logged.lines) == 1 and "counting failed (" in logged.lines[0]


def test_a_claim_rides_out_connections_reset_until_the_resets_stop(server_engine, toxiproxy):
    """A TCP RST (toxic reset_peer) on the session's connection, then on every new one, until it stops."""
    proxy = toxiproxy.proxy(server_engine.server_address())
    queue = server_engine.queue_through(proxy.listen, server_engine.new_queue().table)
    outage = Outage(queue, lambda: proxy.reset_peer(), proxy.clear)
    consumer = claimer(server_engine, outage)
    try:
        with retry_lines(after=2, then=outage.end) as logged:
            outage.begin()
            assert RETRIED_BY.run(lambda: consumer.advance(0, 10), "claim 1") == 1
    finally:
        consumer.close()
    assert len(logged.lines) >= 2
