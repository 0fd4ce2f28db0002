"""SQL per engine. ``dialect_for`` is the only way the core picks one."""

from __future__ import annotations

from .base import Dialect
from .postgres import PostgresDialect
from .sqlite import SqliteDialect
from .sqlserver import SqlServerDialect

_DIALECTS: dict[str, type[Dialect]] = {
    "sqlite": SqliteDialect,
    "postgres": PostgresDialect,
    "sqlserver": SqlServerDialect,
}


def dialect_for(name: str) -> Dialect:
    return _DIALECTS[name]()


__all__ = ["Dialect", "dialect_for"]
