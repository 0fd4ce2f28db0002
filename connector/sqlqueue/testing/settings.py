"""The plugin's two settings, each given on the command line, in the environment or in the ini file
(in that order of precedence).

- the database of throwaway queues: ``--sqlqueue-db``, ``SQLQUEUE_TEST_DB``, ini ``sqlqueue_db``:
  ``sqlite`` (the default: a file per test), ``postgres`` (a server the plugin starts, when
  PostgreSQL's binaries are installed) or a URL (``postgresql://user:password@host:5432/db``,
  ``sqlserver://user:password@host:1433/db?TrustServerCertificate=yes``);
- the folder holding Delta Lake's jars: ``--sqlqueue-jars``, ``SQLQUEUE_JARS_DIR``, ini ``sqlqueue_jars``.
  Without it Spark fetches them from Maven Central at start-up.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class Setting:
    option: str
    env: str
    ini: str
    help: str

    def value(self, config: pytest.Config) -> str | None:
        given = config.getoption(self.option) or os.environ.get(self.env) or config.getini(self.ini)
        return str(given).strip() or None


DATABASE = Setting(
    "--sqlqueue-db",
    "SQLQUEUE_TEST_DB",
    "sqlqueue_db",
    "where sqlqueue.testing makes throwaway queues: sqlite (default), postgres (a server it starts) or a URL",
)
JARS = Setting(
    "--sqlqueue-jars",
    "SQLQUEUE_JARS_DIR",
    "sqlqueue_jars",
    "folder holding Delta Lake's jars for sqlqueue.testing's Spark session (default: fetched from Maven Central)",
)
SETTINGS = (DATABASE, JARS)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("sqlqueue", "sqlqueue.testing (a SparkSession with Delta, throwaway queues)")
    for setting in SETTINGS:
        group.addoption(setting.option, default=None, help=f"{setting.help}; env {setting.env}")
        parser.addini(setting.ini, f"{setting.help}; overridden by {setting.option} and {setting.env}", default="")
