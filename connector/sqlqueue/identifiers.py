"""Identifier safety in one place: every table and column name passes through here."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ConfigError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")


def check_name(name: str, what: str) -> str:
    if not _NAME.match(name):
        raise ConfigError(
            f"{what} {name!r} is not allowed: use letters, digits and underscores, starting with a letter"
            " or underscore (at most 100 characters)"
        )
    return name


@dataclass(frozen=True)
class TableName:
    """A queue table, optionally schema-qualified ("dbo.jobs")."""

    name: str
    schema: str | None = None

    @classmethod
    def parse(cls, text: str) -> TableName:
        parts = text.strip().split(".")
        if len(parts) == 1:
            return cls(check_name(parts[0], "queue table name"))
        if len(parts) == 2:
            return cls(check_name(parts[1], "queue table name"), check_name(parts[0], "schema name"))
        raise ConfigError(f"option 'queue' = {text!r} is not allowed: use 'table' or 'schema.table'")

    def __str__(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name
