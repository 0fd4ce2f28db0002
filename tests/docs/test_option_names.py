"""The options the docs name are options sqlqueue takes: renaming one without the docs fails here.

Read from every page (README.md, docs/*.md): `.option("key", …)` in any example, `--set section.key=…`,
the keys of a TOML example's sections, and prose that says "the `key` option" or "option `key`".
"""

from __future__ import annotations

import re
import tomllib

import pytest

from sqlqueue.config import CONNECTION_KEYS, JOB_SETTINGS, LOGGING_SETTINGS
from sqlqueue.options import BY_KEY, SPARK_KEYS
from tests.support.docs import PAGES, examples, prose
from tests.support.golden import ROOT

OPTION_CALL = re.compile(r"""\.option\(\s*["']([^"']+)["']""")
SET = re.compile(r"--set[ =](\w+)\.([\w.]+)=")
PROSE = re.compile(r"`([A-Za-z][\w.]*)` option\b|\boptions? `([A-Za-z][\w.]*)`")
OPTIONS = set(BY_KEY) | SPARK_KEYS
CONNECTION = {k.lower() for k in CONNECTION_KEYS}
KNOWN = {
    "source": OPTIONS,
    "sink": OPTIONS,
    "connection": CONNECTION,
    "job": {s.key.lower() for s in JOB_SETTINGS},
    "logging": {s.key.lower() for s in LOGGING_SETTINGS},
}


def named(page) -> list[tuple[str, str]]:
    """(section, key) for every option or configuration key the page names."""
    found = []
    for example in examples(page):
        found += [("source", key) for key in OPTION_CALL.findall(example.source)]
        found += SET.findall(example.source)
        if example.lang == "toml":
            for section, keys in tomllib.loads(example.source).items():
                if section != "spark":  # any spark.* setting
                    found += [(section, key) for key in keys]
    found += [("source", a or b) for a, b in PROSE.findall(prose(page))]
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_option_a_page_names_is_one_sqlqueue_takes(page):
    unknown = [
        f"{section}.{key}"
        for section, key in named(page)
        if key.lower() not in KNOWN.get(section, set()) | (CONNECTION if section in ("source", "sink") else set())
    ]
    assert unknown == [], f"{page.relative_to(ROOT)} names options sqlqueue does not take: {unknown}"


def test_the_pages_name_options_at_all():
    assert len({key for page in PAGES for _, key in named(page)}) > 15
