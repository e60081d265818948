# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Misclassification-adjusted reporting of LLM-judge accuracy
#
# This notebook reproduces the figures of Lee, Zeng, Jeong, Sohn & Lee (2025), "How to
# Correctly Report LLM-as-a-Judge Evaluations",
# [arXiv:2511.21140](https://arxiv.org/abs/2511.21140), with `bayesjudge`, adds the Bayesian
# counterparts, and runs the paper's real-data protocol (Section 8.2) on the PandaLM test set
# shipped with the package:
#
# 1. **Figure 2** -- the bias of the naive judge score and of the bias-adjusted estimator as a
#    function of the true accuracy theta (analytic curves);
# 2. **Figure 5** -- label shift between test and calibration sets: the Table 1 estimators;
# 3. **Figure 6** -- Monte Carlo: one run, coverage over theta, interval length with equal vs
#    adaptive (Algorithm 1) allocation of the calibration budget;
# 4. **Bayes vs Lang-Reiczigel** -- coverage and length of the posterior intervals, and the
#    PyMC `MisclassificationModel` on one case next to the closed forms;
# 5. **Allocation** -- the Bayesian preposterior allocation (`bayesian_allocation`) vs
#    Algorithm 1;
# 6. **PandaLM** -- GPT-3.5 and PandaLM-7B as judges of five 7B models, the human majority as
#    truth: bias and coverage over random 10% calibration splits, and the hierarchical model's
#    win-rate table with pairwise differences.
#
# Every number quoted below is printed by a code cell of this run. `BAYESJUDGE_FAST=1` (set by
# the test suite) shrinks replications, splits and draws; unset, the notebook runs the paper's
# sizes.

# %%
# %matplotlib inline
import os
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.stats import binom, norm

import bayesjudge
from bayesjudge.cli import report_table
from bayesjudge.datasets import load_pandalm, pandalm_judgments
from bayesjudge.estimators import (
    allocate_calibration,
    lang_reiczigel_interval,
    rogan_gladen,
    wald_interval,
)
from bayesjudge.experiments.misclassification import (
    distribution_shift_study,
    misclassification_monte_carlo,
    pandalm_misclassification_study,
)
from bayesjudge.experiments.misclassification.pandalm_data import (
    pandalm_calibration_masks,
    pandalm_win_rate_truth,
)
from bayesjudge.models.misclassification import (
    HierarchicalMisclassificationModel,
    MisclassificationModel,
    bayesian_allocation,
)
from bayesjudge.models.misclassification.posterior import bayes_posterior_theta

FAST = os.environ.get("BAYESJUDGE_FAST", "0") == "1"
N_REP = 300 if FAST else 10_000        # Monte Carlo replications per theta (paper: 10,000)
N_SPLITS = 10 if FAST else 100         # PandaLM calibration / test splits (paper: 100)
N_HIER = 3 if FAST else 100            # of which fitted with the hierarchical model (NUTS)
CHAINS = 2
DRAWS = TUNE = 300 if FAST else 1000   # NUTS draws and tuning steps per chain
ALLOC_SIMS, ALLOC_GRID = (40, 11) if FAST else (400, 41)
Q0, Q1 = 0.7, 0.9                      # the paper's judge: specificity q0, sensitivity q1
N, M = 1000, 200                       # test-set size and calibration budget (Section 8.1)
SEED = 2025
TIMES = {}
pd.set_option("display.float_format", "{:.3f}".format)
pd.set_option("display.width", 140)
print(f"bayesjudge {bayesjudge.__version__}; FAST={FAST}: {N_REP} replications, "
      f"{N_SPLITS} splits ({N_HIER} hierarchical), NUTS {CHAINS} x ({TUNE} + {DRAWS})")

# %% [markdown]
# ## 1. Figure 2: the naive score is biased, the adjusted estimator is not
#
# A judge with sensitivity q1 and specificity q0 calls a response 'correct' with probability
# $p = \theta q_1 + (1-\theta)(1-q_0)$ (Section 5.1), so the naive score $\hat p$ (eq. 2)
# overestimates theta below $\theta^* = (1-q_0)/(2-q_0-q_1)$ and underestimates it above.
# With q0, q1 known, $(\hat p + q_0 - 1)/(q_0 + q_1 - 1)$ (eq. 4) is unbiased. With
# $\hat q_0, \hat q_1$ estimated from $m_0 = m_1$ calibration items, the Rogan-Gladen
# estimate (eq. 5) keeps a small bias that vanishes as m grows (Proposition 5.1). Its exact
# expectation is a finite sum: $\hat p$ enters linearly and is independent of the
# calibration counts, so
#
# $$E[\hat\theta] = \sum_{tn, tp} \Pr(tn)\Pr(tp)\,
#   \frac{p + \hat q_0 - 1}{\hat q_0 + \hat q_1 - 1}$$
#
# over the calibration outcomes with $\hat q_0 + \hat q_1 > 1$, where the estimator is
# defined.

# %%
t0 = time.perf_counter()
theta = np.linspace(0, 1, 201)
p = theta * Q1 + (1 - theta) * (1 - Q0)
threshold = (1 - Q0) / (2 - Q0 - Q1)


def expected_rogan_gladen(theta, m0, m1, q0=Q0, q1=Q1):
    # Exact E[unclipped eq. 5] given q0_hat + q1_hat > 1,
    # summed over tn ~ Bin(m0, q0), tp ~ Bin(m1, q1).
    tn, tp = np.arange(m0 + 1), np.arange(m1 + 1)
    q0_hat, q1_hat = (tn / m0)[:, None], (tp / m1)[None, :]
    youden = q0_hat + q1_hat - 1
    ok = youden > 0
    w = np.where(ok, binom.pmf(tn, m0, q0)[:, None] * binom.pmf(tp, m1, q1)[None, :], 0.0)
    w /= w.sum()
    p = theta * q1 + (1 - theta) * (1 - q0)
    ratio = (p[:, None, None] + q0_hat - 1) / np.where(ok, youden, 1.0)
    return (w * ratio).sum(axis=(1, 2))


fig, axes = plt.subplots(1, 2, figsize=(11, 4))
ax = axes[0]
ax.plot(theta, p, label=r"$E[\hat p]$ (naive)")
ax.plot(theta, theta, "k--", lw=1, label=r"$\theta$")
ax.axvline(threshold, color="grey", ls=":", label=rf"$\theta^*$ = {threshold:.2f}")
ax.set(xlabel=r"true accuracy $\theta$", ylabel="expected estimate",
       title=f"(a) naive score, q0 = {Q0}, q1 = {Q1}")
ax.legend()
ax = axes[1]
ax.plot(theta, p - theta, label=r"naive $\hat p$")
ax.axhline(0, color="k", lw=1, label="adjusted, q0 and q1 known (eq. 4)")
rows = []
for m_class in (10, 25, 100):
    bias = expected_rogan_gladen(theta, m_class, m_class) - theta
    ax.plot(theta, bias, ls="--", label=rf"adjusted, $m_0 = m_1$ = {m_class} (eq. 5)")
    rows.append({
        "m0 = m1": m_class,
        "max |bias| adjusted": np.abs(bias).max(),
        "share of theta where |adjusted| < |naive|": np.mean(np.abs(bias) < np.abs(p - theta)),
    })
ax.set(xlabel=r"true accuracy $\theta$", ylabel="bias", title="(b) bias of the estimators")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
print(f"naive: max |bias| = {np.abs(p - theta).max():.3f} "
      f"(at theta = {theta[np.argmax(np.abs(p - theta))]:.2f}), "
      f"zero only at theta* = {threshold:.2f}")
TIMES["figure 2"] = time.perf_counter() - t0
pd.DataFrame(rows)

# %% [markdown]
# The table gives, per calibration size, the largest bias of the adjusted estimator and the
# share of the theta grid on which it is less biased than the naive score. Near $\theta^*$
# the naive score happens to be unbiased, so there, no estimator that pays for estimating
# q0 and q1 can beat it.
#
# ## 2. Figure 5: label shift between calibration and test sets
#
# Section 7, Appendix D: the judge behaves the same on both sets (q0 = `Q0`, q1 = `Q1`,
# the paper's values) but the test set has accuracy $\theta_P$ = `THETA_P` while the
# calibration set's accuracy $\theta_Q$ varies around it. The paper's point: only the
# misclassification-adjusted estimator (v), which needs $\Pr(\hat Z \mid Z)$ to be stable
# and nothing else, stays unbiased. The cell prints each estimator's largest absolute bias
# over the shift ratios.

# %%
t0 = time.perf_counter()
THETA_P = 0.5
shift = distribution_shift_study(theta_p=THETA_P, q0=Q0, q1=Q1, n=N, m=M, n_rep=N_REP,
                                 random_seed=SEED)
print(f"theta_P = {THETA_P}; theta_Q from {THETA_P * shift.shift_ratio.min():.2f} "
      f"to {THETA_P * shift.shift_ratio.max():.2f}")
fig, ax = plt.subplots(figsize=(6.5, 4))
names = {"naive": "(i) naive", "calibration_only": "(ii) calibration only",
         "difference": "(iii) difference",
         "conditional_calibration": "(iv) conditional calibration",
         "misclassification_adjusted": "(v) misclassification-adjusted"}
for est, g in shift.groupby("estimator", sort=False):
    ax.plot(g["shift_ratio"], g["bias"], marker="o", ms=3, label=names[est])
ax.axhline(0, color="k", lw=0.8)
ax.set(xlabel=r"shift ratio $\theta_Q / \theta_P$", ylabel="bias",
       title=f"Figure 5 ({N_REP} replications)")
ax.legend(fontsize=8)
plt.show()
max_bias = shift.assign(abs_bias=shift["bias"].abs()).groupby("estimator")["abs_bias"].max()
print("max |bias| over the shift ratios:",
      {names[k]: round(float(v), 3) for k, v in max_bias[list(names)].items()})
TIMES["figure 5"] = time.perf_counter() - t0
shift.pivot(index="shift_ratio", columns="estimator", values="bias")[list(names)]

# %% [markdown]
# ## 3. Figure 6: Monte Carlo, n = 1000, m = 200
#
# **(a) One run.** One test set and one equally allocated calibration set ($m_0 = m_1 = m/2$)
# per theta; the naive score with its Wald interval and the adjusted estimate with the
# Lang-Reiczigel interval (eqs. 6-8). The estimators are vectorised: one call covers every
# value of theta on the grid.

# %%
t0 = time.perf_counter()
rng = np.random.default_rng(SEED)
thetas = np.linspace(0, 1, 21)
x = rng.binomial(N, thetas * Q1 + (1 - thetas) * (1 - Q0))
tn = rng.binomial(M // 2, Q0, size=thetas.size)
tp = rng.binomial(M // 2, Q1, size=thetas.size)
naive = wald_interval(x, N)
adjusted = lang_reiczigel_interval(x, N, tp, M // 2, tn, M // 2)
fig, ax = plt.subplots(figsize=(6.5, 4.5))
for label, ci, color in (("naive $\\hat p$ (Wald)", naive, "C0"),
                         ("adjusted $\\hat\\theta$ (Lang-Reiczigel)", adjusted, "C1")):
    ax.plot(thetas, ci.estimate, "o", color=color, ms=4, label=label)
    ax.fill_between(thetas, ci.lower, ci.upper, color=color, alpha=0.2)
ax.plot(thetas, thetas, "k--", lw=1)
ax.set(xlabel=r"true accuracy $\theta$", ylabel="estimate",
       title="(a) a single run with 95% intervals")
ax.legend()
plt.show()
for label, ci in (("naive (Wald)", naive), ("adjusted (Lang-Reiczigel)", adjusted)):
    inside = (ci.lower <= thetas) & (thetas <= ci.upper)
    print(f"{label}: interval contains theta at {int(inside.sum())} of {thetas.size} values")

# %% [markdown]
# **(b), (c) Replications.** `misclassification_monte_carlo` repeats this `N_REP` times per
# theta for both allocations (equal, and Algorithm 1 with a pilot of 10 per class) and adds
# the Bayesian posterior of the same model (uniform priors on theta, q0, q1), computed for
# every replication by the exact vectorised importance sampler `bayes_posterior_theta`:
# equal-tailed and highest-density (HPD) 95% intervals.

# %%
mc = misclassification_monte_carlo(q0=Q0, q1=Q1, n=N, m=M, n_rep=N_REP, random_seed=SEED)
TIMES["figure 6 Monte Carlo (with Bayes)"] = time.perf_counter() - t0
labels = {"naive_wald": "naive (Wald)", "lang_reiczigel": "Lang-Reiczigel",
          "bayes_equal_tailed": "Bayes, equal-tailed", "bayes_hpd": "Bayes, HPD"}
fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
eq = mc[mc.allocation == "equal"]
for method, g in eq.groupby("method", sort=False):
    axes[0].plot(g["theta"], g["coverage"], marker="o", ms=3, label=labels[method])
axes[0].axhline(0.95, color="k", ls=":", lw=1)
axes[0].set(xlabel=r"$\theta$", ylabel="coverage", ylim=(-0.02, 1.02),
            title="(b) coverage of 95% intervals")
axes[0].legend(fontsize=8)
shown = mc[mc.method.isin(["lang_reiczigel", "bayes_hpd"])]
for (method, allocation), g in shown.groupby(["method", "allocation"], sort=False):
    axes[1].plot(g["theta"], g["mean_length"], marker="o", ms=3,
                 ls="-" if allocation == "adaptive" else "--",
                 label=f"{labels[method]}, {allocation}")
axes[1].set(xlabel=r"$\theta$", ylabel="mean interval length",
            title=f"(c) equal vs adaptive allocation, m = {M}")
axes[1].legend(fontsize=8)
fig.tight_layout()
plt.show()
lr = mc[mc.method == "lang_reiczigel"].pivot(
    index="theta", columns="allocation", values="mean_length")
print(f"Lang-Reiczigel length, adaptive / equal: mean ratio "
      f"{np.mean(lr.adaptive / lr.equal):.3f}; adaptive shorter at "
      f"{int((lr.adaptive < lr.equal).sum())} of {len(lr)} thetas")

# %% [markdown]
# ## 4. Bayes vs Lang-Reiczigel
#
# Averaged over the theta grid (equal allocation and Algorithm 1), and over its interior. The
# equal-tailed posterior interval can never contain theta = 0 or 1, so it has zero coverage
# at those two points; the HPD interval, extended to the support bound when the density
# peaks there, does not have that problem (the cell prints both coverages at the bounds).

# %%
inner = mc[(mc.theta > 0) & (mc.theta < 1)]
metrics = ["coverage", "mean_length", "rmse"]
table = pd.concat({
    f"all {mc.theta.nunique()} thetas":
        mc.groupby(["allocation", "method"], sort=False)[metrics].mean(),
    "0 < theta < 1": inner.groupby(["allocation", "method"], sort=False)[metrics].mean(),
}, axis=1)
bounds = mc[mc.method.str.startswith("bayes") & mc.theta.isin([0.0, 1.0])]
print("Bayesian coverage at theta = 0 and 1:")
print(bounds.pivot_table(index=["allocation", "method"], columns="theta", values="coverage",
                         sort=False).to_string())
table

# %% [markdown]
# **One case with PyMC.** `case` below holds the expected counts of the paper's judge at
# theta = 0.3 with an equally split calibration budget. With flat priors the MAP of
# `MisclassificationModel` ("PyMC, flat priors, MAP") is the maximum-likelihood estimate,
# i.e. exactly the Rogan-Gladen estimate; with the default uniform priors, NUTS samples the
# posterior that the importance sampler computes exactly (up to Monte Carlo error). For the
# Bayesian rows, `estimate` is the posterior mean and the interval the equal-tailed 95%
# credible interval.

# %%
t0 = time.perf_counter()
case = dict(judged_pos=480, n=1000, tp=90, m1=100, tn=70, m0=100)
mle = MisclassificationModel(priors="flat").fit_counts(**case)
nuts = MisclassificationModel(random_seed=SEED).fit_counts(
    **case, method="nuts", draws=DRAWS, tune=TUNE, chains=CHAINS)
post_nuts = nuts.predict().set_index("quantity").loc["accuracy"]
exact = bayes_posterior_theta(**case, n_draws=200_000, rng=SEED)
ci = lang_reiczigel_interval(**case)
one_case = pd.DataFrame([
    {"method": "Rogan-Gladen, Lang-Reiczigel", "estimate": ci.estimate,
     "lower": ci.lower, "upper": ci.upper},
    {"method": "PyMC, flat priors, MAP", "estimate": float(mle.map_["accuracy"]),
     "lower": np.nan, "upper": np.nan},
    {"method": "PyMC, uniform priors, NUTS", "estimate": post_nuts["mean"],
     "lower": post_nuts["lower"], "upper": post_nuts["upper"]},
    {"method": "exact importance sampler", "estimate": exact.mean,
     "lower": exact.lower, "upper": exact.upper},
]).set_index("method")
one_case["length"] = one_case["upper"] - one_case["lower"]
print(f"case: {case}")
print(f"NUTS diagnostics: {nuts.diagnostics_}")
assert abs(float(mle.map_["accuracy"]) - rogan_gladen(**case)) < 1e-6
TIMES["one case with PyMC (incl. compilation)"] = time.perf_counter() - t0
one_case

# %%
nuts.summarize()

# %% [markdown]
# ## 5. Allocating the calibration budget: Bayesian preposterior analysis vs Algorithm 1
#
# A pilot of 10 human-'correct' and 10 human-'incorrect' items (`pilot` below), the test
# count of the case above, and the total budget of `M` labels. Algorithm 1 plugs the
# smoothed pilot rates into the variance of eq. 9 and solves for $m_0/m_1$ (Proposition
# 5.2). `bayesian_allocation` instead averages the posterior interval width of theta over
# future calibration counts simulated from the current posterior, for every split of the
# budget, and takes the minimum.

# %%
t0 = time.perf_counter()
pilot = {"tp": 9, "m1": 10, "tn": 7, "m0": 10}
p_hat = case["judged_pos"] / case["n"]
m0_alg1, m1_alg1 = allocate_calibration(
    M, p_hat, pilot["tn"] / pilot["m0"], pilot["tp"] / pilot["m1"], pilot["m0"])
bayes_alloc = bayesian_allocation(pilot, M, case["n"], case["judged_pos"], n_sims=ALLOC_SIMS,
                                  grid_size=ALLOC_GRID, random_seed=SEED)
curve = bayes_alloc.curve
# eq. (6)'s length at each split with the pilot's smoothed rates (what Algorithm 1 minimises)
q0_t = (pilot["tn"] + 1) / (pilot["m0"] + 2)
q1_t = (pilot["tp"] + 1) / (pilot["m1"] + 2)
theta_t = (p_hat + q0_t - 1) / (q0_t + q1_t - 1)
var = (p_hat * (1 - p_hat) / case["n"]
       + (1 - theta_t) ** 2 * q0_t * (1 - q0_t) / (curve.m0 + 2)
       + theta_t**2 * q1_t * (1 - q1_t) / (curve.m1 + 2)) / (q0_t + q1_t - 1) ** 2
fig, ax = plt.subplots(figsize=(6.5, 4))
ax.errorbar(curve.m0, curve.expected_width, yerr=2 * curve.se, fmt="o-", ms=3,
            label="Bayes: E[posterior 95% width]")
ax.plot(curve.m0, 2 * norm.ppf(0.975) * np.sqrt(var), "s--", ms=3,
        label="eq. (6) length at pilot rates")
ax.axvline(m0_alg1, color="C1", ls=":", label=f"Algorithm 1: m0 = {m0_alg1}")
ax.axvline(bayes_alloc.m0, color="C0", ls=":", label=f"Bayesian: m0 = {bayes_alloc.m0}")
ax.set(xlabel=f"m0 (human-'incorrect' calibration items), m1 = {M} - m0",
       ylabel="interval width", title=f"Calibration allocation, budget m = {M}")
ax.legend(fontsize=8)
plt.show()
at_alg1 = np.interp(m0_alg1, curve.m0, curve.expected_width)
at_equal = np.interp(M // 2, curve.m0, curve.expected_width)
print(f"Algorithm 1: (m0, m1) = ({m0_alg1}, {m1_alg1}); "
      f"Bayesian: ({bayes_alloc.m0}, {bayes_alloc.m1})")
print(f"expected posterior width: {bayes_alloc.expected_width:.4f} at the Bayesian split, "
      f"{at_alg1:.4f} at Algorithm 1's ({at_alg1 / bayes_alloc.expected_width - 1:+.1%}), "
      f"{at_equal:.4f} at the equal split ({at_equal / bayes_alloc.expected_width - 1:+.1%})")
for rule, m0_, m1_ in (("Algorithm 1", m0_alg1, m1_alg1),
                       ("Bayesian", bayes_alloc.m0, bayes_alloc.m1)):
    more = ("human-'incorrect' (m0)" if m0_ > m1_ else
            "human-'correct' (m1)" if m1_ > m0_ else "neither")
    print(f"{rule} puts more labels on: {more}")
TIMES["allocation"] = time.perf_counter() - t0

# %% [markdown]
# Both rules weigh the two classes' terms of the variance against each other: the
# human-'incorrect' class's rate q0 enters with weight $(1-\theta)^2$ and the
# human-'correct' class's q1 with $\theta^2$, each scaled by how uncertain the rate is. Where
# the expected-width curve is flat near its minimum, the exact choice of split costs little;
# the printout above gives the differences.
#
# ## 6. PandaLM: real judges, human majority as truth
#
# Each PandaLM test item compares two of five 7B models; three humans, GPT-3.5 and
# PandaLM-7B say which response is better (or tie). For a focal model, a label is 1 when its
# response is **strictly** better -- a tie is not a win -- so theta is the model's strict win
# rate. The **truth** is its human-majority win rate over *all* its items (calibration items
# included); GPT-3.5's unparsable verdicts drop those items for that judge only. The table's
# `q0` and `q1` are each judge's error rates on all of a system's items; the cell prints how
# far they move between the evaluated systems.

# %%
panda = load_pandalm()
truth = pandalm_win_rate_truth(data=panda)
print(f"{len(panda)} items")
for judge, g in truth.groupby("judge"):
    spread = {q: f"{g[q].min():.2f} ({g.system[g[q].idxmin()]}) to "
                 f"{g[q].max():.2f} ({g.system[g[q].idxmax()]})" for q in ("q0", "q1")}
    print(f"{judge}: specificity q0 {spread['q0']}; sensitivity q1 {spread['q1']}")
truth

# %% [markdown]
# **`N_SPLITS` random splits** (Section 8.2; the paper uses 100): 10% of the items are the
# calibration set, for both judges and all systems; the rest is the test set. Per split and
# system: the naive score with a Wald interval; the adjusted estimate with the Lang-Reiczigel
# interval from the system's own calibration rows, and from the calibration rows pooled over
# the five systems; the per-system posterior (exact sampler); and the hierarchical model
# (NUTS, partial pooling of q0, q1 across systems) on the first `N_HIER` splits.

# %%
t0 = time.perf_counter()
with warnings.catch_warnings(record=True) as caught:  # shown as plain notes below
    warnings.simplefilter("always")
    study = pandalm_misclassification_study(
        n_splits=N_SPLITS, hierarchical_splits=N_HIER, draws=DRAWS, tune=TUNE, chains=CHAINS,
        random_seed=SEED, data=panda, progressbar=False,
    )
for w in caught:
    print(f"note: {w.message}")
TIMES["PandaLM study"] = time.perf_counter() - t0
print({k: round(v, 1) for k, v in study.timings.items()})
cal_rows = study.counts.assign(rows=study.counts.m0 + study.counts.m1)["rows"]
print(f"calibration rows per (split, system): median {cal_rows.median():.0f}, "
      f"range {cal_rows.min()}-{cal_rows.max()}")
summary = study.summary()
fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
for ax, (judge, g) in zip(axes, summary.groupby("judge")):
    piv = g.pivot(index="system", columns="method", values="bias")
    piv[["naive_wald", "lang_reiczigel", "hierarchical"]].plot.bar(ax=ax, rot=20)
    ax.axhline(0, color="k", lw=0.8)
    ax.set(title=f"judge: {judge}", ylabel="mean bias of the win rate", xlabel="")
fig.suptitle(f"Figure 7 on PandaLM: bias over {N_SPLITS} splits (hierarchical: {N_HIER})")
fig.tight_layout()
plt.show()
summary.pivot_table(index=["judge", "system"], columns="method",
                    values=["bias", "coverage", "mean_length"],
                    sort=False)[["bias", "coverage", "mean_length"]]

# %% [markdown]
# Per-system Lang-Reiczigel against the hierarchical model **on the same splits**
# (`summary(common_splits=True)`), the question being whether pooling the judge's error
# rates across systems shortens the intervals without losing coverage. The pooled
# Lang-Reiczigel row shows what complete pooling would do.

# %%
common = study.summary(common_splits=True)
shown = common[common.method.isin(["lang_reiczigel", "lang_reiczigel_pooled", "hierarchical"])]
compare = shown.pivot_table(index=["judge", "system"], columns="method",
                            values=["coverage", "mean_length"], sort=False)
compare[("mean_length", "hierarchical / LR")] = (
    compare[("mean_length", "hierarchical")] / compare[("mean_length", "lang_reiczigel")])
diag = study.diagnostics
print(f"hierarchical fits: {len(diag)}, median {diag.seconds.median():.1f} s each, "
      f"max R-hat {diag.max_rhat.max():.3f}, "
      f"fits with R-hat > 1.01: {int((diag.max_rhat > 1.01).sum())}, "
      f"divergences: {int(diag.divergences.sum())} in total, "
      f"in {int((diag.divergences > 0).sum())} fits")
compare

# %% [markdown]
# **What to read off these tables** (the cell below prints the numbers of this run):
#
# * how much of the naive bias the adjusted estimate removes, and what that costs in
#   interval length with only the system's own calibration rows;
# * whether the hierarchical model shortens those intervals, and at what coverage: with five
#   systems and a few dozen calibration rows each, the between-system sd of the judge's logit
#   error rates is weakly identified (its posterior is printed with the win-rate table below),
#   so the model can pool only as much as the data allow;
# * whether complete pooling (`lang_reiczigel_pooled`) keeps its coverage: it cannot where a
#   judge's error rate on one system is far from its average, the situation Section 7's
#   assumption rules out;
# * the coverages are conservative by construction: the truth is a fixed finite-population
#   number and each test set is 90% of its rows, so the test-set binomial term (and the whole
#   Wald width) overstates the split-to-split variance.

# %%
piv = summary.pivot_table(index=["judge", "system"], columns="method", sort=False,
                          values=["bias", "coverage", "mean_length"])
worst = piv[("bias", "naive_wald")].abs().groupby(level="judge").idxmax()
for judge, key in worst.items():
    print(f"{judge}: largest naive bias on {key[1]}: "
          f"naive {piv.loc[key, ('bias', 'naive_wald')]:+.3f}, "
          f"adjusted (LR) {piv.loc[key, ('bias', 'lang_reiczigel')]:+.3f}")
lr_len = piv[("mean_length", "lang_reiczigel")]
print(f"Lang-Reiczigel (own calibration rows) mean length: {lr_len.min():.2f}-{lr_len.max():.2f}")
ratio = compare[("mean_length", "hierarchical / LR")]
cov_h = compare[("coverage", "hierarchical")]
print(f"hierarchical / LR length on common splits: {ratio.min():.2f}-{ratio.max():.2f} "
      f"(shorter by {1 - ratio.max():.0%} to {1 - ratio.min():.0%}); "
      f"hierarchical coverage {cov_h.min():.2f}-{cov_h.max():.2f}")
cov_pooled = compare[("coverage", "lang_reiczigel_pooled")]
pooled_ratio = (compare[("mean_length", "lang_reiczigel_pooled")]
                / compare[("mean_length", "lang_reiczigel")])
print(f"complete pooling: length / LR {pooled_ratio.min():.2f}-{pooled_ratio.max():.2f}; "
      "coverage below 0.9 for:")
for (judge, system), c in cov_pooled[cov_pooled < 0.9].items():
    row = truth.set_index(["judge", "system"]).loc[(judge, system)]
    avg = truth[truth.judge == judge][["q0", "q1"]].mean()
    print(f"  {judge} on {system}: coverage {c:.2f}; q0 {row.q0:.2f} (judge's average "
          f"{avg.q0:.2f}), q1 {row.q1:.2f} (average {avg.q1:.2f})")

# %% [markdown]
# **A win-rate table for a paper.** One random 10% calibration split with GPT-3.5 as the
# judge: the closed-form table that `bayesjudge report judgments.csv --calibration
# calibration.csv --by system` prints, and the hierarchical model's posterior win rates, next
# to the human truth (which a real evaluation would not have).

# %%
t0 = time.perf_counter()
# 50 rows carry one of GPT-3.5's 25 unparsable verdicts: dropped (the default warns).
rows = pandalm_judgments(judge="gpt35", data=panda, unparsable="drop")
cal_items = panda["item"][pandalm_calibration_masks(len(panda), 1, 0.1, random_seed=SEED)[0]]
is_cal = rows["item"].isin(cal_items)
judgments = rows.loc[~is_cal, ["system", "item", "judge_label"]]
calibration = rows.loc[is_cal, ["system", "item", "judge_label", "human_label"]]
closed = report_table(judgments, calibration, method="closed-form", by_system=True)
closed = closed.set_index("system")
hier = HierarchicalMisclassificationModel(random_seed=SEED).fit(
    judgments, calibration, method="nuts", draws=DRAWS, tune=TUNE, chains=CHAINS)
post = hier.predict().query("quantity == 'accuracy'").set_index("system")
win_rates = pd.DataFrame({
    "human truth": truth.query("judge == 'gpt35'").set_index("system")["truth"],
    "naive": closed["naive"],
    "adjusted (eq. 5)": closed["adjusted"],
    "LR 95% CI": [f"[{a:.3f}, {b:.3f}]" for a, b in zip(closed["lower"], closed["upper"])],
    "hierarchical mean": post["mean"],
    "95% CrI": [f"[{a:.3f}, {b:.3f}]" for a, b in zip(post["lower"], post["upper"])],
    "m0": closed["m0"], "m1": closed["m1"],
})
print(f"NUTS diagnostics: {hier.diagnostics_}")
TIMES["PandaLM win-rate table"] = time.perf_counter() - t0
win_rates

# %%
closed

# %% [markdown]
# Pairwise differences $\theta_a - \theta_b$ of the win rates, and
# $P(\theta_a > \theta_b \mid \text{data})$ -- what a leaderboard should report instead of a
# ranking of point estimates.

# %%
hier.differences()

# %%
hier.win_table()

# %% [markdown]
# The posterior summary; the `*_logit_sd` rows are the between-system sd of the judge's
# logit error rates, i.e. how much the model lets q0 and q1 differ between systems.

# %%
hier_summary = hier.summarize()
sd_rows = hier_summary.loc[[i for i in hier_summary.index if i.endswith("_logit_sd")]]
print("between-system sd, 95% interval:",
      {k: f"[{lo:.2f}, {hi:.2f}]" for k, lo, hi in
       zip(sd_rows.index, sd_rows["eti95_lb"], sd_rows["eti95_ub"])})
hier_summary

# %%
print("wall-clock seconds:", {k: round(v, 1) for k, v in TIMES.items()})
