"""Message groups: rows that share a group column's value are processed in order, one claim at a time,
while different groups go in parallel (Amazon SQS FIFO's MessageGroupId, pgmq's grouped reads).

A claim takes from each group only its first rows in the claim order, at most ``per_group`` of them, and
only from groups with no row in flight with any claimer and none waiting for a retry
(statements.claims.Claims.grouped). A read task gets every row of a group it reads, in the claim order
(statements.claims.Claims.read_grouped).
"""

from __future__ import annotations

from dataclasses import dataclass

# Most rows of one group a claim takes: a hundredth of the default micro-batch (maxRowsPerTrigger 10,000),
# so one busy group cannot fill a batch, and its next rows wait only for the batch to commit.
PER_GROUP = 100


@dataclass(frozen=True)
class Grouping:
    """Claim by message group: ``column`` names each row's group."""

    column: str
    per_group: int = PER_GROUP
