"""The queue tables of the matrix, as their owners would make and fill them, in plain SQL.

Each design is a table a team already has: sqlqueue's own layout (made with `sqlqueue create`), and the
designs of sqlqueue's registry (sqlqueue.testing.designs) in their harshest shape: a relational queue with a
status vocabulary table, a token a trigger rewrites on every update and an audit trigger (the guard
sqlqueue fences with changes under it), a retry table with a claimer column and an in-process flag, a
started-at mark table, and a delete-on-dequeue table. Every row carries its key as text in the payload
column.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlqueue.testing.designs import DESIGNS as REGISTRY
from sqlqueue.testing.designs import LOCAL_NOW, TYPES, Types
from tests.chaos.databases import Database

NATIVE = "native"
DESIGNS = (NATIVE, *REGISTRY)
# The time a relational row's key (EnqueuedAt, a time) counts its key's seconds from, a day ago: keys a
# whole second apart (Microsoft's driver sends Babelfish DATETIME2 parameters without fractional seconds).
EPOCH = dt.datetime.now().replace(microsecond=0) - dt.timedelta(days=1)
ENGINES = {"sqlite": "sqlite", "postgres": "postgres", "babelfish": "sqlserver"}  # the matrix's -> the registry's
NOW = {name: LOCAL_NOW[engine] for name, engine in ENGINES.items()}


def types(db: Database) -> Types:
    return TYPES[ENGINES[db.name]]


@dataclass(frozen=True)
class Table:
    """A queue table of one design: its name, its payload column, and how done rows look."""

    design: str
    name: str

    @property
    def payload(self) -> str:
        return "payload" if self.design == NATIVE else REGISTRY[self.design].payload

    @property
    def profile(self) -> str | None:
        return None if self.design == NATIVE else self.design

    @property
    def acked_columns(self) -> str | None:
        """What an ack-mode source reads: the key, the attempts (the fencing token) and the payload; a
        source of sqlqueue's own layout shows them by default, an adopted table's only its domain."""
        return {"relational": "EnqueuedAt, AttemptNum, Payload"}.get(self.design)


def ddl(db: Database, table: Table) -> list[str]:
    """CREATE statements of an adopted design in its harshest shape (sqlqueue's own layout is made by
    `sqlqueue create`)."""
    design = REGISTRY[table.design]
    return design.make(ENGINES[db.name], table.name, **design.harsh)


def insert(db: Database, table: Table, keys: range, groups: int | None = None) -> None:
    """Rows for ``keys``, as the table's own producers insert them, 1,000 a transaction, in key order; with
    ``groups``, each in message group ``group_of(key, groups)`` (sqlqueue's own layout's grp column)."""
    now = dt.datetime.now().replace(microsecond=0)
    if table.design != NATIVE:
        design = REGISTRY[table.design]
        columns, rows = design.produced, [design.values(k, str(k), now, EPOCH, "Sync") for k in keys]
    elif groups is not None:
        columns, rows = f"{table.payload}, grp", [(str(k), group_of(k, groups)) for k in keys]
    else:
        columns, rows = table.payload, [(str(k),) for k in keys]
    if db.name == "sqlite":
        rows = [tuple(v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v for v in r) for r in rows]
    marks = ", ".join(db.marker for _ in columns.split(","))
    sql = f"INSERT INTO {table.name} ({columns}) VALUES ({marks})"
    conn = db.connect()
    try:
        for start in range(0, len(rows), 1000):
            _in_transaction(db, conn, lambda cur, chunk=rows[start : start + 1000]: cur.executemany(sql, chunk))
    finally:
        conn.close()


def group_of(key: int, groups: int) -> str:
    return f"g{key % groups}"


def _in_transaction(db: Database, conn, work) -> None:
    """``work(cursor)`` in one transaction on an autocommit connection."""
    cur = conn.cursor()
    if db.name == "postgres":
        with conn.transaction():
            work(cur)
        return
    if db.name == "sqlite":
        cur.execute("BEGIN IMMEDIATE")
    else:
        conn.autocommit = False
    try:
        work(cur)
        conn.commit() if db.name != "sqlite" else cur.execute("COMMIT")
    except BaseException:
        conn.rollback() if db.name != "sqlite" else cur.execute("ROLLBACK")
        raise
    finally:
        if db.name == "babelfish":
            conn.autocommit = True


def not_done(table: Table) -> str:
    """A condition on the rows of a drained source table that are not done as the design says done."""
    if table.design == NATIVE:
        return "state <> 'done'"
    return REGISTRY[table.design].not_done or "1 = 1"  # the others delete what is done (or taken)
