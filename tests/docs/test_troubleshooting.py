"""Every message the Troubleshooting page quotes is what the code prints: each is made here the way a
user meets it, and compared with the page's text, where "…" stands for what depends on the setup."""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from sqlqueue.config import load_config
from sqlqueue.connection import parse_connection
from sqlqueue.consumer import ClaimPolicy, Consumer
from sqlqueue.errors import DatabaseError, layout_mismatch, missing_driver
from sqlqueue.identifiers import TableName
from sqlqueue.options import SourceOptions
from sqlqueue.queue import Queue
from sqlqueue.retry import RetryPolicy
from sqlqueue.schema import LAYOUT
from sqlqueue.spark.session import delta_jars_missing
from sqlqueue.spark.tuning import costly_settings, untuned_warning
from tests.support.golden import ROOT

PAGE = ROOT / "docs" / "troubleshooting.md"
QUOTED = re.compile(r"<!--\s*message:\s*(?P<key>[\w-]+)\s*-->\s*```text\n(?P<text>.*?)\n```", re.S)
SPARKS_OWN = {"spark"}  # Spark's messages, quoted for the reader, not sqlqueue's to keep


def raised(action: Callable[[], object]) -> str:
    with pytest.raises(Exception) as caught:
        action()
    return str(caught.value)


def logged(logger: str, action: Callable[[], object]) -> str:
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    handler = Keep()
    logging.getLogger(logger).addHandler(handler)
    try:
        action()
    finally:
        logging.getLogger(logger).removeHandler(handler)
    assert lines, f"nothing logged on {logger}"
    return lines[0]


def source(**options: str) -> Callable[[], object]:
    return lambda: SourceOptions.parse({"queue": "orders", **options})


def config_file(tmp: Path, text: str) -> str:
    path = tmp / "job.toml"
    path.write_text(text)
    return str(path)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def outage_then_done() -> object:
    calls = iter([DatabaseError("postgres: connection failed: refused", transient=True)])

    def step() -> None:
        error = next(calls, None)
        if error is not None:
            raise error

    return RetryPolicy(timeout_ms=60_000, backoff_ms=1).run(step, "reading ids 1..125")


def made(key: str, tmp: Path, monkeypatch) -> str:
    """The message ``key`` stands for, made as a user meets it."""
    sqlite = f"sqlite:///{tmp}/queue.db"
    if key == "url-scheme":
        return raised(source(url="mysql://db.example.com/ops"))
    if key == "url-keyword":
        return raised(source(url="sqlserver://db.example.com:1433/ops?TrustServerCertficate=yes"))
    if key == "url-login":
        conf = config_file(tmp, '[connection]\nurl = "sqlserver://h:1433/ops"\nuser = "sqlqueue_connector"\n'
                                'passwordEnv = "SQLQUEUE_PASSWORD"\n[source]\nqueue = "orders"\n')  # fmt: skip
        monkeypatch.setenv("SQLQUEUE_PASSWORD", "x")
        return raised(lambda: load_config([conf], ["source.url=sqlserver://etl@h:1433/ops"], roles=("source",)))
    if key == "password-env":
        conf = config_file(tmp, '[connection]\nurl = "postgresql://h/ops"\npasswordEnv = "SQLQUEUE_PASSWORD"\n')
        monkeypatch.delenv("SQLQUEUE_PASSWORD", raising=False)
        return raised(lambda: load_config([conf], [], roles=("source",)))
    if key == "connection-refused":
        url = f"postgresql://sqlqueue@127.0.0.1:{closed_port()}/ops"
        return raised(lambda: Queue(parse_connection(url, password="x"), TableName("orders")).require_layout())
    if key == "driver-missing":
        return str(missing_driver("psycopg", "postgres"))
    if key == "sqlite-folder":
        return raised(source(url="sqlite:////srv/queues/jobs.db"))
    if key == "missing-table":
        return raised(lambda: Queue(parse_connection(sqlite), TableName("orders")).require_layout())
    if key == "layout":
        return str(layout_mismatch(TableName("orders"), sqlite, 1, LAYOUT))
    if key == "unknown-option":
        return raised(source(url=sqlite, maxrowspertriger="5"))
    if key == "bad-value":
        return raised(source(url=sqlite, maxRowsPerTrigger="lots"))
    if key == "bad-filter":
        return raised(source(url=sqlite, profile="relational", **{"profile.filter": "Type = 'sync'; DROP TABLE jobs"}))
    if key == "delta-jars":
        return str(delta_jars_missing())
    if key == "untuned":
        return untuned_warning(costly_settings(lambda _: None))
    if key == "retry":
        return logged("sqlqueue.retry", outage_then_done)
    if key == "fenced":
        consumer = Consumer(Queue(parse_connection(sqlite), TableName("orders")), "orders-to-delta", ClaimPolicy())
        return logged("sqlqueue.consumer", lambda: consumer._fence(1000, "claims up to 41, not completed"))
    raise AssertionError(f"docs/troubleshooting.md quotes message {key!r}, which this test cannot make")


def quoted() -> list[tuple[str, str]]:
    return [(m["key"], m["text"]) for m in QUOTED.finditer(PAGE.read_text(encoding="utf-8"))]


@pytest.mark.parametrize(("key", "text"), [q for q in quoted() if q[0] not in SPARKS_OWN], ids=lambda v: v[:20])
def test_the_page_quotes_the_message_as_the_code_prints_it(key, text, tmp_path, monkeypatch):
    pattern = ".*?".join(re.escape(part) for part in text.split("…"))
    actual = made(key, tmp_path, monkeypatch)
    assert re.fullmatch(pattern, actual, re.S), (
        f"docs/troubleshooting.md's {key} message:\n{text}\nthe code's:\n{actual}"
    )


def test_the_page_quotes_the_messages_it_promises():
    keys = [k for k, _ in quoted()]
    assert len(keys) == len(set(keys)) >= 15
