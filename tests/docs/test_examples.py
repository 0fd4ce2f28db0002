"""Every Python and shell example of the README and the docs runs, or says why not.

A page's examples run in order, as a reader would run them, in a folder of the test's own that stands
for /tmp/sqlqueue (tests/support/docs.py). Python examples share the test run's SparkSession as
``spark`` and a namespace per page; a stream an example leaves running is stopped once it has
processed what is there. They run through pytest-examples, so a failure points at the page and line.
Shell examples run with bash -eu -o pipefail in the folder, which holds the project's conf/ (with
/tmp/sqlqueue pointed at the folder), jobs/, sql/ and .venv.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from pytest_examples import CodeExample

from sqlqueue.connection import parse_connection
from sqlqueue.identifiers import TableName
from sqlqueue.queue import Queue
from sqlqueue.schema import Column
from tests.support.docs import PAGES, PYTHON, SANDBOXED, SHELL, Example, examples
from tests.support.golden import ROOT

RUN = [p for p in PAGES if any(e.runnable and e.not_run is None and not e.on_sqlserver for e in examples(p))]
LINKED = ("jobs", "sql", "examples", ".venv")  # what shell examples reach from the project, as they are


def sandbox(folder) -> None:
    """The folder an example sees as the project's root and as /tmp/sqlqueue at once."""
    (folder / "conf").mkdir(parents=True)
    for conf in (ROOT / "conf").glob("*.toml"):
        (folder / "conf" / conf.name).write_text(conf.read_text().replace(SANDBOXED, str(folder)))
    for name in LINKED:
        (folder / name).symlink_to(ROOT / name)


def make_queues(folder, example: Example) -> None:
    for name, rows in example.given_queues:
        queue = Queue(parse_connection(f"sqlite:///{folder}/queue.db"), TableName(name))
        try:
            queue.create((Column("payload", "text"),))
            queue.enqueue([{"payload": f"{name} {i}"} for i in range(rows)])
        finally:
            queue.close()


def run_python(example: Example, folder, namespace: dict, eval_example, spark) -> None:
    code = CodeExample.create(
        example.in_sandbox(folder), path=example.page, start_line=example.line, prefix=example.lang
    )
    try:
        namespace.update(eval_example.run(code, module_globals=namespace))
        for query in spark.streams.active:  # an example may leave a stream running, as a job would
            query.processAllAvailable()
    finally:
        for query in spark.streams.active:
            query.stop()


def run_shell(example: Example, folder) -> None:
    result = subprocess.run(
        ["bash", "-eu", "-o", "pipefail", "-c", example.in_sandbox(folder)],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, (
        f"{example.where} exited with {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )


@pytest.mark.spark
@pytest.mark.parametrize("page", RUN, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_examples_of_a_page_run_in_order(page, spark, tmp_path, eval_example):
    folder = tmp_path / "sqlqueue"
    sandbox(folder)
    namespace = {"spark": spark}
    for example in examples(page):
        if not example.runnable or example.not_run is not None or example.on_sqlserver:
            continue
        make_queues(folder, example)
        if example.lang in PYTHON:
            run_python(example, folder, namespace, eval_example, spark)
        else:
            assert example.lang in SHELL
            run_shell(example, folder)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_comment_says_what_the_example_needs_or_why_it_does_not_run(page):
    assert [e.problem() for e in examples(page) if e.problem()] == []


def test_the_pages_have_examples_that_run():
    assert {p.name for p in RUN} >= {"README.md", "getting-started.md", "streaming.md", "writing.md"}
