"""Source throughput on a Spark standalone cluster, with one executor and then two: queue to Delta
(the job's writer, append_once) and queue to the noop sink (the connector alone), as bench_source
measures them, the driver in this process.

    .venv/bin/python benchmarks/bench_cluster.py              # starts a master and two 1-core workers here
    .venv/bin/python benchmarks/bench_cluster.py --master spark://127.0.0.1:7077

Each executor has one core (spark.executor.cores=1), so spark.cores.max is the number of executors;
the read partitions (2) of a micro-batch run one after the other on one executor and side by side
on two. The queue is this script's own PostgreSQL on 127.0.0.1, so a cluster given with --master
must have its workers on this host. On a machine with fewer cores than driver, executors and
database need, the second executor only competes for the same cores: take figures on a quiet
machine with cores to spare.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import tempfile
from pathlib import Path

from bench_source import SINKS, connector_rate
from common import pg_options, spark_session, start_postgres

from tests.support.standalone import HOST, StandaloneCluster

EXECUTORS = (1, 2)


def executor_count(spark) -> int:
    """Executors registered with the driver (the driver's own block manager not counted)."""
    return spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1


def measure(master: str, executors: int, options: dict, args: argparse.Namespace) -> dict[tuple[str, int], float]:
    spark = spark_session(
        f"sqlqueue-bench-cluster-{executors}",
        master,
        {
            "spark.cores.max": str(executors),
            "spark.executor.cores": "1",
            "spark.executor.memory": "1g",
            # No task before every executor has registered, or the first batches run on fewer.
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            # Our own cluster listens on 127.0.0.1 only.
            **({"spark.driver.host": HOST, "spark.driver.bindAddress": HOST} if args.local_cluster else {}),
        },
    )
    rates = {}
    try:
        print(f" {executors} executor(s), warm-up (the executors' JVMs and Python workers start):", flush=True)
        for sink in args.sinks:
            connector_rate(spark, options, f"warmup_{executors}_{sink}", 30_000, 10_000, args.partitions, sink)
        running = executor_count(spark)
        print(f" {executors} executor(s) asked, {running} running, measured:", flush=True)
        if running != executors:
            raise RuntimeError(f"{running} executors run where {executors} were asked: the cluster has too few cores")
        for batch in args.batches:
            for sink in args.sinks:
                table = f"cluster_{executors}_{sink}_{batch}"
                rates[sink, batch] = connector_rate(spark, options, table, args.rows, batch, args.partitions, sink)
    finally:
        spark.stop()
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", help="a standalone master, spark://host:port (default: start one here)")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--batches", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--sinks", nargs="+", choices=["foreach", "noop"], default=["foreach", "noop"])
    args = parser.parse_args()
    args.local_cluster = args.master is None

    server = start_postgres()
    with contextlib.ExitStack() as stack:
        stack.callback(server.destroy)
        if args.local_cluster:
            root = Path(tempfile.mkdtemp(prefix="sqlqueue-bench-cluster-"))
            stack.callback(shutil.rmtree, root, ignore_errors=True)
            args.master = stack.enter_context(StandaloneCluster(root, workers=max(EXECUTORS), cores=1)).url
        print(
            f"source benchmark on a standalone cluster ({args.master}): PostgreSQL, {args.rows} rows, "
            f"{args.partitions} read partitions, 1-core executors (steady-state rows/s; batch latencies p50/p95/max)",
            flush=True,
        )
        options = pg_options(server)
        rates = {n: measure(args.master, n, options, args) for n in EXECUTORS}
        print(" two executors against one:")
        for batch in args.batches:
            for sink in args.sinks:
                one, two = (rates[n][sink, batch] for n in EXECUTORS)
                print(f"  batches of {batch}, {SINKS[sink]}: {one:,.0f} -> {two:,.0f} rows/s ({two / one:.2f}x)")


if __name__ == "__main__":
    main()
