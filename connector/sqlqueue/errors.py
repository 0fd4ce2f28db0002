"""One exception tree. Every message says what was wrong and what is allowed or what to do."""

from __future__ import annotations

from collections.abc import Iterable


class SqlQueueError(Exception):
    """Base of every error sqlqueue raises on purpose."""


class ConfigError(SqlQueueError, ValueError):
    """An option, URL or configuration value is missing or not allowed."""


class SchemaError(SqlQueueError):
    """Columns of a DataFrame or table do not fit the queue."""


class DatabaseError(SqlQueueError):
    """The database refused or failed a statement; the driver's error is the cause.

    ``transient`` errors (a lost connection, a deadlock victim, a busy database) may succeed if
    the same idempotent step is tried again.
    """

    def __init__(self, message: str, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


class MissingDriverError(SqlQueueError, ImportError):
    """The Python driver a dialect needs is not installed."""


def invalid_option(name: str, value: object, allowed: str) -> ConfigError:
    return ConfigError(f"option '{name}' = {value!r} is not allowed: {allowed}")


def missing_option(name: str, hint: str) -> ConfigError:
    return ConfigError(f"option '{name}' is required: {hint}")


def unknown_options(names: Iterable[str], valid: Iterable[str]) -> ConfigError:
    return ConfigError(f"unknown option(s) {', '.join(sorted(names))}; valid options are: {', '.join(sorted(valid))}")


def missing_driver(module: str, extra: str) -> MissingDriverError:
    return MissingDriverError(f"the Python module '{module}' is not installed: pip install 'sqlqueue[{extra}]'")


def layout_mismatch(table: object, where: str, found: int, needed: int) -> SchemaError:
    """A queue table whose layout this sqlqueue does not run on, and the command that fixes it."""
    if found > needed:
        return SchemaError(
            f"queue table {table} at {where} has layout {found}, newer than this sqlqueue's layout {needed}: "
            "upgrade sqlqueue"
        )
    return SchemaError(
        f"queue table {table} at {where} has layout {found}, older than this sqlqueue's layout {needed}: "
        f"run `sqlqueue migrate --queue {table}` (or `sqlqueue migrate --print` for the script) first; if it "
        f"finds nothing to migrate, grant this login SELECT on {table}_layout (sql/<engine>/grants.sql)"
    )


def append_only(refused: str, use: str) -> ConfigError:
    return ConfigError(f"{refused} is not supported by the sqlqueue sink: a queue can only be appended to; use {use}")


def unsupported(table: object, kind: str, capability: str, instead: str) -> ConfigError:
    """A capability (capabilities.Capability) the table's kind lacks, and what to use instead."""
    return ConfigError(f"table {table} is {kind}, which does not support {capability}: use {instead}")
