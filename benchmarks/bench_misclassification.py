"""Section 8.1 Monte Carlo: bayesjudge's vectorised estimators vs the paper's formulas in a loop.

The simulation of Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report
LLM-as-a-Judge Evaluations", arXiv:2511.21140, Section 8.1 / Figure 6: 21 true
accuracies theta in {0, 0.05, ..., 1} x 10,000 replications, judge specificity
q0 = 0.7 and sensitivity q1 = 0.9, n = 1,000 test items, m = 200 calibration
labels split equally (m0 = m1 = 100). Per replication: judged_pos ~ Bin(n, p)
with p = theta q1 + (1 - theta)(1 - q0), tn ~ Bin(m0, q0), tp ~ Bin(m1, q1).

Reference: the paper's formulas written per replication in plain Python (the
way the authors' Appendix C listing evaluates them, one call per replication):
the naive estimate and its Wald interval, the Rogan-Gladen estimate (eq. 5,
clipped to [0, 1]) and the Lang-Reiczigel interval (eqs. 6-8). Where the
listing disagrees with the equations the equations win (as in bayesjudge): the
variance is divided by the squared Youden index (q0~ + q1~ - 1)^2 and both limits
are shifted by +d theta~. The normal quantile is computed once, not per call as
in the listing (that would add scipy's ``norm.ppf`` overhead to every replication).
The Bayesian reference is an importance sampler written independently in numpy,
one replication at a time: q0, q1 and p drawn from their Beta posteriors, theta =
(p + q0 - 1) / (q0 + q1 - 1), weight 1[0 <= theta <= 1] / |q0 + q1 - 1| (uniform
priors), self-normalised mean, equal-tailed and HPD intervals, replications with a
Kish ESS below n_draws / 10 redrawn with 4x the draws.

Rows (all timed interleaved, median of ``--repeats``):

1. closed form on the same simulated counts (generated once with numpy, fed to
   both): ``bayesjudge.estimators.lang_reiczigel_rates`` + ``wald_interval`` (one
   vectorised call each) vs the loop; agreement of every estimate and limit (1e-12);
2. the Bayesian posterior of every replication on the same counts:
   ``bayes_posterior_theta`` (vectorised) vs the per-replication sampler (timed on a
   subset of ``--bayes-loop-reps`` replications and extrapolated linearly);
3. the whole study ``misclassification_monte_carlo(bayes=False)`` and
4. ``misclassification_monte_carlo(bayes=True)`` vs the reference study (numpy
   simulation + the loops + the same summaries). The study draws its own counts
   (per-task seeds), so these agree within Monte Carlo error, not to the digit.

Run from the repository root::

    python benchmarks/bench_misclassification.py [--n-rep 10000] [--repeats 3]
        [--bayes-loop-reps 20000] [--json benchmarks/results.json]
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from scipy.stats import norm  # noqa: E402

from bayesjudge.estimators import lang_reiczigel_rates, wald_interval  # noqa: E402
from bayesjudge.experiments.misclassification.monte_carlo import (  # noqa: E402
    misclassification_monte_carlo,
)
from bayesjudge.models.misclassification.posterior import bayes_posterior_theta  # noqa: E402

Q0, Q1, N, M = 0.7, 0.9, 1000, 200
THETAS = np.linspace(0.0, 1.0, 21)
ALPHA = 0.05


# --------------------------------------------------------------------------- data


def simulate_counts(n_rep: int, seed: int = 0, thetas=THETAS, q0=Q0, q1=Q1, n=N, m=M) -> dict:
    """The design of Section 8.1 with equal allocation, as arrays (len(thetas), n_rep)."""
    rng = np.random.default_rng(seed)
    shape = (len(thetas), int(n_rep))
    th = np.asarray(thetas, dtype=float)[:, None]
    x = rng.binomial(n, th * q1 + (1 - th) * (1 - q0), size=shape)
    m1 = m // 2
    m0 = m - m1
    tn = rng.binomial(m0, q0, size=shape)
    tp = rng.binomial(m1, q1, size=shape)
    return {"x": x, "n": n, "tp": tp, "m1": m1, "tn": tn, "m0": m0,
            "thetas": np.asarray(thetas, dtype=float)}


# --------------------------------------------------------------------------- bayesjudge


def bayesjudge_closed_form(c: dict, alpha: float = ALPHA) -> dict:
    """Naive + Wald, clipped eq. 5 and eq. 6 for every replication: vectorised calls."""
    x = c["x"].astype(float)
    wald = wald_interval(c["x"], c["n"], alpha=alpha)
    lr = lang_reiczigel_rates(x / c["n"], c["tn"] / c["m0"], c["tp"] / c["m1"], c["n"],
                              c["m0"], c["m1"], alpha=alpha)
    return {"naive": np.asarray(wald.estimate), "wald_lower": np.asarray(wald.lower),
            "wald_upper": np.asarray(wald.upper), "estimate": np.asarray(lr.estimate),
            "lower": np.asarray(lr.lower), "upper": np.asarray(lr.upper)}


def bayesjudge_posterior(c: dict, n_draws: int, seed: int, alpha: float = ALPHA) -> dict:
    post = bayes_posterior_theta(c["x"], c["n"], c["tp"], c["m1"], c["tn"], c["m0"],
                                 n_draws=n_draws, ci_prob=1 - alpha, rng=seed)
    return {"mean": post.mean, "lower": post.lower, "upper": post.upper,
            "hpd_lower": post.hpd_lower, "hpd_upper": post.hpd_upper}


# --------------------------------------------------------------------------- reference


def _clip(v: float) -> float:
    return max(0.0, min(1.0, v))


def reference_one(x: int, n: int, tp: int, m1: int, tn: int, m0: int, z: float) -> tuple:
    """One replication, the paper's formulas in plain Python floats.

    Returns (p_hat, wald_lower, wald_upper, theta_hat, lower, upper); NaN where the
    estimator (q0 + q1 <= 1) or the interval (q0~ + q1~ <= 1) is undefined.
    """
    p, q0, q1 = x / n, tn / m0, tp / m1
    half = z * math.sqrt(p * (1 - p) / n)  # eq. 2 and its Wald interval
    wl, wu = _clip(p - half), _clip(p + half)
    den = q0 + q1 - 1
    theta = _clip((p + q0 - 1) / den) if den > 0 else math.nan  # eq. 5
    z2 = z * z
    nt, m0t, m1t = n + z2, m0 + 2, m1 + 2  # eq. 7
    pt, q0t, q1t = (x + z2 / 2) / nt, (tn + 1) / m0t, (tp + 1) / m1t
    dent = q0t + q1t - 1
    if dent <= 0:
        return p, wl, wu, theta, math.nan, math.nan
    th = (pt + q0t - 1) / dent
    v0, v1 = q0t * (1 - q0t) / m0t, q1t * (1 - q1t) / m1t
    dth = 2 * z2 * (-(1 - th) * v0 + th * v1)  # eq. 8
    # eq. 6: the squared Youden index, both limits shifted by +dth (the listing in
    # Appendix C divides by the unsquared index and subtracts dth from the upper limit)
    se = math.sqrt((pt * (1 - pt) / nt + (1 - th) ** 2 * v0 + th**2 * v1) / dent**2)
    return p, wl, wu, theta, _clip(th + dth - z * se), _clip(th + dth + z * se)


def reference_closed_form(c: dict, reps=None, alpha: float = ALPHA) -> dict:
    """``reference_one`` in a Python loop over every theta and replication (or ``reps``)."""
    z = float(norm.ppf(1 - alpha / 2))
    x, tp, tn = c["x"].tolist(), c["tp"].tolist(), c["tn"].tolist()
    n, m1, m0 = int(c["n"]), int(c["m1"]), int(c["m0"])
    reps = range(len(x[0])) if reps is None else reps
    out = []
    for k in range(len(x)):
        xk, tpk, tnk = x[k], tp[k], tn[k]
        out.append([reference_one(xk[r], n, tpk[r], m1, tnk[r], m0, z) for r in reps])
    a = np.array(out)  # (thetas, reps, 6)
    names = ("naive", "wald_lower", "wald_upper", "estimate", "lower", "upper")
    return {name: a[:, :, j] for j, name in enumerate(names)}


def reference_posterior_one(x, n, tp, m1, tn, m0, n_draws, ci, rng, max_draws=2**20):
    """Importance sampler for one replication (uniform priors); (mean, lo, hi, hpd_lo, hpd_hi)."""
    draws = n_draws
    while True:
        q0 = rng.beta(tn + 1, m0 - tn + 1, draws)
        q1 = rng.beta(tp + 1, m1 - tp + 1, draws)
        p = rng.beta(x + 1, n - x + 1, draws)
        youden = q0 + q1 - 1
        with np.errstate(divide="ignore", invalid="ignore"):
            theta = (p + q0 - 1) / youden
        keep = (theta >= 0) & (theta <= 1)
        w = 1.0 / np.abs(youden[keep])
        ess = w.sum() ** 2 / (w**2).sum() if w.size else 0.0
        if ess >= n_draws / 10 or draws * 4 > max_draws:
            break
        draws *= 4
    if not w.size:
        return (math.nan,) * 5
    order = np.argsort(theta[keep])
    t, w = theta[keep][order], w[order] / w.sum()
    cum = np.cumsum(w)
    before = cum - w
    tail = (1 - ci) / 2
    last = len(t) - 1
    mean = float(t @ w)
    lo = t[min(np.searchsorted(cum, tail), last)]
    hi = t[min(np.searchsorted(cum, 1 - tail), last)]
    # HPD: the narrowest window [t_i, t_j] holding ci of the weight; a window starting at
    # the smallest draw (ending at the largest) is extended to 0 (to 1), the support bound.
    starts = np.flatnonzero(before <= 1 - ci)
    ends = np.searchsorted(cum, before[starts] + ci)
    ok = ends <= last
    starts, ends = starts[ok], ends[ok]
    best = int(np.argmin(t[ends] - t[starts]))
    i, j = starts[best], ends[best]
    hpd_lo = 0.0 if i == 0 else t[i]
    hpd_hi = 1.0 if cum[j] >= 1 - 1e-12 else t[j]
    return mean, lo, hi, hpd_lo, hpd_hi


def reference_posterior(c: dict, reps, n_draws: int, seed: int, alpha: float = ALPHA) -> dict:
    """``reference_posterior_one`` in a Python loop over every theta and the ``reps``."""
    rng = np.random.default_rng(seed)
    n, m1, m0 = int(c["n"]), int(c["m1"]), int(c["m0"])
    out = [[reference_posterior_one(c["x"][k, r], n, c["tp"][k, r], m1, c["tn"][k, r], m0,
                                    n_draws, 1 - alpha, rng) for r in reps]
           for k in range(c["x"].shape[0])]
    a = np.array(out)
    names = ("mean", "lower", "upper", "hpd_lower", "hpd_upper")
    return {name: a[:, :, j] for j, name in enumerate(names)}


def summarise(thetas, est, lower, upper) -> np.ndarray:
    """Per theta: bias, rmse, coverage, mean length (finite replications only)."""
    out = []
    for k, th in enumerate(thetas):
        e, lo, hi = est[k], lower[k], upper[k]
        ok = np.isfinite(e) & np.isfinite(lo) & np.isfinite(hi)
        err = e[ok] - th
        out.append([err.mean(), np.sqrt((err**2).mean()),
                    ((lo[ok] <= th) & (th <= hi[ok])).mean(), (hi[ok] - lo[ok]).mean()])
    return np.array(out)


# --------------------------------------------------------------------------- checks


def max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    """Largest |a - b| where both are finite; inf if they disagree on which are NaN."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if not np.array_equal(np.isfinite(a), np.isfinite(b)):
        return math.inf
    ok = np.isfinite(a)
    return float(np.max(np.abs(a[ok] - b[ok]), initial=0.0))


def agreement(n_rep: int = 50, seed: int = 0) -> dict:
    """Closed-form agreement on ``n_rep`` replications per theta: max |diff| per field."""
    c = simulate_counts(n_rep, seed)
    ours, ref = bayesjudge_closed_form(c), reference_closed_form(c)
    return {k: max_abs_diff(ours[k], ref[k]) for k in ours}


def _subset(n_rep: int, total: int, n_thetas: int) -> np.ndarray:
    """The first ``total / n_thetas`` replications of every theta (all if total covers them)."""
    per = max(1, min(n_rep, math.ceil(total / n_thetas)))
    return np.arange(per)


# --------------------------------------------------------------------------- main


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-rep", type=int, default=10_000, help="replications per theta")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--closed-loop-reps", type=int, default=None,
                        help="replications (all thetas together) the closed-form loop runs "
                             "on; default all")
    parser.add_argument("--bayes-loop-reps", type=int, default=20_000,
                        help="replications (all thetas together) the Bayesian loop runs on; "
                             "its time is extrapolated to all")
    parser.add_argument("--n-draws", type=int, default=500,
                        help="importance draws per replication (the study's default)")
    parser.add_argument("--no-bayes", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH",
                        help="append this run's rows to the benchmark table's JSON file")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")

    k = len(THETAS)
    total = k * args.n_rep
    print(f"Section 8.1: {k} thetas x {args.n_rep:,} replications = {total:,}; q0 {Q0}, q1 {Q1},"
          f" n {N}, m {M} (m0 = m1 = {M // 2}); median of {args.repeats} interleaved runs")
    t0 = time.perf_counter()
    c = simulate_counts(args.n_rep, args.seed)
    t_gen = time.perf_counter() - t0
    closed_reps = _subset(args.n_rep, args.closed_loop_reps or total, k)
    bayes_reps = _subset(args.n_rep, args.bayes_loop_reps, k)
    f_closed = k * len(closed_reps) / total  # fraction of the replications the loop runs
    f_bayes = k * len(bayes_reps) / total

    times = {key: [] for key in ("bj_closed", "ref_closed", "bj_bayes", "ref_bayes",
                                 "study_closed", "study_bayes", "ref_summary")}
    for rep in range(args.repeats):
        t0 = time.perf_counter()
        ours = bayesjudge_closed_form(c)
        times["bj_closed"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ref = reference_closed_form(c, closed_reps)
        times["ref_closed"].append((time.perf_counter() - t0) / f_closed)
        t0 = time.perf_counter()
        ref_table = {"naive_wald": summarise(THETAS, ref["naive"], ref["wald_lower"],
                                             ref["wald_upper"]),
                     "lang_reiczigel": summarise(THETAS, ref["estimate"], ref["lower"],
                                                 ref["upper"])}
        times["ref_summary"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        study = misclassification_monte_carlo(q0=Q0, q1=Q1, thetas=THETAS, n=N, m=M,
                                              n_rep=args.n_rep, allocations=("equal",),
                                              bayes=False, random_seed=args.seed + 1)
        times["study_closed"].append(time.perf_counter() - t0)
        if args.no_bayes:
            continue
        t0 = time.perf_counter()
        post = bayesjudge_posterior(c, args.n_draws, args.seed + 2)
        times["bj_bayes"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ref_post = reference_posterior(c, bayes_reps, args.n_draws, args.seed + 3)
        times["ref_bayes"].append((time.perf_counter() - t0) / f_bayes)
        t0 = time.perf_counter()
        study_b = misclassification_monte_carlo(q0=Q0, q1=Q1, thetas=THETAS, n=N, m=M,
                                                n_rep=args.n_rep, allocations=("equal",),
                                                bayes=True, n_draws=args.n_draws,
                                                random_seed=args.seed + 1)
        times["study_bayes"].append(time.perf_counter() - t0)
    med = {key: float(np.median(v)) if v else math.nan for key, v in times.items()}

    # agreement, closed form: same counts, every replication the loop ran
    sub = {key: v[:, closed_reps] for key, v in ours.items()}
    diffs = {key: max_abs_diff(sub[key], ref[key]) for key in ref}
    worst = max(diffs.values())
    print(f"\nnumpy simulation of the counts              {t_gen * 1e3:9.1f} ms")
    print(f"closed form, bayesjudge (vectorised)        {med['bj_closed'] * 1e3:9.1f} ms")
    print(f"closed form, Python loop (paper's formulas) {med['ref_closed'] * 1e3:9.1f} ms"
          f"   ({k * len(closed_reps):,} replications run"
          f"{'' if f_closed == 1 else ', extrapolated'})")
    print(f"  ratio {med['bj_closed'] / med['ref_closed']:.4f}; max |diff| per field: "
          + ", ".join(f"{key} {v:.1e}" for key, v in diffs.items()))
    ref_study_s = t_gen + med["ref_closed"] + med["ref_summary"]

    def study_gap(table, methods, reference) -> tuple[float, float]:
        """max |diff| of coverage and of bias between the study's table and ``reference``."""
        cov, bias = 0.0, 0.0
        for method in methods:
            got = table[table["method"] == method].sort_values("theta")
            cov = max(cov, float(np.max(np.abs(got["coverage"].to_numpy()
                                               - reference[method][:, 2]))))
            bias = max(bias, float(np.max(np.abs(got["bias"].to_numpy()
                                                 - reference[method][:, 0]))))
        return cov, bias

    cov_gap, bias_gap = study_gap(study, ("naive_wald", "lang_reiczigel"), ref_table)
    print(f"study misclassification_monte_carlo(bayes=False) {med['study_closed']:9.3f} s vs "
          f"reference study {ref_study_s:.3f} s (ratio {med['study_closed'] / ref_study_s:.4f}); "
          f"own draws: max |coverage diff| {cov_gap:.4f}, max |bias diff| {bias_gap:.4f}")
    mc_se = math.sqrt(0.95 * 0.05 / args.n_rep)

    rows_bayes = None
    if not args.no_bayes:
        sub_post = {key: np.asarray(v)[:, bayes_reps] for key, v in post.items()}
        dmean = np.abs(sub_post["mean"] - ref_post["mean"])
        ours_cov = summarise(THETAS, sub_post["mean"], sub_post["lower"], sub_post["upper"])
        ref_cov = summarise(THETAS, ref_post["mean"], ref_post["lower"], ref_post["upper"])
        ours_hpd = summarise(THETAS, sub_post["mean"], sub_post["hpd_lower"],
                             sub_post["hpd_upper"])
        ref_hpd = summarise(THETAS, ref_post["mean"], ref_post["hpd_lower"],
                            ref_post["hpd_upper"])
        overall = [float(np.mean(x[:, 2])) for x in (ours_cov, ref_cov, ours_hpd, ref_hpd)]
        ref_study_b = ref_study_s + med["ref_bayes"]
        cov_gap_b, _ = study_gap(study_b, ("bayes_equal_tailed", "bayes_hpd"),
                                 {"bayes_equal_tailed": ref_cov, "bayes_hpd": ref_hpd})
        print(f"posterior, bayesjudge (vectorised)          {med['bj_bayes']:9.2f} s")
        print(f"posterior, per-replication loop             {med['ref_bayes']:9.2f} s"
              f"   ({k * len(bayes_reps):,} replications run, extrapolated to {total:,})")
        print(f"  ratio {med['bj_bayes'] / med['ref_bayes']:.3f}; posterior mean |diff| median "
              f"{np.nanmedian(dmean):.1e}, max {np.nanmax(dmean):.1e} (Monte Carlo error of "
              f"{args.n_draws} draws); coverage over the subset ETI {overall[0]:.4f} vs "
              f"{overall[1]:.4f}, HPD {overall[2]:.4f} vs {overall[3]:.4f}")
        print(f"study misclassification_monte_carlo(bayes=True) {med['study_bayes']:9.2f} s vs "
              f"reference study {ref_study_b:.2f} s (ratio "
              f"{med['study_bayes'] / ref_study_b:.3f}); own draws: max |coverage diff| "
              f"{cov_gap_b:.4f} (reference on its subset)")
        rows_bayes = {"cov_gap": cov_gap_b, "mc_se": math.sqrt(0.95 * 0.05 / len(bayes_reps)),
                      "dmean_med": float(np.nanmedian(dmean)),
                      "dmean_max": float(np.nanmax(dmean)), "overall": overall,
                      "ref_study": ref_study_b}

    if args.json:
        from _table import Row, write_rows

        sec = f"Misclassification: Section 8.1 Monte Carlo ({k} theta x {args.n_rep:,} reps)"
        closed_note = ("loop over all replications" if f_closed == 1 else
                       f"loop EXTRAPOLATED from {k * len(closed_reps):,} replications")
        rows = [Row(
            sec, f"closed form: naive + Wald, eq. 5, eq. 6-8 for {total:,} replications "
                 "(same counts)", med["bj_closed"],
            "paper's formulas, Python loop per replication", med["ref_closed"],
            target="<= 1.0", agreement=f"max |diff| {worst:.1e} (estimate, limits, Wald)",
            repeats=args.repeats,
            note=f"bayesjudge: lang_reiczigel_rates + wald_interval; {closed_note}; "
                 "z computed once (the authors' listing calls norm.ppf per replication)")]
        rows.append(Row(
            sec, "closed-form study end to end: misclassification_monte_carlo(bayes=False)",
            med["study_closed"], "numpy simulation + the loop + the same summaries",
            ref_study_s, target="<= 1.0",
            agreement=f"own draws: max |coverage diff| over {k} theta x 2 methods "
                      f"{cov_gap:.4f} (MC se of one difference {mc_se * math.sqrt(2):.4f}), "
                      f"max |bias diff| {bias_gap:.4f}",
            repeats=args.repeats, note=closed_note))
        if rows_bayes:
            o = rows_bayes["overall"]
            rows.append(Row(
                sec, f"Bayesian posterior (importance sampler, {args.n_draws} draws) for "
                     f"{total:,} replications (same counts)", med["bj_bayes"],
                "independent numpy importance sampler, Python loop per replication",
                med["ref_bayes"], target="<= 1.0",
                agreement=f"posterior mean |diff| median {rows_bayes['dmean_med']:.1e}, max "
                          f"{rows_bayes['dmean_max']:.1e} (MC error); coverage ETI "
                          f"{o[0]:.3f} vs {o[1]:.3f}, HPD {o[2]:.3f} vs {o[3]:.3f}",
                repeats=args.repeats,
                note=f"bayesjudge: bayes_posterior_theta; loop EXTRAPOLATED from "
                     f"{k * len(bayes_reps):,} replications"))
            rows.append(Row(
                sec, "Bayesian study end to end: misclassification_monte_carlo(bayes=True)",
                med["study_bayes"], "numpy simulation + both loops + summaries",
                rows_bayes["ref_study"], target="<= 1.0", repeats=args.repeats,
                agreement=f"own draws: max |coverage diff| over {k} theta x 2 intervals "
                          f"{rows_bayes['cov_gap']:.3f} (MC se of the reference's coverage "
                          f"{rows_bayes['mc_se']:.3f} on its subset)",
                note="reference: the closed-form and Bayesian loop times above (Bayesian "
                     "EXTRAPOLATED) + simulation"))
        write_rows(args.json, rows)


if __name__ == "__main__":
    main()
