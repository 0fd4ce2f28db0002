"""A profile's transitions as SQL, for every statement that moves a row: what a claim writes, what
done writes, and where the claimed rows are held and how they are found. The native layout (profile
NATIVE) and every adopted table's profile go through the same methods."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...identifiers import TableName
from ...profile import Profile
from ..engine import Engine

# The claims table's own columns; an adopted table's columns follow them under their own names.
ROW, CONSUMER, SEQ = "sqlqueue_row", "sqlqueue_consumer", "sqlqueue_claim_seq"
# A run's columns beside the consumer and claim number, in the claims table of sqlqueue's own layout: the
# first and last id of consecutive ids one claim holds, when it took them and until when (statements.runs).
# Prefixed like the copies' columns: a statement joins them to the queue's own consumer and claimed_at.
FIRST, LAST, TAKEN, LEASE = "sqlqueue_first_id", "sqlqueue_last_id", "sqlqueue_claimed_at", "sqlqueue_lease_until"


def runs_table(table: TableName) -> TableName:
    """Where a claim holds rows of sqlqueue's own ``table`` as runs of consecutive ids (Runs), beside it."""
    return TableName(f"{table.name}_claims", table.schema)


# Which claims a held-rows condition selects: one claim number, a range (after, upto], every one up
# to a number, or every one after a number (the claims Spark has not committed yet).
ONE, RANGE, UPTO, AFTER = "one", "range", "upto", "after"


@dataclass(frozen=True)
class Holding:
    """Where the rows of a table's claims are held. A claim records (consumer, claim number) with each
    row it takes: on the row itself in sqlqueue's own layout, in a copy of the row in the claims table
    beside an adopted table. Reading a claim, its queue wait and its completion find the rows here."""

    table: TableName
    consumer: str
    seq: str
    # An integer column that orders the held rows, so that a read splits them into ranges.
    row: str
    # (column, value) every held row has too, where that lets the engine seek an index of them.
    state: tuple[str, str] | None
    # When the row was enqueued and when it was claimed, for the queue wait (None: not recorded).
    enqueued: str | None
    claimed: str | None
    # Where the rows are held as runs of ids (statements.runs): the claims table, joined to ``table`` by id;
    # ``consumer``, ``seq`` and ``claimed`` are then its columns, and the rows stay as they were.
    runs: TableName | None = None


class Lifecycle:
    """The fragments every statement that moves a row shares (no statement of its own)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def order_by(self, order: Sequence[tuple[str, str]]) -> str:
        """An ORDER BY list of (column, ASC or DESC) pairs: a profile's claim order."""
        return ", ".join(f"{self.engine.quote(c)} {d}" for c, d in order)

    def clock(self, profile: Profile) -> str:
        """The current time in the clock the table's times are written in."""
        return self.engine.local_now() if profile.clock == "local" else self.engine.now()

    def status_in(self, profile: Profile, values: Sequence[str], qualifier: str = "") -> str:
        """The status is one of ``values``. Status values are string literals whatever the column's type:
        against a flag or a code (a claimer table's bit in_process), or a Unicode column, the literal is what
        converts, since bit, int and nvarchar outrank varchar ("Data type precedence",
        learn.microsoft.com/sql/t-sql/data-types/data-type-precedence-transact-sql), which a filtered
        index allows on the right of the comparison ("Create filtered indexes", data conversion operators
        in the filter predicate; SqlServerEngine.literal); PostgreSQL and SQLite type the literal by the
        column. ``qualifier``: a quoted table name, where another table is in scope."""
        of = f"{qualifier}." if qualifier else ""
        status, literals = of + self.engine.quote(str(profile.status)), [self.engine.literal(v) for v in values]
        return f"{status} = {literals[0]}" if len(literals) == 1 else f"{status} IN ({', '.join(literals)})"

    def claim_sets(self, profile: Profile) -> str:
        """What a claim writes on a row: in flight, started now, one more attempt, by whom, and where the
        row carries them, the claim number, the lease's end and a cleared sink tag. With a status, a
        done-at the row carries (from its default, or an earlier run) is cleared: in flight, it is what
        tells done from abandoned (Claims.ready)."""
        q, now = self.engine.quote, self.clock(profile)
        sets = []
        if profile.status is not None:
            sets.append(f"{q(profile.status)} = {self.engine.literal(profile.in_flight or '')}")
            if profile.done_at is not None:
                sets.append(f"{q(profile.done_at)} = NULL")
        if profile.started is not None:
            sets.append(f"{q(profile.started)} = {now}")
        if profile.attempts is not None:
            sets.append(f"{q(profile.attempts)} = {q(profile.attempts)} + 1")
        if profile.claimer is not None:
            sets.append(f"{q(profile.claimer)} = :consumer")
        if profile.claim_seq is not None:
            sets.append(f"{q(profile.claim_seq)} = :seq")
        if profile.token is not None:
            sets.append(f"{q(profile.token)} = {now}")
        if profile.lease is not None:
            sets.append(f"{q(profile.lease)} = {self.engine.now_plus('lease_seconds')}")
        if profile.tag is not None:  # a claimed row belongs to no sink batch any more
            sets.append(f"{q(profile.tag)} = NULL")
        return ", ".join(sets)

    def done_sets(self, profile: Profile) -> str:
        q, now = self.engine.quote, self.clock(profile)
        sets = []
        if profile.status is not None and profile.done is not None:
            sets.append(f"{q(profile.status)} = {self.engine.literal(profile.done)}")
        if profile.done_at is not None:
            sets.append(f"{q(profile.done_at)} = {now}")
        if profile.duration is not None and profile.started is not None:
            sets.append(f"{q(profile.duration)} = {self.engine.millis_between(q(profile.started), now)}")
        if profile.token is not None:
            sets.append(f"{q(profile.token)} = {now}")
        if profile.lease is not None:
            sets.append(f"{q(profile.lease)} = NULL")
        return ", ".join(sets)

    # ---- outcomes: what an acknowledgement writes (Outcomes), done_sets above for done -----------------
    def later(self, profile: Profile, seconds_param: str) -> str:
        """The current time plus ``:seconds_param`` seconds, in the clock the table's times are written in."""
        if profile.clock == "local":
            return self.engine.add_seconds(self.engine.local_now(), seconds_param)
        return self.engine.now_plus(seconds_param)

    def spent(self, profile: Profile, ahead: int = 0) -> str | None:
        """The row has no attempt left: its attempts (with ``ahead`` more) reached its own maximum where it
        carries one (sqlqueue's own layout), else :max_attempts; None where the profile counts no attempts."""
        if profile.attempts is None:
            return None
        q = self.engine.quote
        attempts = q(profile.attempts) + (f" + {ahead}" if ahead else "")
        cap = f"COALESCE({q(profile.attempts_cap)}, :max_attempts)" if profile.attempts_cap else ":max_attempts"
        return f"{attempts} >= {cap}"

    def give_back(self, profile: Profile, error: str, failed_at: str, run: bool = False) -> str:
        """SET list that returns a claimed row to the queue with the retry status, or fails it once its
        attempts are spent, as a relational queue's Modify_ procedure forces Failed at its maximum.

        A failed row keeps the claimer and claim number that gave up on it, and records when in its
        done-at: the SQL expression ``failed_at``, read before the SET applies. ``error``: the error text's
        SQL expression. ``run``: a run held the row (statements.runs) and wrote nothing on it, so the attempt is
        counted now and the row takes what the claim would have written: :consumer, :seq, taken at :taken,
        no sink tag."""
        q, literal, spent = self.engine.quote, self.engine.literal, self.spent(profile, 1 if run else 0)

        def unless_spent(if_spent: str, otherwise: str) -> str:
            return otherwise if spent is None else f"CASE WHEN {spent} THEN {if_spent} ELSE {otherwise} END"

        sets = [f"{q(str(profile.status))} = {unless_spent(literal(str(profile.failed)), literal(str(profile.retry)))}"]
        kept = {profile.claimer: ":consumer", profile.claim_seq: ":seq"}
        sets += [
            f"{q(c)} = {unless_spent(kept[c] if run else q(c), 'NULL')}"
            for c in (profile.claimer, profile.claim_seq)
            if c is not None
        ]
        if profile.done_at is not None:
            sets.append(f"{q(profile.done_at)} = {unless_spent(failed_at, 'NULL')}")
        if profile.lease is not None:
            sets.append(f"{q(profile.lease)} = NULL")
        if profile.error is not None:
            sets.append(f"{q(profile.error)} = {error}")
        if run:
            attempts = q(str(profile.attempts))
            sets += [f"{attempts} = {attempts} + 1", f"{q(str(profile.started))} = :taken"]
            sets += [f"{q(profile.tag)} = NULL"] if profile.tag is not None else []
        return ", ".join(sets)

    def retry_sets(self, profile: Profile) -> str:
        """What a retry writes: the row back to the queue (give_back) with the error, due after
        :delay_seconds, and the token and step where the table has them."""
        sets = [self.give_back(profile, ":error", self.clock(profile))]
        if profile.due is not None:
            sets.append(f"{self.engine.quote(profile.due)} = {self.later(profile, 'delay_seconds')}")
        return ", ".join([*sets, *self._reported(profile)])

    def failed_sets(self, profile: Profile) -> str:
        """What a failed outcome writes: the failed status, the error, the time in done-at, no lease; the
        token and step where the table has them."""
        q = self.engine.quote
        sets = [f"{q(str(profile.status))} = {self.engine.literal(str(profile.failed))}"]
        if profile.error is not None:
            sets.append(f"{q(profile.error)} = :error")
        if profile.done_at is not None:
            sets.append(f"{q(profile.done_at)} = {self.clock(profile)}")
        if profile.lease is not None:
            sets.append(f"{q(profile.lease)} = NULL")
        return ", ".join([*sets, *self._reported(profile)])

    def done_reported_sets(self, profile: Profile) -> str:
        """What a done outcome writes: the done transition (done_sets, which sets the token), with the
        response and the step the acknowledgement reports."""
        q = self.engine.quote
        response = [f"{q(profile.response)} = COALESCE(:response, {q(profile.response)})"] if profile.response else []
        return ", ".join([self.done_sets(profile), *response, *self._step(profile)])

    def _reported(self, profile: Profile) -> list[str]:
        token = [f"{self.engine.quote(profile.token)} = {self.clock(profile)}"] if profile.token is not None else []
        return [*token, *self._step(profile)]

    def _step(self, profile: Profile) -> list[str]:
        """The step an acknowledgement names, else the row's own: a relational queue's Modify_ procedure
        writes Step = ISNULL(@Step, Step), so a retry resumes where the last attempt stopped."""
        q = self.engine.quote
        return [f"{q(profile.step)} = COALESCE(:step, {q(profile.step)})"] if profile.step is not None else []

    def beside(self, table: TableName, role: str) -> TableName:
        """One of sqlqueue's tables beside an adopted ``table`` (claims, staging): its name says whose it is."""
        return TableName(f"{table.name}_sqlqueue_{role}", table.schema)

    def claims_table(self, table: TableName) -> TableName:
        return self.beside(table, "claims")

    def holding(self, table: TableName, profile: Profile) -> Holding:
        """Where ``profile`` holds a claim's rows. Rows that carry their bookkeeping (sqlqueue's own
        layout) are held in place, in flight with the consumer and claim number. An adopted table's are
        copies in its claims table, under sqlqueue's own columns; the copies keep the table's enqueue
        time and the started-at the claim wrote."""
        if profile.claim_seq is not None:  # the rows have a column for the claim number: they carry it
            in_flight = (str(profile.status), str(profile.in_flight)) if profile.status else None
            return Holding(
                table, str(profile.claimer), profile.claim_seq, profile.key[0], in_flight, profile.enqueued,
                profile.started,
            )  # fmt: skip
        return Holding(self.claims_table(table), CONSUMER, SEQ, ROW, None, profile.enqueued, profile.started)

    def runs_holding(self, table: TableName, profile: Profile) -> Holding:
        """Where runs hold a claim's rows (Runs): the queue table joined to its claims table."""
        return Holding(table, CONSUMER, SEQ, profile.key[0], None, profile.enqueued, TAKEN, runs_table(table))

    def in_run(self, table: TableName, profile: Profile) -> str:
        """A run a claim holds (Runs) holds this row of ``table`` (Engine.in_runs)."""
        q = self.engine.quote
        return self.engine.in_runs(f"{q(table.name)}.{q(profile.key[0])}", runs_table(table), FIRST, LAST)

    def source(self, holding: Holding) -> str:
        """The rows a holding holds, as a FROM clause names them: the table, or the table joined to the runs
        that hold its rows (unaliased: the two names differ by construction; the runs' columns, prefixed,
        need no qualifier beside the table's)."""
        e = self.engine
        if holding.runs is None:
            return e.table(holding.table)
        t, r, row = e.quote(holding.table.name), e.quote(holding.runs.name), e.quote(holding.row)
        return (
            f"{e.table(holding.table)} JOIN {e.table(holding.runs)} "
            f"ON {t}.{row} BETWEEN {r}.{e.quote(FIRST)} AND {r}.{e.quote(LAST)}"
        )

    def shown(self, holding: Holding, profile: Profile, column: str) -> str:
        """A column of a held row as a read returns it: where runs hold the row, as the claim would have left
        it had it marked the row (in flight, started when the run was taken, one more attempt, by the run's
        consumer and claim, leased as the run is); else the column itself."""
        q = self.engine.quote
        if holding.runs is None:
            return q(column)
        held = {
            profile.status: self.engine.literal(profile.in_flight or ""),
            profile.attempts: f"{q(str(profile.attempts))} + 1",
            profile.claimer: q(CONSUMER),
            profile.claim_seq: q(SEQ),
            profile.started: q(TAKEN),
            profile.lease: q(LEASE),
        }
        return f"{held[column]} AS {q(column)}" if column in held else q(column)

    def held(self, holding: Holding, claims: str = ONE, qualifier: str = "") -> str:
        """Rows a consumer holds under the claims ``claims`` names (ONE, RANGE, UPTO or AFTER), their columns
        qualified by ``qualifier`` (a quoted table name) where another table is in scope.

        A state test first lets the engine seek the filtered index of claimed rows.
        """
        q = self.engine.quote
        of = f"{qualifier}." if qualifier else ""
        state = f"{of}{q(holding.state[0])} = {self.engine.literal(holding.state[1])} AND " if holding.state else ""
        seq = f"{of}{q(holding.seq)}"
        held = f"{state}{of}{q(holding.consumer)} = :consumer AND {seq}"
        if claims == ONE:
            return f"{held} = :seq"
        if claims == UPTO:
            return f"{held} <= :upto_seq"
        if claims == AFTER:
            return f"{held} > :after_seq"
        return f"{held} > :after_seq AND {seq} <= :upto_seq"
