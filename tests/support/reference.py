"""The docs' configuration reference (docs/reference.md), generated from the code so it cannot drift.

The tables between ``<!-- reference:start -->`` and ``<!-- reference:end -->`` are rendered from
``sqlqueue.options.OPTIONS`` and the config module's settings; tests/unit/test_reference.py checks
them and rewrites them with SQLQUEUE_UPDATE_GOLDEN=1.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sqlqueue.config import CONNECTION_KEYS, JOB_SETTINGS, LOGGING_SETTINGS, PASSWORD_ENV
from sqlqueue.options import OPTIONS, SINK, SOURCE, Option

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


def _options(options: Iterable[Option]) -> str:
    return _table(
        "option | type | default | example | meaning",
        ((f"`{o.key}`", o.kind, _default(o.default), f"`{o.example}`" if o.example else "", o.doc) for o in options),
    )


def reference() -> str:
    where = [o for o in OPTIONS if o.key in CONNECTION_OPTIONS]
    shared = [o for o in OPTIONS if set(o.roles) == {SOURCE, SINK} and o not in where and not _adoption(o)]
    source = [o for o in OPTIONS if o.roles == (SOURCE,)] + shared
    sink = [o for o in OPTIONS if o.roles == (SINK,)] + shared
    adoption = [o for o in OPTIONS if _adoption(o)]
    jobs = _table("[job] key | default | meaning", ((f"`{s.key}`", _default(s.default), s.doc) for s in JOB_SETTINGS))
    logs = _table(
        "[logging] key | default | meaning", ((f"`{s.key}`", _default(s.default), s.doc) for s in LOGGING_SETTINGS)
    )
    connection = ", ".join(f"`{k}`" for k in CONNECTION_KEYS)
    return (
        "### Where the queue is (source and sink)\n\n"
        f"{_options(where)}\n\n"
        '### The source (`spark.readStream.format("sqlqueue")`, a `[source]` section)\n\n'
        f"{_options(source)}\n\n"
        '### The sink (`df.write` and `writeStream` `.format("sqlqueue")`, a `[sink]` section)\n\n'
        f"{_options(sink)}\n\n"
        "### A table sqlqueue did not create (`profile`, `profile.*`; source and sink)\n\n"
        f"{_options(adoption)}\n\n"
        "### Configuration files of the jobs and the command line\n\n"
        f"`[connection]` takes {connection}. `[source]` and `[sink]` inherit it; one that names a `url` or "
        f"`connectionString` of its own (the command line's `--url` does) inherits only its `user` and "
        f"`{PASSWORD_ENV}`, and one whose url names another user than `[connection]` is refused. `password` is "
        f"refused in a file: `{PASSWORD_ENV}` names the environment variable that holds it. `[spark]` takes any "
        "`spark.*` key.\n\n"
        f"{jobs}\n\n{logs}\n"
    )


CONNECTION_OPTIONS = ("url", "connectionString", "dialect", "user", "password", "queue")


def _adoption(option: Option) -> bool:
    return option.key == "profile" or option.key.startswith("profile.")
