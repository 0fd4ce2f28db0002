"""Tests of the notification sender with sqlqueue's pytest plugin: a relational queue table made and
adopted by ``make_queue.adopted``, a stub of the notification service on a local port, and each row's
outcome checked in the table. Copy this file beside your job and run `python -m pytest`."""

from __future__ import annotations

import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from notifications_job import start

from sqlqueue.testing import assert_dead_lettered, assert_queue_holds, run_to_end


class Service:
    """The notification service, stubbed: it refuses the notifications in ``refused`` for good (400),
    is busy (503) for a notification of ``busy`` as many times as it says, and sends every other one;
    it counts what it was asked."""

    def __init__(self) -> None:
        self.refused: set[str] = set()
        self.busy: Counter[str] = Counter()
        self.asked: Counter[str] = Counter()
        self.keys: Counter[str] = Counter()  # the Idempotency-Key of each request
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                service.asked[body] += 1
                service.keys[self.headers["Idempotency-Key"]] += 1
                code, text = (
                    (400, "no such mailbox") if body in service.refused
                    else (503, "try later") if service.busy[body] > 0
                    else (200, "250 queued")
                )  # fmt: skip
                service.busy[body] -= 1
                self.send_response(code)
                self.end_headers()
                self.wfile.write(text.encode())

            def log_message(self, *args: object) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/send"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def service():
    stub = Service()
    yield stub
    stub.server.shutdown()


def test_each_notification_is_acknowledged_by_the_services_answer(
    spark, make_queue, service, delta_path, checkpoint_path
):
    table = make_queue.adopted("relational", rows=6)  # notifications p0 .. p5
    service.refused, service.busy = {"p1"}, Counter({"p2": 10})
    run_to_end(start(spark, table.sink_options(), service.url, delta_path, checkpoint_path))
    assert_queue_holds(table, Completed=4, Error=1, Failed=1)
    assert_dead_lettered(table, {"p1": "HTTP 400: no such mailbox"}, column="Payload")
    attempts = spark.read.format("delta").load(delta_path)
    assert sorted(attempts.select("Payload", "outcome").collect()) == sorted(
        [(f"p{i}", "done") for i in (0, 3, 4, 5)] + [("p1", "failed"), ("p2", "retry")]
    )


def test_a_notification_the_busy_service_put_off_is_sent_again_once_its_backoff_has_passed(
    spark, make_queue, service, delta_path, checkpoint_path
):
    table = make_queue.adopted("relational", rows=2)
    service.busy = Counter({"p0": 1})  # busy the first time only
    run_to_end(start(spark, table.sink_options(), service.url, delta_path, checkpoint_path, backoff_seconds=0))
    assert_queue_holds(table, Completed=2)
    assert service.asked == Counter({"p0": 2, "p1": 1})
    assert sorted(service.keys.values()) == [1, 1, 1]  # each attempt of each row under a key of its own
    attempts = spark.read.format("delta").load(delta_path).filter("Payload = 'p0'")
    assert sorted(r.outcome for r in attempts.collect()) == ["done", "retry"]


def test_a_notification_the_service_keeps_putting_off_fails_once_its_attempts_are_spent(
    spark, make_queue, service, delta_path, checkpoint_path
):
    table = make_queue.adopted("relational", rows=1)
    service.busy = Counter({"p0": 10})
    run_to_end(start(spark, table.sink_options(), service.url, delta_path, checkpoint_path, backoff_seconds=0))
    assert_dead_lettered(table, {"p0": "HTTP 503: try later"}, column="Payload")
    assert service.asked == Counter({"p0": 3})  # the relational preset's max_attempts
