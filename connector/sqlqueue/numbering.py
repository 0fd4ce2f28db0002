"""Ids a sink task names itself, from blocks of the queue table's identity reserved as its rows arrive.

Where an engine makes a queue's identity step by more than one (Engine.id_step: 1,000 on PostgreSQL), each
id the identity hands out is the first of a block of that many. A row inserted with the table's default
takes that first id and leaves the rest of its block unused; a sink task takes whole blocks, one
``nextval`` each, and numbers its rows with every id of them but the first. The database then takes no
``nextval`` a row, about a tenth of a bulk load's time (docs/evidence.md).

So no row ever holds an id after the first of a block that a default filled, nor the first of a block a
sink task took: the runs of ids a claim holds may span those (``runs_of``).

A statement cannot run while a bulk load is in progress, so a task loads in segments: it reserves ids for
the rows in hand and at least four times as many as it has sent, loads until they run out, and reserves
again. A task of n rows takes about log5(n / the first batch's rows) + 1 loads (1,000,000 rows in batches of
10,000: four), and leaves unused at most four ids for each it sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Identity:
    """How a queue table's identity hands out ids: ``step`` apart (1, or a block's size), and whether this
    login may reserve blocks of them (``nextval`` needs USAGE on the identity's sequence, where inserting
    with the default does not). A claim's runs go by the step whatever the login may do."""

    step: int = 1
    reserves: bool = False

    @property
    def names_ids(self) -> bool:
        """Whether a sink task names its rows' ids from blocks it reserves."""
        return self.step > 1 and self.reserves


class Piece(Protocol):
    """Rows that render themselves as bulk-load text, led by their ids where given (sqlqueue.textrows)."""

    rows: int

    def text(self, ids: Sequence[range] | None) -> bytes: ...


class Blocks:
    """Ids reserved in blocks of ``step``, handed out in order."""

    def __init__(self, step: int, reserve: Callable[[int], Iterable[int]]) -> None:
        self.step = step
        self._reserve = reserve  # n -> the first ids of n new blocks
        self._free: list[range] = []
        self.left = 0
        self.taken = 0

    def grow(self, ids: int) -> None:
        """Reserve blocks for at least ``ids`` more ids."""
        blocks = -(-ids // (self.step - 1))
        for first in sorted(self._reserve(blocks)):
            self._free.append(range(first + 1, first + self.step))
        self.left += blocks * (self.step - 1)

    def take(self, ids: int) -> list[range]:
        """The next ``ids`` ids, as ranges in increasing order (at most ``left``)."""
        taken, wanted = [], ids
        while wanted:
            free = self._free[0]
            part = free[:wanted]
            taken.append(part)
            wanted -= len(part)
            if len(part) == len(free):
                self._free.pop(0)
            else:
                self._free[0] = free[len(part) :]
        self.left -= ids
        self.taken += ids
        return taken


def segments(pieces: Iterator[Piece], blocks: Blocks) -> Iterator[Iterator[bytes]]:
    """The text of ``pieces`` led by ids from ``blocks``, as segments to load one after another, each read
    to its end before the next is asked for: ids are reserved before each, for the piece in hand and at
    least four times as many as were sent before it (a load's end waits for the database to finish it)."""
    pending = [next(pieces, None)]

    def segment() -> Iterator[bytes]:
        piece = pending[0]
        while piece is not None and piece.rows <= blocks.left:
            yield piece.text(blocks.take(piece.rows))
            piece = pending[0] = next(pieces, None)

    while pending[0] is not None:
        blocks.grow(max(pending[0].rows, 4 * blocks.taken))
        yield segment()
