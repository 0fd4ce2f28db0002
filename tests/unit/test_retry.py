"""The retry policy: transient errors are retried with doubling waits for a bounded time, one log line
each; the bound is the option retryTimeout, which replaced the count maxRetries. On a clock the test
moves: no test here waits."""

from __future__ import annotations

import logging

import pytest

from sqlqueue import retry
from sqlqueue.config import load_config
from sqlqueue.errors import ConfigError, DatabaseError
from sqlqueue.options import BY_KEY, OPTIONS, SinkOptions, SourceOptions
from sqlqueue.retry import TIMEOUT_OPTION, RetryPolicy

URL = {"url": "sqlite:///q.db", "queue": "jobs"}


class Clock:
    """monotonic() and sleep() for the retry module: sleeping moves the clock, and steps may take time."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(retry, "monotonic", fake.monotonic)
    monkeypatch.setattr(retry, "sleep", fake.sleep)
    return fake


def failing(times: int, error: DatabaseError, clock: Clock | None = None, takes_s: float = 0.0):
    """A step that fails ``times`` times with ``error`` (each attempt taking ``takes_s``), then returns 'done'."""
    calls = []

    def step() -> str:
        calls.append(1)
        if clock is not None:
            clock.now += takes_s
        if len(calls) <= times:
            raise error
        return "done"

    return step, calls


LOST = DatabaseError("postgres: consuming input failed: server closed the connection unexpectedly\n\tagain", True)


def test_a_transient_error_is_retried_after_waits_that_double(clock):
    step, calls = failing(4, LOST)
    assert RetryPolicy(timeout_ms=60_000, backoff_ms=500).run(step, "claim 3") == "done"
    assert len(calls) == 5
    assert clock.waits == [0.5, 1.0, 2.0, 4.0]


def test_no_single_wait_is_longer_than_ten_seconds(clock):
    step, _ = failing(8, LOST)
    RetryPolicy(timeout_ms=600_000, backoff_ms=1000).run(step, "claim 3")
    assert clock.waits == [1, 2, 4, 8, 10, 10, 10, 10]


def test_retries_stop_at_the_bound_with_one_line_naming_the_option(clock):
    step, calls = failing(1000, LOST)
    with pytest.raises(DatabaseError) as failure:
        RetryPolicy(timeout_ms=30_000, backoff_ms=1000).run(step, "reading ids 1..500")
    # 1+2+4+8 s, then what is left of the 30 s: the last attempt comes at the bound, not after it.
    assert clock.waits == [1, 2, 4, 8, 10, 5]
    assert len(calls) == 7
    message = str(failure.value)
    assert "\n" not in message
    assert message.startswith("reading ids 1..500 still failed after 6 retries in 30.0 s (option retryTimeout = 30 s)")
    assert "server closed the connection unexpectedly" in message
    assert not failure.value.transient  # an outer retry must not start the bound again


def test_the_bound_counts_from_the_first_failure_not_from_the_start_of_the_step(clock):
    step, calls = failing(2, LOST, clock, takes_s=50.0)  # a 50 s step that fails twice
    assert RetryPolicy(timeout_ms=60_000, backoff_ms=1000).run(step, "completing claim 2") == "done"
    assert len(calls) == 3


def test_each_retry_logs_one_line_saying_what_failed_the_retry_the_time_gone_and_the_next_wait(clock, caplog):
    step, _ = failing(3, LOST)
    with caplog.at_level(logging.WARNING, logger="sqlqueue.retry"):
        RetryPolicy(timeout_ms=60_000, backoff_ms=1000).run(step, "claim 3")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3 and all("\n" not in line for line in lines)
    assert lines[2] == (
        "claim 3 failed (postgres: consuming input failed: server closed the connection unexpectedly again); "
        "retry 3 in 4.0 s (3.0 s of retryTimeout 60 s gone)"
    )


def test_an_error_that_is_not_transient_is_raised_at_once(clock):
    wrong = DatabaseError("postgres: connection failed: Connection refused", transient=False)
    step, calls = failing(1, wrong)
    with pytest.raises(DatabaseError) as failure:
        RetryPolicy().run(step, "claim 1")
    assert failure.value is wrong and len(calls) == 1 and clock.waits == []


def test_a_zero_bound_never_retries(clock):
    step, calls = failing(1, LOST)
    with pytest.raises(DatabaseError, match=r"still failed after 0 retries .*retryTimeout = 0 s"):
        RetryPolicy(timeout_ms=0).run(step, "claim 1")
    assert len(calls) == 1


# ---- the options -------------------------------------------------------------------------------------
def test_the_bound_is_one_minute_and_the_first_wait_one_second_by_default():
    for options in (SourceOptions.parse(URL), SinkOptions.parse(URL)):
        assert options.retry == RetryPolicy(timeout_ms=60_000, backoff_ms=1000)


def test_retry_timeout_takes_a_duration_with_its_unit():
    assert SourceOptions.parse({**URL, "retryTimeout": "90s", "retryBackoffMs": "250"}).retry == RetryPolicy(
        90_000, 250
    )
    assert SinkOptions.parse({**URL, "RETRYTIMEOUT": "5m"}).retry.timeout_ms == 300_000


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"retryTimeout": "60"}, r"option 'retryTimeout' = '60' is not allowed: a whole number with a unit"),
        (
            {"retryBackoffMs": "30000"},
            r"option 'retryBackoffMs' = '30000' is not allowed: a whole number from 1 to 10000",
        ),
    ],
)
def test_retry_options_are_checked(options, message):
    with pytest.raises(ConfigError, match=message):
        SourceOptions.parse({**URL, **options})


@pytest.mark.parametrize("parse", [SourceOptions.parse, SinkOptions.parse])
def test_max_retries_is_refused_in_one_line_naming_retry_timeout(parse):
    with pytest.raises(ConfigError) as failure:
        parse({**URL, "maxRetries": "5"})
    assert str(failure.value) == (
        "option 'maxRetries' is gone: retries are bounded by time, not counted; remove it and set "
        "'retryTimeout' instead (a duration: 1m by default, 0s never retries)"
    )


def test_max_retries_in_a_configuration_file_names_retry_timeout(tmp_path):
    path = tmp_path / "job.toml"
    path.write_text('[source]\nurl = "sqlite:///tmp/q.db"\nqueue = "q"\nmaxRetries = 3\n')
    with pytest.raises(ConfigError, match=r"job.toml: option 'maxRetries' is gone: .*set 'retryTimeout' instead"):
        load_config([str(path)], roles=["source"])


def test_the_option_the_give_up_message_names_exists():
    assert BY_KEY[TIMEOUT_OPTION.lower()].key == TIMEOUT_OPTION


@pytest.mark.parametrize("option", [o for o in OPTIONS if o.default is not None], ids=lambda o: o.key)
def test_every_default_passes_its_own_check(option):
    assert option.parse(option.key, option.default) is not None
