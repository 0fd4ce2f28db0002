"""The engines every conformance scenario runs on, as one small handle per test."""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from typing import Any

from sqlqueue.connection import parse_connection
from sqlqueue.identifiers import TableName
from sqlqueue.queue import Queue
from sqlqueue.schema import Column

SQLSERVER_ENV = "SQLQUEUE_TEST_SQLSERVER"
_names = itertools.count(1)


@dataclass
class Engine:
    """Connection options for one engine, and a factory of fresh queue tables on it."""

    name: str
    options: dict[str, str]
    created: list[Queue] = field(default_factory=list)

    def connection(self):
        o = self.options
        return parse_connection(o.get("url"), o.get("connectionString"), o.get("dialect"), o.get("user"), o.get("password"))

    def queue(self, table: str) -> Queue:
        q = Queue(self.connection(), TableName.parse(table))
        self.created.append(q)
        return q

    def new_queue(self, domain: tuple[Column, ...] = (Column("payload", "text"),), order: str = "fifo") -> Queue:
        q = self.queue(f"q{os.getpid()}_{next(_names)}")
        q.create(domain, order)
        return q

    def source_options(self, queue: Queue, **extra: Any) -> dict[str, str]:
        return {**self.options, "queue": str(queue.table), **{k: str(v) for k, v in extra.items()}}

    def close(self) -> None:
        for q in self.created:
            q.close()


PASSWORD_VARIABLE = "SQLQUEUE_TEST_PASSWORD"


def config_file(engine: Engine, folder, monkeypatch, extra: str = "") -> str:
    """A configuration file whose [connection] reaches ``engine``, the password through the environment."""
    lines = ["[connection]"]
    lines += [f'{k} = "{v}"' for k, v in engine.options.items() if k != "password"]
    if "password" in engine.options:
        monkeypatch.setenv(PASSWORD_VARIABLE, engine.options["password"])
        lines.append(f'passwordEnv = "{PASSWORD_VARIABLE}"')
    path = folder / f"{engine.name}.toml"
    path.write_text("\n".join(lines) + "\n" + extra)
    return str(path)
