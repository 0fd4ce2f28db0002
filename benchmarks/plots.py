"""The figures `make bench` draws for the docs' performance page (docs/img), with matplotlib.

Each figure says in its footer the machine and the command that measured it, so a reader of the page
never has to guess which run a picture shows. Its figures go beside it as JSON (the same name, .json):
`.venv/bin/python benchmarks/plots.py` draws every figure again from them, without measuring.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from common import ROOT

DOCS_IMG = ROOT / "docs" / "img"


def machine() -> str:
    """One line naming the machine: CPU count and model, memory, Python."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (OSError, ValueError):
        memory = 0.0
    return f"{os.cpu_count()} cores ({model}), {memory:.0f} GiB, Python {platform.python_version()}"


def command() -> str:
    """The command line that ran this benchmark, from the project's root."""
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
    return shlex.join([".venv/bin/python", str(shown), *sys.argv[1:]])


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path, footer: str) -> None:
    fig.text(0.01, 0.01, footer, fontsize=7, color="0.35", va="bottom", wrap=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"  figure: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}", flush=True)


def _record(path: Path, kind: str, data: dict) -> None:
    """The figure's numbers beside it, with the machine and the command, then the figure."""
    figure = {"kind": kind, "machine": machine(), "command": command(), **data}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".json").write_text(json.dumps(figure, indent=1) + "\n")
    draw(figure, path)


def throughput_by_batch(path: Path, rates: Mapping[int, Mapping[str, float]], labels: Mapping[str, str]) -> None:
    """Grouped bars: steady-state rows/s per rows per micro-batch, one bar per series, the raw client first."""
    _record(path, "throughput", {"rates": {str(b): dict(r) for b, r in rates.items()}, "labels": dict(labels)})


def latency_distribution(path: Path, samples: Mapping[str, Sequence[float]]) -> None:
    """The cumulative distribution of each run's latencies (ms), with its p50 and p99 in the legend."""
    _record(path, "latency", {"quantiles": {label: quantiles(values) for label, values in samples.items()}})


def quantiles(values: Sequence[float], steps: int = 1000) -> list[float]:
    """The latency at each of ``steps`` + 1 evenly spaced fractions of the rows, 0 to 1 (nearest rank)."""
    ordered = sorted(values)
    return [round(ordered[min(len(ordered) - 1, len(ordered) * i // steps)], 1) for i in range(steps + 1)]


def draw(figure: dict, path: Path) -> None:
    footer = f"{figure['machine']}\n{figure['command']}"
    if figure["kind"] == "throughput":
        _throughput(path, {int(b): r for b, r in figure["rates"].items()}, figure["labels"], footer)
    else:
        _latency(path, figure["quantiles"], footer)


def _throughput(path: Path, rates: Mapping[int, Mapping[str, float]], labels: Mapping[str, str], footer: str) -> None:
    plt = _pyplot()
    batches = sorted(rates)
    series = [name for name in labels if all(name in rates[b] for b in batches)]
    fig, ax = plt.subplots(figsize=(8, 5.2))
    fig.subplots_adjust(bottom=0.36)
    width = 0.8 / len(series)
    for i, name in enumerate(series):
        xs = [b + (i - (len(series) - 1) / 2) * width for b in range(len(batches))]
        ax.bar(xs, [rates[b][name] for b in batches], width, label=labels[name])
    ax.set_xticks(range(len(batches)), [f"{b:,}" for b in batches])
    ax.set_xlabel("rows per micro-batch (maxRowsPerTrigger)")
    ax.set_ylabel("rows/s, steady state")
    ax.set_title("Source throughput: PostgreSQL queue, against the raw client")
    ax.legend(fontsize=8, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    ax.grid(axis="y", alpha=0.3)
    _save(fig, path, footer)
    plt.close(fig)


def _latency(path: Path, quantiles: Mapping[str, Sequence[float]], footer: str) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.6))
    fig.subplots_adjust(bottom=0.24)
    for label, at in quantiles.items():
        steps = len(at) - 1
        marks = {q: at[round(q * steps)] for q in (0.5, 0.99)}
        shown = f"{label}: p50 {marks[0.5]:,.0f} ms, p99 {marks[0.99]:,.0f} ms"
        line = ax.plot(at, [i / steps for i in range(steps + 1)], label=shown)[0]
        ax.plot(list(marks.values()), list(marks), "o", color=line.get_color())
    ax.set_xlabel("latency, enqueue to visible in Delta (ms)")
    ax.set_ylabel("fraction of rows")
    ax.set_title("Latency through queue_to_delta")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    _save(fig, path, footer)
    plt.close(fig)


if __name__ == "__main__":
    # Draw every figure again from the numbers recorded beside it (after a change to how figures look).
    for recorded in sorted(DOCS_IMG.glob("*.json")):
        draw(json.loads(recorded.read_text()), recorded.with_suffix(".png"))
