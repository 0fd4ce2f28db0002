"""``sqlqueue migrate``: bring a queue table made by an earlier sqlqueue to the layout this one runs on.

The steps and their SQL come from the dialect (so the T-SQL is parsed and pinned like every other
statement); this module picks the order the ready index serves, runs the steps in order and says
what each did, or prints them as a script for a DBA. Every step can run again, so a migration that
was interrupted finishes when run again; the layout is recorded last. See schema.LAYOUT for what
each layout is.
"""

from __future__ import annotations

from collections.abc import Callable

from .dialects import Dialect
from .errors import DatabaseError, SchemaError, SqlQueueError, layout_mismatch
from .queue import Queue
from .schema import LAYOUT, UNRECORDED_LAYOUT, Column, QueueSpec

# The claim order a ready index serves, from its first key column (heap and lifo share fifo's key).
ORDER_OF_FIRST_COLUMN = {"id": "fifo", "priority": "priority", "due_at": "pending"}


def chunk_size(dialect: Dialect) -> int:
    """Rows moved per transaction: below SQL Server's lock escalation threshold, as every chunk is."""
    return dialect.engine.default_chunk or 10_000


def ready_order(queue: Queue) -> str | None:
    """The order the table's ready index serves now, or None when it has none sqlqueue made."""
    name = queue.dialect.schema.ready_index(queue.table)
    for index, _, first_column in queue.facts(queue.dialect.doctor.table_indexes):
        if index == name:
            return ORDER_OF_FIRST_COLUMN.get(first_column)
    return None


def script(dialect: Dialect, spec: QueueSpec, chunk: int | None = None) -> str:
    """Every step from layout 1 as one script a DBA can read and run (``sqlqueue migrate --print``)."""
    steps = dialect.migrations.migration_steps(spec, chunk or chunk_size(dialect))
    statements = []
    for n, step in enumerate(steps, 1):
        body = list(step.script or step.statements)
        body[0] = f"-- Step {n}/{len(steps)}: {step.title}\n{body[0]}"
        statements += body
    header = [
        f"-- sqlqueue migrate: queue {spec.table} from layout {UNRECORDED_LAYOUT} to layout {LAYOUT} "
        f"({dialect.engine.name}; domain columns {', '.join(c.name for c in spec.domain) or 'none'}, "
        f"ready index for {spec.order} claims).",
        "-- Stop every job of the earlier sqlqueue first. Each step checks the catalog before it changes",
        "-- anything, so the script can run again after an interruption; the layout is recorded last.",
        *dialect.migrations.how_to_run_script,
    ]
    return "\n".join(header) + "\n\n" + dialect.engine.script(statements)


def migrate(
    queue: Queue,
    *,
    order: str | None = None,
    fallback_order: str = "fifo",
    chunk: int | None = None,
    say: Callable[[str], None] = print,
) -> int:
    """Migrate the queue to the current layout; returns the layout it had.

    The ready index keeps the order it serves (``order`` overrides it; ``fallback_order`` is used
    when the table has no ready index). ``say`` hears a line per step.
    """
    found = queue.layout()
    where = f"queue {queue.table} at {queue.spec.display}"
    if found == LAYOUT:
        say(f"{where} is at layout {LAYOUT}: nothing to migrate")
        return found
    if found > LAYOUT:
        raise layout_mismatch(queue.table, queue.spec.display, found, LAYOUT)
    spec = QueueSpec(queue.table, queue.domain_columns(), order or ready_order(queue) or fallback_order)
    size = chunk or chunk_size(queue.dialect)
    steps = queue.dialect.migrations.migration_steps(spec, size)
    say(f"{where}: layout {found} to {LAYOUT} in {len(steps)} steps (ready index for {spec.order} claims)")
    for n, step in enumerate(steps, 1):
        try:
            moved = queue.run_step(step, size)
        except SqlQueueError as exc:
            raise DatabaseError(
                f"step {n}/{len(steps)} ({step.title}) failed: {exc}. The steps before it are done; "
                "run `sqlqueue migrate` again (a lock timeout means the table was busy: try when it is quieter)"
            ) from None
        done = "nothing to do" if moved is None else f"{moved:,} rows" if step.chunked else "done"
        say(f"step {n}/{len(steps)}: {step.title}: {done}")
    if queue.layout() != LAYOUT:
        raise SchemaError(
            f"{where}: every step ran but layout {LAYOUT} was not recorded: rows in state 'staged' are left "
            "or the state check was changed by hand; see docs/operations.md, 'Layout versions and upgrading'"
        )
    say(f"{where} is at layout {LAYOUT}")
    return found


def add_groups(queue: Queue, group: Column, say: Callable[[str], None] = print) -> None:
    """Message groups on a queue at the current layout (``sqlqueue migrate --group``): the group column where
    it is missing, then the indexes grouped claims read. Every step can run again."""
    where = f"queue {queue.table} at {queue.spec.display}"
    if queue.layout() != LAYOUT:
        raise SchemaError(f"{where} is not at layout {LAYOUT}: run `sqlqueue migrate` without --group first")
    steps = queue.dialect.migrations.group_steps(queue.table, group)
    for n, step in enumerate(steps, 1):
        done = queue.run_step(step, chunk_size(queue.dialect))
        say(f"step {n}/{len(steps)}: {step.title}: {'nothing to do' if done is None else 'done'}")
    say(f"{where} can be read by message group {group.name} (option groupBy)")
