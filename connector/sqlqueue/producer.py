"""Exactly-once enqueueing of batches that may be written twice: write unpublished, then publish with a ledger.

A batch is written by several tasks. Each task inserts its rows into the queue table, tagged with a
stage tag of its own (the rows carry its short form, below), and lists the tag in the queue's
unpublished table, in one transaction; no claim takes a row whose tag is listed. Then one transaction
publishes the batch: it deletes the rows of tags Spark did not commit (failed attempts, crashed runs),
deletes the batch's tags from the list, which makes the committed rows claimable, and records (queue,
writer, batch) in the ledger.

Batches with a dedup key column take a second path: tasks stage rows in the staging table, and
publish copies them into the queue keeping only new keys. Keys are checked then, against the queue
itself, so a batch that is never published holds no key. A table sqlqueue adopted stages every batch
(its own workers must not see a batch before Spark commits it, and it gets no tag column), and publish
inserts the rows as new ready rows of its profile.

So a batch becomes visible all at once or not at all; a batch written again after it was published
finds itself in the ledger and writes nothing; and what a task attempt wrote is published only if
Spark committed that attempt. All of it lives in the database, none in process memory.

Stage tags are fixed-width lowercase hex, ``writer(16) batch(16) run(8) task(8) attempt(12)``, so the
tags of one batch (or of one writer up to a batch) are a range [prefix, prefix + "g"]: hex digits
sort below "g" in every collation, which a separator such as "/" does not guarantee.

The rows themselves carry a shorter tag, the stage tag's row tag (``row_tag``), listed beside it in the
same transaction: the claim skips a row whose tag is listed, and publish selects the stage tags by range.
A 60-character tag on every row cost the database about a fifth of a bulk insert's CPU time
(docs/evidence.md). Batches an older version wrote carry their stage tag on their rows, with no row tag
listed: publish and discard find those rows as well.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from .dialects.engine import execute, scalar
from .errors import DatabaseError, SchemaError
from .ledger import Ledger
from .numbering import Identity
from .queue import Queue
from .schema import PAST_HEX, Column, Included
from .textrows import TextRows

ROW_TAG_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
ROW_TAG_LENGTH = 12


def _hex(text: str, width: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:width]


def row_tag(stage_tag: str) -> str:
    """The tag the rows of ``stage_tag`` carry in the queue table, listed as unpublished beside it.

    12 base-36 digits (lowercase letters and digits) of the stage tag's hash, 62 bits: more than 15 hex
    digits carry (60), in 3 bytes less of every row the sink writes, which on narrow rows is a whole
    8-byte step of the table's row alignment (docs/evidence.md). Shorter than the writer key that starts
    every range of stage tags, such a string either is a prefix of a range's bounds (and sorts below both)
    or differs from both at the same place, so no range of stage tags ever lists a row tag. Letters of
    one case only: SQL Server's usual collations do not tell cases apart. A row tag shared with another
    tag's rows still in the table (one chance in 2**62 per pair, as for two random 62-bit ids) would hide
    those rows too until the batch is published, and dropping the batch would delete those within its id
    range, or anywhere if it found too few there.
    """
    number = int.from_bytes(hashlib.sha256(stage_tag.encode()).digest(), "big")
    digits = []
    for _ in range(ROW_TAG_LENGTH):
        number, digit = divmod(number, len(ROW_TAG_DIGITS))
        digits.append(ROW_TAG_DIGITS[digit])
    return "".join(digits)


@dataclass(frozen=True)
class Written:
    """What one task attempt wrote: its stage tag (to publish) and how many rows it sent."""

    stage_tag: str
    rows: int
    # Rows it staged for each subtype table the batch writes (Included), in their order.
    subtype_rows: tuple[int, ...] = ()


class _Counted:
    """Passes rows through and counts them."""

    def __init__(self, rows: Iterable[Sequence[Any]]) -> None:
        self.rows = rows
        self.count = 0

    def __iter__(self) -> Iterator[Sequence[Any]]:
        for row in self.rows:
            self.count += 1
            yield row


def _counting(rows: Iterable[Sequence[Any]]) -> TextRows | _Counted | None:
    """``rows`` counted as they are read (text rows count themselves, and hold one at least), or None if
    there are none."""
    if isinstance(rows, TextRows):
        return rows
    it = iter(rows)
    first = next(it, None)
    return None if first is None else _Counted(chain([first], it))


class Producer:
    """One writer's batches into one queue.

    ``writer_id`` must be stable across restarts of the same logical writer (a streaming query's
    id); ``run_id`` names one run of it, so a run can clear what a crashed run wrote.
    """

    def __init__(self, queue: Queue, writer_id: str, run_id: str = "") -> None:
        self.queue = queue
        self.table = queue.table
        self.sql = queue.dialect.sink
        self.writer_id = writer_id
        self.ledger = Ledger(queue, writer_id)
        self._writer_key = _hex(writer_id, 16)
        self._run_key = _hex(run_id, 8)

    def __repr__(self) -> str:
        return f"Producer({self.writer_id!r} into {self.queue})"

    # ---- tags -----------------------------------------------------------------------------------
    def _batch_prefix(self, batch_id: int) -> str:
        return f"{self._writer_key}{batch_id:016x}"

    def stage_tag(self, batch_id: int, task_id: int, attempt: int = 0) -> str:
        return f"{self._batch_prefix(batch_id)}{self._run_key}{task_id:08x}{attempt:012x}"

    def _drop(self, cur: Any, lo: str, hi: str, publishing: Collection[str] = ()) -> int:
        """Delete what tags in [lo, hi] wrote, except the unpublished rows of ``publishing``,
        which become claimable; returns how many rows were deleted.

        Tags are deleted one by one, as read: a tag a late task lists meanwhile stays listed, its
        rows hidden, for a later publish to drop. One lock order everywhere: every dropped row
        first, then the tags. On SQL Server a claim reading a tag (it waits for the tag's lock) may
        hold an update lock on one of its rows; taking all rows before any tag means publish
        waits for that claim rather than the two waiting for each other.
        """
        deleted = max(execute(cur, self.sql.delete_staged(self.queue.producing.staging), lo=lo, hi=hi).rowcount, 0)
        for subtype in self.queue.subtypes():
            execute(cur, self.sql.delete_staged(self.queue.producing.subtype_staging(subtype)), lo=lo, hi=hi)
        if not self.queue.producing.lists_unpublished:
            return deleted
        listed = execute(cur, self.sql.unpublished_in(self.table), lo=lo, hi=hi).fetchall()
        for tag, id_after, id_upto, count in listed:
            if tag not in publishing:
                deleted += self._drop_rows(cur, tag, id_after, id_upto, count)
        for tag, *_ in listed:
            for listed_tag in (tag, row_tag(tag)):
                execute(cur, self.sql.delete_unpublished(self.table), tag=listed_tag)
        return deleted

    def _drop_rows(self, cur: Any, tag: str, id_after: int, id_upto: int, count: int) -> int:
        """Delete the ``count`` rows of one unpublished stage tag: under its row tag, or under the stage
        tag itself where an older version wrote them; in the id range the tag recorded (a primary-key
        seek), then anywhere if some are missing (ids given explicitly, or from a cached sequence)."""
        dropped = 0
        for ranged in (True, False):
            for carried in (row_tag(tag), tag):
                bounds = {"id_after": id_after, "id_upto": id_upto} if ranged else {}
                statement = self.sql.delete_unpublished_rows(self.table, ranged)
                dropped += max(execute(cur, statement, tag=carried, **bounds).rowcount, 0)
                if dropped >= count:
                    return dropped
        return dropped

    # ---- the protocol ---------------------------------------------------------------------------
    def published(self, batch_id: int) -> bool:
        with self.queue.transaction() as cur:
            return self.ledger.contains(cur, batch_id)

    def last_published(self) -> int | None:
        """This writer's highest published batch, for a writer that publishes its batches in order
        and resumes after the last one."""
        with self.queue.transaction() as cur:
            return self.ledger.last(cur)

    def forget(self) -> None:
        """Delete this writer's ledger entries, once nothing it wrote can be written again."""
        with self.queue.transaction() as cur:
            self.ledger.forget(cur)

    def write(
        self,
        batch_id: int,
        task_id: int,
        columns: Sequence[Column],
        rows: Iterable[Sequence[Any]],
        attempt: int = 0,
        included: Sequence[Included] = (),
    ) -> Written:
        """Write one task attempt's rows, unpublished, in one transaction; nothing if the batch is
        already published.

        Each attempt writes under a tag of its own (``attempt``: Spark's task attempt id, unique in
        a run), so an attempt still running never touches the rows of the one Spark committed;
        publish deletes what the others wrote. A tag repeats when the write is retried (its COMMIT
        may have landed although the connection was lost before the answer) and in a later run of
        a batch write (attempt ids start again), so the transaction first deletes what it holds.

        With ``included`` (subtype tables, Profile.include), each row of ``rows`` ends with one value per
        subtype table: a dict of its row's ``columns`` (by name), or None; those rows are staged beside it,
        keyed by its key. A row with more than one under an exclusive profile fails the write, which then
        leaves nothing.
        """
        tag = self.stage_tag(batch_id, task_id, attempt)
        counted = _counting(rows)
        if counted is None:  # an empty task needs no connection
            return Written(tag, 0)
        identity = self.queue.identity()  # read from the catalog outside the transaction, once a process
        with self.queue.transaction() as cur:
            if self.ledger.contains(cur, batch_id):
                return Written(tag, 0)
            self._drop(cur, tag, tag)
            if included:
                base, subtype_rows = _split(self.queue, columns, counted, included)
                self.queue.producing.stage(cur, columns, base, tag)
                for each, kept in zip(included, subtype_rows):
                    self.queue.producing.stage_subtype(cur, each, kept, tag)
                return Written(tag, counted.count, tuple(len(kept) for kept in subtype_rows))
            if self.queue.producing.stages(columns):
                self.queue.producing.stage(cur, columns, counted, tag)
            else:
                self._write_listed(cur, columns, counted, tag, identity)
        return Written(tag, counted.count)

    def _write_listed(
        self, cur: Any, columns: Sequence[Column], counted: TextRows | _Counted, tag: str, identity: Identity
    ) -> None:
        """Into the table itself under ``tag``'s row tag, both listed as unpublished: ``tag`` with the id
        range the rows took and their count (publish and discard select it by range), the row tag with
        none (the claim looks it up). ``identity``: the table's (Queue.identity)."""
        carried = row_tag(tag)
        id_after = scalar(cur, self.sql.last_id(self.table))
        self.queue.producing.insert_unpublished(cur, columns, counted, carried, identity)
        id_upto = scalar(cur, self.sql.last_id(self.table))
        register = self.sql.register_unpublished(self.table)
        execute(cur, register, tag=tag, id_after=id_after, id_upto=id_upto, row_count=counted.count)
        execute(cur, register, tag=carried, id_after=id_after, id_upto=id_upto, row_count=0)

    def _check(self, batch_id: int, task: Written, found: int) -> None:
        # PostgreSQL empties its unlogged staging table in crash recovery, and a late abort may
        # drop a batch: never publish one short. Failing the commit makes Spark run the batch again
        # when the query restarts.
        if found != task.rows:
            raise DatabaseError(
                f"batch {batch_id} of writer {self.writer_id!r} was not published: a task wrote {task.rows} "
                f"rows but {found} are left (was the database restarted after a crash, or the batch "
                "aborted?); restart the query (or run the write again) to write the batch anew"
            )

    def _publish_staged(
        self, cur: Any, batch_id: int, columns: Sequence[Column], tasks: Sequence[Written], included: Sequence[Included]
    ) -> int:
        """Copy staged rows into the queue, keeping new dedup keys only, then their subtype rows into their
        tables; how many base rows were copied."""
        publish = self.queue.producing.publish_statement(columns)
        published = 0
        for task in tasks:
            self._check(
                batch_id, task, scalar(cur, self.sql.count_staged(self.queue.producing.staging), tag=task.stage_tag)
            )
            cur.execute(publish.sql, publish.bind({"tag": task.stage_tag}))
            published += max(cur.rowcount, 0)
            for each, rows in zip(included, task.subtype_rows):
                staging = self.queue.producing.subtype_staging(each.subtype)
                self._check(
                    batch_id,
                    Written(task.stage_tag, rows),
                    scalar(cur, self.sql.count_staged(staging), tag=task.stage_tag),
                )
                statement = self.queue.producing.publish_subtype_statement(each)
                cur.execute(statement.sql, statement.bind({"tag": task.stage_tag}))
        return published

    def _check_unpublished(self, cur: Any, batch_id: int, tasks: Sequence[Written]) -> int:
        batch = self._batch_prefix(batch_id)
        listed = {
            tag: count
            for tag, _, _, count in execute(
                cur, self.sql.unpublished_in(self.table), lo=batch, hi=batch + PAST_HEX
            ).fetchall()
        }
        for task in tasks:
            self._check(batch_id, task, listed.get(task.stage_tag, 0))
        return sum(t.rows for t in tasks)

    def publish(
        self, batch_id: int, columns: Sequence[Column], tasks: Iterable[Written], included: Sequence[Included] = ()
    ) -> int | None:
        """Make the rows the ``tasks`` wrote claimable, in one transaction with the ledger entry.

        Everything else this writer wrote for this batch or an earlier one is deleted: Spark
        commits one batch at a time, so it belongs to attempts Spark gave up on. Returns how many
        rows became claimable (fewer than written when dedup keys repeat), or None when the batch
        was published before. The rows of subtype tables the tasks staged (``included``) go into their
        tables in the same transaction, each after its base rows.
        """
        tasks = list(tasks)
        with self.queue.transaction() as cur:
            if self.ledger.contains(cur, batch_id):
                return None
            if self.queue.producing.stages(columns):
                published = self._publish_staged(cur, batch_id, columns, tasks, included)
            else:
                published = self._check_unpublished(cur, batch_id, tasks)
            self._drop(cur, self._writer_key, self._batch_prefix(batch_id) + PAST_HEX, {t.stage_tag for t in tasks})
            self.ledger.record(cur, batch_id, published)
        return published

    def discard(self, batch_id: int) -> int:
        """Delete everything written for a batch that will not be published (an aborted batch)."""
        batch = self._batch_prefix(batch_id)
        with self.queue.transaction() as cur:
            return self._drop(cur, batch, batch + PAST_HEX)


def _split(
    queue: Queue, columns: Sequence[Column], rows: Iterable[Sequence[Any]], included: Sequence[Included]
) -> tuple[Iterator[Sequence[Any]], list[list[tuple]]]:
    """The base rows of ``rows`` (their first ``len(columns)`` values) as they are read, and per subtype
    table the rows they carry (the base row's key, then the struct's values), filled as the base rows
    are read. An exclusive profile refuses a row with more than one."""
    keys = [next(i for i, c in enumerate(columns) if c.name.lower() == k.lower()) for k in queue.profile.key]
    width = len(columns)
    kept: list[list[tuple]] = [[] for _ in included]
    exclusive = queue.profile.include_exclusive

    def base() -> Iterator[Sequence[Any]]:
        for row in rows:
            key = tuple(row[i] for i in keys)
            given = [(i, value) for i, value in enumerate(row[width:]) if value is not None]
            if exclusive and len(given) > 1:
                names = " and ".join(included[i].subtype.name for i, _ in given)
                raise SchemaError(
                    f"the row with key {', '.join(map(str, key))} has rows for {names}, but a row of {queue.table} "
                    "may have one of its subtype tables' rows (profile.include_exclusive = true): give one, or set "
                    "profile.include_exclusive = false"
                )
            for i, value in given:
                named = {str(k).lower(): v for k, v in value.items()}  # the struct's fields, in any case
                kept[i].append((*key, *(named.get(c.name.lower()) for c in included[i].columns)))
            yield row[:width]

    return base(), kept
