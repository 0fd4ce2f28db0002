"""What Delta costs per micro-batch under each session setting: the measurement behind
build_session's Delta and Spark settings (docs/performance.md, "Tuning Spark and Delta for micro-batches").

    .venv/bin/python benchmarks/delta_settings.py                 # every variant, 2 runs each
    .venv/bin/python benchmarks/delta_settings.py --runs 3 --variants tuned spark-defaults

Each variant runs in a fresh process (a fresh JVM: some settings only apply at start-up) and times,
on its own new table, 12 appends of the same 10,000 rows from memory as:
  plain      df.write.format("delta").mode("append")
  txn        the same with txnAppId/txnVersion (idempotent foreachBatch, Delta's documented way)
  marker     sqlqueue's append_once (a userMetadata marker, one history lookup per process)
  sink       writeStream.format("delta"), the streaming Delta sink (its addBatch per micro-batch)
It prints the median over versions 1-9 and 11 and, apart, version 10, after which Delta writes its
log checkpoint (checkpointInterval 10).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sqlqueue.spark.tuning import CHECKSUM_FILE

HERE = Path(__file__).resolve().parent
COMMITS = 12
ROWS = 10_000

# What build_session set before this measurement: the baseline every variant changes one thing in.
BEFORE = {"spark.sql.session.timeZone": "UTC", "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
SP1 = {**BEFORE, "spark.databricks.delta.snapshotPartitions": "1"}
VARIANTS: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    # name: (session settings replacing build_session's own, extra environment)
    "spark-defaults": ({"spark.ui.enabled": "true"}, {}),
    "before": (BEFORE, {}),
    "snapshotPartitions=1": (SP1, {}),
    "snapshotPartitions=2": ({**BEFORE, "spark.databricks.delta.snapshotPartitions": "2"}, {}),
    "sp1, non-UTC session and JVM": ({**SP1, "spark.sql.session.timeZone": "Europe/Paris"}, {"TZ": "Europe/Paris"}),
    "sp1, shuffle.partitions=200": ({**SP1, "spark.sql.shuffle.partitions": "200"}, {}),
    "sp1, no state reconstruction validation": (
        {**SP1, "spark.databricks.delta.stateReconstructionValidation.enabled": "false"},
        {},
    ),
    "tuned": ({}, {}),  # build_session as it is now
    # Variants named "tuned, ..." add their settings to build_session's own.
    "tuned, with Delta's checksum file": ({CHECKSUM_FILE: "true"}, {}),
    "tuned, with the checksum file but not its file list": (
        {CHECKSUM_FILE: "true", "spark.databricks.delta.allFilesInCrc.enabled": "false"},
        {},
    ),
}


def _summary(times: list[float]) -> dict[str, float]:
    """Median of the ordinary commits (versions 1-9, 11) and the checkpointing one (version 10)."""
    ordinary = [t for v, t in enumerate(times) if v not in (0, 10)]
    return {"median": statistics.median(ordinary), "v10": times[10]}


def child(name: str) -> None:
    sys.path.insert(0, str(HERE))
    from spark_floor import MemorySource

    from sqlqueue.spark.delta import append_once
    from sqlqueue.spark.session import build_session

    settings, _ = VARIANTS[name]
    if name.startswith("tuned"):
        spark = build_session("delta-settings", conf=settings)
    else:
        # build_session without its own settings: the variant's replace them all.
        import sqlqueue.spark.session as session

        session.TUNING = {}
        spark = session.build_session("delta-settings", conf=settings)
    from pyspark.sql import functions as F

    df = (
        spark.range(ROWS)
        .withColumn("payload", F.format_string('{"order": %d, "note": "benchmark row"}', "id"))
        .withColumn("customer", F.col("id") % 977)
        .cache()
    )
    df.count()
    work = tempfile.mkdtemp(prefix="sqlqueue-delta-settings-")
    for _ in range(COMMITS):  # warm the JVM's code paths, log checkpoint included, before timing
        df.write.format("delta").mode("append").save(f"{work}/warm-up")
    results = {}

    def timed(write) -> list[float]:
        times = []
        for version in range(COMMITS):
            started = time.perf_counter()
            write(version)
            times.append(time.perf_counter() - started)
        return times

    results["plain"] = timed(lambda v: df.write.format("delta").mode("append").save(f"{work}/plain"))
    results["txn"] = timed(
        lambda v: (
            df.write.format("delta")
            .mode("append")
            .option("txnAppId", "bench")
            .option("txnVersion", v)
            .save(f"{work}/txn")
        )
    )
    marker = append_once(f"{work}/marker", "bench")
    results["marker"] = timed(lambda v: marker(df, v))

    spark.dataSource.register(MemorySource)
    query = (
        spark.readStream.format(MemorySource.name())
        .option("batch", ROWS)
        .option("partitions", 2)
        .load()
        .writeStream.format("delta")
        .option("checkpointLocation", f"{work}/cp")
        .trigger(processingTime="0 seconds")
        .start(f"{work}/sink")
    )
    deadline = time.monotonic() + 600
    while len([p for p in query.recentProgress if p["numInputRows"]]) < COMMITS:
        if query.exception() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the Delta sink query stopped or stalled: {query.exception()}")
        time.sleep(0.2)
    query.stop()
    results["sink"] = [p["durationMs"]["addBatch"] / 1000 for p in query.recentProgress if p["numInputRows"]][:COMMITS]
    print("RESULT " + json.dumps({k: _summary(v) for k, v in results.items()}), flush=True)
    spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--child", choices=list(VARIANTS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    print(
        f"Delta appends of {ROWS} rows, local[2], seconds per commit: median of versions 1-9 and 11 "
        f"(v10: the commit that writes the log checkpoint); {args.runs} runs, each a fresh process"
    )
    kinds = ("plain", "txn", "marker", "sink")
    # Runs go round the variants in turn, so a busy spell on a shared host spreads over all of them.
    runs: dict[str, list[dict]] = {name: [] for name in args.variants}
    for run in range(args.runs):
        for name in args.variants:
            env = {**os.environ, **VARIANTS[name][1]}
            out = subprocess.run([sys.executable, __file__, "--child", name], env=env, capture_output=True, text=True)
            line = next((x for x in out.stdout.splitlines() if x.startswith("RESULT ")), None)
            if line is None:
                sys.exit(f"{name}: no result\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")
            runs[name].append(json.loads(line[len("RESULT ") :]))
            print(f"  run {run + 1} {name}: {line[len('RESULT ') :]}", file=sys.stderr, flush=True)
    print(f"{'variant':<42}" + "".join(f"{k:>17}{'v10':>7}" for k in kinds))
    for name in args.variants:
        cells = []
        for kind in kinds:
            medians = sorted(r[kind]["median"] for r in runs[name])
            v10 = statistics.median(r[kind]["v10"] for r in runs[name])
            spread = f"{medians[0]:.2f}-{medians[-1]:.2f}" if len(medians) > 1 else f"{medians[0]:.2f}"
            cells.append(f"{statistics.median(medians):>6.2f} ({spread:>9}){v10:>6.2f}")
        print(f"{name:<42}" + "".join(f"{c:>24}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
