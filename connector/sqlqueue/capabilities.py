"""What a queue table supports beyond what every table does.

Every table sqlqueue serves is claimed from by a stream, read back by claim number, completed by its
profile's done transition, written to by the sink a batch at a time, peeked at, counted and examined.
Beyond that, each kind of table declares its capabilities as data (``kinds/own.py`` for sqlqueue's own
layout, ``kinds/adopted.py`` for a table adopted through a profile). Options, commands, the doctor and
the Spark adapters ask for the ones they use (``Queue.require``), and a table without one refuses in one
line naming what to use instead, as River's drivers answer ``ErrNotImplemented``.
"""

from __future__ import annotations

from enum import Enum


class Capability(Enum):
    """Each value says what the capability is, as an error names it."""

    CREATE = "create (sqlqueue create makes the table)"
    MIGRATE = "layout versions (sqlqueue migrate)"
    ENQUEUE = "enqueue from the command line (sqlqueue enqueue)"
    CLAIM_ORDER = "a claim order the stream chooses (options order and strictOrder)"
    PRIORITY = "priority (a priority column the order 'priority' claims by)"
    DEDUP_KEYS = "dedup keys (a dedup_key column the sink skips taken keys by)"
    KEEP_DONE = "keeping done rows (option completion = keep)"
    ACK = "per-row outcomes (option completion = ack, the sink's operation = ack)"
    DEAD_LETTERS = "dead letters in Delta (option deadLetterTable, sqlqueue redrive)"
    REQUEUE = "sending failed rows back (sqlqueue requeue)"
    PURGE = "purging finished rows (sqlqueue purge)"
    GROUPS = "message groups (option groupBy, profile.group)"
    HISTORY = "claim and completion times kept on every row (sqlqueue stats' recent waits and throughput)"
