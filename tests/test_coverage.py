"""Repeated-simulation coverage of the 90% equal-tailed intervals of every Bayesian model.

For each registered model: simulate data with known truth, fit NUTS (nutpie, one
compiled graph per model -- every replication constructs the model with the same
options, so only the data are swapped), and count how often ``summarize(ci_prob=0.9)``
(``eti90_lb``, ``eti90_ub``) covers the truth. A two-sided binomial test against 0.90
must not reject at ``tests/stochastic.FALSE_ALARM`` shared over the parameters (a right
model fails the file at most once in a thousand runs). Seeds are fixed; nutpie's draws
for a seed still differ between CPUs (numba compiles for the host: 81 vs 82 of 100
covered), so p-values move a little between machines, and R-hat of 2 x 500 draws is
judged over all replications (``rhats_converged``), not by its maximum. All intervals are
NUTS posterior intervals (no Laplace approximation).

The 95% studies at larger sizes live in ``test_davidson.py`` and
``test_misclassification_model.py``; these complement them (90%, smaller data, and the
hierarchical model, which has no other coverage study).

Designs (``STUDIES``; a model without an entry is simulated from its
``example_data(random_seed=r)``, whose ``truth`` must then be exact):

* ``DavidsonAggregator``: ``simulate_davidson_votes`` (labels drawn from eq. 4 given the
  votes, so the truth is exact), 100 labelled items x 5 votes, beta = 2, eta0 = -0.5.
  Not ``example_data``: it forces its first three labels to -1, 0, +1 so that every
  class is present, which biases beta down (90% coverage 0.83 in 100 replications).
* ``MisclassificationModel``: ``simulate_misclassification``, theta = 0.6, q0 = 0.85,
  q1 = 0.9, n = 300, m0 = m1 = 40 (the example's design).
* ``HierarchicalMisclassificationModel`` (partial pooling): simulation-based
  calibration -- every replication draws (theta_k, mu, tau, z_k) from the prior the
  model is fitted with, so the expected coverage is exactly 0.90 for every parameter,
  hyperparameters included. At one fixed truth it is not: with all systems sharing
  q0, q1 (tau = 0, the example's design) the judge-level intervals cover 0.98. The
  prior is the default with the judge-level logit means centred on a good judge
  (Normal(1.5, 0.5) and Normal(2, 0.5) instead of Logistic(0, 1), which would make
  half the simulated judges worse than chance, where the label-swapped mode is a
  separate posterior mode) and sds HalfNormal(0.5). 4 systems, n = 200, m0 = m1 = 20.
  200 replications: the first 100 happen to cover judge_specificity only 81-82 times
  (p ~ 0.01), 200 give 0.865 and 400 give 0.882 with uniform SBC ranks (KS p = 0.98).

Time (2 shared cores): ~10-15 s of nutpie compilation per model, then ~0.12 s
(Davidson, single; 150 replications each) and ~0.55 s (hierarchical, 200) per fit:
about 3 minutes for the file.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit
from stochastic import coverage_consistent, rhats_converged

from bayesjudge import Prior, registered_models
from bayesjudge.datasets import simulate_davidson_votes, simulate_misclassification
from bayesjudge.engine import ConvergenceWarning

MODELS = registered_models()
#: Models whose interval coverage is studied elsewhere, and why not here.
ELSEWHERE = {
    # The example data are soft probabilities: the soft likelihood (eq. 2) is a
    # cross-entropy, not a generative model, so its intervals have no coverage to
    # check, and the example's truth (sigma_k = 0.5, 1, 2) is not in the identified
    # parametrisation (sum log sigma_k = 0). NUTS recovery / coverage on hard outcomes:
    # tests/test_bradley_terry_slow.py.
    "BradleyTerry": "tests/test_bradley_terry_slow.py",
    "BTSigma": "tests/test_bradley_terry_slow.py",
    "DavidsonBT": "tests/test_bradley_terry_slow.py",
    # Graded verdicts: recovery and 95% coverage of the skills on simulated ordered-logit
    # data (MAP with Laplace intervals, 30 data sets) in tests/test_ordinal_slow.py.
    "OrdinalBT": "tests/test_ordinal_slow.py",
    # The confusion matrices are (judge, reference outcome, verdict) arrays; recovery and
    # 90% coverage of skills and confusion entries on simulated battles with a good, a
    # left-biased and a chance judge: tests/test_anchored_recovery.py.
    "AnchoredBT": "tests/test_anchored_recovery.py",
}
NAMES = sorted(n for n in MODELS if n not in ELSEWHERE)
LEVEL = 0.9


@dataclass
class Study:
    """``simulate(rep) -> (fit_args, truth)``; ``truth`` maps summary names to values."""

    simulate: Callable[[int], tuple[tuple, dict]]
    reps: int = 100
    options: dict = field(default_factory=dict)
    # a loop of refits: numba nutpie (compiled once, ~8 s) beats 'auto''s per-fit
    # choice (nutpie on the compiled C functions, ~35 us of callback per gradient)
    nuts: dict = field(default_factory=lambda: {"chains": 2, "draws": 500, "tune": 500,
                                                "sampler": "nutpie"})


def _davidson(rep: int):
    truth = {"margin_scale": 2.0, "tie_logit": -0.5}
    for attempt in range(10):  # every label class must be present (fit refuses otherwise)
        votes, labels = simulate_davidson_votes(
            100, 5, beta=truth["margin_scale"], eta0=truth["tie_logit"],
            random_seed=[7000, rep, attempt])
        if labels["label"].nunique() == 3:
            return (votes, labels), truth
    raise AssertionError("no simulated calibration set with all three labels")


def _misclassification(rep: int):
    truth = {"accuracy": 0.6, "specificity": 0.85, "sensitivity": 0.9}
    tables = simulate_misclassification(
        truth["accuracy"], truth["specificity"], truth["sensitivity"], n=300, m0=40, m1=40,
        random_seed=[8000, rep])
    return tables, truth


#: Prior of the hierarchical SBC study (the fit uses the same, see the module docstring).
HIER_PRIORS = {
    "specificity_logit_mean": Prior("Normal", mu=1.5, sigma=0.5),
    "sensitivity_logit_mean": Prior("Normal", mu=2.0, sigma=0.5),
    "specificity_logit_sd": Prior("HalfNormal", sigma=0.5),
    "sensitivity_logit_sd": Prior("HalfNormal", sigma=0.5),
}


def _hierarchical(rep: int, k: int = 4):
    rng = np.random.default_rng([9000, rep])
    theta = rng.uniform(size=k)  # accuracy ~ Beta(1, 1)
    truth, rates = {"accuracy": theta}, {}
    for name in ("specificity", "sensitivity"):
        mean, sd = HIER_PRIORS[f"{name}_logit_mean"], HIER_PRIORS[f"{name}_logit_sd"]
        mu = rng.normal(mean.params["mu"], mean.params["sigma"])
        tau = abs(rng.normal(0.0, sd.params["sigma"]))
        rates[name] = expit(mu + tau * rng.normal(size=k))  # non-centred, as the model
        truth[f"judge_{name}"] = expit(mu)
        truth[f"{name}_logit_sd"] = tau
    tables = simulate_misclassification(
        theta, rates["specificity"], rates["sensitivity"], n=200, m0=20, m1=20,
        random_seed=rng)
    return tables, truth


def _preference(rep: int):
    """Simulation-based calibration: (mu, kappa) drawn from the default priors each time.

    At the example's one fixed truth (kappa = 2 with 1-4 annotators per item) the
    Gamma(1.5, 0.1) prior on kappa pulls the posterior and 90% intervals covered it 75
    times in 100; drawn from the prior the fitted model uses, coverage is exactly 0.90
    in expectation (as for the hierarchical misclassification model).
    """
    rng = np.random.default_rng([9100, rep])
    mu, kappa = rng.beta(1, 1), rng.gamma(1.5, 1 / 0.1)
    p_star = rng.beta(max(mu * kappa, 1e-3), max((1 - mu) * kappa, 1e-3), size=80)
    m = rng.integers(1, 5, size=80)
    rows = [(f"item-{i:03d}", f"rater-{j}", "B" if rng.random() < p_star[i] else "A")
            for i in range(80) for j in range(m[i])]
    table = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    return (table,), {"population_mean": mu, "concentration": kappa}


def _from_example(name: str) -> Study:
    def simulate(rep: int):
        example = MODELS[name].example_data(random_seed=10_000 + rep)
        return example.fit_args, example.truth
    return Study(simulate)


STUDIES = {
    "DavidsonAggregator": Study(_davidson, reps=150),
    "MisclassificationModel": Study(_misclassification, reps=150),
    "PreferenceDistribution": Study(_preference, reps=100, options={"ties": False}),
    "HierarchicalMisclassificationModel": Study(
        _hierarchical, reps=200, options={"priors": HIER_PRIORS}),
}


def _rows(summary: pd.DataFrame, name: str, truth) -> pd.DataFrame:
    """Summary rows of parameter ``name`` (scalar, or ``name[label]`` in model order)."""
    rows = summary.loc[[name]] if name in summary.index else summary[
        summary.index.str.startswith(f"{name}[")]
    assert len(rows) == np.size(truth), f"{name}: {len(rows)} summary rows for {truth!r}"
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_nuts_90_percent_intervals_cover_the_truth(name):
    from bayesjudge.engine import compiled

    study = STUDIES.get(name) or _from_example(name)
    cls = MODELS[name]
    records, engines, n_engines, divergences = [], set(), None, 0
    start = time.perf_counter()
    for rep in range(study.reps):
        fit_args, truth = study.simulate(rep)
        with warnings.catch_warnings():
            # 2 x 500 draws can fall short of the ESS 400 the library asks for
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = cls(**study.options, random_seed=rep).fit(
                *fit_args, method="nuts", **study.nuts)
        if n_engines is None:
            n_engines = len(compiled._ENGINES)
        engines.add(id(model._engine))
        divergences += model.diagnostics_["divergences"]
        summary = model.summarize(ci_prob=LEVEL)
        for param, value in truth.items():
            rows = _rows(summary, param, value)
            value = np.atleast_1d(value)
            lower, upper = rows["eti90_lb"].to_numpy(), rows["eti90_ub"].to_numpy()
            covered = (lower <= value) & (value <= upper)
            records += [{"rep": rep, "param": param, "covered": c, "r_hat": r}
                        for c, r in zip(covered, rows["r_hat"])]
    elapsed = time.perf_counter() - start
    res = pd.DataFrame(records)
    table = res.groupby("param", sort=False).agg(
        covered=("covered", "sum"), trials=("covered", "size"), max_r_hat=("r_hat", "max"))
    table["coverage"] = table["covered"] / table["trials"]
    table["p_value"] = [stats.binomtest(int(c), int(n), LEVEL).pvalue
                        for c, n in zip(table["covered"], table["trials"])]
    table["consistent"] = [coverage_consistent(c, n, LEVEL, n_checks=len(table))
                           for c, n in zip(table["covered"], table["trials"])]
    # shown with -s, before the assertions so a failure still reports the numbers
    print(f"\n{name}: {study.reps} replications, NUTS {study.nuts}, {elapsed:.0f} s, "
          f"{divergences} divergences\n{table.to_string()}")

    assert len(engines) == 1 and len(compiled._ENGINES) == n_engines  # one compiled graph
    assert rhats_converged(res["r_hat"]), res["r_hat"].describe()
    low = table[~table["consistent"]]
    assert low.empty, f"{name}: 90% coverage inconsistent with 0.90:\n{low.to_string()}"
