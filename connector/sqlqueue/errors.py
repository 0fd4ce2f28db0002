"""One exception tree. Every message says what was wrong and what is allowed or what to do."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def one_line(text: object) -> str:
    """A driver's message on one line (libpq's, for one, adds a hint on a line of its own)."""
    return " ".join(str(text).split())


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
    """Unknown option keys, each with the valid one it is closest to (keys compare ignoring case)."""
    valid = sorted(valid)
    by_lower = {v.lower(): v for v in valid}

    def named(name: str) -> str:
        close = difflib.get_close_matches(name.lower(), by_lower, n=1, cutoff=0.75)
        return f"{name} (did you mean {by_lower[close[0]]}?)" if close else name

    return ConfigError(
        f"unknown option(s) {', '.join(named(n) for n in sorted(names))}; valid options are: {', '.join(valid)}"
    )


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
