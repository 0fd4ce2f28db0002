"""The docs' configuration reference (docs/reference.md) is the code's: generated from OPTIONS, and
every key matches.

Regenerate the reference after an intended change with
``SQLQUEUE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_reference.py``.
"""

from __future__ import annotations

import inspect
import re

import pytest

from sqlqueue import config, options
from sqlqueue.errors import ConfigError
from sqlqueue.options import BY_KEY, OPTIONS, parse_options
from sqlqueue.profile import PROFILE_FIELDS
from tests.support.golden import ROOT, regenerate_hint, updating
from tests.support.reference import SECTION, START, reference

REFERENCE = ROOT / "docs" / "reference.md"
THIS = "tests/unit/test_reference.py"


def test_the_docs_reference_equals_the_generated_one() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    match = SECTION.search(text)
    assert match, f"docs/reference.md has no {START} section"
    if updating():
        REFERENCE.write_text(text[: match.start(1)] + reference() + text[match.end(1) :], encoding="utf-8")
        return
    assert match.group(1) == reference(), f"docs/reference.md is stale; regenerate with: {regenerate_hint(THIS)}"


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.key)
def test_every_documented_option_is_accepted_by_its_roles(option) -> None:
    for role in option.roles:
        try:
            parse_options({option.key: "x"}, role)
        except ConfigError as exc:
            assert "unknown option" not in str(exc)


def test_every_option_the_code_reads_is_documented() -> None:
    read = set(re.findall(r'\bv\["(\w+)"\]', inspect.getsource(options)))
    assert read and read <= {o.key for o in OPTIONS}


def test_every_documented_option_is_read_by_the_code() -> None:
    source = inspect.getsource(options)
    # The profile.* options are read in one loop over the profile's fields.
    per_field = {f"profile.{f}" for f in PROFILE_FIELDS} if 'values[f"profile.{f}"]' in source else set()
    unread = [
        o.key
        for o in OPTIONS
        if f'v["{o.key}"]' not in source and f'values["{o.key}"]' not in source and o.key not in per_field
    ]
    assert unread == []


def test_every_job_setting_the_code_reads_is_documented() -> None:
    read = set()
    for module in (
        "jobs/queue_to_delta.py",
        "jobs/queue_to_queue.py",
        "jobs/table_to_queue.py",
        "connector/sqlqueue/spark/jobs.py",
    ):
        read |= set(re.findall(r'config\.(?:setting|required)\("(\w+)"\)', (ROOT / module).read_text()))
    assert read and read <= {s.key for s in config.JOB_SETTINGS}


def test_option_keys_are_unique_ignoring_case() -> None:
    assert len(BY_KEY) == len(OPTIONS)


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.key)
def test_every_option_has_an_example_and_a_type(option) -> None:
    assert option.example and option.kind
