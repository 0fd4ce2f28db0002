"""The engines every conformance scenario runs on, as one small handle per test."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from sqlqueue.connection import parse_connection
from sqlqueue.consumer import ClaimPolicy, Consumer
from sqlqueue.dialects.odbc import named_driver
from sqlqueue.dialects.sqlserver_drivers import MSSQL_PYTHON
from sqlqueue.identifiers import TableName
from sqlqueue.queue import Queue
from sqlqueue.schema import Column

DEFAULT_PORTS = {"postgres": 5432, "sqlserver": 1433}
SQLSERVER_ENV = "SQLQUEUE_TEST_SQLSERVER"
SQLSERVER_DRIVER_ENV = "SQLQUEUE_TEST_SQLSERVER_DRIVER"
_taken = [0]  # how many names fresh_name gave: the nth carries the number n


def fresh_name(prefix: str) -> str:
    """A table name no other test or earlier run uses: a server outlives the test run that made a table."""
    _taken[0] += 1
    return f"{prefix}{os.getpid()}_{_taken[0]}"


def sqlserver_options(value: str | None = None, driver: str | None = None) -> dict[str, str] | None:
    """Engine options for the SQL Server in ``SQLQUEUE_TEST_SQLSERVER``, or None when it names none.

    The value is a ``sqlserver://`` (or ``mssql://``) URL, or else an ODBC connection string used
    verbatim. A URL's user and password become the ``user`` and ``password`` options, so they travel
    the way a job's do (the crash jobs get the password through the environment, not their command
    line). ``SQLQUEUE_TEST_SQLSERVER_DRIVER`` names the driver when the value names none (a URL's
    ``?driver=``, a connection string's ``Driver=``): an ODBC driver for pyodbc, or ``mssql-python``,
    which takes a URL only (it is no ODBC driver pyodbc could load); naming two different ones is an error.
    """
    value = (os.environ.get(SQLSERVER_ENV, "") if value is None else value).strip()
    driver = (os.environ.get(SQLSERVER_DRIVER_ENV, "") if driver is None else driver).strip().strip("{}")
    if not value:
        return None
    if re.match(r"(?i)(sqlserver|mssql)://", value):
        parts = urlsplit(value)
        query = parse_qsl(parts.query, keep_blank_values=True)
        named = next((v for k, v in query if k == "driver"), None)  # the key the connection code reads
        _same_driver(named, driver)
        if driver and not named:
            query.append(("driver", driver))
        options = {
            "url": urlunsplit(
                (parts.scheme, parts.netloc.rpartition("@")[2], parts.path, urlencode(query), parts.fragment)
            )
        }
        if parts.username:
            options["user"] = unquote(parts.username)
        if parts.password:
            options["password"] = unquote(parts.password)
        return options
    if driver.lower() == MSSQL_PYTHON:
        raise ValueError(
            f"{SQLSERVER_DRIVER_ENV}={driver} needs {SQLSERVER_ENV} to be a sqlserver:// URL, not an ODBC connection "
            "string: mssql-python is no ODBC driver pyodbc could load"
        )
    named = named_driver(value)
    _same_driver(named, driver)
    if driver and not named:
        value = f"Driver={{{driver}}};{value}"
    return {"connectionString": value, "dialect": "sqlserver"}


def _same_driver(named: str | None, driver: str) -> None:
    if named and driver and named.lower() != driver.lower():
        raise ValueError(
            f"{SQLSERVER_ENV} names the driver {named!r} but {SQLSERVER_DRIVER_ENV} says {driver!r}: "
            "name it in one place"
        )


@dataclass
class Engine:
    """Connection options for one engine, and a factory of fresh queue tables on it.

    ``order`` is the claim order of tests whose subject is not the order: fifo, except on ``babelfish``,
    which cannot run the ordered claims (an UPDATE through a CTE, see tests/support/babelfish.py), so
    there they claim in heap order and still test what they are about.
    """

    name: str
    options: dict[str, str]
    babelfish: bool = False
    order: str = "fifo"
    created: list[Queue] = field(default_factory=list)
    consumers: list[Consumer] = field(default_factory=list)
    first_made: int = field(default_factory=lambda: _taken[0] + 1)  # the number of the first name it may take

    def connection(self):
        o = self.options
        return parse_connection(
            o.get("url"), o.get("connectionString"), o.get("dialect"), o.get("user"), o.get("password")
        )

    def queue(self, table: str) -> Queue:
        q = Queue(self.connection(), TableName.parse(table))
        self.created.append(q)
        return q

    def new_queue(
        self, domain: tuple[Column, ...] = (Column("payload", "text"),), order: str | None = None, **spec: Any
    ) -> Queue:
        """A fresh queue table; ``spec``: the rest of Queue.create's arguments (its group column)."""
        q = self.queue(fresh_name("q"))
        q.create(domain, order or self.order, **spec)
        return q

    def sink_options(self, queue: Queue, **extra: Any) -> dict[str, str]:
        return {**self.options, "queue": str(queue.table), **{k: str(v) for k, v in extra.items()}}

    def source_options(self, queue: Queue, **extra: Any) -> dict[str, str]:
        return self.sink_options(queue, order=self.order, **extra)

    @property
    def driver(self) -> str:
        """The driver the options name: a URL's ``driver``, a connection string's DRIVER ('' if none)."""
        if "connectionString" in self.options:
            return named_driver(self.options["connectionString"]) or ""
        return dict(parse_qsl(urlsplit(self.options["url"]).query)).get("driver", "")

    def server_address(self) -> str:
        """host:port of a server engine's URL (the engine's own port when the URL names none)."""
        parts = urlsplit(self._url())
        return f"{parts.hostname}:{parts.port or DEFAULT_PORTS[self.name]}"

    def options_through(self, listen: str) -> dict[str, str]:
        """The options with the URL's host:port replaced by ``listen``: a proxy in front of the server."""
        parts = urlsplit(self._url())
        login, at, _ = parts.netloc.rpartition("@")
        return {**self.options, "url": urlunsplit(parts._replace(netloc=login + at + listen))}

    def queue_through(self, listen: str, table: TableName) -> Queue:
        """The queue at ``table``, reached through ``listen`` (a proxy in front of the server)."""
        o = self.options_through(listen)
        return Queue(parse_connection(o["url"], None, None, o.get("user"), o.get("password")), table)

    def _url(self) -> str:
        if "url" not in self.options or self.name == "sqlite":
            raise ValueError(f"{self.name} given as {sorted(self.options)}: only a server's URL names an address")
        return self.options["url"]

    def server_version(self) -> str:
        """``SELECT @@VERSION`` on SQL Server (and on what speaks TDS like it)."""
        q = Queue(self.connection(), TableName.parse("unused"))
        try:
            return str(q.conn.execute("SELECT @@VERSION").fetchone()[0])
        finally:
            q.close()

    def consumer(self, queue: Queue, name: str, policy: ClaimPolicy) -> Consumer:
        """A consumer of ``queue``, closed with this engine: its heartbeat would renew on after the test."""
        self.consumers.append(Consumer(queue, name, policy))
        return self.consumers[-1]

    def close(self) -> None:
        for c in self.consumers:
            c.close()
        for q in self.created:
            q.close()
        if self.name == "sqlserver":
            self._drop_made()

    def _drop_made(self) -> None:
        """Drop the tables and procedures made under the names this test took (their own side tables
        too: every such name carries the number). A server outlives the run, and Babelfish's catalog
        views slow down with every table kept: a column lookup took 2.3 s beside 17,800 tables, 0.19 s
        on a fresh server, and a run of the suite makes thousands."""
        numbers = range(self.first_made, _taken[0] + 1)
        if not numbers:
            return
        ours = re.compile(rf"(?<!\d){os.getpid()}_({'|'.join(map(str, numbers))})(?!\d)")
        q = Queue(self.connection(), TableName.parse("unused"))
        try:
            cur = q.engine.autocommit_cursor(q.conn)
            cur.execute("SET LOCK_TIMEOUT 30000")  # a session the test left holding a lock fails the drop, not hangs it
            cur.execute("SELECT SCHEMA_NAME(schema_id), name, type FROM sys.objects WHERE type IN ('U', 'P')")
            objects = [(f"[{schema}].[{name}]", kind.strip()) for schema, name, kind in cur.fetchall()]
            cur.execute(
                "SELECT OBJECT_SCHEMA_NAME(parent_object_id), OBJECT_NAME(parent_object_id), name FROM sys.foreign_keys"
            )
            keys = [(f"[{schema}].[{table}]", key) for schema, table, key in cur.fetchall()]
            for table, key in keys:  # a table another one references drops only after the reference
                if ours.search(table):
                    cur.execute(f"ALTER TABLE {table} DROP CONSTRAINT [{key}]")
            for name, kind in objects:
                if ours.search(name):
                    cur.execute(f"DROP {'PROCEDURE' if kind == 'P' else 'TABLE'} {name}")
        finally:
            q.close()


PASSWORD_VARIABLE = "SQLQUEUE_TEST_PASSWORD"


def config_file(engine: Engine, folder, monkeypatch, extra: str = "") -> str:
    """A configuration file whose [connection] reaches ``engine``, the password through the environment."""
    lines = ["[connection]"]
    lines += [f'{k} = "{v}"' for k, v in engine.options.items() if k != "password"]
    if "password" in engine.options:
        monkeypatch.setenv(PASSWORD_VARIABLE, engine.options["password"])
        lines.append(f'passwordEnv = "{PASSWORD_VARIABLE}"')
    # Sources claim in the engine's order (heap on Babelfish, see Engine).
    order = f'order = "{engine.order}"\n'
    extra = (
        extra.replace("[source]\n", "[source]\n" + order, 1) if "[source]\n" in extra else f"{extra}\n[source]\n{order}"
    )
    path = folder / f"{engine.name}.toml"
    path.write_text("\n".join(lines) + "\n" + extra)
    return str(path)
