"""Scaling curves: time versus rows of the input table, for every model.

For each model and each table size (10^3, 10^4, 10^5, 10^6 rows; ``--max-rows``
caps it) the script measures, on a table simulated with known truth:

* **validate + collapse**: the model's ``_prepare`` (validation of the long table
  and its reduction to sufficient statistics), timed inside ``fit``;
* **MAP refit**: the rest of ``fit(method="map")`` -- data swapped into the
  compiled engine, the optimiser, glue -- with the engine compiled by an untimed
  fit on the same table first (a recompilation during the timed fits is flagged);
* the number of **distinct cells** the likelihood saw (the leading length of the
  model's sufficient-statistic arrays, read from the fitted model's data);
* optionally (default on) a **NUTS refit** (default sampler, 4 x (1000 + 1000),
  compiled model reused) for DavidsonAggregator and PreferenceDistribution at the
  smallest and the largest size.

Tables (rows = what the user's table has):

* DavidsonAggregator: votes long table (``item, vote``; 8 votes per item,
  ``simulate_davidson_votes(..., votes_format="long")``), labels for every item;
* MisclassificationModel: judgments (``item, judge_label``) of one system plus a
  200-row calibration table (``simulate_misclassification``);
  HierarchicalMisclassificationModel: the same for 5 systems;
* BradleyTerry / BTSigma (soft probabilities) and DavidsonBT (left / tie / right):
  comparison rows among a FIXED 20 items and 5 judges (numpy: skills N(0, 1), judge
  discriminators 0.5-2, pair noise), so distinct (judge, pair) cells saturate;
* PreferenceDistribution: annotation rows (1-5 annotators per item,
  ``simulate_autorater``): items grow with rows, count patterns saturate;
* TemperatureScaling(bias=True): judge-output rows (one probability per item, one
  annotator's label; ``simulate_autorater``): every row is its own cell.

Writes the figure (``--figure``, default ``benchmarks/scaling.png``, log-log, one
line per model) and the numbers (``--csv``, default ``benchmarks/scaling.csv``).
Run from the repository root::

    python benchmarks/bench_scaling.py [--max-rows 1000000] [--repeats 3] [--no-nuts]
        [--json benchmarks/results.json]
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.special import expit  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bayesjudge as bj  # noqa: E402
from bayesjudge.datasets import (  # noqa: E402
    simulate_autorater,
    simulate_davidson_votes,
    simulate_misclassification,
)
from bayesjudge.engine import compiled, optim  # noqa: E402

SIZES = (1_000, 10_000, 100_000, 1_000_000)
BT_ITEMS, BT_JUDGES = 20, 5


# --------------------------------------------------------------------------- tables


def davidson_tables(rows: int, seed: int):
    votes, labels = simulate_davidson_votes(max(1, rows // 8), 8, beta=2.0, eta0=-0.5,
                                            random_seed=seed, votes_format="long")
    return (votes, labels), len(votes)


def misclassification_tables(rows: int, seed: int, systems: int = 1):
    names = [f"system-{k}" for k in range(systems)] if systems > 1 else None
    theta = list(np.linspace(0.4, 0.8, systems)) if systems > 1 else 0.6
    judgments, calibration = simulate_misclassification(
        theta, 0.7, 0.9, max(1, rows // systems), 100, 100, random_seed=seed, systems=names)
    return (judgments, calibration), len(judgments)


def comparison_table(rows: int, seed: int, kind: str):
    """``rows`` comparisons among BT_ITEMS items by BT_JUDGES judges (soft or Davidson)."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 1.0, BT_ITEMS)
    sigma = np.linspace(0.5, 2.0, BT_JUDGES)
    judge = rng.integers(0, BT_JUDGES, rows)
    left = rng.integers(0, BT_ITEMS, rows)
    right = rng.integers(0, BT_ITEMS - 1, rows)
    right = right + (right >= left)
    x = (skill[left] - skill[right]) / sigma[judge]
    items = np.array([f"item-{i:02d}" for i in range(BT_ITEMS)], dtype=object)
    judges = np.array([f"judge-{k}" for k in range(BT_JUDGES)], dtype=object)
    table = pd.DataFrame({"judge": judges[judge], "left": items[left], "right": items[right]})
    if kind == "soft":
        table["prob"] = expit(x + rng.normal(0.0, 0.5, rows))
    else:  # Davidson with nu = 0.8
        half = x / 2
        z = np.exp(half) + np.exp(-half) + 0.8
        u = rng.random(rows)
        table["outcome"] = np.where(u < np.exp(half) / z, "left",
                                    np.where(u < (np.exp(half) + 0.8) / z, "tie", "right"))
    return (table,), rows


def preference_tables(rows: int, seed: int):
    sim = simulate_autorater(max(1, rows // 3), (1, 5), population_mean=0.4, concentration=3.0,
                             random_seed=seed)
    return (sim.annotations,), len(sim.annotations)


def temperature_tables(rows: int, seed: int):
    sim = simulate_autorater(rows, 1, temperature=2.0, bias=0.4, noise_sd=0.5,
                             random_seed=seed)
    return (sim.outputs, sim.annotations), len(sim.outputs)


MODELS = {
    "DavidsonAggregator": (lambda: bj.DavidsonAggregator(), davidson_tables, "label_counts"),
    "MisclassificationModel": (lambda: bj.MisclassificationModel(), misclassification_tables,
                               "successes"),
    "HierarchicalMisclassificationModel (5 systems)": (
        lambda: bj.HierarchicalMisclassificationModel(),
        lambda r, s: misclassification_tables(r, s, systems=5), "successes"),
    "BradleyTerry (soft)": (lambda: bj.BradleyTerry(),
                            lambda r, s: comparison_table(r, s, "soft"), "cell_pair"),
    "BTSigma (soft)": (lambda: bj.BTSigma(), lambda r, s: comparison_table(r, s, "soft"),
                       "cell_pair"),
    "DavidsonBT": (lambda: bj.DavidsonBT(), lambda r, s: comparison_table(r, s, "hard"),
                   "cell_pair"),
    "PreferenceDistribution": (lambda: bj.PreferenceDistribution(), preference_tables,
                               "pattern_weight"),
    "TemperatureScaling (bias)": (lambda: bj.TemperatureScaling(bias=True), temperature_tables,
                                  "judge_logit"),
}
NUTS_MODELS = ("DavidsonAggregator", "PreferenceDistribution")


# --------------------------------------------------------------------------- timing


def cells_of(model, key: str) -> int:
    """Distinct cells the likelihood saw: the leading length of the sufficient statistics."""
    data = model._fit_data.data
    arr = data.get(key)
    if arr is None:  # the model renamed its arrays: the longest one
        return int(max(np.shape(v)[0] for v in data.values() if np.ndim(v)))
    return int(np.size(arr)) if key == "successes" else int(np.shape(arr)[0])


def timed_fit(factory, tables, **fit_kwargs) -> tuple[float, float, object]:
    """(seconds in _prepare, seconds in the rest of fit, fitted model).

    Also counts the optimiser's log-density evaluations (``model.bench_evals_``):
    cells fix the cost of one evaluation, the data's sharpness their number.
    """
    model = factory()
    spent = [0.0]
    prepare = model._prepare
    evals = [0]
    originals = {name: getattr(optim, name) for name in ("lbfgs_maximise", "newton_maximise")
                 if hasattr(optim, name)}

    def counting(fn):
        def wrapper(*a, **k):
            res = fn(*a, **k)
            evals[0] += int(getattr(res, "nfev", 0) or 0)
            return res
        return wrapper

    def timed_prepare(*a, **k):
        t0 = time.perf_counter()
        try:
            return prepare(*a, **k)
        finally:
            spent[0] += time.perf_counter() - t0

    model._prepare = timed_prepare  # instance attribute: fit calls self._prepare
    for name, fn in originals.items():
        setattr(optim, name, counting(fn))
    try:
        t0 = time.perf_counter()
        model.fit(*tables, **fit_kwargs)
        total = time.perf_counter() - t0
    finally:
        for name, fn in originals.items():
            setattr(optim, name, fn)
    del model._prepare
    model.bench_evals_ = evals[0]
    return spent[0], total - spent[0], model


def measure(name: str, rows: int, repeats: int, seed: int) -> dict:
    factory, make, key = MODELS[name]
    t0 = time.perf_counter()
    tables, n_rows = make(rows, seed)
    t_gen = time.perf_counter() - t0
    timed_fit(factory, tables)  # compile (or reuse) the engine; untimed
    engines = len(compiled._ENGINES)
    prep, fit = [], []
    for _ in range(repeats):
        p, f, model = timed_fit(factory, tables)
        prep.append(p)
        fit.append(f)
    return {"model": name, "target_rows": rows, "rows": n_rows, "cells": cells_of(model, key),
            "evals": model.bench_evals_,
            "prepare_s": statistics.median(prep), "map_s": statistics.median(fit),
            "recompiled": len(compiled._ENGINES) != engines, "generate_s": t_gen,
            "tables": tables}


def nuts_refit(name: str, tables) -> tuple[float, float, dict, str]:
    """(seconds in _prepare, seconds in the rest of a NUTS fit, diagnostics, sampler)."""
    factory = MODELS[name][0]
    p, f, model = timed_fit(factory, tables, method="nuts")
    return p, f, model.diagnostics_ or {}, getattr(model, "sampler_", None) or "default"


# --------------------------------------------------------------------------- figure


def plot(results: pd.DataFrame, nuts: pd.DataFrame | None = None):
    """Log-log time vs rows, one line per model; returns (fig, axes)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2), constrained_layout=True)
    panels = [("prepare_s", "validate + collapse (s)"),
              ("map_s", "MAP refit, compiled engine (s)"),
              ("cells", "distinct cells the likelihood sees")]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (col, label) in zip(axes, panels):
        for k, (name, g) in enumerate(results.groupby("model", sort=False)):
            ax.loglog(g["rows"], g[col], "o-", color=colors[k % len(colors)], label=name)
            if col == "map_s" and nuts is not None and name in set(nuts["model"]):
                n = nuts[nuts["model"] == name]
                ax.loglog(n["rows"], n["nuts_s"], "x--", color=colors[k % len(colors)],
                          label=f"{name}: NUTS refit")
        ax.set_xlabel("rows of the input table")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    lo, hi = results["rows"].min(), results["rows"].max()
    axes[0].loglog([lo, hi], [1e-3, 1e-3 * hi / lo], ":", color="grey", label="slope 1")
    axes[2].loglog([lo, hi], [lo, hi], ":", color="grey", label="cells = rows")
    axes[0].set_title("validation grows with rows")
    axes[1].set_title("the fit follows cells, not rows")
    axes[2].set_title("cells saturate (except TemperatureScaling)")
    axes[1].legend(fontsize=7, loc="upper left")
    axes[0].legend(fontsize=7, loc="upper left")
    return fig, axes


# --------------------------------------------------------------------------- main


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-rows", type=float, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-nuts", action="store_true")
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS),
                        metavar="MODEL")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--figure", default=str(HERE / "scaling.png"))
    parser.add_argument("--csv", default=str(HERE / "scaling.csv"))
    parser.add_argument("--json", metavar="PATH",
                        help="append this run's rows to the benchmark table's JSON file")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    sizes = [s for s in SIZES if s <= args.max_rows]
    t_start = time.perf_counter()

    records, nuts_records = [], []
    print(f"{'model':<48}{'rows':>10}{'cells':>11}{'validate':>11}{'MAP refit':>11}"
          f"{'evals':>7}")
    for name in args.models:
        kept = {}
        for rows in sizes:
            r = measure(name, rows, args.repeats, args.seed)
            tables = r.pop("tables")
            if name in NUTS_MODELS and rows in (sizes[0], sizes[-1]):
                kept[rows] = (tables, r["rows"])
            records.append(r)
            flag = "  (recompiled!)" if r["recompiled"] else ""
            print(f"{name:<48}{r['rows']:>10,}{r['cells']:>11,}{r['prepare_s'] * 1e3:>9.1f}ms"
                  f"{r['map_s'] * 1e3:>9.1f}ms{r['evals']:>7}{flag}", flush=True)
        if name in NUTS_MODELS and not args.no_nuts:
            nuts_refit(name, kept[sizes[0]][0])  # compile the sampler once; untimed
            for rows, (tables, n_rows) in kept.items():
                p, f, d, used = nuts_refit(name, tables)
                nuts_records.append({"model": name, "rows": n_rows, "prepare_s": p,
                                     "nuts_s": f, "sampler": used, **d})
                print(f"{name + ' NUTS refit (' + used + ')':<48}{n_rows:>10,}{'':>11}"
                      f"{p * 1e3:>9.1f}ms{f * 1e3:>9.1f}ms  R-hat "
                      f"{d.get('max_rhat', np.nan):.3f}", flush=True)
        del kept
    results = pd.DataFrame(records)
    nuts = pd.DataFrame(nuts_records) if nuts_records else None
    results.to_csv(args.csv, index=False)
    if nuts is not None:
        nuts.to_csv(Path(args.csv).with_name(Path(args.csv).stem + "_nuts.csv"), index=False)
    fig, _ = plot(results, nuts)
    fig.savefig(args.figure, dpi=110)
    print(f"\nfigure {args.figure}, numbers {args.csv}; whole script "
          f"{time.perf_counter() - t_start:.0f} s")

    if args.json:
        from _table import Row, fmt_seconds, write_rows

        rows = []
        sec = (f"Scaling: MAP refit at {sizes[-1]:,} vs {sizes[0]:,} rows "
               "(compiled engine reused)")
        for name, g in results.groupby("model", sort=False):
            lo, hi = g.iloc[0], g.iloc[-1]
            saturates = hi["cells"] < 0.5 * hi["rows"]
            rows.append(Row(
                sec, f"{name}: {int(hi['rows']):,} rows ({int(hi['cells']):,} cells)",
                hi["map_s"], f"itself at {int(lo['rows']):,} rows ({int(lo['cells']):,} cells)",
                lo["map_s"], target="<= 2.0" if saturates else "",
                repeats=args.repeats,
                agreement=f"optimiser evaluations {int(lo['evals'])} -> {int(hi['evals'])}",
                note=f"ratio = growth over {hi['rows'] / lo['rows']:,.0f}x rows; target: flat "
                     "once collapsed (cells saturate)" if saturates else
                     f"ratio = growth over {hi['rows'] / lo['rows']:,.0f}x rows; one cell per "
                     "row (no collapse possible): grows with cells"))
            rows[-1].note += (f"; validate + collapse {fmt_seconds(lo['prepare_s'])} -> "
                              f"{fmt_seconds(hi['prepare_s'])}")
        if nuts is not None:
            for name, g in nuts.groupby("model", sort=False):
                lo, hi = g.iloc[0], g.iloc[-1]
                rows.append(Row(
                    sec, f"{name}: NUTS 4 x (1000 + 1000) refit, {int(hi['rows']):,} rows",
                    hi["nuts_s"], f"itself at {int(lo['rows']):,} rows", lo["nuts_s"],
                    target="<= 2.0",
                    agreement=f"R-hat {hi.get('max_rhat', np.nan):.3f}, min bulk ESS "
                              f"{hi.get('min_ess_bulk', np.nan):.0f}",
                    note=f"sampler {hi['sampler']}; validation excluded "
                         f"({fmt_seconds(hi['prepare_s'])} at the top size); one run each"))
        write_rows(args.json, rows)


if __name__ == "__main__":
    main()
