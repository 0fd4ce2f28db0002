"""The tag a sink task's rows carry: no range of stage tags that publish or discard selects holds one."""

from __future__ import annotations

import hashlib

from sqlqueue.producer import ROW_TAG_DIGITS, row_tag
from sqlqueue.schema import PAST_HEX

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


def test_a_row_tag_is_shorter_than_the_writer_key_that_starts_every_range():
    """So it is a prefix of a range's bounds, which sorts below both, or differs from both at one place."""
    assert {len(row_tag(tag)) for tag in TAGS} == {12}


def test_a_row_tag_is_lowercase_letters_and_digits_that_carry_62_bits():
    """One case only, since SQL Server's usual collations do not tell cases apart; 36**12 > 2**62."""
    assert set("".join(row_tag(tag) for tag in TAGS)) == set(ROW_TAG_DIGITS)
    assert len(ROW_TAG_DIGITS) ** 12 > 2**62


def test_a_row_tag_is_the_same_for_the_same_stage_tag_and_differs_between_them():
    assert row_tag(TAGS[0]) == row_tag(TAGS[0])
    assert len({row_tag(tag) for tag in TAGS}) == len(TAGS)
