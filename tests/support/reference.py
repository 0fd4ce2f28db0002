"""The docs' configuration reference (docs/reference.md), generated from the code so it cannot drift.

The tables between ``<!-- reference:start -->`` and ``<!-- reference:end -->`` are rendered from
``sqlqueue.options.OPTIONS`` and the config module's settings; tests/unit/test_reference.py checks
them and rewrites them with SQLQUEUE_UPDATE_GOLDEN=1.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sqlqueue.config import CONNECTION_KEYS, JOB_SETTINGS, LOGGING_SETTINGS, PASSWORD_ENV
from sqlqueue.options import OPTIONS

START, END = "<!-- reference:start -->", "<!-- reference:end -->"
SECTION = re.compile(re.escape(START) + r"\n(.*?)" + re.escape(END), re.DOTALL)


def _default(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _table(header: str, rows: Iterable[tuple[str, ...]]) -> str:
    columns = header.split(" | ")
    lines = [f"| {header} |", "| " + " | ".join("---" for _ in columns) + " |"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def reference() -> str:
    options = _table(
        "option | role | default | meaning",
        ((f"`{o.key}`", ", ".join(o.roles), _default(o.default), o.doc) for o in OPTIONS),
    )
    jobs = _table("[job] key | default | meaning", ((f"`{s.key}`", _default(s.default), s.doc) for s in JOB_SETTINGS))
    logs = _table(
        "[logging] key | default | meaning", ((f"`{s.key}`", _default(s.default), s.doc) for s in LOGGING_SETTINGS)
    )
    connection = ", ".join(f"`{k}`" for k in CONNECTION_KEYS)
    return (
        "Source and sink options (Spark `.option(...)` keys, and the keys of the `[source]` and `[sink]` "
        "sections of a configuration file):\n\n"
        f"{options}\n\n"
        f"In configuration files, `[connection]` takes {connection} and is inherited by `[source]` and "
        f"`[sink]` unless they name a `url` or `connectionString` of their own. `password` is refused there: "
        f"`{PASSWORD_ENV}` names the environment variable that holds it. `[spark]` takes any `spark.*` key.\n\n"
        f"{jobs}\n\n{logs}\n"
    )
