"""The tag a sink task's rows carry: no range of stage tags that publish or discard selects holds one."""

from __future__ import annotations

import hashlib

from sqlqueue.producer import row_tag
from sqlqueue.schema import PAST_HEX

HEX = "0123456789abcdef"
# Stage tags as a writer makes them: writer(16) batch(16) run(8) task(8) attempt(12), lowercase hex.
TAGS = [hashlib.sha256(str(i).encode()).hexdigest()[:60] for i in range(300)]


def ranges(tag: str) -> list[tuple[str, str]]:
    """The ranges publish, discard and a task's own write select, around ``tag``."""
    writer, batch = tag[:16], tag[:32]
    return [(writer, batch + PAST_HEX), (batch, batch + PAST_HEX), (tag, tag)]


def test_no_range_of_stage_tags_holds_a_row_tag():
    bounds = [r for tag in TAGS for r in ranges(tag)]
    for tag in TAGS:
        short = row_tag(tag)
        assert not any(lo <= short <= hi for lo, hi in bounds), short


def test_a_writer_key_that_begins_with_a_row_tag_still_sorts_above_it():
    for tag in TAGS:
        short = row_tag(tag)
        for writer in (short + digit for digit in HEX):
            assert short < writer and not (writer <= short <= writer + "0" * 16 + PAST_HEX)
