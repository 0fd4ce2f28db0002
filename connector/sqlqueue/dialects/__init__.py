"""SQL per engine. ``dialect_for`` is the only way the core picks one."""

from __future__ import annotations

from collections.abc import Callable

from .base import Dialect
from .postgres import PostgresClaims, PostgresDoctor, PostgresEngine
from .postgres_migrations import PostgresMigrations
from .sqlite import SqliteClaims, SqliteDoctor, SqliteEngine, SqliteMigrations
from .sqlserver import SqlServerClaims, SqlServerEngine
from .sqlserver_doctor import SqlServerDoctor
from .sqlserver_migrations import SqlServerMigrations

# Each engine with the parts it writes its own way; every other part is the same on every engine.
_DIALECTS: dict[str, Callable[[], Dialect]] = {
    "sqlite": lambda: Dialect(SqliteEngine(), claims=SqliteClaims, doctor=SqliteDoctor, migrations=SqliteMigrations),
    "postgres": lambda: Dialect(
        PostgresEngine(), claims=PostgresClaims, doctor=PostgresDoctor, migrations=PostgresMigrations
    ),
    "sqlserver": lambda: Dialect(
        SqlServerEngine(), claims=SqlServerClaims, doctor=SqlServerDoctor, migrations=SqlServerMigrations
    ),
}


def dialect_for(name: str) -> Dialect:
    """A new dialect of engine ``name``: each Queue has its own, whose parts build each statement once."""
    return _DIALECTS[name]()


__all__ = ["Dialect", "dialect_for"]
