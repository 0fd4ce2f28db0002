"""The benchmarks cannot rot: `make bench-smoke` (in .ci/run) runs each of them at a tiny size."""

from __future__ import annotations

import importlib.util

from tests.support.golden import ROOT

BENCHMARKS = ROOT / "benchmarks"


def test_bench_smoke_runs_every_benchmark():
    spec = importlib.util.spec_from_file_location("smoke", BENCHMARKS / "smoke.py")
    assert spec is not None and spec.loader is not None
    smoke = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(smoke)
    scripts = {p.name for p in BENCHMARKS.glob("bench_*.py")} | {"delta_settings.py"}
    assert set(smoke.SMOKE) == scripts
