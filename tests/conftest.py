"""The engine every conformance scenario runs on: a SQLite file per test, the PostgreSQL server of
sqlqueue.testing's ``postgres_server``, and SQL Server when SQLQUEUE_TEST_SQLSERVER names one (Babelfish's
gaps marked). The SparkSession (``spark``), ``postgres_server`` and the other shared fixtures come from the
sqlqueue.testing plugin, which the package installs."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlqueue.dialects.sqlserver_doctor import is_babelfish  # noqa: E402
from tests.support.babelfish import mark_gaps  # noqa: E402
from tests.support.engines import SQLSERVER_ENV, Engine, sqlserver_options  # noqa: E402
from tests.support.toxiproxy import BINARY, NOT_BUILT, Toxiproxy  # noqa: E402

pytest_plugins = ["pytester"]  # the plugin's own tests run pytest inside pytest

ENGINES = [
    "sqlite",
    "postgres",
    pytest.param("sqlserver", marks=pytest.mark.sqlserver),
]


@pytest.fixture(autouse=True)
def no_heartbeat_left_running() -> Iterator[None]:
    """A consumer a test opens in this process is closed by the test's end. One left open renews its claims
    every few seconds on a database the session later stops, and logs the failure into another test's output."""
    before = set(threading.enumerate())
    yield
    left = [t.name for t in threading.enumerate() if t.name.startswith("sqlqueue-heartbeat-") and t not in before]
    assert not left, f"a consumer left open, its heartbeat still running: {left}"


@pytest.fixture(scope="session")
def sqlserver_is_babelfish() -> bool:
    """Whether the SQL Server under test is Babelfish (asked once): its gaps are expected failures there."""
    options = sqlserver_options()
    return options is not None and is_babelfish(Engine("sqlserver", options).server_version())


@pytest.fixture(params=ENGINES)
def engine(request, tmp_path):
    """Every conformance scenario runs once per engine."""
    name = request.param
    if name == "sqlite":
        handle = Engine(name, {"url": f"sqlite:///{tmp_path}/queue.db"})
    elif name == "postgres":
        handle = Engine(name, request.getfixturevalue("postgres_server").options)
    else:
        options = sqlserver_options()
        if options is None:
            pytest.skip(
                f"{SQLSERVER_ENV} is not set (a sqlserver:// URL or an ODBC connection string; "
                "make test-sqlserver runs these)"
            )
        handle = Engine(name, options)
        if request.getfixturevalue("sqlserver_is_babelfish"):
            handle.babelfish, handle.order = True, "heap"
            mark_gaps(request.node, handle.driver)
    yield handle
    handle.close()


@pytest.fixture(scope="session")
def toxiproxy_server():
    """One Toxiproxy server for the run (tests/support/toxiproxy.py), started when a test first asks."""
    if not BINARY.is_file():
        pytest.skip(NOT_BUILT)
    with Toxiproxy.running() as server:
        yield server


@pytest.fixture
def toxiproxy(toxiproxy_server):
    """The run's Toxiproxy server; the proxies a test makes are removed after it."""
    yield toxiproxy_server
    toxiproxy_server.remove_all()
