"""What a table supports is asked of its kind: options say what they need, and a table that lacks it
refuses in one line naming the table, the capability and what to use instead."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sqlqueue.capabilities import Capability
from sqlqueue.connection import parse_connection
from sqlqueue.errors import ConfigError
from sqlqueue.identifiers import TableName
from sqlqueue.kinds.adopted import INSTEAD, capabilities_of
from sqlqueue.options import SinkOptions, SourceOptions
from sqlqueue.profile import PRESETS
from sqlqueue.queue import Queue

BASE = {"url": "sqlite:///q.db", "queue": "t"}


def adopted() -> Queue:
    return Queue(parse_connection("sqlite:///q.db"), TableName("t"), PRESETS["relational"])


@pytest.mark.parametrize(
    ("key", "value", "capability"),
    [
        ("completion", "keep", Capability.KEEP_DONE),
        ("completion", "ack", Capability.ACK),
        ("strictOrder", "true", Capability.CLAIM_ORDER),
        ("deadLetterTable", "/d", Capability.DEAD_LETTERS),
        ("groupBy", "account", Capability.GROUPS),
    ],
)
def test_a_source_option_says_the_capability_it_needs(key, value, capability):
    assert SourceOptions.parse({**BASE, key: value}).needs == {capability}


@pytest.mark.parametrize(
    ("key", "value"), [("operation", "ack"), ("completion", "keep"), ("maxAttempts", "3"), ("backoffSeconds", "1")]
)
def test_the_sinks_ack_settings_need_per_row_outcomes(key, value):
    assert SinkOptions.parse({**BASE, key: value}).needs == {Capability.ACK}


def test_an_adopted_tables_profile_group_makes_its_stream_grouped():
    options = {**BASE, "profile": "relational", "profile.group": "Type", "maxRowsPerGroup": "5"}
    grouping = SourceOptions.parse(options).groups
    assert grouping is not None and (grouping.column, grouping.per_group) == ("Type", 5)


def test_max_rows_per_group_without_groups_is_refused_naming_group_by():
    with pytest.raises(ConfigError, match="option 'maxRowsPerGroup' needs message groups: set option 'groupBy'"):
        SourceOptions.parse({**BASE, "maxRowsPerGroup": "5"})


def test_default_options_need_nothing_beyond_every_tables_basics():
    assert SourceOptions.parse(BASE).needs == frozenset() and SinkOptions.parse(BASE).needs == frozenset()


@pytest.mark.parametrize("capability", [c for c in Capability if c not in capabilities_of(PRESETS["relational"])])
def test_an_adopted_table_refuses_a_capability_in_one_line_naming_the_table_and_what_to_use_instead(capability):
    with pytest.raises(ConfigError) as refused:
        adopted().require(capability)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("table t is adopted through profile relational, which does not support ")
    assert capability.value in message and INSTEAD[capability] in message


def test_sqlqueues_own_layout_supports_every_capability():
    own = Queue(parse_connection("sqlite:///q.db"), TableName("t"))
    assert all(own.supports(c) for c in Capability)
    own.require(*Capability)


def test_a_relational_queue_takes_per_row_outcomes():
    assert adopted().supports(Capability.ACK)


@pytest.mark.parametrize(
    ("preset", "settings"),
    [("dequeue", {}), ("started-mark", {}), ("claimer", {}), ("relational", {"retry": None}),
     ("relational", {"retry": "Completed"})],
    ids=["take", "no-status", "no-done-value", "no-retry-value", "retry-not-ready"],
)  # fmt: skip
def test_per_row_outcomes_need_a_status_with_done_failed_and_a_ready_retry_value(preset, settings):
    assert Capability.ACK not in capabilities_of(replace(PRESETS[preset], **settings))


# Every capability and the modules that ask for it (through Queue.require, Queue.supports or an
# option's needs), outside the enum and the kinds that declare it: a capability nobody asks is dead.
ASKED_BY = {
    Capability.CREATE: {"cli.py", "queue.py"},
    Capability.MIGRATE: {"cli.py", "queue.py"},
    Capability.ENQUEUE: {"cli.py", "queue.py"},
    Capability.CLAIM_ORDER: {"cli.py", "options.py"},
    Capability.PRIORITY: {"options.py"},
    Capability.DEDUP_KEYS: {"queue.py"},
    Capability.KEEP_DONE: {"options.py"},
    Capability.ACK: {"options.py", "queue.py"},
    Capability.DEAD_LETTERS: {"cli.py", "deadletters.py", "options.py"},
    Capability.REQUEUE: {"cli.py", "queue.py"},
    Capability.PURGE: {"cli.py", "queue.py"},
    Capability.HISTORY: {"cli.py", "queue.py"},
    Capability.GROUPS: {"options.py", "queue.py"},
}


def test_every_capability_is_asked_where_the_list_says():
    import re
    from pathlib import Path

    import sqlqueue

    package = Path(sqlqueue.__file__).parent
    asked: dict[Capability, set[str]] = {}
    for module in package.rglob("*.py"):
        name = module.relative_to(package).as_posix()
        if name == "capabilities.py" or name.startswith("kinds/"):
            continue
        for member in re.findall(r"Capability\.([A-Z_]+)", module.read_text()):
            asked.setdefault(Capability[member], set()).add(name)
    assert asked == ASKED_BY


def test_a_priority_order_needs_a_table_with_priority():
    assert SourceOptions.parse({**BASE, "order": "priority"}).needs == {Capability.PRIORITY}
    assert Capability.PRIORITY not in capabilities_of(PRESETS["relational"])
