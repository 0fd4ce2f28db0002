"""What a user's test session costs with the sqlqueue.testing plugin (issue 24): the first end-to-end
test, Spark's start-up included, and each later one in the same session.

    make bench        # or: .venv/bin/python benchmarks/bench_testing.py [--rounds 5] [--batch 1000] [--db sqlite]

Each round is the worked example's end-to-end test (examples/orders): 1,000 rows enqueued into a fresh
queue, streamed (AvailableNow, micro-batches of --batch rows) into a fresh Delta table through the
example's job, each key checked once and the queue checked empty. The rounds run in one pytest session in this
process; a round's time is its set-up, call and tear-down (the first's set-up starts Spark). Goals,
printed not asserted: the first ≤ 20 s, each later one ≤ 3 s, on 2 cores; the load average is printed
beside them, since the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "orders"
FIRST_GOAL, LATER_GOAL = 20.0, 3.0
ROUND = """
import pytest
from orders_job import start
from test_orders_job import ORDERS, orders

from sqlqueue.testing import assert_each_key_once, assert_queue_holds, run_to_end


@pytest.mark.parametrize("round_", range({rounds}))
def test_a_thousand_orders_reach_delta_once(round_, spark, make_queue, delta_path, checkpoint_path):
    queue = make_queue(ORDERS, rows=orders(range(1_000)))
    run_to_end(start(spark, queue.source_options(maxRowsPerTrigger={batch}), delta_path, checkpoint_path))
    assert_each_key_once(delta_path, range(1_000), column="order_id")
    assert_queue_holds(queue)
"""


class RoundTimer:
    """Wall time per test: set-up, call and tear-down."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.failed: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration
        if report.failed:
            self.failed.append(report.nodeid)


def verdict(seconds: float, goal: float) -> str:
    return f"goal ≤ {goal:g} s: {'met' if seconds <= goal else 'missed'}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="end-to-end tests in the session (default 5)")
    parser.add_argument("--batch", type=int, default=1000, help="rows per micro-batch (default 1000: one batch)")
    parser.add_argument("--db", default="sqlite", help="the plugin's --sqlqueue-db: sqlite, postgres or a URL")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="sqlqueue-bench-testing-"))
    try:
        for source in EXAMPLE.glob("*.py"):
            shutil.copy(source, folder)
        (folder / "test_rounds.py").write_text(ROUND.format(rounds=args.rounds, batch=args.batch))
        timer = RoundTimer()
        load_before = os.getloadavg()[0]
        status = pytest.main(
            [str(folder / "test_rounds.py"), "-q", "-p", "no:cacheprovider", f"--sqlqueue-db={args.db}"],
            plugins=[timer],
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if timer.failed or status != 0:
        print(f"failed: {', '.join(timer.failed) or f'pytest exit status {status}'}")
        return 1
    first, *later = timer.seconds.values()
    print(
        f"\nsqlqueue.testing, {args.rounds} end-to-end tests of 1,000 rows in batches of {args.batch} on {args.db}, "
        f"load average {load_before:.1f}"
    )
    print(f"  first test (Spark's start-up included): {first:6.1f} s   {verdict(first, FIRST_GOAL)}")
    if later:
        median = statistics.median(later)
        print(f"  later tests: {', '.join(f'{s:.1f}' for s in later)} s")
        print(f"  later tests, median:                    {median:6.1f} s   {verdict(median, LATER_GOAL)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
