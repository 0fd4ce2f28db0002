"""The backlog a stream reports: counted while counting is quick, else estimated between counts made
in the background."""

from __future__ import annotations

import threading

from sqlqueue.testing.streams import wait_until
from sqlqueue.waits import Backlog, BacklogGauge


class Counter:
    """A stand-in for the count statement: returns the backlog it is set to, and can be held mid-count."""

    def __init__(self, backlog: Backlog) -> None:
        self.backlog, self.calls = backlog, 0
        self.release = threading.Event()
        self.release.set()

    def __call__(self) -> Backlog:
        self.calls += 1
        self.release.wait()
        return self.backlog


def test_the_first_read_counts():
    counter = Counter(Backlog(500, 60_000))
    assert BacklogGauge(counter).read() == Backlog(500, 60_000)
    assert counter.calls == 1


def test_a_quick_count_is_made_at_every_read():
    counter = Counter(Backlog(500, 60_000))
    gauge = BacklogGauge(counter, quick_s=3600)
    gauge.read()
    counter.backlog = Backlog(300, 50_000)
    assert gauge.read() == Backlog(300, 50_000)
    assert counter.calls == 2


def test_between_slow_counts_the_backlog_is_the_last_count_less_the_rows_claimed_since():
    counter = Counter(Backlog(1_000_000, 60_000))
    gauge = BacklogGauge(counter, quick_s=0, interval_s=3600)
    gauge.read()
    gauge.claimed(50_000)
    estimate = gauge.read()
    assert estimate.ready_rows == 950_000 and estimate.oldest_age_ms is not None
    assert estimate.oldest_age_ms >= 60_000
    assert counter.calls == 1


def test_an_estimate_of_no_rows_has_no_oldest_age():
    gauge = BacklogGauge(Counter(Backlog(100, 60_000)), quick_s=0, interval_s=3600)
    gauge.read()
    gauge.claimed(100)
    assert gauge.read() == Backlog(0, None)


def test_a_slow_count_that_is_due_runs_in_the_background_and_the_read_does_not_wait_for_it():
    counter = Counter(Backlog(1_000_000, 60_000))
    gauge = BacklogGauge(counter, quick_s=0, interval_s=0, share=1.0)
    gauge.read()
    counter.release.clear()  # the next count hangs until released
    counter.backlog = Backlog(700_000, 30_000)
    gauge.claimed(100_000)
    assert gauge.read().ready_rows == 900_000  # the estimate, while the count runs
    assert wait_until(lambda: counter.calls == 2, timeout=10)
    counter.release.set()
    gauge.close()
    assert gauge.read().ready_rows == 700_000
