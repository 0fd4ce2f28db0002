"""The verifier: what reached the output, counted against what was produced, with no sqlqueue code.

Like Jepsen's total-queue checker it counts three things apart: keys produced that never arrived
(lost), arrivals beyond a key's first (duplicated), and arrivals of keys nobody produced (unexpected).
Of the duplicates it sets apart those the delivery guarantee leaves open (``after_expiry``): a key the
table's own worker took from the stream's claim once its lease ran out, which the stream delivered too
in the run that held the claim (the job was down, or cut off from its database, longer than the lease
left before it completed the key).
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


def after_expiry(
    arrivals: Counter[int], delivered: dict[int, float], taken: dict[int, float], starts: list[float]
) -> int:
    """Arrivals beyond a key's first where the worker took the key from the stream's expired claim
    (``taken``: key -> when) and the stream delivered it (``delivered``: key -> when, earliest) in the
    run of the job that held the claim: before the worker took it, or after with no start of the job
    (``starts``) between, a batch in flight whose lease ran out while its job could not reach the database.
    One the stream delivered in a later run (a replay serving rows taken while it was away) is a defect
    and stays among the duplicates."""

    def same_run(key: int, at: float) -> bool:
        when = delivered.get(key)
        return when is not None and (when < at or not any(at < s <= when for s in starts))

    return sum(1 for k, at in taken.items() if arrivals[k] > 1 and same_run(k, at))


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


def delta_times(path: Path, column: str) -> dict[int, float]:
    """{key: when its first data file was written (this host's clock, seconds)} of a Delta table."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        table = DeltaTable(str(path))
    except TableNotFoundError:
        return {}
    spelled = {f.name.lower(): f.name for f in table.schema().fields}
    first: dict[int, float] = {}
    for action in pa.table(table.get_add_actions(flatten=True)).to_pylist():
        written = action["modification_time"] / 1000  # milliseconds since the epoch
        for value in pq.read_table(path / action["path"], columns=[spelled[column.lower()]]).column(0).to_pylist():
            first[int(value)] = min(first.get(int(value), written), written)
    return first


def delta_commits(path: Path, column: str) -> list[tuple[float, list[int]]]:
    """Each commit of a Delta table that added rows, in version order: when it was made (its commitInfo's
    timestamp, this host's clock, seconds) and the keys it added, file by file as it lists them and row by row
    within a file. Read from the log's JSON and the Parquet files."""
    import json

    import pyarrow.parquet as pq

    commits: list[tuple[float, list[int]]] = []
    for log in sorted((path / "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in log.read_text().splitlines()]
        when = next((a["commitInfo"]["timestamp"] / 1000 for a in actions if "commitInfo" in a), 0.0)
        keys: list[int] = []
        for added in (a["add"] for a in actions if "add" in a):
            data = pq.read_table(path / added["path"])
            name = next(n for n in data.column_names if n.lower() == column.lower())
            keys += [int(v) for v in data.column(name).to_pylist()]
        if keys:
            commits.append((when, keys))
    return commits


def delta_sequence(path: Path, column: str) -> list[int]:
    """The keys of a Delta table in the order they were written (delta_commits)."""
    return [key for _, keys in delta_commits(path, column) for key in keys]


def delivered_late(deliveries: dict[int, float], group_of) -> int:
    """Keys delivered (``deliveries``: key -> when, by any consumer) before a smaller key of their group: a
    group's keys, produced in increasing order, are each claimed only after the one before was done, so each
    is delivered no earlier than the one before."""
    latest: dict[object, float] = {}
    late = 0
    for key in sorted(deliveries):
        group = group_of(key)
        if deliveries[key] < latest.get(group, float("-inf")):
            late += 1
        latest[group] = max(latest.get(group, float("-inf")), deliveries[key])
    return late


def out_of_order(sequence: list[int], group_of) -> int:
    """Keys written after a larger key of their group (a group's keys were produced in increasing order)."""
    latest: dict[object, int] = {}
    late = 0
    for key in sequence:
        group = group_of(key)
        if key < latest.get(group, -1):
            late += 1
        latest[group] = max(latest.get(group, -1), key)
    return late


def table_keys(db: Database, table: str, column: str, where: str = "1 = 1") -> Counter[int]:
    return Counter(int(v) for (v,) in db.query(f"SELECT {column} FROM {table} WHERE {where}"))


@dataclass
class Output:
    """Where a cell's keys arrive: Delta tables (path, column, row filter), tables (name, column, and the
    column saying when a row arrived, where the time matters) and the table's own worker's output."""

    delta: list[tuple[Path, str, tuple[str, str] | None]] = field(default_factory=list)
    tables: list[tuple[str, str, str | None]] = field(default_factory=list)
    worked: str | None = None

    def arrivals(self, db: Database) -> Counter[int]:
        found: Counter[int] = Counter()
        for path, column, where in self.delta:
            found += delta_keys(path, column, where)
        for table, column, _ in self.tables:
            found += table_keys(db, table, column)
        if self.worked is not None:
            found += table_keys(db, self.worked, "Payload")
        return found

    def delivered(self, db: Database) -> dict[int, float]:
        """{key: when the stream first delivered it}. Only PostgreSQL's cells run a worker, so a table's
        time is read the PostgreSQL way (its column a timestamptz)."""
        first: dict[int, float] = {}
        times = [delta_times(path, column) for path, column, _ in self.delta]
        for table, column, at in self.tables:
            if at is not None:
                rows = db.query(f"SELECT {column}, EXTRACT(EPOCH FROM {at}) FROM {table}")
                times.append({int(k): float(t) for k, t in rows})
        for found in times:
            for key, at in found.items():
                first[key] = min(first.get(key, at), at)
        return first

    def taken_after_expiry(self, db: Database) -> dict[int, float]:
        """{key: when the worker took it} of the keys it took from a claim whose lease had run out."""
        if self.worked is None:
            return {}
        rows = db.query(f"SELECT Payload, TakenAt FROM {self.worked} WHERE Expired = '1'")
        return {int(k): float(t) for k, t in rows}


def leftovers(db: Database, source: Table | None, side_tables: list[str]) -> dict[str, int]:
    """Rows that should be gone once a cell has drained: the source's rows not done as its design says,
    and any row in sqlqueue's side tables (claims, staging, unpublished)."""
    left: dict[str, int] = {}
    if source is not None:
        open_rows = db.query(f"SELECT COUNT(*) FROM {source.name} WHERE {not_done(source)}")[0][0]
        if open_rows:
            left[source.name] = open_rows
    for table in side_tables:
        count = db.query(f"SELECT COUNT(*) FROM {table}")[0][0]
        if count:
            left[table] = count
    return left
