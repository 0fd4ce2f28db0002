"""The plugin itself: enabled by the package, free to import, and plain about what it lacks."""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import quote

import pytest

from sqlqueue.testing import Database
from sqlqueue.testing.pgserver import PASSWORD
from sqlqueue.testing.sessions import missing_jars, start_session


def test_importing_the_plugin_loads_no_spark():
    code = "import sys, sqlqueue.testing; print(sorted(m for m in ('pyspark', 'pyarrow', 'py4j') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_the_plugin_is_enabled_by_its_entry_point(pytestconfig):
    assert pytestconfig.pluginmanager.get_plugin("sqlqueue").__name__ == "sqlqueue.testing"


def test_missing_delta_jars_are_named_in_one_line(tmp_path):
    (tmp_path / "delta-storage-4.4.0.jar").touch()
    assert missing_jars(str(tmp_path), "io.delta:delta-spark_4.2_2.13:4.4.0") == ["delta-spark_4.2_2.13-4.4.0.jar"]
    with pytest.raises(RuntimeError) as failure:
        start_session(str(tmp_path))
    message = str(failure.value)
    assert message.startswith(f"Delta Lake's jars are missing from {tmp_path}: delta-spark_4.2_2.13-4.4.0.jar (")
    assert "\n" not in message


def test_a_missing_jar_fails_the_spark_fixture_with_that_line(pytester, tmp_path, monkeypatch):
    monkeypatch.setenv("SQLQUEUE_JARS_DIR", str(tmp_path))
    pytester.makepyfile("def test_uses_spark(spark):\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*sqlqueue.testing: Delta Lake's jars are missing from {tmp_path}: delta-spark*"])


def test_an_unknown_database_setting_fails_with_the_choices(pytester):
    pytester.makepyfile("def test_makes_a_queue(make_queue):\n    make_queue()\n")
    result = pytester.runpytest("--sqlqueue-db=postgress")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*sqlqueue.testing: --sqlqueue-db 'postgress' is not allowed: use sqlite, postgres or a URL*"]
    )


def test_the_database_setting_is_read_from_the_ini_file(pytester, tmp_path):
    url = f"sqlite:///{tmp_path}/shared.db"
    pytester.makeini(f"[pytest]\nsqlqueue_db = {url}\n")
    pytester.makepyfile(
        f"def test_url(sqlqueue_database):\n    assert sqlqueue_database.options == {{'url': {url!r}}}\n"
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_url_carries_the_credentials_as_options():
    database = Database.from_url("postgresql://app:p%40ss@db.example.com:5432/ops")
    assert database.options == {"url": "postgresql://db.example.com:5432/ops", "user": "app", "password": "p@ss"}
    assert database.engine == "postgres"


def test_make_queue_prefills_a_queue_of_the_given_columns_and_order(make_queue):
    queue = make_queue("n bigint not null, note text", order="priority", rows=[{"n": 1, "note": "x", "priority": 5}])
    assert [(c.name, c.type, c.nullable) for c in queue.domain_columns()] == [
        ("n", "bigint", False),
        ("note", "text", True),
    ]
    assert queue.inspection.peek(1, order="priority", columns=["n", "priority"]) == [{"n": 1, "priority": 5}]
    assert queue.sink_options() == {**queue.database.options, "queue": str(queue.table)}
    assert queue.source_options(maxRowsPerTrigger=10) == {
        **queue.sink_options(),
        "emptyPollIntervalMs": "100",
        "order": "priority",  # the source claims in the order the queue was made for
        "maxRowsPerTrigger": "10",
    }


MAKES_A_QUEUE = """
def test_makes_a_queue(make_queue):
    queue = make_queue(rows=[{"payload": "a"}])
    assert queue.database.engine == "postgres" and queue.inspection.stats()["ready"]["rows"] == 1
"""


def test_postgres_makes_queues_on_a_server_the_plugin_starts(pytester):
    pytester.makepyfile(MAKES_A_QUEUE)
    pytester.runpytest("--sqlqueue-db=postgres").assert_outcomes(passed=1)


def test_a_url_makes_queues_on_the_server_it_names(pytester, postgres_server):
    url = postgres_server.url.replace("@", f":{quote(PASSWORD)}@", 1)
    pytester.makepyfile(MAKES_A_QUEUE)
    pytester.runpytest(f"--sqlqueue-db={url}").assert_outcomes(passed=1)
