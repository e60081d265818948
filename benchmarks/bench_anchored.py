"""AnchoredBT on Chatbot Arena battles: MAP, NUTS and the notebook-05 refits, with PPR beside it.

The speed rows of issue 21 (point 7), on the real ``arena_ppr`` data (26,919 battles
among 20 models, each judged by its Arena user ``human`` and by three LLM judges:
107,676 verdicts; :func:`bayesjudge.datasets.arena_ppr`). The peer is
Prediction-Powered Ranking (Chatzi et al., NeurIPS 2024, arXiv:2402.17826;
:func:`bayesjudge.baselines.prediction_powered_ranksets`) with the GPT-4 judge, timed
in the same run, interleaved with bayesjudge, on the same rows:

1. ``AnchoredBT(reference="human").fit(all 107,676 rows)`` MAP, refits through the
   compiled engine (the first fit compiles; timed: further ``.fit`` calls on the same
   model object), target < 1 s: the default (the judges' own effects,
   ``discrimination=True, item_bias=True``, the spread learned) and the plain channel
   (``discrimination=False, item_bias=False``); and, as the issue's use case, human
   votes on 1,000 random battles with GPT-4 on all of them (PPR's lambda is then tuned,
   not 0).
2. NUTS 4 chains x (1000 tune + 1000 draws) on the human + GPT-4 rows (53,838),
   target < 60 s: first fit in this process (nutpie's compilation included) and a
   refit (compiled model reused, new seed); R-hat, ESS, divergences.
3. The notebook-05 protocol (:func:`bayesjudge.experiments.anchored_ranking.rank_set_study`):
   ``--refits`` random designs balanced per pair of the paper's 12 models, 15 human
   votes per pair (n = 990), GPT-4 on every design battle; per draw AnchoredBT MAP fit +
   90% rank sets, and PPR on the same draw (the methods run one after the other in
   each draw). Target < 120 s for 100 AnchoredBT fits (the default, the notebook's
   ``anchored+e``); a warm-up draw (compilation) is excluded. Also the plain channel
   (the notebook's ``anchored``).

Run from the repository root::

    python benchmarks/bench_anchored.py [--repeats 5] [--refits 100] [--no-nuts]
        [--no-item-bias] [--json benchmarks/results.json]
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy: BLAS threads spin in L-BFGS-B
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bayesjudge  # noqa: E402
from bayesjudge.baselines import prediction_powered_ranksets  # noqa: E402
from bayesjudge.datasets import arena_ppr  # noqa: E402
from bayesjudge.experiments.anchored_ranking import (  # noqa: E402
    ARENA_PPR_MODELS,
    ppr_rank_sets,
    rank_set_study,
    reference_ranking,
)
from bayesjudge.models.anchored.data import validate_battles  # noqa: E402

#: One confusion matrix per judge for every pair (the default adds the judges' own scale
#: and item preferences, their spread learned from the data).
PLAIN = {"discrimination": False, "item_bias": False}
GPT4 = "gpt-4-0125-preview"
COLUMNS = ["battle", "judge", "left", "right", "outcome"]


def load() -> str:
    """The 1-minute load average of the shared machine, for the notes."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:  # pragma: no cover
        return "?"


def interleaved(fns: dict, repeats: int) -> dict:
    """{name: (median seconds, last result)}: each round calls every fn once, in turn."""
    times = {k: [] for k in fns}
    out = {}
    for _ in range(repeats):
        for name, fn in fns.items():
            t = time.perf_counter()
            out[name] = fn()
            times[name].append(time.perf_counter() - t)
    return {k: (float(np.median(v)), out[k]) for k, v in times.items()}


def _diag(d: dict) -> str:
    if not d:
        return ""
    return (f"R-hat max {d.get('max_rhat', np.nan):.3f}, min bulk ESS "
            f"{d.get('min_ess_bulk', np.nan):.0f}, {d.get('divergences', '?')} divergences")


def agreement(model, ppr: pd.DataFrame) -> str:
    """Spearman correlation of AnchoredBT's skills and PPR's win probabilities; top 3."""
    ours = model.ranking().set_index("item")
    theta = ppr.set_index("item")["theta"].reindex(ours.index)
    rho = spearmanr(ours["skill"], theta).statistic
    top_ours = ", ".join(ours.sort_values("rank").index[:3])
    top_ppr = ", ".join(ppr["item"].iloc[:3])
    same = "same top 3" if top_ours == top_ppr else f"top 3 {top_ours} vs PPR {top_ppr}"
    return f"Spearman(skill, PPR theta) {rho:.3f}; {same}"


# --------------------------------------------------------------------------- 1. MAP


def bench_map(table: pd.DataFrame, args) -> list:
    from _table import Row

    battles = table["battle"].nunique()
    sec = (f"AnchoredBT on arena_ppr ({len(table):,} verdicts: human + 3 LLM judges on "
           f"{battles:,} battles, {table['left'].nunique()} models)")
    rows = []
    t_val = interleaved({"val": lambda: validate_battles(table, "human").cells()},
                        args.repeats)
    n_cells = len(t_val["val"][1].count)
    rows.append(Row(sec, f"validate + collapse the table (validate_battles + cells) -> "
                    f"{n_cells:,} cells", t_val["val"][0], repeats=args.repeats,
                    note="included in every fit below"))
    ppr_ref = f"PPR (prediction_powered_ranksets), GPT-4 judge, the same {len(table):,} rows"
    variants = [(", discrimination=False, item_bias=False", PLAIN)] + (
        [] if args.no_item_bias else [("", {})])  # "": the default, the judges' own effects
    for label, kw in variants:
        model = bayesjudge.AnchoredBT(reference="human", **kw)
        load0, t0 = load(), time.perf_counter()
        model.fit(table)  # compiles the engine of this structure (once per process)
        t_first = time.perf_counter() - t0
        res = interleaved({"ours": lambda: model.fit(table),
                           "ppr": lambda: prediction_powered_ranksets(table, judge=GPT4)},
                          args.repeats)
        (t_ours, fitted), (t_ppr, ppr) = res["ours"], res["ppr"]
        lam, big_n = ppr["lambda"].iloc[0], ppr.attrs["N"]
        rows.append(Row(
            sec, f"AnchoredBT(reference='human'{label}) MAP on all rows, refit through the "
            f"compiled engine", t_ours, ppr_ref, t_ppr, target="< 1 s",
            agreement=agreement(fitted, ppr), repeats=args.repeats,
            note=f"second and later .fit on the same model object, from the raw table "
                 f"(validation + collapse included); compile + first fit {t_first:.1f} s "
                 f"(excluded); PPR: every battle has a human vote, so N = {big_n} and lambda "
                 f"= {lam:g} (the classical human win rates); interleaved; load {load0} -> "
                 f"{load()}"))
    # the use case: few human votes, an LLM judge on every battle
    rng = np.random.default_rng(0)
    keep = rng.choice(table["battle"].unique(), size=args.few_humans, replace=False)
    few = table[((table["judge"] == "human") & table["battle"].isin(keep))
                | (table["judge"] == GPT4)]
    model = bayesjudge.AnchoredBT(reference="human")
    t0 = time.perf_counter()
    model.fit(few)
    t_first = time.perf_counter() - t0
    res = interleaved({"ours": lambda: model.fit(few),
                       "ppr": lambda: prediction_powered_ranksets(few, judge=GPT4)},
                      args.repeats)
    (t_ours, fitted), (t_ppr, ppr) = res["ours"], res["ppr"]
    rows.append(Row(
        sec, f"AnchoredBT MAP, human votes on {args.few_humans:,} random battles + GPT-4 on "
        f"all {battles:,} ({len(few):,} rows), refit", t_ours,
        f"PPR, GPT-4 judge, the same {len(few):,} rows", t_ppr, repeats=args.repeats,
        agreement=agreement(fitted, ppr),
        note=f"informative (the issue's use case); PPR lambda {ppr['lambda'].iloc[0]:.3f} "
             f"(n = {ppr.attrs['n']:,}, N = {ppr.attrs['N']:,}); compile + first fit "
             f"{t_first:.1f} s (excluded); load {load()}"))
    return rows


# --------------------------------------------------------------------------- 2. NUTS


def bench_nuts(table: pd.DataFrame, args) -> list:
    from _table import Row

    two = table[table["judge"].isin(["human", GPT4])]
    sec = (f"AnchoredBT NUTS on arena_ppr: human + GPT-4 ({len(two):,} verdicts on "
           f"{two['battle'].nunique():,} battles)")
    size = f"{args.chains} x ({args.tune} + {args.draws})"
    rows = []
    for label, seed in (("first fit in this process (sampler compilation included)", 0),
                        ("refit, compiled model reused, new seed", 1)):
        load0, t0 = load(), time.perf_counter()
        model = bayesjudge.AnchoredBT(reference="human", random_seed=seed).fit(
            two, method="nuts", chains=args.chains, tune=args.tune, draws=args.draws)
        secs = time.perf_counter() - t0
        rows.append(Row(
            sec, f"AnchoredBT NUTS {size}, defaults (judge effects), {label}", secs,
            target="< 60 s",
            agreement=_diag(model.diagnostics_ or {}), repeats=1,
            note=f"sampler {model.sampler_}; from the raw table; "
                 + ("includes validation and the compilation of this structure's graph "
                    "for the sampler (after the MAP rows in this process)"
                    if seed == 0 else "compilation excluded (done by the first fit)")
                 + f"; load {load0} -> {load()}"))
    return rows


# --------------------------------------------------------------------------- 3. refits


def _anchored_method(fit_times: list, **kwargs):
    """The notebook's AnchoredBT method (fit, then 1 - alpha rank sets), fit timed apart."""

    def method(table, reference, alpha):
        rows = table[table["judge"].isin([reference, GPT4])]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            model = bayesjudge.AnchoredBT(reference=reference, **kwargs).fit(rows)
            fit_times.append(time.perf_counter() - t)
            return model.ranking(ci_prob=1 - alpha)[["item", "rank_lower", "rank_upper"]]

    return method


def bench_refits(table: pd.DataFrame, args) -> list:
    from _table import Row

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        truth = reference_ranking(table, ARENA_PPR_MODELS, "human")
    fits = {"anchored": [], "anchored+e": []}
    methods = {"anchored": _anchored_method(fits["anchored"], **PLAIN)}
    if not args.no_item_bias:
        methods["anchored+e"] = _anchored_method(fits["anchored+e"])  # the default
    methods["ppr"] = ppr_rank_sets(GPT4)
    kw = dict(n_reference=(args.n_reference,), judges=(GPT4,), truth=truth, alpha=0.1)
    # warm-up draw: compiles each structure once (excluded, as the notebook's first draw)
    t0 = time.perf_counter()
    rank_set_study(table, methods, n_draws=1, random_seed=12345, **kw)
    t_warm = time.perf_counter() - t0
    for v in fits.values():
        v.clear()
    load0, t0 = load(), time.perf_counter()
    study = rank_set_study(table, methods, n_draws=args.refits, random_seed=2024, **kw)
    wall = time.perf_counter() - t0
    d = study.draws
    n = int(d["n"].iloc[0])
    design = study.settings["pool_battles"]
    secs = d.groupby("method")["seconds"]
    total, median = secs.sum(), secs.median()
    summ = study.summary().set_index("method")

    def metrics(m):
        s = summ.loc[m]
        return f"cov {s['coverage']:.3f}, all {s['all_covered']:.2f}, size {s['mean_size']:.2f}"

    sec = (f"AnchoredBT refits: notebook-05 protocol ({args.refits} draws, n = {n} human "
           f"votes, GPT-4 on every design battle, 12 models)")
    ppr_ref = f"PPR on the same {args.refits} draws (sum)"
    rows = []
    for m, label in (("anchored", "AnchoredBT(discrimination=False, item_bias=False)"),
                     ("anchored+e", "AnchoredBT(reference='human') (judge effects)")):
        if m not in methods:
            continue
        f = np.asarray(fits[m])
        rows.append(Row(
            sec, f"{args.refits} x {label} MAP fit + 90% rank sets (ranking()), sum over "
            f"draws", total[m], ppr_ref, total["ppr"],
            target="< 120 s",
            agreement=f"anchored {metrics(m)}; PPR {metrics('ppr')}",
            repeats=args.refits,
            note=("informative (the notebook's plain anchored); " if m == "anchored" else "")
            + f"per draw median {median[m] * 1e3:.0f} ms (PPR {median['ppr'] * 1e3:.0f} "
                 f"ms), of which fit {np.median(f) * 1e3:.0f} ms (validation + collapse + "
                 f"MAP) and ranking() {(median[m] - np.median(f)) * 1e3:.0f} ms (Laplace "
                 f"draws, PSIS check); the methods run in turn in each draw; warm-up draw "
                 f"(compilation) {t_warm:.1f} s excluded; whole study {wall:.1f} s (designs "
                 f"from a pool of {design:,} battles); load {load0} -> {load()}"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="MAP refits per median")
    parser.add_argument("--refits", type=int, default=100,
                        help="draws of the notebook-05 protocol")
    parser.add_argument("--n-reference", type=int, default=1000,
                        help="human votes kept per draw (floored to 15 per pair: 990)")
    parser.add_argument("--few-humans", type=int, default=1000,
                        help="battles keeping the human vote in the few-votes MAP row")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--no-nuts", action="store_true", help="skip the NUTS rows")
    parser.add_argument("--no-item-bias", action="store_true",
                        help="skip the judge-effects rows (their first compile takes ~30 s)")
    parser.add_argument("--json", metavar="PATH",
                        help="append this run's rows to the benchmark table's JSON file")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _table import markdown_table

    table = arena_ppr()[COLUMNS]
    rows = bench_map(table, args)
    if not args.no_nuts:
        rows += bench_nuts(table, args)
    rows += bench_refits(table, args)
    print(markdown_table(rows))
    if args.json:
        from _table import write_rows

        write_rows(args.json, rows)


if __name__ == "__main__":
    main()
