"""sql/postgres/grants.sql grants enough: a role with only those privileges runs the whole protocol."""

from __future__ import annotations

import uuid

import psycopg
import pyarrow as pa

from sqlqueue.connection import parse_connection
from sqlqueue.doctor import PROBLEM, examine
from sqlqueue.identifiers import TableName
from sqlqueue.producer import Producer
from sqlqueue.queue import Queue
from sqlqueue.schema import Column
from sqlqueue.spark.types import ArrowRows
from sqlqueue.testing.pgserver import DATABASE, PASSWORD, USER
from tests.conftest import ROOT

ROLE_PASSWORD = "grants-test-Secret-1"


def text_rows(payloads: list[str]) -> ArrowRows:
    """Rows as a sink task gets them, which it copies as text and may name the ids of."""
    batch = pa.record_batch([pa.array(payloads)], names=["payload"])
    return ArrowRows(iter([batch]), (Column("payload", "text"),), native=True)


def connector_queue(postgres_server, leaving_out: str | None = None) -> Queue:
    """A new queue, as a new role with the grants of sql/postgres/grants.sql (but its lines holding
    ``leaving_out``) reaches it."""
    schema, role = f"g_{uuid.uuid4().hex[:10]}", f"conn_{uuid.uuid4().hex[:10]}"
    table = TableName("orders", schema)
    script = (ROOT / "sql/postgres/grants.sql").read_text()
    if leaving_out is not None:
        script = "\n".join(line for line in script.splitlines() if leaving_out not in line)
    script = (
        script.replace("public.", f"{schema}.")
        .replace("SCHEMA public", f"SCHEMA {schema}")
        .replace("DATABASE ops", f"DATABASE {DATABASE}")
        .replace("sqlqueue_connector", role)
    )
    with psycopg.connect(postgres_server.url, password=PASSWORD, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        Queue(parse_connection(postgres_server.url, password=PASSWORD), table).create((Column("payload", "text"),))
        admin.execute(f"REVOKE ALL ON SCHEMA {schema} FROM PUBLIC")
        admin.execute(script)
        admin.execute(f"ALTER ROLE {role} PASSWORD '{ROLE_PASSWORD}'")
    url = postgres_server.url.replace(f"{USER}@", f"{role}@")
    return Queue(parse_connection(url, password=ROLE_PASSWORD), table)


def test_connector_role_with_only_the_scripted_grants_claims_completes_enqueues_and_runs_doctor(postgres_server):
    queue = connector_queue(postgres_server)
    try:
        queue.enqueue([{"payload": "a", "dedup_key": "k1"}])
        producer = Producer(queue, "writer")
        keyed = (Column("payload", "text"), Column("dedup_key", "string"))
        producer.publish(0, keyed, [producer.write(0, 0, keyed, [("b", "k2")])])
        plain = (Column("payload", "text"),)
        producer.publish(1, plain, [producer.write(1, 0, plain, text_rows(["c"]))])
        assert queue.identity().names_ids  # the sink named the row's id from a block it reserved
        producer.write(2, 0, plain, [("aborted",)])
        producer.discard(2)
        assert queue.consuming.claim("c", 1, 2, order="heap") == 2
        assert queue.consuming.claim("c", 2, 10, order="heap", runs=True, lease_seconds=10) == 1
        assert queue.consuming.renew("c", 1, 30) == 1
        assert queue.consuming.complete("c", 2) == 3
        assert [f.check for f in examine(queue, "fifo") if f.severity == PROBLEM] == []
    finally:
        queue.close()


def test_a_connector_role_without_the_sequence_grant_writes_rows_the_table_numbers(postgres_server):
    queue = connector_queue(postgres_server, leaving_out="ON SEQUENCE")
    try:
        producer, plain = Producer(queue, "writer"), (Column("payload", "text"),)
        producer.publish(0, plain, [producer.write(0, 0, plain, text_rows(["a", "b"]))])
        identity = queue.identity()
        assert identity.step > 1 and not identity.names_ids
        with queue.transaction() as cur:
            cur.execute(f"SELECT id FROM {queue.engine.table(queue.table)}")
            assert sorted((i - 1) % identity.step for (i,) in cur.fetchall()) == [0, 0]  # each its block's first
    finally:
        queue.close()
