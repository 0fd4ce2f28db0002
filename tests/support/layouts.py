"""Queue tables at layout 1, made from the DDL earlier sqlqueues emitted, and filled the way their code did.

tests/fixtures/layout1/<shape>/<engine>.sql hold `sqlqueue create`'s output at four commits, verbatim
(each file says which): every shape a table made before layouts were recorded can have.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from sqlqueue.identifiers import TableName
from sqlqueue.queue import Queue
from tests.support.engines import Engine, fresh_name

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "layout1"
# Oldest first: the sink's 'staged' rows, then its staging table, then unpublished tags (0.1.0),
# then the ready index covering stage_tag with a tag index on every engine.
SHAPES = ("sink_staged", "staging_table", "unpublished", "tag_index_everywhere")
# The shape that differs most from layout 2, and the only one whose sink left rows in the queue table.
OLDEST = SHAPES[0]
_EXAMPLE = re.compile(r"(?<![A-Za-z0-9])jobs(?![A-Za-z0-9])")


def fixture_statements(engine: str, shape: str, table: TableName) -> list[str]:
    """The fixture's statements for a queue named ``table`` (its example queue is 'jobs')."""
    text = (FIXTURES / shape / f"{engine}.sql").read_text(encoding="utf-8")
    text = "\n".join(line for line in text.splitlines() if not line.startswith("--"))
    if engine == "sqlserver":
        text = re.sub(r"\[dbo\]\.|\bdbo\.", "", text)  # the default schema, as the tests' queues use
        parts = re.split(r"(?m)^GO[ \t]*$", text)  # GO is sqlcmd's batch separator, not T-SQL
    else:
        parts = text.split(";\n")
    return [_EXAMPLE.sub(table.name, p).strip() for p in parts if p.strip()]


def layout1_queue(engine: Engine, shape: str = OLDEST) -> Queue:
    """A fresh queue table made by the fixture DDL of ``shape``."""
    queue = engine.queue(fresh_name("old"))
    with queue.transaction() as cur:
        for sql in fixture_statements(engine.name, shape, queue.table):
            cur.execute(sql)
    return queue


def layout1_tag(writer_id: str, batch_id: int, run_id: str = "", task_id: int = 0) -> str:
    """A sink tag as layout 1's Producer made them: writer(16) batch(16) run(8) task(8), lowercase hex."""

    def hexed(text: str, width: int) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:width]

    return f"{hexed(writer_id, 16)}{batch_id:016x}{hexed(run_id, 8)}{task_id:08x}"


@dataclass
class Filled:
    """What layout 1's code left in a queue, by the payloads of each kind of row."""

    ready: list[str] = field(default_factory=list)
    claimed: list[str] = field(default_factory=list)  # by consumer 'c1' under claim 1, not completed
    failed: list[str] = field(default_factory=list)
    published: list[str] = field(default_factory=list)  # a sink batch published: ready rows and a ledger entry
    staged_keyed: list[tuple[str, str]] = field(default_factory=list)  # (payload, dedup key), writer 'w-keyed' batch 1
    staged_plain: list[str] = field(default_factory=list)  # writer 'w-plain' batch 5

    @property
    def everything(self) -> list[str]:
        return [
            *self.ready,
            *self.claimed,
            *self.failed,
            *self.published,
            *(p for p, _ in self.staged_keyed),
            *self.staged_plain,
        ]


def fill_layout1(queue: Queue, staged: bool = True) -> Filled:
    """Rows of every kind layout 1's code wrote, written with its statements. ``staged``: the sink's
    uncommitted batches as 'staged' rows (only the oldest shape's sink did that)."""
    d, t = queue.engine, queue.engine.table(queue.table)
    q, m = d.quote, d.marker
    filled = Filled(
        ready=["r1", "r2", "r3"],
        claimed=["c1", "c2"],
        failed=["f1"],
        published=["p1", "p2"],
        staged_keyed=[("k1", "key-1"), ("k2", "key-2"), ("k3", "key-3")] if staged else [],
        staged_plain=["s1", "s2"] if staged else [],
    )
    insert = f"INSERT INTO {t} ({q('payload')}) VALUES ({m})"
    with queue.transaction() as cur:
        for payload in [*filled.claimed, *filled.failed, *filled.ready, *filled.published]:
            cur.execute(insert, (payload,))
    claimed = ", ".join(f"'{p}'" for p in filled.claimed)
    failed = ", ".join(f"'{p}'" for p in filled.failed)
    lease = d.compile(d.now_plus("lease_seconds"))
    with queue.transaction() as cur:
        cur.execute(
            f"UPDATE {t} SET {q('state')} = 'claimed', {q('consumer')} = 'c1', {q('claim_seq')} = 1, "
            f"{q('attempts')} = 1, {q('claimed_at')} = {d.now()}, {q('lease_until')} = {lease.sql} "
            f"WHERE {q('payload')} IN ({claimed})",
            lease.bind({"lease_seconds": 3600}),
        )
        cur.execute(
            f"UPDATE {t} SET {q('state')} = 'failed', {q('attempts')} = 5, {q('last_error')} = 'boom', "
            f"{q('completed_at')} = {d.now()} WHERE {q('payload')} IN ({failed})"
        )
        ledger = d.table(queue.dialect.schema.ledger(queue.table))
        cur.execute(
            f"INSERT INTO {ledger} ({q('queue_name')}, {q('writer_id')}, {q('batch_id')}, {q('row_count')}) "
            f"VALUES ({m}, {m}, {m}, {m})",
            (str(queue.table), "w-published", 0, len(filled.published)),
        )
        columns = ", ".join(q(c) for c in ("state", "stage_tag", "payload", "dedup_key"))
        staged = f"INSERT INTO {t} ({columns}) VALUES ({m}, {m}, {m}, {m})"
        for task, (payload, key) in enumerate(filled.staged_keyed):
            cur.execute(staged, ("staged", layout1_tag("w-keyed", 1, "run-1", task), payload, key))
        for payload in filled.staged_plain:
            cur.execute(staged, ("staged", layout1_tag("w-plain", 5, "run-1", 0), payload, None))
    return filled


def rows_by_state(queue: Queue) -> dict[str, list[str]]:
    """Payloads per state, sorted, and those in the staging table under 'staging'."""
    d, schema = queue.engine, queue.dialect.schema
    q = d.quote
    found: dict[str, list[str]] = {}
    staging = shape_tables(queue)[schema.staging(queue.table).name]
    with queue.transaction() as cur:
        cur.execute(f"SELECT {q('state')}, {q('payload')} FROM {d.table(queue.table)}")
        for state, payload in cur.fetchall():
            found.setdefault(state, []).append(payload)
        if staging:
            cur.execute(f"SELECT {q('payload')} FROM {d.table(schema.staging(queue.table))}")
            found["staging"] = [r[0] for r in cur.fetchall()]
    return {state: sorted(payloads) for state, payloads in found.items()}


def shape_tables(queue: Queue) -> dict[str, bool]:
    """Which of the queue's tables exist."""
    schema, t = queue.dialect.schema, queue.table
    return {
        table.name: bool(queue.fetch(schema.table_columns(table), queue.catalog_names(table)))
        for table in (t, schema.staging(t), schema.unpublished(t), schema.layout_table(t))
    }


def shape(queue: Queue) -> dict[str, object]:
    """The queue's layout as the catalog describes it, with the queue's name replaced by <q>: columns
    of each of its tables (in any order), index definitions and constraints (SQLite's state check
    apart: SQLite cannot alter it, so a migrated table keeps allowing 'staged')."""
    d, schema, t = queue.engine, queue.dialect.schema, queue.table
    name = re.compile(rf"(?<![A-Za-z0-9]){re.escape(t.name)}(?![A-Za-z0-9])")
    tables = (t, schema.staging(t), schema.unpublished(t), schema.layout_table(t))
    described: dict[str, object] = {
        f"columns of {name.sub('<q>', table.name)}": sorted(
            queue.fetch(schema.table_columns(table), queue.catalog_names(table))
        )
        for table in tables
    }
    with queue.transaction() as cur:
        if d.name == "sqlite":
            cur.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN "
                f"({', '.join('?' for _ in tables)})",
                [tb.name for tb in tables],
            )
            described["indexes"] = sorted(name.sub("<q>", r[0]) for r in cur.fetchall())
        elif d.name == "postgres":
            cur.execute(
                "SELECT indexdef FROM pg_indexes WHERE schemaname = COALESCE(%s, current_schema()) "
                "AND tablename = ANY (%s)",
                (t.schema, [tb.name for tb in tables]),
            )
            described["indexes"] = sorted(name.sub("<q>", r[0]) for r in cur.fetchall())
            cur.execute(
                "SELECT conname, pg_get_constraintdef(oid), convalidated FROM pg_constraint "
                "WHERE conrelid = ANY (%s::regclass[])",
                ([d.table(tb) for tb in tables],),
            )
            described["constraints"] = sorted((name.sub("<q>", n), name.sub("<q>", s), v) for n, s, v in cur.fetchall())
            cur.execute(
                "SELECT relname, relpersistence FROM pg_class WHERE oid = ANY (%s::regclass[])",
                ([d.table(tb) for tb in tables],),
            )
            described["persistence"] = sorted((name.sub("<q>", n), p) for n, p in cur.fetchall())
    return described
