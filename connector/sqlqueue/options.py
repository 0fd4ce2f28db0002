"""Every option key, its default, its check and its meaning, in one place.

Keys are matched case-insensitively (Spark lowercases them). Unknown keys are refused with the
list of valid ones. ``OPTIONS`` is also the source of the configuration reference, docs/reference.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .capabilities import Capability
from .connection import ConnectionSpec, parse_connection
from .errors import ConfigError, invalid_option, missing_option, unknown_options
from .groups import PER_GROUP, Grouping
from .identifiers import TableName
from .profile import FIELD_DOCS, PRESETS, PROFILE_FIELDS, Profile, profile_from
from .retry import MAX_WAIT_S, RetryPolicy
from .schema import ORDERS

SOURCE, SINK = "source", "sink"


def text(key: str, value: str) -> str:
    return value


text.kind = "text"  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Option:
    key: str
    default: Any
    doc: str
    roles: tuple[str, ...] = (SOURCE, SINK)
    parse: Callable[[str, str], Any] = text
    example: str = ""
    unit: str = ""  # what a whole number counts, for the reference

    @property
    def kind(self) -> str:
        """The value's type as the reference shows it (each check names its own, ``parse.kind``)."""
        kind = getattr(self.parse, "kind", "text")
        return f"{kind} ({self.unit})" if self.unit else kind


def _kind(kind: str) -> Callable[[Callable[[str, str], Any]], Callable[[str, str], Any]]:
    """``parse`` as a check whose value the reference shows as ``kind``."""

    def mark(parse: Callable[[str, str], Any]) -> Callable[[str, str], Any]:
        def check(key: str, value: str) -> Any:
            return parse(key, value)

        check.kind = kind  # type: ignore[attr-defined]
        return check

    return mark


def whole_number(lower: int = 1, upper: int = 2**31 - 1) -> Callable[[str, str], int]:
    @_kind(f"whole number, {lower} to {upper:,}" if upper < 2**31 - 1 else f"whole number, at least {lower}")
    def parse(key: str, value: str) -> int:
        try:
            number = int(value)
        except (TypeError, ValueError):
            number = lower - 1
        if not lower <= number <= upper:
            raise invalid_option(key, value, f"a whole number from {lower} to {upper}")
        return number

    return parse


@_kind("true or false")
def boolean(key: str, value: str) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise invalid_option(key, value, "true or false")
    return text == "true"


def one_of(*choices: str) -> Callable[[str, str], str]:
    @_kind(f"one of {', '.join(choices)}")
    def parse(key: str, value: str) -> str:
        if str(value).lower() not in choices:
            raise invalid_option(key, value, f"one of {', '.join(choices)}")
        return str(value).lower()

    return parse


def bounded_text(most: int) -> Callable[[str, str], str]:
    @_kind(f"text, at most {most} characters")
    def parse(key: str, value: str) -> str:
        text = str(value).strip()
        if not 1 <= len(text) <= most:
            raise invalid_option(key, value, f"a non-empty text of at most {most} characters")
        return text

    return parse


_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|h)\s*$", re.IGNORECASE)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}


@_kind("duration: a number with ms, s, m or h")
def duration_ms(key: str, value: str) -> int:
    """A duration with its unit, as Kafka's maxTriggerDelay takes it: 500ms, 30s, 15m, 1h."""
    match = _DURATION.match(str(value))
    if not match:
        raise invalid_option(key, value, "a whole number with a unit: ms, s, m or h (e.g. 30s, 15m)")
    return int(match.group(1)) * _UNIT_MS[match.group(2).lower()]


@_kind("column names, comma-separated")
def column_list(key: str, value: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in str(value).split(",") if n.strip())
    if not names:
        raise invalid_option(key, value, "a comma-separated list of column names")
    return names


OPTIONS: tuple[Option, ...] = (
    Option(
        "url",
        None,
        "Where the queue lives: sqlite:///path/queue.db, postgresql://host:5432/db or "
        "sqlserver://host:1433/db?Encrypt=yes (query parameters become ODBC keywords; ?driver= picks the "
        "ODBC driver, else ODBC Driver 18, 17, then FreeTDS).",
        example="sqlserver://db.example.com:1433/ops?Encrypt=yes",
    ),
    Option(
        "connectionString",
        None,
        "Instead of url: a driver connection string given verbatim (an ODBC string "
        "for SQL Server, a libpq conninfo for PostgreSQL); needs dialect.",
        example="DRIVER={ODBC Driver 18 for SQL Server};SERVER=tcp:db,1433;DATABASE=ops",
    ),
    Option("dialect", None, "With connectionString: sqlserver or postgresql.", example="sqlserver"),
    Option("user", None, "Database login; overrides a user in the url.", example="sqlqueue_connector"),
    Option(
        "password",
        None,
        "Database password; never logged or shown in errors. Jobs read it from the "
        "environment variable their config names.",
        example="(from the environment: passwordEnv)",
    ),
    Option(
        "queue",
        None,
        "The queue table, optionally schema-qualified (dbo.jobs). Also accepted as the load()/save() path.",
        parse=_kind("table name")(lambda k, v: TableName.parse(v)),
        example="dbo.orders",
    ),
    Option(
        "consumer",
        None,
        "Stable identity of this consumer, recorded on the rows it claims. Default: a "
        "generated id stored in the query's checkpoint with its first offset.",
        roles=(SOURCE,),
        example="orders-to-delta",
    ),
    Option(
        "maxRowsPerTrigger",
        10_000,
        "Most rows one micro-batch claims (Spark's default read limit).",
        roles=(SOURCE,),
        parse=whole_number(),
        example="50000",
        unit="rows",
    ),
    Option(
        "minRowsPerTrigger",
        None,
        "Fewest ready rows worth a micro-batch (like Kafka's minOffsetsPerTrigger): "
        "with fewer, the trigger passes without a batch, until maxTriggerDelay has gone by since the last batch. "
        "Not applied under Trigger.AvailableNow. Default: any rows.",
        roles=(SOURCE,),
        parse=whole_number(),
        example="1000",
        unit="rows",
    ),
    Option(
        "maxTriggerDelay",
        "15m",
        "With minRowsPerTrigger: the longest wait since the last micro-batch before "
        "a smaller batch is taken anyway (ms, s, m or h, e.g. 30s).",
        roles=(SOURCE,),
        parse=duration_ms,
        example="30s",
    ),
    Option(
        "numPartitions",
        2,
        "Spark tasks that read one micro-batch; the claimed rows are split into this many id ranges of equal size.",
        roles=(SOURCE,),
        parse=whole_number(1, 512),
        example="4",
        unit="read tasks",
    ),
    Option(
        "claimChunkSize",
        None,
        "Most rows one claim or completion statement touches; each chunk is its own "
        "transaction. Default: 4000 on SQL Server (below the 5,000-lock escalation threshold), one statement "
        "per batch elsewhere.",
        roles=(SOURCE,),
        parse=whole_number(1, 1_000_000),
        example="4000",
        unit="rows",
    ),
    Option(
        "order",
        "fifo",
        "Claim order: heap (any unlocked row, fastest), fifo (enqueue order), lifo, priority "
        "(highest priority, then fifo) or pending (earliest due time first).",
        roles=(SOURCE,),
        parse=one_of(*ORDERS),
        example="priority",
    ),
    Option(
        "strictOrder",
        False,
        "true waits for other consumers' locked rows instead of skipping them: strict "
        "order at the price of serialised consumers.",
        roles=(SOURCE,),
        parse=boolean,
        example="true",
    ),
    Option(
        "groupBy",
        None,
        "A column naming each row's message group: a group's rows are processed in the claim order, one micro-batch "
        "at a time, never while another of its rows is in flight or waits for a retry; groups go in parallel. On an "
        "adopted table, profile.group sets it too.",
        roles=(SOURCE,),
        parse=bounded_text(128),
        example="customer_id",
    ),
    Option(
        "maxRowsPerGroup",
        None,
        f"With groupBy: most rows of one group a micro-batch takes (default {PER_GROUP}), so one busy group cannot "
        "fill a batch and the others are served in turn.",
        roles=(SOURCE,),
        parse=whole_number(),
        example="10",
        unit="rows",
    ),
    Option(
        "prefetch",
        True,
        "Claim the next batch in the background while Spark processes the current one, when the current "
        "one is full (a backlog; up to two batches are claimed at a time). After a smaller batch the next "
        "one claims when it starts, so rows that arrive meanwhile are not held back a batch.",
        roles=(SOURCE,),
        parse=boolean,
        example="false",
    ),
    Option(
        "leaseSeconds",
        300,
        "How long a claim holds its rows before another consumer may take them.",
        roles=(SOURCE,),
        parse=whole_number(),
        example="600",
        unit="seconds",
    ),
    Option(
        "completion",
        "delete",
        "What happens to rows of a committed batch: delete; keep (state 'done', "
        "purged later); or ack (they stay claimed until the job acknowledges each row through the sink's "
        "ack operation, or their lease expires). On the ack sink, delete or keep says what outcome done does.",
        parse=one_of("delete", "keep", "ack"),
        example="keep",
    ),
    Option(
        "maxAttempts",
        5,
        "Claims a row gets before a retry or an expired lease fails it for good (state "
        "'failed'); a row's own max_attempts column overrides it.",
        parse=whole_number(1, 1000),
        example="3",
        unit="claims",
    ),
    Option(
        "emptyPollIntervalMs",
        1000,
        "How long a micro-batch waits when the queue has nothing ready before it reports no new data.",
        roles=(SOURCE,),
        parse=whole_number(1, 3_600_000),
        example="250",
        unit="milliseconds",
    ),
    Option(
        "columns",
        None,
        "Columns to return, comma-separated. Default: id, enqueued_at, attempts and every domain column.",
        roles=(SOURCE,),
        parse=column_list,
        example="id, payload, attempts",
    ),
    Option(
        "deadLetterTable",
        None,
        "A Delta table (a path or a table name) that failed rows move to, exactly once, leaving the queue "
        "table: done by queue_to_delta after each micro-batch's Delta commit (at most every 30 s), or by "
        "sqlqueue.spark.deadletters.with_dead_letters in your own foreachBatch. The source itself cannot "
        "write Delta (its reader runs without a SparkSession). Default: failed rows stay in the queue.",
        roles=(SOURCE,),
        parse=bounded_text(1000),
        example="/lake/orders_dead_letters",
    ),
    Option(
        "retryTimeout",
        "1m",
        "How long a step that failed on a lost or refused connection, a database restarting, a deadlock or "
        "a lock timeout is tried again, in source and sink tasks and on the driver, before the query fails "
        "(ms, s, m or h; 0s: never). Each retry logs one line.",
        parse=duration_ms,
        example="5m",
    ),
    Option(
        "retryBackoffMs",
        1000,
        f"Wait before the first retry; it doubles each time, up to {MAX_WAIT_S:g} s a wait.",
        parse=whole_number(1, int(MAX_WAIT_S * 1000)),
        example="500",
        unit="milliseconds",
    ),
    Option(
        "fetchSize",
        10_000,
        "Rows fetched from the database per Arrow record batch in a read task.",
        roles=(SOURCE,),
        parse=whole_number(1, 1_000_000),
        example="50000",
        unit="rows",
    ),
    Option(
        "writerId",
        None,
        "The identity under which the sink ledger records the batches it wrote, so a batch "
        "Spark writes again is not applied twice. Streams default to the query's id, which stays the same "
        "across restarts from one checkpoint; a df.write inside foreachBatch gives it with batchId. Two "
        "writers must not share one.",
        roles=(SINK,),
        parse=bounded_text(200),
        example="orders-enqueuer",
    ),
    Option(
        "batchId",
        None,
        "With writerId, on a df.write (e.g. the batch id inside foreachBatch): makes that write "
        "exactly once, like Delta's txnAppId/txnVersion.",
        roles=(SINK,),
        parse=whole_number(0, 2**62),
        example="(the batch id foreachBatch gives)",
    ),
    Option(
        "operation",
        "enqueue",
        "enqueue: the rows become new queue rows. ack: each row (columns id, or an adopted table's key "
        "(profile.key), outcome, and optionally error, response, step, retryAfterSeconds, attempts) acknowledges "
        "a claimed row: outcome done, retry (back after retryAfterSeconds, or backoffSeconds doubled per attempt) "
        "or failed.",
        roles=(SINK,),
        parse=one_of("enqueue", "ack"),
        example="ack",
    ),
    Option(
        "backoffSeconds",
        10,
        "ack retry without retryAfterSeconds: wait this long after the first attempt, "
        "doubling with each further attempt (±10% jitter).",
        roles=(SINK,),
        parse=whole_number(0, 86_400),
        example="30",
        unit="seconds",
    ),
    Option(
        "maxBackoffSeconds",
        3600,
        "The longest wait a computed retry backoff reaches.",
        roles=(SINK,),
        parse=whole_number(0, 30 * 86_400),
        example="86400",
        unit="seconds",
    ),
    Option(
        "profile",
        None,
        "Adopt a queue table sqlqueue did not create, as it is: "
        f"{', '.join(PRESETS)} (docs/adopting.md); the profile.* options map "
        "its columns and values over the preset's. Unset: a queue table in sqlqueue's own layout.",
        roles=(SOURCE, SINK),
        parse=one_of(*PRESETS),
        example="relational",
    ),
    *(
        Option(
            f"profile.{field}",
            None,
            FIELD_DOCS[field].doc,
            roles=(SOURCE, SINK),
            parse=_kind(FIELD_DOCS[field].kind)(text),
            example=FIELD_DOCS[field].example,
        )
        for field in PROFILE_FIELDS
    ),
)
BY_KEY = {o.key.lower(): o for o in OPTIONS}
# Keys Spark itself may put into a data source's options.
SPARK_KEYS = {"path", "checkpointlocation"}
# Options an earlier sqlqueue took, and what to set instead.
RETIRED = {
    "maxretries": "option 'maxRetries' is gone: retries are bounded by time, not counted; remove it and set "
    "'retryTimeout' instead (a duration: 1m by default, 0s never retries)",
}


def refuse_retired(key: str) -> None:
    """One line naming what replaced a retired option, rather than the list of every valid key."""
    if key.lower() in RETIRED:
        raise ConfigError(RETIRED[key.lower()])


def parse_options(raw: Mapping[str, str], role: str) -> dict[str, Any]:
    """Check raw Spark options for a role and return {canonical key: parsed value}; defaults are
    written as a user writes the option (15m) and parsed the same way."""
    given = {str(k).lower(): v for k, v in raw.items()}
    for key in given:
        refuse_retired(key)
    valid = {k for k, o in BY_KEY.items() if role in o.roles}
    unknown = set(given) - valid - SPARK_KEYS
    if unknown:
        raise unknown_options(unknown, [BY_KEY[k].key for k in valid])
    if "path" in given and "queue" not in given:
        given["queue"] = given["path"]
    values = {}
    for key in valid:
        option = BY_KEY[key]
        value = given[key] if given.get(key) is not None else option.default
        values[option.key] = None if value is None else option.parse(option.key, value)
    return values


@dataclass(frozen=True)
class QueueAddress:
    """Where a queue is: the connection and the table. Built and checked on the driver."""

    connection: ConnectionSpec = field(repr=False)
    table: TableName
    # How the table expresses a queue when sqlqueue adopted it; None: sqlqueue's own layout.
    profile: Profile | None = None

    def __repr__(self) -> str:
        return f"QueueAddress({self.table} at {self.connection.display})"


def queue_address(values: Mapping[str, Any]) -> QueueAddress:
    connection = parse_connection(
        values["url"], values["connectionString"], values["dialect"], values["user"], values["password"]
    )
    if values["queue"] is None:
        raise missing_option("queue", "name the queue table, e.g. .option('queue', 'dbo.jobs')")
    return QueueAddress(connection, values["queue"], _profile(values, connection.dialect))


def _profile(values: Mapping[str, Any], engine: str) -> Profile | None:
    """The profile the options describe: a preset, the profile.* settings over it, the source's lease; its
    filter read as one boolean expression in the ``engine``'s SQL."""
    settings = {f: values[f"profile.{f}"] for f in PROFILE_FIELDS if values.get(f"profile.{f}") is not None}
    if values.get("profile") is None:
        if settings:
            raise missing_option("profile", f"profile.* options need a preset to set them over: {', '.join(PRESETS)}")
        return None
    if "leaseSeconds" in values and "lease_seconds" not in settings:
        settings["lease_seconds"] = str(values["leaseSeconds"])
    profile = profile_from(values["profile"], settings)
    if profile.filter is not None:
        from .filters import check_filter  # sqlglot: imported where a filter is set

        check_filter(profile.filter, engine)
    return profile


@dataclass(frozen=True)
class SourceOptions:
    address: QueueAddress
    consumer: str | None
    max_rows_per_trigger: int
    min_rows_per_trigger: int | None
    max_trigger_delay_ms: int
    num_partitions: int
    claim_chunk_size: int | None
    order: str
    strict_order: bool
    prefetch: bool
    lease_seconds: int
    completion: str
    max_attempts: int
    empty_poll_interval_ms: int
    columns: tuple[str, ...] | None
    fetch_size: int
    retry: RetryPolicy
    dead_letter_table: str | None = None
    # Claim by message group (option groupBy, or the adopted table's profile.group); None: ungrouped.
    groups: Grouping | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, str]) -> SourceOptions:
        v = parse_options(raw, SOURCE)
        address = queue_address(v)
        group = v["groupBy"] or (address.profile.group if address.profile else None)
        if v["maxRowsPerGroup"] is not None and group is None:
            raise ConfigError("option 'maxRowsPerGroup' needs message groups: set option 'groupBy' to a column")
        if v["strictOrder"] and v["order"] == "heap":
            raise ConfigError(
                "option 'strictOrder' = true needs an ordered claim: set 'order' to fifo, lifo, priority or pending"
            )
        if v["minRowsPerTrigger"] is not None and v["minRowsPerTrigger"] > v["maxRowsPerTrigger"]:
            raise invalid_option(
                "minRowsPerTrigger", v["minRowsPerTrigger"], f"at most maxRowsPerTrigger ({v['maxRowsPerTrigger']})"
            )
        return cls(
            address=address,
            consumer=v["consumer"],
            max_rows_per_trigger=v["maxRowsPerTrigger"],
            min_rows_per_trigger=v["minRowsPerTrigger"],
            max_trigger_delay_ms=v["maxTriggerDelay"],
            num_partitions=v["numPartitions"],
            claim_chunk_size=v["claimChunkSize"],
            order=v["order"],
            strict_order=v["strictOrder"],
            prefetch=v["prefetch"],
            lease_seconds=v["leaseSeconds"],
            completion=v["completion"],
            max_attempts=v["maxAttempts"],
            empty_poll_interval_ms=v["emptyPollIntervalMs"],
            columns=v["columns"],
            fetch_size=v["fetchSize"],
            retry=RetryPolicy(v["retryTimeout"], v["retryBackoffMs"]),
            dead_letter_table=v["deadLetterTable"],
            groups=None if group is None else Grouping(group, v["maxRowsPerGroup"] or PER_GROUP),
        )

    @property
    def needs(self) -> frozenset[Capability]:
        """What these options use of the table beyond every table's basics (capabilities.Capability): a
        table that lacks one refuses the source in one line (Queue.require)."""
        wanted = {
            Capability.KEEP_DONE: self.completion == "keep",
            Capability.ACK: self.completion == "ack",
            Capability.CLAIM_ORDER: self.strict_order,
            Capability.PRIORITY: self.order == "priority",
            Capability.DEAD_LETTERS: self.dead_letter_table is not None,
            Capability.GROUPS: self.groups is not None,
        }
        return frozenset(c for c, used in wanted.items() if used)


@dataclass(frozen=True)
class SinkOptions:
    address: QueueAddress
    writer_id: str | None
    batch_id: int | None
    retry: RetryPolicy
    operation: str
    keep_done: bool
    max_attempts: int
    backoff_seconds: int
    max_backoff_seconds: int

    @classmethod
    def parse(cls, raw: Mapping[str, str]) -> SinkOptions:
        v = parse_options(raw, SINK)
        if v["completion"] == "ack":
            raise invalid_option("completion", "ack", "on the sink, delete or keep (what outcome done does)")
        return cls(
            address=queue_address(v),
            writer_id=v["writerId"],
            batch_id=v["batchId"],
            retry=RetryPolicy(v["retryTimeout"], v["retryBackoffMs"]),
            operation=v["operation"],
            keep_done=v["completion"] == "keep",
            max_attempts=v["maxAttempts"],
            backoff_seconds=v["backoffSeconds"],
            max_backoff_seconds=v["maxBackoffSeconds"],
        )

    @property
    def needs(self) -> frozenset[Capability]:
        """What these options use of the table beyond every table's basics: the ack operation and the
        settings of its outcomes (what done does, attempts, backoff) are per-row outcomes."""
        settings = (self.max_attempts, self.backoff_seconds, self.max_backoff_seconds)
        defaults = tuple(BY_KEY[k].default for k in ("maxattempts", "backoffseconds", "maxbackoffseconds"))
        acking = self.operation == "ack" or self.keep_done or settings != defaults
        return frozenset({Capability.ACK}) if acking else frozenset()
