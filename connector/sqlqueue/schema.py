"""The queue table's shape: lifecycle columns every queue has, and the user's domain columns.

Types are portable names; each dialect maps them to SQL, and ``spark/types.py`` maps them to Spark.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .errors import ConfigError, SchemaError
from .identifiers import TableName, check_name

PORTABLE_TYPES = ("string", "text", "int", "bigint", "double", "boolean", "timestamp", "binary")

# Row states. (Rows of a sink batch Spark has not committed yet are ready but unpublished: their
# stage_tag is listed in the queue's unpublished table. Batches with dedup keys wait in its staging
# table instead.)
READY, CLAIMED, DONE, FAILED = "ready", "claimed", "done", "failed"
STATES = (READY, CLAIMED, DONE, FAILED)
# How stats show ready rows of unpublished batches.
UNPUBLISHED = "unpublished"

# Claim orders and the sort key each one needs from the ready-row index.
ORDERS = {
    "heap": (),
    "fifo": (("id", "ASC"),),
    "lifo": (("id", "DESC"),),
    "priority": (("priority", "DESC"), ("id", "ASC")),
    "pending": (("due_at", "ASC"), ("id", "ASC")),
}
# Key of the ready-row index for a queue declared with each order.
READY_INDEX_KEY = {
    "heap": (("id", "ASC"),),
    "fifo": (("id", "ASC"),),
    "lifo": (("id", "ASC"),),  # scanned backwards
    "priority": (("priority", "DESC"), ("id", "ASC")),
    "pending": (("due_at", "ASC"), ("id", "ASC")),
}


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool = True

    def __post_init__(self) -> None:
        check_name(self.name, "column name")
        if self.type not in PORTABLE_TYPES:
            raise SchemaError(
                f"column {self.name!r} has type {self.type!r}; allowed types: {', '.join(PORTABLE_TYPES)}"
            )


@dataclass(frozen=True)
class Subtype:
    """A table that extends a queue table by its key (Profile.include), as its catalog describes it: its
    columns in its order, the queue table's key columns among them (spelled as the queue table spells them)."""

    table: TableName
    columns: tuple[Column, ...]
    key: tuple[str, ...]

    @property
    def name(self) -> str:
        """The name a source's struct column and a sink's struct column take: the table's own."""
        return self.table.name

    @property
    def fields(self) -> tuple[Column, ...]:
        """Its columns but the key: what a row's struct holds (the key is the base row's)."""
        keys = {k.lower() for k in self.key}
        return tuple(c for c in self.columns if c.name.lower() not in keys)


@dataclass(frozen=True)
class Included:
    """A subtype table a sink's batch writes: the struct column named after it holds each row's row of it
    (or none), whose fields fill ``columns`` of it; its key is the base row's."""

    subtype: Subtype
    columns: tuple[Column, ...]


# (column, default kind) — "identity", "now", a literal, or None.
LIFECYCLE: tuple[tuple[Column, str | None], ...] = (
    (Column("id", "bigint", False), "identity"),
    (Column("state", "string", False), f"'{READY}'"),
    (Column("priority", "int", False), "0"),
    (Column("enqueued_at", "timestamp", False), "now"),
    (Column("due_at", "timestamp", False), "now"),
    (Column("attempts", "int", False), "0"),
    (Column("max_attempts", "int"), None),
    (Column("consumer", "string"), None),
    (Column("claim_seq", "bigint"), None),
    (Column("claimed_at", "timestamp"), None),
    (Column("lease_until", "timestamp"), None),
    (Column("completed_at", "timestamp"), None),
    (Column("last_error", "text"), None),
    (Column("dedup_key", "string"), None),
    (Column("stage_tag", "string"), None),
)
LIFECYCLE_NAMES = tuple(c.name for c, _ in LIFECYCLE)
LIFECYCLE_TYPES = {c.name: c for c, _ in LIFECYCLE}
# What a consumer sees by default besides the domain columns.
DEFAULT_SOURCE_LIFECYCLE = ("id", "enqueued_at", "attempts")
# What a producer may set besides the domain columns.
WRITABLE_LIFECYCLE = ("priority", "due_at", "dedup_key", "max_attempts")
# Which writer, batch, run, task and task attempt wrote a row of a sink batch (Producer.tag), in the
# staging table always and in the queue table until the row is claimed. A dead-letter move reuses the
# column to mark the failed rows it holds (deadletter:<mover>:<number>).
STAGE_TAG = Column("stage_tag", "string", False)
# Sorts after every hex digit: [prefix, prefix + PAST_HEX] is every tag whose prefix is followed by hex.
PAST_HEX = "g"

# Queue table layouts. ``create`` records the layout it builds in the queue's layout table; code
# runs only on the layout it was written for, and ``sqlqueue migrate`` brings an older table there.
#   1  every table made before layouts were recorded (no record), in four shapes over time: the
#      sink's rows in a 'staged' state (ix_<q>_staged); every batch in <q>_staging (no stage_tag
#      column); unpublished tags (0.1.0); the ready index covering stage_tag with ix_<q>_tag on
#      every engine. Only the last one's ready index covered stage_tag.
#   2  the sink writes ready rows under tags listed in <q>_unpublished (keyed batches stage in
#      <q>_staging); no 'staged' state; the ready index covers stage_tag; SQL Server indexes
#      tagged rows (ix_<q>_tag).
#   3  a claim may hold its rows as runs of consecutive ids in <q>_claims, beside the table, rather
#      than mark each row: such rows stay 'ready' in the table, and a claim passes over the runs.
#      PostgreSQL's ready index leaves stage_tag out again (Engine.ready_index_covers_tag).
LAYOUT = 3
UNRECORDED_LAYOUT = 1
# The lifecycle columns every layout-1 table has (stage_tag came and went while the sink changed).
LAYOUT_1_COLUMNS = tuple(n for n in LIFECYCLE_NAMES if n != STAGE_TAG.name)
# The state layout 1's sink gave rows of batches Spark had not committed yet.
STAGED = "staged"


def keyed(columns: Sequence[Column]) -> bool:
    """Whether rows of ``columns`` carry dedup keys (they are then inserted only when new)."""
    return any(c.name == "dedup_key" for c in columns)


def parse_columns(text: str) -> tuple[Column, ...]:
    """Parse "payload text, customer_id bigint not null" into domain columns."""
    columns = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        words = item.split()
        if len(words) not in (2, 4) or (len(words) == 4 and [w.lower() for w in words[2:]] != ["not", "null"]):
            raise ConfigError(f"column definition {item!r} is not allowed: use 'name type [not null]'")
        columns.append(Column(words[0], words[1].lower(), nullable=len(words) == 2))
    return tuple(columns)


@dataclass(frozen=True)
class QueueSpec:
    """What ``create`` builds: a table, its domain columns and the order its ready index serves."""

    table: TableName
    domain: tuple[Column, ...] = (Column("payload", "text"),)
    order: str = "fifo"
    # The domain column naming each row's message group, which gets an index for grouped claims.
    group: str | None = None

    def __post_init__(self) -> None:
        if self.order not in ORDERS:
            raise ConfigError(f"queue order {self.order!r} is not allowed: use one of {', '.join(ORDERS)}")
        if self.group is not None and self.group not in {c.name for c in self.domain}:
            # `sqlqueue create --group COLUMN` adds the column when --columns does not name it.
            object.__setattr__(self, "domain", (*self.domain, Column(self.group, "string")))
        clash = {c.name for c in self.domain} & set(LIFECYCLE_NAMES)
        if clash:
            raise SchemaError(f"domain column(s) {', '.join(sorted(clash))} clash with lifecycle columns; rename them")


def writable_columns(names: Sequence[str], table_columns: Sequence[Column], table: TableName) -> tuple[Column, ...]:
    """The columns of ``table`` that receive ``names`` (matched ignoring case), in that order.

    A producer writes domain columns and the optional lifecycle columns in ``WRITABLE_LIFECYCLE``;
    it must give every NOT NULL domain column, since domain columns have no default.
    """
    domain = [c for c in table_columns if c.name not in LIFECYCLE_NAMES]
    writable = [*domain, *(LIFECYCLE_TYPES[n] for n in WRITABLE_LIFECYCLE)]
    required = [c.name for c in domain if not c.nullable]

    def why_not(name: str) -> str:
        return "is managed by sqlqueue" if name.lower() in LIFECYCLE_NAMES else f"is not in queue table {table}"

    return picked_columns(names, writable, required, why_not, f"NOT NULL in queue table {table}")


def picked_columns(
    names: Sequence[str], writable: Sequence[Column], required: Sequence[str], why_not: Callable[[str], str], need: str
) -> tuple[Column, ...]:
    """The ``writable`` columns that receive ``names`` (matched ignoring case), in that order, or one error
    naming a column that is not writable (``why_not`` says why), given twice, or ``required`` (``need``
    says why) and missing."""
    by_lower = {c.name.lower(): c for c in writable}
    allowed = ", ".join(c.name for c in writable)
    columns: list[Column] = []
    for name in names:
        column = by_lower.get(name.lower())
        if column is None:
            raise SchemaError(f"column {name!r} {why_not(name)}; the columns a producer may write are: {allowed}")
        if column in columns:
            raise SchemaError(f"column {name!r} is given twice (names are matched ignoring case)")
        columns.append(column)
    given = {c.name.lower() for c in columns}
    missing = [n for n in required if n.lower() not in given]
    if missing:
        raise SchemaError(f"column(s) {', '.join(map(repr, missing))} are required ({need}) but missing from the rows")
    return tuple(columns)
