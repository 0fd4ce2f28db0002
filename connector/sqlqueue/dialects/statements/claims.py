"""Claim statements: which rows are claimable, the claim itself, reading and completing a claim,
the backlog, and the queue wait of a claim's rows.

Completion applies the profile's done transition to the rows that are still ours: rows that carry
their claim (sqlqueue's own layout) while they do; an adopted table's while the guard column still
holds the value our claim gave it, and their copies in the claims table are dropped in the same
transaction.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ...identifiers import TableName
from ...profile import Profile
from ...schema import STAGE_TAG, Column
from ..engine import Engine, Statement, cached
from .lifecycle import CONSUMER, ONE, RANGE, ROW, SEQ, UPTO, Holding, Lifecycle
from .schema import Schema


@dataclass(frozen=True)
class ClaimPlan:
    """The claim statement, and where the engine cannot copy the rows in the same statement (SQLite),
    the insert that records each returned row in the claims table, in the claim's transaction."""

    claim: Statement
    # The claim returns a row for each row it took (its id, or SQLite's copy to record); else its row
    # count says how many it took.
    returns: bool = False
    record: Statement | None = None
    # The guard column read back from the table into the claim's copies, in the claim's transaction:
    # OUTPUT and RETURNING give the values from before AFTER triggers ran, and a trigger may write the
    # token (UpdatedAt) itself.
    settle: Statement | None = None
    # Run first in the claim's transaction where claims of a grouped profile take turns (Engine.claim_turn).
    lock: Statement | None = None
    # Asked after the claim, in its transaction, whether settle has anything to do: whether the table has
    # triggers or rules (Schema.rewriters; None: settle always). On a relational queue with none, settle
    # read each copy's row back for nothing: 99 of a 100,000-row claim and completion cycle's 2,400 ms.
    rewriters: Statement | None = None


class Claims(ABC):
    """The claim and what reads, counts and completes the rows it holds, in each engine's claim shapes
    (``claim_into`` is each engine's own)."""

    def __init__(self, engine: Engine, schema: Schema, lifecycle: Lifecycle) -> None:
        self.engine, self.schema, self.lifecycle = engine, schema, lifecycle

    def claimable(self, profile: Profile) -> str | None:
        """The rows a claim may ever take as far as status or done-at say (ready, or in flight where a
        claim takes back abandoned rows; not done): for an adopted table, the filter of the index
        `sqlqueue adopt --index` proposes. For sqlqueue's own layout it reads as the ready index's filter
        (Schema.index_statements), which the native claim names in its hints."""
        if profile.status is not None and not profile.take:  # a dequeue's claim reads no status
            reclaimed = (profile.in_flight,) if profile.lease is None and profile.in_flight is not None else ()
            return self.lifecycle.status_in(profile, (*profile.ready, *reclaimed))
        return f"{self.engine.quote(profile.done_at)} IS NULL" if profile.done_at is not None else None

    def ready(self, table: TableName, profile: Profile, bound: str | None = None, claiming: bool = False) -> str:
        """Rows a claim may take: open (or abandoned by a claimer whose lease ran out), not done, with
        attempts left, due, of this stream, and not part of a sink batch Spark has yet to commit; with
        ``bound``, only rows whose ``bound`` column is at most :max_id (a Trigger.AvailableNow run's
        bound). Binds :lease_ago and :max_attempts where the profile reads them. ``claiming``: the claim
        of :consumer, which never takes back a row it still holds (a claim made ahead, or held across a
        crash, whose lease ran out while the job was down): such a row is the consumer's own batch.

        A profile with a lease column (sqlqueue's own layout) leaves abandoned rows to the sweep that
        gives them back (rescue_expired): its claim reads ready rows only, through the ready index."""
        q, now = self.engine.quote, self.lifecycle.clock(profile)
        open_, abandoned = self._open(profile, now)
        if abandoned is not None and claiming:
            abandoned += f" AND NOT {self.held_copy(table, profile)}"
        parts = [] if profile.take else [f"({open_} OR ({abandoned}))" if abandoned else open_]
        claimable = self.claimable(profile)
        if profile.status is not None and parts and claimable != parts[0]:
            # Led by the claim index's filter word for word, so the engine sees the claim may read that
            # index. Neither PostgreSQL nor SQLite proves that `status IN (ready) OR (status = in-flight
            # AND ...)` implies it: both sorted the whole table (SQLite uses a partial index only when the
            # query's AND terms include the index's, sqlite.org/partialindex.html, section 3).
            parts.insert(0, str(claimable))
        if profile.done_at is not None and profile.status is None:
            parts.append(f"{q(profile.done_at)} IS NULL")
        if profile.attempts is not None and profile.max_attempts is not None:
            parts.append(f"{q(profile.attempts)} < :max_attempts")
        if profile.due is not None:
            parts.append(f"{q(profile.due)} <= {now}")
        if profile.tag is not None:
            # Rows of unpublished batches sit in the ready index like any other; the tag test skips them
            # with one primary-key probe each, and only rows a sink wrote carry a tag until claimed.
            tag = self.row_tag(table, profile.tag)
            parts.append(f"({tag} IS NULL OR NOT EXISTS ({self.listed_tag(table, tag)}))")
        if profile.filter is not None:
            parts.append(self.engine.filter_condition(profile.filter))
        if bound is not None:
            parts.append(f"{q(bound)} <= :max_id")
        if profile.runs:
            parts.append(f"NOT {self.lifecycle.in_run(table, profile)}")
        return " AND ".join(parts) or "1 = 1"

    def _open(self, profile: Profile, now: str) -> tuple[str, str | None]:
        """(rows open for a claim, rows abandoned by a claimer whose lease ran out, None where a sweep gives
        them back or nothing marks them) by the profile's status, else its claimer, else its started-at."""
        q = self.engine.quote
        reclaims = profile.started is not None and profile.lease is None
        expired = f"{q(str(profile.started))} < {self.engine.add_seconds(now, 'lease_ago')}" if reclaims else None
        if profile.status is not None:
            in_flight = self.lifecycle.status_in(profile, (profile.in_flight or "",))
            if profile.done_at is not None:
                # With a status, done-at tells only rows in flight apart (a claimer table: in_process = 1 and
                # an end_date is done); a ready row may carry one from its default or an earlier run.
                in_flight += f" AND {q(profile.done_at)} IS NULL"
            return self.lifecycle.status_in(profile, profile.ready), f"{in_flight} AND {expired}" if expired else None
        if profile.claimer is not None:
            return f"{q(profile.claimer)} IS NULL", expired
        # No status and no claimer: the profile marks with started-at (Profile.__post_init__).
        return f"{q(str(profile.started))} IS NULL", None

    def row_tag(self, table: TableName, column: str = STAGE_TAG.name) -> str:
        """A table's tag column, qualified: the queue and its unpublished list both have one."""
        return f"{self.engine.quote(table.name)}.{self.engine.quote(column)}"

    def listed_tag(self, table: TableName, tag: str) -> str:
        """A subquery with a row when ``tag`` (a row of ``table``'s tag) belongs to an unpublished batch.

        No alias: the two table names differ by construction, where an alias could equal the
        queue's name. The list is read as last committed, like the queue rows it hides.
        """
        unpublished = self.schema.unpublished(table)
        return (
            f"SELECT 1 FROM {self.engine.table(unpublished)}{self.engine.committed_read_hints()} "
            f"WHERE {self.row_tag(unpublished)} = {tag}"
        )

    @cached
    def claim(
        self, table: TableName, profile: Profile, columns: tuple[str, ...] = (), strict: bool = False,
        bound: str | None = None, resume: bool = False, addressed: bool = False,
    ) -> ClaimPlan:  # fmt: skip
        """Mark (or take) up to ``:limit`` ready rows (within ``bound``, ``ready``), in the profile's claim
        order, under (:consumer, :seq). Rows that carry their bookkeeping (sqlqueue's own layout) are
        marked in place and their ids and queue waits come back; an adopted table's rows are copied
        (``columns`` of them), as the claim left them, into its claims table in the same statement, and the
        copies then take back a guard column a trigger rewrote. A profile with a group claims by message group
        (``grouped``; ``resume``: from the groups after :after_group). ``addressed``: the table's rows each have
        an address of their own (Engine.plain_table_sql), which a claim in place may fetch them by."""
        e, where = self.engine, self.ready(table, profile, bound, claiming=True)
        order = self.lifecycle.order_by(profile.order)
        lock = None
        if profile.group is not None:
            # In its turn a grouped claim waits for a row another statement holds locked (a sweep or another
            # claimer's renewal or completion re-checking a row taken back meanwhile, a table's own worker)
            # rather than passing over it: passing over a group's first row handed the rows after it out
            # first (the fault matrix's groups cell, a sweep's re-check holding the row for milliseconds).
            # SKIP LOCKED and READPAST are what skip such a row ("The Locking Clause", postgresql.org/docs/
            # current/sql-select.html; READPAST in learn.microsoft.com/sql/t-sql/queries/hints-transact-sql-
            # table), so a grouped claim reads and locks without them.
            strict = True
            where = f"{where} AND {self.grouped(table, profile, where, resume)}"
        if profile.group is not None or profile.runs:  # Runs: a claim that marks rows takes their turn
            turn = e.claim_turn(table)
            lock = e.compile(turn) if turn is not None else None
        if profile.claim_seq is not None:
            marks = self.lifecycle.claim_sets(profile)
            ready = self.schema.ready_index(table)
            holding = self.lifecycle.holding(table, profile)
            enqueued, claimed = holding.enqueued, holding.claimed
            waited = (enqueued, claimed) if enqueued is not None and claimed is not None else None
            claim = e.claim_sql(table, marks, where, order, strict, ready, waited, addressed)
            return ClaimPlan(e.compile(claim), True, lock=lock)
        plan = replace(self.claim_into(table, profile, columns, where, order, addressed, strict), lock=lock)
        if profile.take or profile.guard is None:
            return plan
        return replace(plan, settle=e.compile(self._settle(table, profile)), rewriters=self.schema.rewriters(table))

    # ---- message groups --------------------------------------------------------------------------------
    # A grouped claim takes, from each group (Profile.group) that has no row in flight and none waiting for
    # a retry, its first :per_group claimable rows in the claim order; rows with no group are claimed as
    # in an ungrouped queue. Two claimers must never both see a group free, and under SKIP LOCKED / READPAST
    # one would: each skips the rows the other is locking and judges the group by what was last committed.
    # So the claims of a grouped table take turns: each first takes one lock per table in its transaction
    # (Engine.claim_turn), held until it commits, and its claim statement starts after that, so it sees
    # every row the claim before it took as in flight. A claim is one short statement, so turns cost little
    # beside a batch; every claimer of a grouped table (streams, the table's own worker) takes the same lock.
    #
    # Groups are served round-robin: a claim reads the groups in the order of their values from just after
    # the last group the claimer took (:after_group; Consuming.claim wraps around to the first), :scan ready rows
    # of them through the group index, so its cost follows the claim's size, not the backlog's. Ranking every
    # ready row instead (pgmq's read_grouped_rr ranks the whole queue) took 2.0 s for a 10,000-row claim with
    # 1,000,000 rows ready on PostgreSQL, against 75 ms for the heap claim (benchmarks/bench_groups.py).
    def grouped(self, table: TableName, profile: Profile, where: str, resume: bool) -> str:
        """The rows of ``where`` a grouped claim may take: each group's first :per_group rows of ``where`` in
        the claim order, the first :limit of them in group order among the first :scan rows of ``where`` in
        group order (after :after_group when ``resume``) of the groups no row holds back (group_busy); and the
        first :limit rows of no group. The rows come from the group index in group order and are ranked in
        that order, so reading stops once :limit rows are ranked low enough: :scan bounds only what a claim
        reads past the first :per_group rows of groups that have many more.

        The busy groups are found once, as a set the ranked rows are checked against (NOT IN: PostgreSQL
        hashes it, SQL Server and SQLite join against it); a correlated NOT EXISTS, run once a row, cost most
        of a claim's time. The rows are read from the table under its own name, so ``where``'s references to
        it (the sink tag's subquery) name the row being read."""
        e, q = self.engine, self.engine.quote
        group, key = q(str(profile.group)), [q(k) for k in profile.key]
        order = profile.ranking
        shown = list(dict.fromkeys([*profile.key, str(profile.group), *(c for c, _ in order)]))
        source = f"{e.table(table)}{e.committed_read_hints()} WHERE {where}"
        busy = (
            f"SELECT {group} FROM {e.table(table)}{e.committed_read_hints()} "
            f"WHERE {self.group_busy(profile)} AND {group} IS NOT NULL"
        )
        if profile.runs:  # rows an ungrouped stream holds as runs are in flight too, and marked nowhere
            held = self.lifecycle.source(self.lifecycle.runs_holding(table, profile))
            busy += f" UNION ALL SELECT {q(table.name)}.{group} FROM {held} WHERE {q(table.name)}.{group} IS NOT NULL"
        after = f" AND {group} > :after_group" if resume else ""
        window = e.select_first(
            ", ".join(q(c) for c in shown),
            f"{source} AND {group} IS NOT NULL{after} AND {group} NOT IN ({busy}) "
            f"ORDER BY {group} ASC, {self.lifecycle.order_by(order)}",
            "scan",
        )
        w, g, rank = q("w"), q("g"), q("sqlqueue_group_rank")
        ranked = (
            f"SELECT {', '.join(f'{w}.{q(c)}' for c in shown)}, ROW_NUMBER() OVER (PARTITION BY {w}.{group} "
            f"ORDER BY {', '.join(f'{w}.{q(c)} {d}' for c, d in order)}) AS {rank} FROM ({window}) AS {w}"
        )
        firsts = e.select_first(
            ", ".join(f"{g}.{k}" for k in key),
            f"({ranked}) AS {g} WHERE {g}.{rank} <= :per_group "
            f"ORDER BY {g}.{group} ASC, {', '.join(f'{g}.{q(c)} {d}' for c, d in order)}",
        )
        loose = e.select_first(
            ", ".join(key), f"{source} AND {group} IS NULL ORDER BY {self.lifecycle.order_by(order)}"
        )
        f, n = q("f"), q("n")
        either = (
            f"SELECT {', '.join(f'{f}.{k}' for k in key)} FROM ({firsts}) AS {f} "
            f"UNION ALL SELECT {', '.join(f'{n}.{k}' for k in key)} FROM ({loose}) AS {n}"
        )
        return e.among(key, either)

    def group_busy(self, profile: Profile) -> str:
        """A row that holds its group back: in flight (and, where a claim takes back abandoned rows, not
        abandoned), or waiting for a retry (ready, attempted, and not due yet). A row enqueued with a later
        due time does not: rows of its group around it go ahead in the claim order. Led, where the profile
        counts attempts, by the filter of the group index (Schema.group_index) word for word: every such
        row has an attempt, and a new row (a sink's, maybe not committed) is not in it."""
        q, now, lifecycle = self.engine.quote, self.lifecycle.clock(profile), self.lifecycle
        in_flight = lifecycle.status_in(profile, (str(profile.in_flight),))
        if profile.done_at is not None:
            in_flight += f" AND {q(profile.done_at)} IS NULL"
        if profile.lease is None and profile.started is not None:
            in_flight += f" AND {q(profile.started)} >= {self.engine.add_seconds(now, 'lease_ago')}"
        busy = [f"({in_flight})"]
        lead = ""
        if profile.attempts is not None:
            unfinished = lifecycle.status_in(profile, (*profile.ready, str(profile.in_flight)))
            lead = f"{q(profile.attempts)} > 0 AND {unfinished} AND "
            if profile.due is not None:
                busy.append(f"({lifecycle.status_in(profile, profile.ready)} AND {q(profile.due)} > {now})")
        return f"{lead}({' OR '.join(busy)})"

    def held_copy(self, table: TableName, profile: Profile) -> str:
        """A copy in the claims table shows :consumer holds this row of ``table``. The two tables are
        named, not aliased: their names differ by construction, where an alias could be the table's."""
        q, claims = self.engine.quote, self.lifecycle.claims_table(table)
        same = self.key_match(profile, q(claims.name), q(table.name))
        return (
            f"EXISTS (SELECT 1 FROM {self.engine.table(claims)} "
            f"WHERE {q(claims.name)}.{q(CONSUMER)} = :consumer AND {same})"
        )

    def key_match(self, profile: Profile, left: str, right: str) -> str:
        """``left`` and ``right`` (qualifiers) hold the same row of the adopted table."""
        q = self.engine.quote
        return " AND ".join(f"{left}.{q(k)} = {right}.{q(k)}" for k in profile.key)

    def _settle(self, table: TableName, profile: Profile) -> str:
        """UPDATE of one claim's copies whose guard column the table no longer holds as the claim returned
        it (a trigger rewrote it): they take the table's value. With no such trigger it reads and writes
        nothing; rewriting every copy cost a 10,000-row claim on PostgreSQL 55 ms against 15. A NULL there
        leaves the copy as it was, and completion's equality fails on either value."""
        e, claims = self.engine, self.lifecycle.claims_table(table)
        q, guard = e.quote, e.quote(str(profile.guard))
        same = self.key_match(profile, "t", q(claims.name))
        read = f"(SELECT t.{guard} FROM {e.table(table)} AS t WHERE {same})"
        return (
            f"UPDATE {e.table(claims)}{e.row_lock_hints()} SET {guard} = {read} "
            f"WHERE {q(CONSUMER)} = :consumer AND {q(SEQ)} = :seq AND {guard} <> {read}"
        )

    @cached
    def copy_subtype(
        self, table: TableName, profile: Profile, subtype: TableName, columns: tuple[str, ...]
    ) -> Statement:
        """In the claim's transaction, after it copied its rows: the rows of ``subtype`` (a subtype table,
        Profile.include; ``columns``: every column of it) of the keys :consumer's claim :seq copied, into
        ``subtype``'s claims table, so a replay reads them as the claim found them. Rows an earlier chunk of
        the same claim copied are not copied again. The tables are aliased: three are in scope, each
        reference qualified."""
        e, lifecycle = self.engine, self.lifecycle
        q, copies = e.quote, lifecycle.claims_table(subtype)
        names = ", ".join(q(c) for c in (CONSUMER, SEQ, *columns))
        values = ", ".join([f"c.{q(CONSUMER)}", f"c.{q(SEQ)}", *(f"s.{q(c)}" for c in columns)])
        copied = (
            f"SELECT 1 FROM {e.table(copies)} AS d WHERE d.{q(CONSUMER)} = :consumer AND d.{q(SEQ)} = :seq "
            f"AND {self.key_match(profile, 'd', 'c')}"
        )
        return e.compile(
            f"INSERT INTO {e.table(copies)} ({names}) SELECT {values} FROM {e.table(subtype)} AS s "
            f"JOIN {e.table(lifecycle.claims_table(table))} AS c ON {self.key_match(profile, 's', 'c')} "
            f"WHERE c.{q(CONSUMER)} = :consumer AND c.{q(SEQ)} = :seq AND NOT EXISTS ({copied})"
        )

    @cached
    def forget_subtype_copies(self, table: TableName, profile: Profile, limited: bool) -> tuple[Statement, ...]:
        """After a statement that drops copies from the claims table (completion, an acknowledgement, a row
        fenced out), in its transaction: the copies of the profile's subtype tables (Profile.include)
        whose base row's copy is gone. One shape for every such statement; the copies held are few (the
        claims Spark has not committed), found by the claims table's (consumer, claim, row) index."""
        e, lifecycle = self.engine, self.lifecycle
        q, base = e.quote, lifecycle.claims_table(table)
        forgets = []
        for subtype in profile.subtypes(table):
            copies = lifecycle.claims_table(subtype)
            s = q(copies.name)
            same = (
                f"c.{q(CONSUMER)} = {s}.{q(CONSUMER)} AND c.{q(SEQ)} = {s}.{q(SEQ)} "
                f"AND {self.key_match(profile, 'c', s)}"
            )
            where = f"NOT EXISTS (SELECT 1 FROM {e.table(base)} AS c WHERE {same})"
            forgets.append(e.compile(e.limited_delete(copies, where, limited)))
        return tuple(forgets)

    @abstractmethod
    def claim_into(
        self,
        table: TableName,
        profile: Profile,
        columns: Sequence[str],
        where: str,
        order: str,
        addressed: bool = False,
        strict: bool = False,
    ) -> ClaimPlan:
        """The claim of an adopted table: up to ``:limit`` rows ``where`` selects, in ``order`` (an ORDER BY
        list, empty for none), marked or taken the profile's way and copied into the claims table; ``addressed``
        as for claim_sql: the rows may be fetched by their address (an engine that has none ignores it);
        ``strict``: it waits for rows others hold locked instead of skipping them (claim_sql's)."""

    def into_claims(self, table: TableName, columns: Sequence[str]) -> tuple[str, str]:
        """The claims table's column list for a copy of ``columns``, and the values that lead each copy."""
        e = self.engine
        names = ", ".join(e.quote(c) for c in (CONSUMER, SEQ, *columns))
        lead = (
            f"CAST(:consumer AS {e.type_sql(Column(CONSUMER, 'string'))}), "
            f"CAST(:seq AS {e.type_sql(Column(SEQ, 'bigint'))})"
        )
        return f"{e.table(self.lifecycle.claims_table(table))} ({names})", lead

    # ---- completion ----------------------------------------------------------------------------------
    def copy_holds(self, table: TableName, profile: Profile, claims: str | None) -> str:
        """A copy of :consumer's claims that ``claims`` names (Lifecycle.held: UPTO, AFTER or ONE; None: a
        copy of any claim of any consumer) holds this row of ``table`` unchanged since the claim (or the
        last renewal) wrote it: its guard column (the token, else the started-at, else the claimer) still
        holds that value. A row whose lease ran out and that the table's own worker took has another value
        there. The two tables are named, not aliased: their names differ by construction, where an alias
        could be the table's."""
        q, copies = self.engine.quote, self.lifecycle.claims_table(table)
        c, t = q(copies.name), q(table.name)
        same = self.key_match(profile, c, t)
        if profile.guard is not None:
            same += f" AND {c}.{q(profile.guard)} = {t}.{q(profile.guard)}"
        if claims is not None:
            same = f"{self.lifecycle.held(self.lifecycle.holding(table, profile), claims, c)} AND {same}"
        return f"EXISTS (SELECT 1 FROM {self.engine.table(copies)} WHERE {same})"

    def still_ours(self, table: TableName, profile: Profile, claims: str | None = UPTO) -> str:
        """A row of ``table`` in flight that a copy of claims up to :upto_seq holds unchanged (copy_holds;
        ``claims`` None: a copy of any consumer's claim, for an acknowledgement, which names no consumer)."""
        q = self.engine.quote
        ours = self.copy_holds(table, profile, claims)
        # Done sets done-at and may leave the status in flight (a claimer table): a done row is no longer ours,
        # or chunked completion, which repeats while a pass fills its chunk, would never end.
        open_ = f"{q(profile.done_at)} IS NULL AND " if profile.done_at is not None else ""
        if profile.status is not None:
            return f"{self.lifecycle.status_in(profile, (profile.in_flight or '',))} AND {open_}{ours}"
        return open_ + ours

    @cached
    def complete_held(self, table: TableName, profile: Profile, limited: bool) -> tuple[Statement, ...]:
        """The done transition (an update, or a delete) on the rows of claims up to :upto_seq that still
        carry them (kinds.holds.InPlace). ``limited``: each statement touches at most :limit rows and runs
        again until it touches fewer (SQL Server's lock escalation, at 5,000 locks a statement, would lock
        the table whole); a row done no longer counts as held, so the repeats end."""
        return (
            self.engine.compile(
                self._done(table, profile, self.lifecycle.held(self.lifecycle.holding(table, profile), UPTO), limited)
            ),
        )

    @cached
    def complete_copies(self, table: TableName, profile: Profile, limited: bool) -> tuple[Statement, ...]:
        """Where copies hold the claims (kinds.holds.Copies): the done transition on the rows of claims up
        to :upto_seq still ours (the guard holds what our claim wrote: still_ours), then the copies and
        their subtype copies dropped. A taken row left the table with its claim: only its copies go."""
        e, lifecycle = self.engine, self.lifecycle
        holding = lifecycle.holding(table, profile)
        forget = e.compile(e.limited_delete(holding.table, lifecycle.held(holding, UPTO), limited))
        if profile.take:
            return (forget,)
        done = e.compile(self._done(table, profile, self.still_ours(table, profile), limited))
        return (done, forget, *self.forget_subtype_copies(table, profile, limited))

    def _done(self, table: TableName, profile: Profile, ours: str, limited: bool) -> str:
        """The profile's done transition on the rows ``ours`` names: a delete, or its update."""
        if profile.deletes_on_done:
            return self.engine.limited_delete(table, ours, limited)
        return self.engine.limited_update(table, self.lifecycle.done_sets(profile), ours, limited)

    # ---- the rows held, the backlog ------------------------------------------------------------------
    @cached
    def count_all_held(self, holding: Holding) -> Statement:
        """Rows every consumer holds (claimed, not completed)."""
        e = self.engine
        state = f" WHERE {e.quote(holding.state[0])} = {e.literal(holding.state[1])}" if holding.state else ""
        return e.compile(f"SELECT COUNT(*) FROM {self.lifecycle.source(holding)}{state}")

    @cached
    def count_held(self, holding: Holding, claims: str = ONE) -> Statement:
        """Rows a consumer holds under claim :seq (ONE), or under every claim up to :upto_seq (UPTO). Where runs
        hold them, the rows in the runs: not every id of a run is a row's (sqlqueue.numbering)."""
        e = self.engine
        held = self.lifecycle.held(holding, claims)
        return e.compile(f"SELECT COUNT(*) FROM {self.lifecycle.source(holding)} WHERE {held}")

    @cached
    def partition_bounds(self, holding: Holding, parts: int) -> Statement:
        """Split the rows of claims (after_seq, upto_seq] into ``parts`` row ranges of equal size.

        ``parts`` is a validated int written as a literal: NTILE takes no parameter marker in every
        engine's parser.
        """
        e = self.engine
        q, row = e.quote, e.quote(holding.row)
        inner = (
            f"SELECT {row}, NTILE({int(parts)}) OVER (ORDER BY {row}) AS {q('part')} "
            f"FROM {self.lifecycle.source(holding)} WHERE {self.lifecycle.held(holding, RANGE)}"
        )
        return e.compile(
            f"SELECT MIN(t.{row}) AS {q('lo')}, MAX(t.{row}) AS {q('hi')} FROM ({inner}) AS t "
            f"GROUP BY t.{q('part')} ORDER BY {q('lo')}"
        )

    @cached
    def last_group(self, holding: Holding, group: str) -> Statement:
        """The largest group value among the rows a consumer holds under claim :seq: where a grouped claim
        of that consumer resumes (Claims.grouped)."""
        e = self.engine
        g = e.quote(group)
        return e.compile(f"SELECT MAX({g}) FROM {e.table(holding.table)} WHERE {self.lifecycle.held(holding)}")

    @cached
    def partition_groups(self, holding: Holding, group: str, parts: int) -> Statement:
        """Split the groups of the rows of claims (after_seq, upto_seq] into ``parts`` ranges of group values
        (of about as many groups each), then a row (NULL, NULL) when some rows have no group: a read task
        reads whole groups (read_grouped). ``parts`` is a literal, as in partition_bounds."""
        e = self.engine
        q, g = e.quote, e.quote(group)
        held = self.lifecycle.held(holding, RANGE)
        groups = f"SELECT DISTINCT {g} AS {q('g')} FROM {e.table(holding.table)} WHERE {held} AND {g} IS NOT NULL"
        tiles = f"SELECT d.{q('g')}, NTILE({int(parts)}) OVER (ORDER BY d.{q('g')}) AS {q('part')} FROM ({groups}) AS d"
        ranges = (
            f"SELECT MIN(t.{q('g')}) AS {q('lo')}, MAX(t.{q('g')}) AS {q('hi')} FROM ({tiles}) AS t "
            f"GROUP BY t.{q('part')}"
        )
        loose = f"SELECT 1 FROM {e.table(holding.table)} WHERE {held} AND {g} IS NULL"
        return e.compile(
            f"SELECT r.{q('lo')}, r.{q('hi')} FROM ({ranges}) AS r UNION ALL SELECT NULL, NULL WHERE EXISTS ({loose})"
        )

    @cached
    def read_grouped(
        self, holding: Holding, columns: Sequence[str], group: str, order: tuple[tuple[str, str], ...], loose: bool
    ) -> Statement:
        """The ``columns`` of the rows of claims (after_seq, upto_seq] whose group is in [lo, hi] (``loose``:
        that have no group), in the claim ``order``: each group whole, its rows in the order it was claimed in."""
        e = self.engine
        q, g = e.quote, e.quote(group)
        which = f"{g} IS NULL" if loose else f"{g} BETWEEN :lo AND :hi"
        return e.compile(
            f"SELECT {', '.join(q(c) for c in columns)} FROM {e.table(holding.table)} "
            f"WHERE {self.lifecycle.held(holding, RANGE)} AND {which} ORDER BY {self.lifecycle.order_by(order)}"
        )

    @cached
    def read_claimed(
        self, holding: Holding, profile: Profile, columns: Sequence[str], key: tuple[str, ...] = (),
        subtypes: tuple[tuple[TableName, tuple[str, ...]], ...] = (),
    ) -> Statement:  # fmt: skip
        """The ``columns`` of the rows of claims (after_seq, upto_seq] in the row range [lo, hi], as the profile's
        claim leaves them (Lifecycle.shown: rows runs hold are read as a marked claim would show them). With
        ``subtypes`` ((subtype table, its columns but ``key``), Profile.include), then for each its copy's
        row number (NULL: the row has none) and those columns, from the copies the claim made beside the
        base row's (``key``: the queue table's key)."""
        e = self.engine
        q = e.quote
        if not subtypes:
            cols = ", ".join(self.lifecycle.shown(holding, profile, c) for c in columns)
            return e.compile(
                f"SELECT {cols} FROM {self.lifecycle.source(holding)} WHERE {self.lifecycle.held(holding, RANGE)} "
                f"AND {q(holding.row)} BETWEEN :lo AND :hi"
            )
        selected, joins = [f"c.{q(c)}" for c in columns], []
        for i, (subtype, fields) in enumerate(subtypes):
            s = f"s{i}"
            selected += [f"{s}.{q(ROW)}", *(f"{s}.{q(c)}" for c in fields)]
            same = " AND ".join(f"{s}.{q(k)} = c.{q(k)}" for k in key)
            joins.append(
                f" LEFT JOIN {e.table(self.lifecycle.claims_table(subtype))} AS {s} "
                f"ON {s}.{q(CONSUMER)} = c.{q(CONSUMER)} AND {s}.{q(SEQ)} = c.{q(SEQ)} AND {same}"
            )
        return e.compile(
            f"SELECT {', '.join(selected)} FROM {e.table(holding.table)} AS c{''.join(joins)} "
            f"WHERE {self.lifecycle.held(holding, RANGE, 'c')} AND c.{q(holding.row)} BETWEEN :lo AND :hi"
        )

    @cached
    def count_ready(self, table: TableName, profile: Profile) -> Statement:
        """The backlog; rows being claimed or written are skipped rather than waited for."""
        e = self.engine
        return e.compile(
            f"SELECT COUNT(*) FROM {e.table(table)}{e.skip_locked_hints()} WHERE {self.ready(table, profile)}"
        )

    @cached
    def max_ready(self, table: TableName, profile: Profile, column: str) -> Statement:
        """The largest ``column`` among the rows a claim could take now: a Trigger.AvailableNow run's bound."""
        e = self.engine
        return e.compile(
            f"SELECT MAX({e.quote(column)}) FROM {e.table(table)}{e.skip_locked_hints()} "
            f"WHERE {self.ready(table, profile)}"
        )

    @cached
    def backlog(self, table: TableName, profile: Profile) -> Statement:
        """The ready rows a claim could take now, and the age in ms of the oldest (NULL when none, or
        where the table records no enqueue time), in the one pass over the ready rows that
        ``count_ready`` makes. Exact where a probe of the lowest ready id is not: with 1M done rows
        kept, that probe walked the primary key for 130-180 ms on a queue whose ready index is by
        priority or due time, against 6-9 ms more than the count for the minimum here (PostgreSQL,
        JIT off)."""
        e, enqueued = self.engine, profile.enqueued
        now = self.lifecycle.clock(profile)
        age = "NULL" if enqueued is None else e.millis_between(f"MIN({e.quote(enqueued)})", now)
        return e.compile(
            f"SELECT COUNT(*), {age} FROM {e.table(table)}{e.skip_locked_hints()} WHERE {self.ready(table, profile)}"
        )

    # A row's wait is claimed_at - enqueued_at, both from the database's clock. The percentiles are the
    # nearest rank, the value at rank ceil(p * n) in wait order (what PostgreSQL's percentile_disc
    # returns). A claim of sqlqueue's own layout returns each row's wait with its id, and the consumer
    # ranks them the same way (Waits.ranked): on 50,000-row PostgreSQL claims, claim and ranking took
    # 371 ms a batch against 393 ms for the claim and this statement (benchmarks/bench_wait.py). This
    # statement ranks in the database, in one row back, what no claim returned: an adopted table's
    # copies, and the rows of a claim held across a restart.
    def wait_figures(self, source: str, enqueued: str, claimed: str, where: str) -> str:
        """One row for the rows ``where`` selects from ``source`` (a FROM clause): how many, the p50 and p95 of
        their waits (``claimed`` minus ``enqueued``) and the longest (ms; NULL when no row matches)."""
        e = self.engine
        wait = e.millis_between(e.quote(enqueued), e.quote(claimed))
        return self.rank_waits(f"SELECT {wait} AS {e.quote('wait_ms')} FROM {source} WHERE {where}")

    def rank_waits(self, waits: str) -> str:
        """(count, p50, p95, max) of the column wait_ms of the query ``waits``, with ROW_NUMBER and
        COUNT(*) OVER (), which every engine has: SQLite has no percentile function, and SQL Server
        documents PERCENTILE_DISC as an analytic function, PERCENTILE_DISC (p) WITHIN GROUP (ORDER BY
        ...) OVER (...), one value per input row (learn.microsoft.com/sql/t-sql/functions/percentile-disc-transact-sql).
        Ranks ceil(n / 2) and ceil(19 n / 20) are integer arithmetic, the same in every engine."""
        q = self.engine.quote
        ranked = (
            f"SELECT v.{q('wait_ms')}, ROW_NUMBER() OVER (ORDER BY v.{q('wait_ms')}) AS {q('wait_rank')}, "
            f"COUNT(*) OVER () AS {q('n')} FROM ({waits}) AS v"
        )
        w, r, n = f"w.{q('wait_ms')}", f"w.{q('wait_rank')}", f"w.{q('n')}"
        return (
            f"SELECT MAX({n}), MAX(CASE WHEN {r} = ({n} + 1) / 2 THEN {w} END), "
            f"MAX(CASE WHEN {r} = (19 * {n} + 19) / 20 THEN {w} END), MAX({w}) FROM ({ranked}) AS w"
        )

    @cached
    def claim_waits(self, holding: Holding) -> Statement | None:
        """The wait figures of the rows one consumer holds under one claim (a micro-batch), read
        through the index of claimed rows; None where the holding records no enqueue or claim time."""
        if holding.enqueued is None or holding.claimed is None:
            return None
        held = self.lifecycle.held(holding)
        source = self.lifecycle.source(holding)
        return self.engine.compile(self.wait_figures(source, holding.enqueued, holding.claimed, held))
