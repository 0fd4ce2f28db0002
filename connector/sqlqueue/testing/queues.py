"""Throwaway queues for tests: on a SQLite file by default, on PostgreSQL or SQL Server when asked.

The database is named by one setting (see ``settings``): ``sqlite``, ``postgres`` (a server the
plugin starts) or a URL. A URL's user and password become the ``user`` and ``password`` options,
since the connector reads a password only from its own option.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ..connection import ConnectionSpec, parse_connection
from ..dialects.sqlserver_doctor import is_babelfish
from ..errors import ConfigError
from ..identifiers import TableName
from ..profile import PRESETS, Profile, settings_of
from ..queue import Queue
from ..schema import Column, parse_columns
from . import designs

SQLITE, POSTGRES = "sqlite", "postgres"
SHORT_EMPTY_POLL_MS = 100
_names = itertools.count(1)


@dataclass(frozen=True)
class Database:
    """Where throwaway queues go: connector options (``url``, and ``user``/``password`` when needed)."""

    options: Mapping[str, str]

    @classmethod
    def from_url(cls, url: str) -> Database:
        """A database from a URL that may carry a user and password (``postgresql://u:p@host/db``)."""
        parts = urlsplit(url)
        if parts.scheme == SQLITE or not parts.username:
            return cls({"url": url})
        bare = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        credentials = {"user": unquote(parts.username)}
        if parts.password:
            credentials["password"] = unquote(parts.password)
        return cls({"url": bare, **credentials})

    @property
    def engine(self) -> str:
        """The connector's name for its engine: sqlite, postgres or sqlserver."""
        return self.connection().dialect

    def connection(self) -> ConnectionSpec:
        o = self.options
        return parse_connection(o["url"], user=o.get("user"), password=o.get("password"))

    @property
    def claims_in_order(self) -> bool:
        """Whether the server runs the ordered claims: all but Babelfish, which cannot UPDATE or DELETE
        through a common table expression, as SQL Server's fifo, lifo, priority and pending claims do."""
        return self.engine != "sqlserver" or not _babelfish(tuple(sorted(self.options.items())))

    def order(self, asked: str | None) -> str:
        """The claim order of a throwaway queue: the one a test asks for, else fifo where the server
        claims in order and heap (no order) on Babelfish, so a test that is not about order runs there."""
        return asked or ("fifo" if self.claims_in_order else "heap")


@functools.cache
def _babelfish(options: tuple[tuple[str, str], ...]) -> bool:
    """Whether the SQL Server at ``options`` is Babelfish for PostgreSQL (its @@VERSION starts so), asked once."""
    probe = Queue(Database(dict(options)).connection(), TableName.parse("sqlqueue_probe"))
    try:
        (version,) = probe.facts(probe.dialect.doctor.server_version)[0]  # type: ignore[attr-defined]
        return is_babelfish(version)
    finally:
        probe.close()


class ScratchQueue(Queue):
    """A queue made for one test, which also knows the Spark options that reach it."""

    def __init__(self, database: Database, table: str, order: str) -> None:
        super().__init__(database.connection(), TableName.parse(table))
        self.database = database
        self.order = order

    def sink_options(self, **extra: Any) -> dict[str, str]:
        """Options that reach the queue, for ``df.write.format("sqlqueue")`` and ``writeStream``: the
        connection, ``queue`` and ``extra`` (values become strings)."""
        return {**self.database.options, "queue": str(self.table), **{k: str(v) for k, v in extra.items()}}

    def source_options(self, **extra: Any) -> dict[str, str]:
        """Options for ``spark.readStream.format("sqlqueue")``: those of ``sink_options``, and an empty
        poll of 100 ms unless ``extra`` sets ``emptyPollIntervalMs`` (its default, 1 s, is what a test's
        last micro-batch would wait on the drained queue)."""
        return self.sink_options(**{"emptyPollIntervalMs": SHORT_EMPTY_POLL_MS, "order": self.order, **extra})


class ScratchTable(Queue):
    """A table of one of the designs sqlqueue adopts, made for one test and adopted through its preset."""

    def __init__(self, database: Database, table: str, design: str, profile: Profile | None = None) -> None:
        super().__init__(database.connection(), TableName.parse(table), profile or PRESETS[design])
        self.database = database
        self.design = design

    def sink_options(self, **extra: Any) -> dict[str, str]:
        """Options for ``df.write.format("sqlqueue")`` that reach the table through its profile."""
        options = {
            **self.database.options,
            "queue": str(self.table),
            **settings_of(self.declared or PRESETS[self.design]),
        }
        return {**options, **{k: str(v) for k, v in extra.items()}}

    def source_options(self, **extra: Any) -> dict[str, str]:
        """Options for ``spark.readStream.format("sqlqueue")`` that reach the table through its profile,
        with the 100 ms empty poll of ``ScratchQueue.source_options``."""
        return self.sink_options(**{"emptyPollIntervalMs": SHORT_EMPTY_POLL_MS, **extra})


@dataclass
class QueueFactory:
    """Makes throwaway queues: ``make_queue("payload text, customer bigint not null", order="priority",
    rows=[...])``. Tables are named ``sqlqueue_t<pid>_<n>``, new in every test and run, and left behind
    on a server the plugin did not start (use a database you can throw away)."""

    database: Database
    made: list[Queue] = field(default_factory=list)

    def __call__(
        self,
        columns: str | Sequence[Column] = "payload text",
        order: str | None = None,
        rows: Sequence[Mapping[str, Any]] = (),
    ) -> ScratchQueue:
        domain = parse_columns(columns) if isinstance(columns, str) else tuple(columns)
        if not domain:
            raise ConfigError(f"a queue needs at least one domain column; got {columns!r}")
        queue = ScratchQueue(self.database, f"sqlqueue_t{os.getpid()}_{next(_names)}", self.database.order(order))
        self.made.append(queue)
        queue.create(domain, queue.order)
        queue.enqueue(list(rows))
        return queue

    def adopted(self, design: str = "relational", rows: int = 0, subtypes: bool = False) -> ScratchTable:
        """A table of one of the designs sqlqueue adopts (``relational``, ``started-mark``, ``claimer``,
        ``dequeue``; sqlqueue.testing.designs), with the preset's column names, adopted, and ``rows`` ready
        rows with payloads p0, p1, ... ``subtypes`` (relational only): with subtype tables ``<table>_email``
        and ``<table>_reset`` (designs.subtypes), in its profile's ``include``, exclusive. On Babelfish the
        profile claims in no order (``Database.claims_in_order``)."""
        if design not in designs.DESIGNS:
            raise ConfigError(f"design {design!r} is not allowed: use one of {', '.join(designs.DESIGNS)}")
        if subtypes and design != "relational":
            raise ConfigError(f"subtypes=True is not allowed with design {design!r}: only with relational")
        name = f"sqlqueue_a{os.getpid()}_{next(_names)}"
        included = tuple(f"{name}_{s}" for s in designs.SUBTYPES) if subtypes else ()
        profile = replace(PRESETS[design], include=included)
        if not self.database.claims_in_order:
            profile = replace(profile, order=())
        table = ScratchTable(self.database, name, design, profile)
        self.made.append(table)
        designs.run(table, *designs.DESIGNS[design].make(self.database.engine, str(table.table)))
        if subtypes:
            designs.run(table, *designs.subtypes(self.database.engine, str(table.table)))
        table.adopt()
        designs.fill(table, design, rows)
        return table

    def close(self) -> None:
        for queue in self.made:
            queue.close()


def sqlite_database(folder: Path) -> Database:
    return Database({"url": f"sqlite:///{folder / 'queues.db'}"})
