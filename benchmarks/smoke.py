"""Every benchmark at a tiny size, so none can rot unnoticed (`make bench-smoke`, in `.ci/run`).

Each script runs as a user runs it, with arguments that make it finish in seconds to a minute, and no
figure is drawn into docs/img. The figures mean nothing at these sizes: only that each script still runs
to its end. A script this table lacks fails the run (tests/unit/test_benchmarks.py checks it too).
"""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Runs at a time. Each script starts its own database and Spark, on ports of their own. At these sizes a run
# is mostly a JVM's and a database's start, which leave a core idle: on 2 cores the smoke took 482 s two at a
# time against 567 s one by one.
LANES = 2

# Script -> the runs of it, each its arguments. The longest first, so that the lanes end together.
SMOKE: dict[str, tuple[tuple[str, ...], ...]] = {
    # Three batches: the fewest a steady state is taken from (drains.STEADY_BATCHES).
    "bench_cluster.py": (("--rows", "6000", "--batches", "2000", "--sinks", "noop"),),
    "delta_settings.py": (("--runs", "1", "--variants", "tuned"),),
    "bench_source.py": (
        # --warm drains twice the rows and measures the second half; the default measures the whole drain
        # (the same code with an offset of 0), so one --warm drain runs both (two drains took 189 and 196 s).
        ("--warm", "--rows", "10000", "--batches", "2500", "--runs", "1", "--plots", ""),
        ("--profile", "relational", "dequeue", "--rows", "3000", "--batches", "1000", "--runs", "1"),
        ("--memory", "--rows", "20000", "--batches", "5000", "--payloads", "4000"),  # one job: every size runs alike
    ),
    "bench_latency.py": (
        (
            "--engines",
            "sqlite",
            "--rates",
            "200",
            "--seconds",
            "3",
            "--warm-up",
            "1",
            "--warm-jvm",
            "0",
            "--runs",
            "2",
            "--plots",
            "",
        ),
    ),
    "bench_sink.py": (("--rows", "5000", "--repeat", "1", "--engines", "postgres", "sqlite", "--micro-batches", "2"),),
    "bench_backlog.py": (
        (
            "--backlogs",
            "6000",
            "12000",
            "--steps",
            "2",
            "--warm-up",
            "1",
            "--orders",
            "fifo",
            "--micro-batch",
            "0",
            "0",
        ),
        (
            "--engines",
            "postgres",
            "--backlogs",
            "6000",
            "12000",
            "--steps",
            "1",
            "--warm-up",
            "0",
            "--orders",
            "fifo",
            "--micro-batch",
            "20000",
            "2000",
            "--runs",
            "1",
        ),
    ),
    "bench_stages.py": (("--rows", "20000", "--batch", "5000"),),
    "bench_groups.py": (
        (
            "--rows",
            "20000",
            "--groups",
            "200",
            "--batch",
            "2000",
            "--per-group",
            "10",
            "--steps",
            "2",
            "--warm-up",
            "1",
            "--job",
            "10000",
            "2000",
            "--runs",
            "1",
        ),
    ),  # fmt: skip
    "bench_wait.py": (("--batch", "1000", "--backlog", "5000", "--large", "0", "--steps", "2"),),
    "bench_testing.py": (("--rounds", "2"),),
    "bench_sqlserver_drivers.py": (("--rows", "500", "--repeat", "1"),),  # skips itself without a TDS server
}


def smoke(script: str, arguments: tuple[str, ...]) -> tuple[str, int]:
    """One run of ``script``; its output, headed and footed, and its exit status."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(HERE / script), *arguments], cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    head = f"== {script} {' '.join(a or repr(a) for a in arguments)}\n"
    foot = f"== {script}: exit {done.returncode} in {time.monotonic() - started:.0f} s\n"
    return head + done.stdout.decode(errors="replace") + foot, done.returncode


def main() -> int:
    scripts = {p.name for p in HERE.glob("*.py") if p.name.startswith("bench_")} | {"delta_settings.py"}
    missing = sorted(scripts - set(SMOKE))
    if missing:
        print(f"bench-smoke: no smoke run for {', '.join(missing)}: add one to benchmarks/smoke.py", file=sys.stderr)
        return 1
    failed = []
    runs = [(script, arguments) for script, each in SMOKE.items() for arguments in each]
    with ThreadPoolExecutor(LANES) as lanes:
        for (script, arguments), (output, status) in zip(runs, lanes.map(lambda run: smoke(*run), runs)):
            print(output, end="", flush=True)
            if status:
                failed.append(f"{script} {' '.join(arguments)}")
    if failed:
        print(f"bench-smoke: failed: {'; '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
