"""The table-kind contract: what differs between sqlqueue's own layout and a table adopted through a
profile, as one small protocol a ``Queue`` holds.

Everything else a queue does (claim, read a claim, complete, renew and rescue, stage and publish, count
per state) is one implementation in ``queue.py``, built from the kind's checked profile: which columns
the rows carry their claim in, or whether copies in a claims table hold it; what ready, a claim and done
write. A kind says where its profile comes from, which columns it has and a writer may write, whether
the table is ready to serve, what the doctor finds, and what it supports beyond every table's basics
(``capabilities.py``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from ..capabilities import Capability
from ..connection import ConnectionSpec
from ..dialects import Dialect
from ..dialects.engine import Engine, Statement
from ..findings import Finding
from ..identifiers import TableName
from ..numbering import Identity
from ..profile import Profile
from ..schema import Column, Included, Subtype


class Served(Protocol):
    """What a kind uses of the queue it serves (``queue.Queue``)."""

    spec: ConnectionSpec
    table: TableName
    dialect: Dialect
    engine: Engine

    @property
    def profile(self) -> Profile: ...

    def fetch(self, statement: Statement, values: dict[str, Any]) -> list[tuple]: ...

    def transaction(self) -> AbstractContextManager[Any]: ...

    def catalog_names(self, table: TableName | None = None) -> dict[str, str | None]: ...

    def facts(self, builder: Callable[[TableName], Statement]) -> list[tuple]: ...

    def look(self, at: Callable[[Any], Any]) -> Any: ...

    def layout(self) -> int: ...

    def subtypes(self) -> tuple[Subtype, ...]: ...

    def columns(self) -> tuple[Column, ...]: ...

    def bindings(self) -> dict[str, Any]: ...

    def repeat(self, statement: Statement, values: dict[str, Any], chunk: int | None) -> int: ...


@dataclass(frozen=True)
class AckWrites:
    """What acknowledgements write besides their outcomes: the profile done writes by, and where copies
    hold the rows, the statement locking an acknowledged row's copy first and the one forgetting it after
    (Outcomes.lock_acked, forget_acked)."""

    done: Profile
    lock: Statement | None
    forget: Statement | None


@dataclass(frozen=True)
class Adoption:
    """What adopting a table adds beside it, for a DBA to review: sqlqueue's claims and staging tables and the
    sink's ledger; and, where asked for, an index the claim can seek when no index of the table leads with its
    first column (None: not asked, or not needed)."""

    statements: tuple[str, ...]
    index: str | None


class Holds(Protocol):
    """Where a kind's claims keep the rows they took, and how each step settles them (``holds.py``)."""

    def copied(self, queue: Served) -> tuple[str, ...]:
        """The columns a claim copies into the claims table: none where the rows carry their claim."""

    def complete(self, queue: Served, consumer: str, upto_seq: int, keep: bool, chunk: int | None) -> int:
        """Consuming.complete: the done transition of the rows held under claims up to ``upto_seq``."""

    def renew(self, queue: Served, values: dict[str, Any], limit: int | None) -> int:
        """Consuming.renew: the renewal, by ``limit`` rows a statement (None: one statement)."""

    def drop_fenced(self, queue: Served, consumer: str, seq: int) -> int:
        """Consuming.drop_fenced: forget what another claimer took since claim ``seq``."""

    def rescue_expired(self, queue: Served, max_attempts: int, chunk: int | None) -> int:
        """Consuming.rescue_expired: what becomes of rows whose claimer's lease ran out."""

    def ack_writes(self, queue: Served, keep: bool) -> AckWrites:
        """What acknowledgements write besides their outcomes (Consuming.apply_acks)."""

    def forget_subtype_copies(self, queue: Served, cur: Any) -> None:
        """The subtype tables' copies of rows whose base copies were forgotten, in the caller's transaction."""


class TableKind(Protocol):
    # The profile a user declared for the table; None for sqlqueue's own layout (profile.NATIVE).
    declared: Profile | None
    capabilities: frozenset[Capability]
    # The lifecycle columns a source shows by default, before the domain's.
    shown_lifecycle: tuple[str, ...]
    holds: Holds
    # Which rows a claim could take now, as ``sqlqueue stats`` words it after their count.
    ready_rule: str

    def describe(self) -> str:
        """How an error names the kind, after "table <name> is" (e.g. "adopted through profile relational")."""

    def instead(self, capability: Capability) -> str:
        """What to use instead of a capability the kind lacks."""

    def profile(self, queue: Served) -> Profile:
        """How the table expresses a queue, spelled as the table spells its columns."""

    def claim_profile(self, queue: Served, order: str) -> Profile:
        """The profile a claim in the stream's ``order`` option runs by."""

    def subtypes(self, queue: Served) -> tuple[Subtype, ...]:
        """The tables that extend the table by its key (Profile.include), checked; none for sqlqueue's own."""

    def columns(self, queue: Served) -> tuple[Column, ...]:
        """The table's columns as the database reports them."""

    def domain_columns(self, queue: Served) -> tuple[Column, ...]:
        """The table's columns but those its lifecycle owns."""

    def spelled(self, queue: Served, names: Sequence[str]) -> tuple[str, ...]:
        """``names`` as the table spells its columns; one error naming those it lacks."""

    def require_layout(self, queue: Served) -> None:
        """Refuse, in one line naming what fixes it, a table that is not ready to be served."""

    def writable(self, queue: Served, names: Sequence[str]) -> tuple[Column, ...]:
        """The columns receiving a producer's ``names``, or one error naming what does not fit."""

    def findings(self, queue: Served, order: str) -> list[Finding]:
        """What the doctor finds about the table itself (engine checks come from the dialect)."""

    def peeked(self, queue: Served) -> tuple[str, ...]:
        """The columns ``sqlqueue peek`` shows of a ready row."""

    def identity(self, queue: Served) -> Identity:
        """How the table's identity hands out ids (sqlqueue.numbering)."""

    def layout(self, queue: Served) -> int:
        """The version of sqlqueue's own layout the table has (Capability.MIGRATE)."""

    def included(
        self, queue: Served, given: Sequence[str], structs: Mapping[str, Sequence[str]]
    ) -> tuple[Included, ...]:
        """The subtype tables a producer's struct columns write (Producing.included)."""

    def adoption(self, queue: Served, index: bool = True) -> Adoption | None:
        """What adopting the table adds beside it, and with ``index`` the claim's index (a catalog read of
        the table's indexes); None for sqlqueue's own layout, which has nothing to adopt."""

    def staging(self, queue: Served, table: TableName) -> TableName:
        """Where the sink's batches for ``table`` (the table, or a subtype table) wait until published."""

    def new_row(self, queue: Served, names: Sequence[str]) -> dict[str, str]:
        """{column: SQL value} a published row takes besides the ``names`` a producer wrote (Sink.new_row)."""

    def stats(self, queue: Served) -> dict[str, dict[str, Any]]:
        """Rows per state (sqlqueue's own layout) or per status value (an adopted table's profile), each
        {"rows", "oldest_enqueued_at", ...} as ``sqlqueue stats`` shows them."""

    def state_lines(self, queue: Served, now: dt.datetime) -> list[str]:
        """The lines ``sqlqueue stats`` prints of the rows per state (``stats``), with their header; none
        where the table has no states (a profile with no status column)."""
