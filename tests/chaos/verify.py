"""The verifier: what reached the output, counted against what was produced, with no sqlqueue code.

Like Jepsen's total-queue checker it counts three things apart: keys produced that never arrived
(lost), arrivals beyond a key's first (duplicated), and arrivals of keys nobody produced (unexpected).
Outputs are read as any client reads them: Delta tables through delta-rs (the deltalake package, not
Spark), queue tables and a worker's output through the database's own driver. It also checks the end
state: the source table drained as its design says, and sqlqueue's side tables left empty.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.chaos.databases import Database
from tests.chaos.designs import Table, not_done


@dataclass
class Tally:
    lost: int
    duplicated: int
    unexpected: int
    arrived: int


def tally(produced: set[int], arrivals: Counter[int]) -> Tally:
    return Tally(
        lost=len(produced - set(arrivals)),
        duplicated=sum(n - 1 for n in arrivals.values() if n > 1),
        unexpected=sum(n for k, n in arrivals.items() if k not in produced),
        arrived=sum(arrivals.values()),
    )


def delta_keys(path: Path, column: str, where: tuple[str, str] | None = None) -> Counter[int]:
    """The keys in a Delta table's ``column`` (rows whose ``where`` column equals its value)."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        table = DeltaTable(str(path))
    except TableNotFoundError:  # no commit yet
        return Counter()
    spelled = {f.name.lower(): f.name for f in table.schema().fields}  # PostgreSQL folds names to lower case
    key, filtered = spelled[column.lower()], spelled[where[0].lower()] if where else None
    rows = table.to_pyarrow_table(columns=[key, *([filtered] if filtered else [])]).to_pylist()
    return Counter(int(r[key]) for r in rows if where is None or r[filtered] == where[1])


def table_keys(db: Database, table: str, column: str, where: str = "1 = 1") -> Counter[int]:
    return Counter(int(v) for (v,) in db.query(f"SELECT {column} FROM {table} WHERE {where}"))


@dataclass
class Output:
    """Where a cell's keys arrive: Delta tables (path, column, row filter) and tables (name, column)."""

    delta: list[tuple[Path, str, tuple[str, str] | None]] = field(default_factory=list)
    tables: list[tuple[str, str]] = field(default_factory=list)

    def arrivals(self, db: Database) -> Counter[int]:
        found: Counter[int] = Counter()
        for path, column, where in self.delta:
            found += delta_keys(path, column, where)
        for table, column in self.tables:
            found += table_keys(db, table, column)
        return found


def leftovers(db: Database, source: Table | None, side_tables: list[str]) -> dict[str, int]:
    """Rows that should be gone once a cell has drained: the source's rows not done as its design says,
    and any row in sqlqueue's side tables (claims, staging, unpublished)."""
    left: dict[str, int] = {}
    if source is not None:
        open_rows = db.query(f"SELECT COUNT(*) FROM {source.name} WHERE {not_done(source)}")[0][0]
        if source.design == "native":
            open_rows = db.query(f"SELECT COUNT(*) FROM {source.name} WHERE state <> 'done'")[0][0]
        if open_rows:
            left[source.name] = open_rows
    for table in side_tables:
        count = db.query(f"SELECT COUNT(*) FROM {table}")[0][0]
        if count:
            left[table] = count
    return left
