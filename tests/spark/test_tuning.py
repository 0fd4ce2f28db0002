"""Sessions tuned for micro-batches: build_session sets the costly settings, and the source warns
once per process about a session of the user's own that leaves them at their defaults."""

from __future__ import annotations

import logging

import pytest

from sqlqueue.spark import tuning
from sqlqueue.spark.source import SqlQueueDataSource
from sqlqueue.spark.tuning import SESSION_TIME_ZONE, SNAPSHOT_PARTITIONS, TUNING, costly_settings

pytestmark = pytest.mark.spark


def test_build_session_sets_every_tuned_setting(spark):
    assert {key: spark.conf.get(key) for key in TUNING} == TUNING
    assert costly_settings(lambda key: spark.conf.get(key, None)) == []


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def warnings():
    """The tuning warnings logged during the test, collected on the logger itself (the 'sqlqueue'
    logger stops propagating once the source's worker logging is set up in this process)."""
    logger, handler = logging.getLogger("sqlqueue.tuning"), Collect()
    logger.addHandler(handler)
    yield lambda: handler.messages
    logger.removeHandler(handler)


@pytest.fixture
def untuned(spark, monkeypatch):
    """The shared session with Delta's snapshot partitions and the time zone at a user's defaults."""
    saved = {key: spark.conf.get(key, None) for key in (SNAPSHOT_PARTITIONS, SESSION_TIME_ZONE)}
    monkeypatch.setattr(tuning, "_warned", False)
    spark.conf.unset(SNAPSHOT_PARTITIONS)
    spark.conf.set(SESSION_TIME_ZONE, "Europe/Paris")
    yield spark
    for key, value in saved.items():
        spark.conf.set(key, value)


def test_registering_the_source_in_an_untuned_session_warns_once(untuned, warnings):
    untuned.dataSource.register(SqlQueueDataSource)
    untuned.dataSource.register(SqlQueueDataSource)  # a second registration, or a second query: no repeat
    logged = warnings()
    assert len(logged) == 1, logged
    assert f"{SNAPSHOT_PARTITIONS} = (unset)" in logged[0]
    assert f"{SESSION_TIME_ZONE} = Europe/Paris" in logged[0]


def test_a_tuned_session_registers_without_a_warning(spark, warnings, monkeypatch):
    monkeypatch.setattr(tuning, "_warned", False)
    spark.dataSource.register(SqlQueueDataSource)
    assert warnings() == []


@pytest.mark.parametrize(
    ("settings", "flagged"),
    [
        ({}, [SNAPSHOT_PARTITIONS]),
        ({SNAPSHOT_PARTITIONS: "50", SESSION_TIME_ZONE: "America/New_York"}, [SNAPSHOT_PARTITIONS, SESSION_TIME_ZONE]),
        ({SNAPSHOT_PARTITIONS: "2", SESSION_TIME_ZONE: "UTC"}, []),
    ],
)
def test_costly_settings_names_each_costly_key(settings, flagged):
    lines = costly_settings(settings.get)
    assert [line.split(" = ")[0] for line in lines] == flagged
