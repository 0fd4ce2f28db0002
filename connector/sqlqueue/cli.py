"""sqlqueue: create, fill, inspect and repair queue tables from a terminal.

    sqlqueue create  -c conf/sqlite.toml --queue orders --columns "payload text, customer bigint"
    sqlqueue create  -c conf/sqlserver-odbc18.toml --queue dbo.orders --print   # DDL for a DBA
    sqlqueue enqueue -c conf/postgres.toml --queue orders orders.jsonl          # or - for stdin
    sqlqueue stats   -c conf/postgres.toml --queue orders
    sqlqueue doctor  -c conf/postgres.toml --queue orders
    sqlqueue migrate -c conf/postgres.toml --queue orders                       # or --print for a DBA
    sqlqueue redrive -c conf/postgres.toml --queue orders --from-delta /lake/orders_dead --limit 100
    sqlqueue adopt   -c conf/sqlserver-odbc18.toml --queue dbo.SyncQueue                 # propose a profile
    sqlqueue adopt   -c conf/sqlserver-odbc18.toml --queue dbo.SyncQueue --set source.profile=relational --apply

The queue comes from the configuration's [source] section (--sink: from [sink]); --queue and
--url override it. Errors are one line on stderr; exit status 2 for bad configuration or input,
1 for a failed database step (and for doctor, when it found a problem).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from . import layouts
from .capabilities import Capability
from .config import load_config
from .dialects.statements.inspection import ERROR_CHARS
from .doctor import PROBLEM, examine, report
from .errors import ConfigError, SchemaError, SqlQueueError
from .kinds.catalog import referencing_tables, table_columns, unique_keys
from .options import SINK, SOURCE, QueueAddress, SinkOptions, SourceOptions, whole_number
from .profile import propose, settings_of
from .queue import Queue
from .schema import DONE, FAILED, ORDERS, QueueSpec, parse_columns
from .waits import duration

BAD_INPUT, FAILED_STEP = 2, 1
_AGE = re.compile(r"^(\d+)\s*([smhd])$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
ERRORS_SHOWN = 5  # the most frequent errors of failed rows `stats` lists
# Every number a command takes, by its argparse dest: the flag to name in an error, and the least
# value allowed. Checked before anything connects, like the options of a DataFrame.
NUMBERS = {
    "limit": ("-n/--limit", 1),
    "batch_size": ("--batch-size", 1),
    "window": ("--window", 1),
    "interval": ("--interval", 0),
    "chunk_size": ("--chunk-size", 1),
    "most": ("--limit", 1),
}
PURGE_STATE, PURGE_AGE = DONE, "7d"  # purge with no filter: done rows older than a week, never dead letters


class Progress:
    """Running totals on stderr for long operations: at most one line a second, and a last one."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.started = self.shown = time.monotonic()
        self.count = 0

    def update(self, count: int) -> None:
        self.count = count
        if time.monotonic() - self.shown >= 1.0:
            self._show()

    def done(self) -> None:
        self._show()

    def _show(self) -> None:
        self.shown = time.monotonic()
        rate = self.count / max(self.shown - self.started, 1e-9)
        print(f"{self.what}: {self.count:,} rows ({rate:,.0f} rows/s)", file=sys.stderr, flush=True)


def parse_age(text: str) -> dt.timedelta:
    match = _AGE.match(text.strip())
    if not match:
        raise ConfigError(f"--older-than {text!r} is not allowed: a number and a unit s, m, h or d, e.g. 7d")
    return dt.timedelta(seconds=int(match.group(1)) * _SECONDS[match.group(2)])


def check_numbers(args: argparse.Namespace) -> None:
    """Refuse a number out of range (e.g. peek -n -3) the way an option is refused: one line, exit 2."""
    for dest, (flag, least) in NUMBERS.items():
        if getattr(args, dest, None) is not None:
            whole_number(least)(flag, getattr(args, dest))


def json_rows(lines: Iterable[str], payload_column: str | None) -> Iterator[dict[str, Any]]:
    """One row per non-empty line: a JSON object keyed by column, or with --payload the line as text."""
    for number, line in enumerate(lines, 1):
        text = line.rstrip("\n")
        if not text.strip():
            continue
        if payload_column:
            yield {payload_column: text}
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaError(
                f"line {number} is not JSON ({exc.msg}); use --payload to enqueue lines as text"
            ) from None
        if not isinstance(row, dict):
            raise SchemaError(f"line {number} is not a JSON object of column values")
        yield row


def batches(rows: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    """Rows in lists of at most ``size`` that share their column names (one insert statement each)."""
    batch: list[dict[str, Any]] = []
    for row in rows:
        if batch and (len(batch) >= size or row.keys() != batch[0].keys()):
            yield batch
            batch = []
        batch.append(row)
    if batch:
        yield batch


def _timestamps(queue: Queue, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ISO-8601 text in timestamp columns (e.g. due_at) as datetimes; without a zone, UTC."""
    stamped = [c.name for c in queue.columns() if c.type == "timestamp" and c.name in rows[0]]
    for row in rows:
        for name in stamped:
            if isinstance(row[name], str):
                try:
                    value = dt.datetime.fromisoformat(row[name])
                except ValueError:
                    raise SchemaError(f"column {name} = {row[name]!r} is not an ISO-8601 time") from None
                row[name] = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    return rows


def _show_time(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.datetime) else value


# ---- commands ----------------------------------------------------------------------------------
def create(queue: Queue, args: argparse.Namespace, order: str) -> int:
    spec = QueueSpec(queue.table, parse_columns(args.columns), args.order or order, args.group)
    if args.print:
        print(queue.engine.script(queue.dialect.schema.create_statements(spec)), end="")
        return 0
    queue.create(spec.domain, spec.order, spec.group)
    grouped = f", message groups by {spec.group}" if spec.group else ""
    print(f"queue {queue.table} is ready ({spec.order} claims{grouped}) at {queue.spec.display}")
    return 0


def enqueue(queue: Queue, args: argparse.Namespace, order: str) -> int:
    progress = Progress(f"enqueued into {queue.table}")
    with sys.stdin if args.file == "-" else open(args.file, encoding="utf-8") as source:
        for batch in batches(json_rows(source, args.payload), args.batch_size):
            progress.update(progress.count + queue.enqueue(_timestamps(queue, batch)))
    progress.done()
    return 0


def peek(queue: Queue, args: argparse.Namespace, order: str) -> int:
    if args.order:  # an adopted table is claimed in its profile's order, and shown whole
        queue.require(Capability.CLAIM_ORDER)
    for row in queue.inspection.peek(args.limit, args.order or order):
        print(json.dumps({k: _show_time(v) for k, v in row.items()}, default=str))
    return 0


def stats(queue: Queue, args: argparse.Namespace, order: str) -> int:
    """Rows per state (or per status value of an adopted table's profile: the kind's lines), the errors of
    failed rows, what sqlqueue's sinks staged and its streams hold, what a claim could take now; where rows
    keep their claim and completion times (Capability.HISTORY), the recent queue wait and throughput."""
    now = dt.datetime.now(dt.timezone.utc)
    p, inspection = queue.profile, queue.inspection
    print(f"table {queue.table} at {queue.spec.display}, {queue.kind.describe()}")
    for line in queue.kind.state_lines(queue, now):
        print(line)
    errors = inspection.failed_errors()
    if errors:
        print(f"errors of {p.failed} rows, the most frequent first (their first {ERROR_CHARS} characters):")
        for text, rows in errors[:ERRORS_SHOWN]:
            print(f"{rows:>12,}  {' '.join(text.split())}")
        if len(errors) > ERRORS_SHOWN:
            print(f"{'':12}  ... and {len(errors) - ERRORS_SHOWN:,} other errors")
    staging = str(queue.producing.staging)
    if queue.producing.lists_unpublished:  # a sink batch's rows may wait in the table itself, tagged
        staging = f"tagged rows listed in {queue.dialect.schema.unpublished(queue.table)}, or staged in {staging}"
    print(f"{'unpublished':14} {inspection.unpublished_rows():>12,}  (sink batches not committed yet: {staging})")
    claims = " and ".join(str(h.runs or h.table) for h in queue.consuming.holdings())
    print(f"{'held':14} {inspection.held_rows():>12,}  (claimed by sqlqueue's streams, not completed yet: {claims})")
    backlog = inspection.backlog()
    oldest = "" if backlog.oldest_age_ms is None else f", the oldest enqueued {duration(backlog.oldest_age_ms)} ago"
    print(f"claimable: {backlog.ready_rows:,} rows now ({queue.kind.ready_rule}){oldest}")
    if queue.supports(Capability.HISTORY):
        history(queue, args, now)
    return 0


def history(queue: Queue, args: argparse.Namespace, now: dt.datetime) -> None:
    """The recent queue wait and throughput, from the claim and completion times rows keep."""
    window = args.window
    since = now - dt.timedelta(seconds=window)
    waits = queue.inspection.recent_waits(since)
    if waits.rows:
        print(
            f"queue wait: {waits.rows:,} rows claimed in the last {window} s waited {waits} (enqueue to claim; "
            "with completion=delete only rows not completed yet are left to count)"
        )
    else:
        print(f"queue wait: no row claimed in the last {window} s is left in the table (completion=keep keeps them)")
    done = queue.inspection.count_done_since(since)
    print(
        f"throughput: {done:,} rows done in the last {window} s ({done / window:,.1f} rows/s; counts rows "
        "kept with completion=keep)"
    )
    if args.interval:
        before = queue.inspection.count_ready()
        time.sleep(args.interval)
        change = queue.inspection.count_ready() - before
        print(f"backlog: {change:+,} ready rows in {args.interval} s ({change / args.interval:+,.1f} rows/s)")


def requeue(queue: Queue, args: argparse.Namespace, order: str) -> int:
    if not (args.ids or args.dedup_keys or args.all):
        raise ConfigError("requeue needs --id, --dedup-key or --all: say which failed rows go back")
    count = queue.upkeep.requeue_failed(args.ids or (), args.dedup_keys or ())
    print(f"requeued {count} failed row(s) of {queue.table}")
    return 0


def purge(queue: Queue, args: argparse.Namespace, order: str) -> int:
    state, age = args.state or PURGE_STATE, args.older_than or PURGE_AGE
    cutoff = dt.datetime.now(dt.timezone.utc) - parse_age(age)
    defaults = [flag for flag, given in (("--state", args.state), ("--older-than", args.older_than)) if given is None]
    print(
        f"purge: deleting {state} rows of {queue.table} completed before {cutoff:%Y-%m-%d %H:%M:%S} UTC "
        f"(older than {age}" + (f"; the default of {' and '.join(defaults)})" if defaults else ")"),
        file=sys.stderr,
        flush=True,
    )
    progress = Progress(f"purged {state} rows from {queue.table}")
    queue.upkeep.purge(state, cutoff, progress=progress.update)
    progress.done()
    return 0


def doctor(queue: Queue, args: argparse.Namespace, order: str) -> int:
    findings = examine(queue, args.order or order)
    print(f"queue {queue.table} at {queue.spec.display}")
    print(report(findings, queue.engine.script))
    return FAILED_STEP if any(f.severity == PROBLEM for f in findings) else 0


def migrate(queue: Queue, args: argparse.Namespace, order: str) -> int:
    if args.print:
        spec = QueueSpec(queue.table, parse_columns(args.columns), args.order or order)
        print(layouts.script(queue.dialect, spec, args.chunk_size), end="")
        return 0
    if args.group:
        (group,) = parse_columns(args.group if " " in args.group.strip() else f"{args.group} string")
        layouts.add_groups(queue, group)
        return 0
    layouts.migrate(queue, order=args.order, fallback_order=order, chunk=args.chunk_size)
    return 0


def redrive(queue: Queue, args: argparse.Namespace, order: str) -> int:
    # Spark (and Delta) only here: the rest of the command line runs without pyspark.
    from .spark.deadletters import redrive as redrive_from_delta
    from .spark.session import build_session

    settings = load_config(args.config, args.overrides, need_secrets=False).spark
    # The session ends with this process (a caller that shares its session keeps it).
    spark = build_session("sqlqueue-redrive", None if "spark.master" in settings else "local[2]", settings)
    progress = Progress(f"redriven into {queue.table}")
    done = redrive_from_delta(
        spark, queue, args.from_delta, where=args.where, limit=args.most, progress=progress.update
    )
    progress.done()
    if done and done[0].resumed:
        print("redrive: an interrupted redrive was finished and nothing else picked; run again for more")
    if not done:
        print(f"redrive: no dead letters of {queue.table} in {args.from_delta} to redrive")
    for r in done:
        how = f"finished redrive {r.redrive_id}, interrupted before:" if r.resumed else f"redrive {r.redrive_id}:"
        print(
            f"{how} {r.rows:,} dead letters of {args.from_delta}: {r.enqueued:,} enqueued into {queue.table} in this "
            f"run, {r.in_queue:,} still in the queue from before; marked redriven in the dead-letter table"
        )
    return 0


def adopt(queue: Queue, args: argparse.Namespace, order: str) -> int:
    """Without a profile: propose one from the table's catalog. With one: check it against the table and
    print the DDL adopting it needs (sqlqueue's claims and staging tables and the sink's ledger; an index
    the claim can seek when none does), for a DBA to review; --apply runs sqlqueue's tables', --index the
    index's."""
    adoption = queue.kind.adoption(queue)
    if adoption is None:  # no profile given: the table is taken for sqlqueue's own until one is
        proposal = propose(table_columns(queue), unique_keys(queue))
        print(f"# A profile for {queue.table}, read from its columns: review it, then give it as [source] keys")
        print("# (or --set source.KEY=VALUE) and run sqlqueue adopt again to check it and see the DDL.")
        subtypes = tuple(
            t.name if t.schema is None or queue.table.schema in (None, t.schema) else str(t)
            for t in referencing_tables(queue, proposal.key)
        )
        if subtypes and (proposal.take or proposal.deletes_on_done):
            print(f"# Tables {', '.join(subtypes)} reference its key: as subtype tables (profile.include) they need a")
            print("# done transition that keeps the row (profile.done or profile.done_at).")
        elif subtypes:
            print("# profile.include: tables with a foreign key to its key (subtype tables), read and written with")
            print("# its rows; include_exclusive: a row has at most one of them (false: any combination).")
            proposal = replace(proposal, include=subtypes)
        for key, value in settings_of(proposal).items():
            print(f'"{key}" = "{value}"')
        return 0
    if not args.apply:
        print(f"-- {queue.table} fits profile {queue.profile.name}. sqlqueue adds beside it:")
        print(queue.engine.script(list(adoption.statements)), end="")
        if adoption.index is not None:
            print("-- No index leads with the claim's first column; with --index, sqlqueue creates:")
            print(queue.engine.script([adoption.index]), end="")
        return 0
    queue.adopt(index=args.index)
    print(f"{queue.table} is adopted (profile {queue.profile.name}) at {queue.spec.display}")
    return 0


# ---- the registry --------------------------------------------------------------------------------
def arg(*flags: str, **options: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    """One argument of a command, as argparse's add_argument takes it."""
    return flags, options


@dataclass(frozen=True)
class Command:
    """A command: its handler, its arguments, what it checks before it runs (a table ready to serve, or
    only one that exists), and the capabilities it uses, which a table without them refuses in one line."""

    name: str
    run: Callable[[Queue, argparse.Namespace, str], int]
    help: str
    arguments: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = ()
    before: Callable[[Queue], Any] | None = Queue.require_layout
    uses: frozenset[Capability] = field(default_factory=frozenset)
    inspecting: bool = False  # connects without changing any database setting (the doctor)


ORDER_HELP = "claim order (default: the source's order option)"
COMMANDS = (
    Command(
        "create",
        create,
        "create the queue table, its indexes, the sink's unpublished and staging tables and its ledger"
        " (or print the DDL)",
        (
            arg(
                "--columns",
                default="payload text",
                help="domain columns, 'name type [not null], ...' (types: string, text, int, bigint, double, "
                "boolean, timestamp, binary); default 'payload text'",
            ),
            arg(
                "--order",
                choices=list(ORDERS),
                help="claim order the ready index serves (default: the source's order option, else fifo)",
            ),
            arg(
                "--group",
                metavar="COLUMN",
                help="one of --columns naming each row's message group: indexes it for the source's groupBy; "
                "over an existing queue, adds the index",
            ),
            arg("--print", action="store_true", help="print the DDL script instead of running it"),
        ),
        before=None,
        uses=frozenset({Capability.CREATE}),
    ),
    Command(
        "enqueue",
        enqueue,
        "enqueue rows from a file of JSON lines (or - for stdin)",
        (
            arg("file", nargs="?", default="-", help="JSON lines, one object of column values per line"),
            arg(
                "--payload",
                nargs="?",
                const="payload",
                metavar="COLUMN",
                help="take each line as text for this column (default payload) instead of JSON",
            ),
            arg("--batch-size", type=int, default=10_000, help="rows per transaction (default 10000)"),
        ),
        uses=frozenset({Capability.ENQUEUE}),
    ),
    Command(
        "peek",
        peek,
        "show the next ready rows in claim order without claiming them",
        (
            arg("-n", "--limit", type=int, default=10, help="rows to show (default 10)"),
            arg("--order", choices=list(ORDERS), help=ORDER_HELP),
        ),
    ),
    Command(
        "stats",
        stats,
        "rows per state, oldest age, the oldest claimable row, recent waits, throughput",
        (
            arg("--window", type=int, default=60, help="seconds of claims and completions to count (default 60)"),
            arg(
                "--interval",
                type=int,
                default=0,
                help="also sample the backlog twice this many seconds apart and show its rate of change",
            ),
        ),
    ),
    Command(
        "requeue",
        requeue,
        "send failed rows (dead letters) back to ready with fresh attempts",
        (
            arg("--id", type=int, action="append", dest="ids", help="a failed row's id (repeatable)"),
            arg("--dedup-key", action="append", dest="dedup_keys", help="a failed row's dedup key (repeatable)"),
            arg("--all", action="store_true", help="every failed row"),
        ),
        uses=frozenset({Capability.REQUEUE}),
    ),
    Command(
        "redrive",
        redrive,
        "send dead letters from the Delta table they were moved to (option deadLetterTable) back to the queue, "
        "exactly once: an interrupted redrive is finished by the next one; progress on stderr",
        (
            arg("--from-delta", required=True, metavar="PATH", help="the dead-letter Delta table (path or name)"),
            arg(
                "--where", metavar="SQL-EXPR", help='only rows matching this Spark SQL condition, e.g. "attempts >= 5"'
            ),
            arg("--limit", type=int, dest="most", metavar="N", help="at most N rows, lowest ids first"),
        ),
        uses=frozenset({Capability.DEAD_LETTERS}),
    ),
    Command(
        "purge",
        purge,
        "delete finished rows (done or failed) completed before a given age; "
        f"says first what it deletes (default: {PURGE_STATE} rows older than {PURGE_AGE})",
        (
            arg(
                "--state",
                choices=(DONE, FAILED),
                help=f"which finished rows (default {PURGE_STATE}; failed rows are dead letters, purged only when "
                "asked for)",
            ),
            arg("--older-than", help=f"age such as 30m, 12h or 7d (default {PURGE_AGE})"),
        ),
        uses=frozenset({Capability.PURGE}),
    ),
    Command(
        "adopt",
        adopt,
        "adopt a queue table sqlqueue did not create: propose a profile from its columns, or with one (option "
        "profile) check it and print the DDL it needs (sqlqueue's tables beside it); never alters the table",
        (
            arg("--apply", action="store_true", help="create sqlqueue's tables beside the table"),
            arg(
                "--index",
                action="store_true",
                help="with --apply: also create the index the claim seeks, when none leads with its column",
            ),
        ),
        before=None,
    ),
    Command(
        "doctor",
        doctor,
        "check the queue table and its database for what would hurt a queue",
        (
            arg(
                "--order",
                choices=list(ORDERS),
                help="claim order to check the index for (default: the source's order option)",
            ),
        ),
        # The doctor reports a table of another layout, or not adopted yet, among its findings.
        before=Queue.columns,
        inspecting=True,
    ),
    Command(
        "migrate",
        migrate,
        "upgrade a queue table made by an earlier sqlqueue to this one's layout, in place and in chunks; "
        "safe to run again (or print the script)",
        (
            arg(
                "--order",
                choices=list(ORDERS),
                help="claim order the ready index serves (default: the order of the table's ready index, else the "
                "source's order option)",
            ),
            arg("--chunk-size", type=int, help="rows moved per transaction (default 4000 on SQL Server, else 10000)"),
            arg("--print", action="store_true", help="print the migration script instead of running it"),
            arg(
                "--columns",
                default="payload text",
                help="with --print: the queue's domain columns, as for create (default 'payload text'); "
                "without it they are read from the table",
            ),
            arg(
                "--group",
                metavar="'COLUMN [TYPE]'",
                help="on a queue at this layout: add message groups by COLUMN (of TYPE, default string) where "
                "missing, and the indexes grouped claims read (option groupBy)",
            ),
        ),
        before=None,
        uses=frozenset({Capability.MIGRATE}),
    ),
)
BY_NAME = {c.name: c for c in COMMANDS}


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-c",
        "--config",
        action="append",
        default=[],
        metavar="FILE",
        help="TOML configuration file (repeatable; later files win)",
    )
    common.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        dest="overrides",
        help="override one configuration key (repeatable)",
    )
    common.add_argument("--queue", help="the queue table (overrides the section's queue)")
    common.add_argument("--url", help="the database URL (overrides the section's connection)")
    common.add_argument("--sink", action="store_true", help="use the [sink] section instead of [source]")
    top = argparse.ArgumentParser(
        prog="sqlqueue",
        description=__doc__.splitlines()[0],
        epilog="Run 'sqlqueue COMMAND --help' for a command's options.",
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        sub = commands.add_parser(command.name, parents=[common], help=command.help, description=command.help)
        for flags, options in command.arguments:
            sub.add_argument(*flags, **options)
    return top


def address(args: argparse.Namespace) -> tuple[QueueAddress, str, frozenset[Capability]]:
    """The queue's address from configuration and flags, the source's claim order, and the capabilities
    the options set use."""
    section = SINK if args.sink else SOURCE
    overrides = [*args.overrides]
    overrides += [f"{section}.queue={args.queue}"] if args.queue else []
    overrides += [f"{section}.url={args.url}"] if args.url else []
    # Printing DDL connects to nothing, so it needs no password.
    printing = getattr(args, "print", False)
    config = load_config(args.config, overrides, roles=[section], need_secrets=not printing)
    if section == SINK:
        sink = SinkOptions.parse(config.sink)
        return sink.address, "fifo", sink.needs
    options = SourceOptions.parse(config.source)
    return options.address, options.order, options.needs


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    command = BY_NAME[args.command]
    try:
        check_numbers(args)
        where, order, needs = address(args)
        queue = Queue(where.connection, where.table, where.profile, inspecting=command.inspecting)
        try:
            # What the table lacks, or a table not ready to serve, is named here in one line, before any
            # of the command's statements.
            queue.require(*command.uses, *needs)
            if command.before is not None:
                command.before(queue)
            return command.run(queue, args, order)
        finally:
            queue.close()
    except BrokenPipeError:
        # The reader of our output closed it (`sqlqueue stats | head`): nothing is wrong, and nothing more
        # can be written. Point stdout at /dev/null so Python's exit does not fail flushing it (the Python
        # docs' "Note on SIGPIPE").
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ConfigError, SchemaError, OSError) as exc:
        print(f"sqlqueue {args.command}: error: {exc}", file=sys.stderr)
        return BAD_INPUT
    except SqlQueueError as exc:
        print(f"sqlqueue {args.command}: error: {exc}", file=sys.stderr)
        return FAILED_STEP


if __name__ == "__main__":
    sys.exit(main())
