"""Smoke tests of the benchmark table's helpers (benchmarks/ is not a package).

Only the cheap parts: the row format (ratio and target computed right, markdown,
JSON round trip) and the closed-form agreement check of
``benchmarks/bench_misclassification.py`` at a tiny size. The timing scripts
themselves are never run here (``make benchmark`` does that).
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name: str):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # the scripts import _table as a sibling
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def table():
    return _load("_table")


def test_ratio_and_ratio_target(table):
    row = table.Row("s", "w", bayesjudge_s=0.5, reference="ref", reference_s=2.0,
                    target="<= 1.0")
    assert row.ratio == pytest.approx(0.25)
    assert row.met is True
    slow = table.Row("s", "w", bayesjudge_s=3.0, reference_s=2.0, target="<= 1.0")
    assert slow.ratio == pytest.approx(1.5) and slow.met is False
    assert table.Row("s", "w", 1.0, reference_s=1.0, target="<= 1.0").met is True  # boundary
    assert table.Row("s", "w", 1.0, reference_s=1.0, target="< 1.0").met is False


def test_seconds_targets_and_explicit_values(table):
    assert table.Row("s", "w", 2.5, target="< 3 s first fit").met is True
    assert table.Row("s", "w", 3.5, target="< 3 s first fit").met is False
    assert table.Row("s", "w", 119.0, target="<= 120 s").met is True
    # a target on something else than seconds or the ratio: met only when given
    assert table.Row("s", "w", 1.0, target="< 2 GB peak").met is None
    assert table.Row("s", "w", 1.0, target="< 2 GB peak", met=True).met is True
    # an explicit ratio (e.g. a median over cells) wins over bayesjudge_s / reference_s
    row = table.Row("s", "w", 1.0, reference_s=4.0, ratio=0.5, target="<= 0.4")
    assert row.ratio == 0.5 and row.met is False
    # missing values: no ratio, no verdict; NaN is stored as None
    empty = table.Row("s", "w", None, reference_s=float("nan"), target="<= 1.0")
    assert empty.ratio is None and empty.reference_s is None and empty.met is None
    assert table.Row("s", "w", 1.0).met is None  # no target


def test_markdown_table(table):
    rows = [table.Row("Davidson", "5% splits", 0.00123, "numpy + scipy", 0.002,
                      target="<= 1.0", agreement="max |d| 1e-8", repeats=3, note="n"),
            table.Row("Davidson", "NUTS first fit", 16.6, target="< 3 s"),
            table.Row("Cold start", "import", 2.5)]
    machine = {"cpu": "AMD EPYC", "cores": 2, "ram_gb": 8.0, "os": "Linux", "python": "3.12",
               "numpy": "2", "scipy": "1", "pymc": "6", "pytensor": "3", "nutpie": "0.16",
               "bayesjudge": "0.1", "openblas_threads": "1", "date": "2026-11-23"}
    md = table.markdown_table(rows, machine)
    lines = md.splitlines()
    assert lines[0].startswith("- **machine**: AMD EPYC, 2 cores")  # the machine comes first
    head = next(i for i, line in enumerate(lines) if line.startswith("| workload"))
    n_cols = lines[head].count("|")
    assert all(line.count("|") - line.count("\\|") == n_cols for line in lines[head:])
    assert sum("**Davidson**" in line for line in lines) == 1  # one header per section
    split = next(line for line in lines if line.startswith("| 5% splits"))
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", split.strip("|"))]
    assert cells[1] == "1.23 ms" and cells[3] == "2 ms" and cells[4] == "**0.61**"
    assert cells[6] == "yes" and cells[7] == "max \\|d\\| 1e-8"
    nuts = next(line for line in lines if line.startswith("| NUTS first fit"))
    assert "16.6 s" in nuts and "**no**" in nuts


def test_json_round_trip_replaces_a_scripts_rows(table, tmp_path):
    path = tmp_path / "results.json"
    table.write_rows(path, [table.Row("a", "x", 1.0, reference_s=2.0)], script="bench_a")
    table.write_rows(path, [table.Row("b", "y", 3.0)], script="bench_b")
    table.write_rows(path, [table.Row("a", "x2", 1.0, reference_s=4.0, target="<= 1.0")],
                     script="bench_a")  # a rerun replaces bench_a's rows
    data = json.loads(path.read_text())
    assert [run["script"] for run in data["runs"]] == ["bench_b", "bench_a"]
    rows = table.read_rows(path, order=["bench_a", "bench_b"])
    assert [r.workload for r in rows] == ["x2", "y"]
    assert rows[0].ratio == pytest.approx(0.25) and rows[0].met is True
    assert table.read_machine(path)["cores"] >= 1


def test_misclassification_closed_form_agrees_with_the_loop():
    bench = _load("bench_misclassification")
    diffs = bench.agreement(n_rep=30, seed=3)
    assert set(diffs) == {"naive", "wald_lower", "wald_upper", "estimate", "lower", "upper"}
    assert all(math.isfinite(d) and d < 1e-12 for d in diffs.values()), diffs


def test_misclassification_reference_posterior_is_sane():
    import numpy as np

    bench = _load("bench_misclassification")
    rng = np.random.default_rng(0)
    mean, lo, hi, hpd_lo, hpd_hi = bench.reference_posterior_one(
        480, 1000, 90, 100, 70, 100, n_draws=2000, ci=0.95, rng=rng)
    # Rogan-Gladen estimate of these counts is 0.3; the posterior sits around it
    assert lo < mean < hi and abs(mean - 0.3) < 0.05
    assert 0 <= hpd_lo < hpd_hi <= 1 and (hpd_hi - hpd_lo) <= (hi - lo) + 0.02
