"""Misclassification-adjusted accuracy of an LLM judge, as a Bayesian model.

Implements the model behind Sections 3-5 of
``misclassification_adjusted_reporting.txt`` (Lee et al., "How to Correctly
Report LLM-as-a-Judge Evaluations"): the judge's 'correct' rate on the test set
is p = theta q1 + (1 - theta)(1 - q0) (Section 5.1), the sensitivity q1 and
specificity q0 (eq. 3) are learned from a human-labelled calibration set, and
the true accuracy theta (eq. 1) gets a posterior that carries the uncertainty of
both data sets -- the Bayesian counterpart of the Rogan-Gladen estimate (eq. 5)
and the Lang-Reiczigel interval (eq. 6). :func:`bayesian_allocation` is the
Bayesian counterpart of Algorithm 1 (Appendix A): it splits a calibration budget
between the two human classes by preposterior analysis.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
from scipy.stats import binom

from bayesjudge.base import CI_PROB, BayesianModel, FitData
from bayesjudge.inference import warn_user
from bayesjudge.data import (
    DataValidationError,
    MisclassificationCounts,
    check_calibration_classes,
    validate_calibration,
    validate_judgment_counts,
    validate_misclassification,
)
from bayesjudge.priors import Prior, resolve_priors

OBS = ("test", "calibration_0", "calibration_1")
"""The three binomial observations: judged_pos of n test items (prob. p), tn of
the m0 human-'incorrect' calibration items (q0), tp of the m1 human-'correct' ones (q1)."""
PROBABILITIES = ("accuracy", "specificity", "sensitivity")
# Warnings point at the first frame outside the package (the user's fit call),
# however deep inside bayesjudge they are raised.


class IdentifiabilityWarning(UserWarning):
    """The calibration data say q0 + q1 <= 1: theta is (nearly) not identified."""


GOOD_JUDGE_START = 0.88
"""Initial q0 and q1 of the optimiser and of every NUTS chain (logit 2): a better-than-chance judge.

The label-swapped solution (theta -> 1 - theta, q0 -> 1 - q1, q1 -> 1 - q0)
fits the test counts equally well; only the calibration counts tell the two
apart. With several systems it is a separate local mode behind a barrier at
q0 + q1 = 1 (there all judged rates would have to be equal), and chains started
at PyMC's default q = 0.5 end up on either side (R-hat 1.7 in a 4-system
example). Starting on the better-than-chance side keeps every chain in the mode
the calibration data support.
"""


def judged_rate(theta, q0, q1):
    """Probability that the judge says 'correct': p = theta q1 + (1 - theta)(1 - q0)."""
    return theta * q1 + (1 - theta) * (1 - q0)


def probability_parameter(prior: Prior, name: str, dims=None, start: float | None = None):
    """A probability with ``prior``; ``Flat`` means flat on the logit scale.

    A flat prior on the logit is the improper Haldane prior Beta(0, 0) on the
    probability; its MAP is the maximum-likelihood estimate (as is the MAP under
    Beta(1, 1): the engine's MAP has no Jacobian term). ``start`` is the initial
    value of the probability (see :data:`GOOD_JUDGE_START`).
    """
    if prior.dist == "Flat":
        logit = pm.Flat(f"{name}_logit", dims=dims)
        set_start(logit, None if start is None else np.log(start / (1 - start)))
        return pm.Deterministic(name, pm.math.invlogit(logit), dims=dims)
    rv = prior.create(name, dims=dims)
    set_start(rv, start)
    return rv


def set_start(rv, value: float | None) -> None:
    """Initial value of a free variable (its shape from its dims: no graph evaluation)."""
    if value is not None:
        model = pm.modelcontext(None)
        shape = tuple(len(model.coords[d]) for d in model.named_vars_to_dims.get(rv.name, ()))
        model.set_initval(rv, np.full(shape, float(value)))


def counts_arrays(counts: MisclassificationCounts) -> tuple[np.ndarray, np.ndarray]:
    """Successes and trials, shape (n_systems, 3), columns in :data:`OBS` order."""
    successes = np.stack([counts.judged_pos, counts.tn, counts.tp], axis=-1)
    trials = np.stack([counts.n, counts.m0, counts.m1], axis=-1)
    return successes, trials


def binomial_loglik(params: Mapping[str, np.ndarray], successes: np.ndarray, trials: np.ndarray) -> np.ndarray:
    """Log-likelihood of each binomial in :data:`OBS` order (last axis), numpy.

    Includes the binomial coefficient, so the values sum to the log-likelihood of
    the counts; ``params`` carry leading (chain, draw) axes.
    """
    theta, q0, q1 = (np.asarray(params[k], dtype=float) for k in PROBABILITIES)
    prob = np.stack([judged_rate(theta, q0, q1), q0, q1], axis=-1)
    return binom.logpmf(successes, trials, prob)


def as_counts(judgments, calibration, by_system: bool) -> MisclassificationCounts:
    """Tables or ready counts -> :class:`MisclassificationCounts` (validated once)."""
    if isinstance(judgments, MisclassificationCounts):
        if calibration is not None:
            raise TypeError("pass either MisclassificationCounts or the two tables, not both.")
        return judgments
    if calibration is None:
        raise TypeError(
            "fit needs the judgments table and the calibration table (or counts: "
            "use fit_counts(judged_pos, n, tp, m1, tn, m0))."
        )
    return validate_misclassification(judgments, calibration, by_system=by_system)


def warn_if_not_identified(q0_hat: np.ndarray, q1_hat: np.ndarray, systems) -> None:
    """Warn when the calibration estimates give q0_hat + q1_hat <= 1."""
    total = np.asarray(q0_hat, dtype=float) + np.asarray(q1_hat, dtype=float)
    bad = total <= 1
    if bad.any():
        names = np.asarray(systems)[bad]
        shown = ", ".join(
            f"q0_hat + q1_hat = {t:.3f}" if len(total) == 1 else f"{s}: q0_hat + q1_hat = {t:.3f}"
            for s, t in zip(names, total[bad])
        )
        warn_user(
            f"calibration estimates give q0_hat + q1_hat <= 1 ({shown}): on the calibration "
            f"set the judge is no better than chance, so the data barely identify the "
            f"accuracy theta and its posterior will be wide (possibly bimodal). Check that "
            f"judge_label = 1 and human_label = 1 both mean 'correct' (swapped labels push "
            f"the sum below 1), collect more calibration labels, or use a better judge.",
            IdentifiabilityWarning,
        )


def posterior_table(
    draws: Mapping[str, np.ndarray],
    ci_prob: float,
    systems=None,
    point: Mapping[str, np.ndarray] | None = None,
    include_draws: bool = False,
) -> pd.DataFrame:
    """Mean, sd, median and equal-tailed interval of each quantity (and system).

    ``draws[name]`` has shape (samples,) or (samples, n_systems).
    """
    tail = (1 - ci_prob) / 2
    rows = []
    for name, x in draws.items():
        x = x.reshape(x.shape[0], -1)
        lo, med, hi = np.quantile(x, [tail, 0.5, 1 - tail], axis=0)
        for k in range(x.shape[1]):
            row = {"quantity": name}
            if systems is not None:
                row = {"system": systems[k], **row}
            row.update(mean=x[:, k].mean(), sd=x[:, k].std(ddof=1), median=med[k], lower=lo[k], upper=hi[k])
            if point is not None:
                row["map"] = float(np.ravel(point[name])[k])
            if include_draws:
                row["draws"] = x[:, k].copy()
            rows.append(row)
    return pd.DataFrame(rows)


class MisclassificationModel(BayesianModel):
    r"""Bias-adjusted accuracy of one evaluated system from an imperfect LLM judge.

    With test counts (``judged_pos`` of ``n``) and calibration confusion counts
    (``tp`` of ``m1`` human-'correct' items, ``tn`` of ``m0`` human-'incorrect'
    items):

    .. math::

        \theta \sim \mathrm{Beta}(1, 1),\quad q_0 \sim \mathrm{Beta}(1, 1),\quad
        q_1 \sim \mathrm{Beta}(1, 1)

        tp \sim \mathrm{Bin}(m_1, q_1),\qquad tn \sim \mathrm{Bin}(m_0, q_0)  \quad (3)

        \text{judged\_pos} \sim \mathrm{Bin}(n, p),\qquad
        p = \theta q_1 + (1 - \theta)(1 - q_0)                              \quad (\S 5.1)

    Names: ``accuracy`` (theta, eq. 1), ``specificity`` (q0), ``sensitivity``
    (q1), deterministic ``judged_rate`` (p, the quantity the naive score p_hat of
    eq. 2 estimates). Nothing restricts q0 + q1 > 1: the calibration data decide
    (a warning is issued when their estimates say q0_hat + q1_hat <= 1).

    Priors. The default is uniform, Beta(1, 1), on all three probabilities.
    Uniform is the reference choice because (i) it is what the established
    implementation uses (R ``prevalence::truePrev`` with ``prior = c(1, 1)``,
    against which this model is tested); (ii) its posterior means of q0, q1 from
    the calibration counts alone, (tn + 1)/(m0 + 2) and (tp + 1)/(m1 + 2), are
    the Laplace-smoothed q~ of eq. (7) and Algorithm 1; (iii) a prior favouring
    good judges (q > 1/2) would pull q0_hat + q1_hat up and thereby bias theta
    toward p_hat's side of the Rogan-Gladen correction whenever the calibration
    set is small -- exactly when the prior matters. The posterior is proper for
    every data set, including a perfect calibration (tp = m1).

    ``priors="flat"`` puts flat priors on the logits; then ``method="map"``
    returns the maximum-likelihood estimate, which is the Rogan-Gladen estimate
    (eq. 5) with q0_hat = tn/m0, q1_hat = tp/m1 whenever that lies in (0, 1):
    the likelihood factorises into Bin(judged_pos | n, p) Bin(tp | m1, q1)
    Bin(tn | m0, q0), each factor is maximised separately by p = judged_pos/n,
    q1 = tp/m1, q0 = tn/m0, and (theta, q0, q1) -> (p, q0, q1) is one-to-one when
    q0 + q1 != 1, so theta_hat = (p_hat + q0_hat - 1)/(q0_hat + q1_hat - 1).
    The default Beta(1, 1) priors give the same MAP (the engine's MAP is the
    mode of the constrained posterior, no Jacobian); use NUTS for the posterior.

    Pointwise log-likelihood. The observation unit is one binomial, dim ``obs``
    = (``test``, ``calibration_0``, ``calibration_1``): the test count, the
    human-'incorrect' calibration count tn and the human-'correct' count tp,
    each with its binomial coefficient (the three sum to the full
    log-likelihood). PSIS-LOO therefore leaves out a whole data source; compare
    only fits of the same counts.

    Parameters
    ----------
    priors : None, "flat" or dict
        Priors of ``accuracy``, ``specificity``, ``sensitivity`` (default
        ``Prior("Beta", alpha=1, beta=1)`` each; any distribution on [0, 1], or
        ``Prior("Flat")`` for flat on the logit). ``"flat"``: all three flat.
    random_seed : int
        Seeds NUTS and the Laplace draws.

    Attributes
    ----------
    map_ : dict
        MAP values (``accuracy``, ``specificity``, ``sensitivity``, ``judged_rate``).
    idata_ : xarray.DataTree
        posterior, log_likelihood (``counts``, dim ``obs``), observed_data
        (``counts`` and ``trials``, dim ``obs``).
    counts_ : MisclassificationCounts
        The six counts the model was fitted to.

    Examples
    --------
    >>> model = MisclassificationModel(priors="flat").fit_counts(
    ...     judged_pos=480, n=1000, tp=90, m1=100, tn=70, m0=100)
    >>> round(float(model.map_["accuracy"]), 4)   # Rogan-Gladen: (0.48 + 0.7 - 1) / 0.6
    0.3
    """

    def __init__(self, priors: None | str | dict = None, random_seed: int | None = 0):
        self.priors = priors
        self.random_seed = random_seed

    _summary_vars = PROBABILITIES

    def _resolved_priors(self) -> dict[str, Prior]:
        return resolve_priors(self.priors, {k: Prior("Beta", alpha=1, beta=1) for k in PROBABILITIES})

    # -- pieces of the contract ---------------------------------------------------
    def _prepare(self, judgments, calibration=None) -> FitData:
        self._resolved_priors()  # fail on bad priors before any validation or compile
        counts = as_counts(judgments, calibration, by_system=False)
        if len(counts) != 1:
            raise DataValidationError(
                f"MisclassificationModel evaluates one system, got counts for {len(counts)} "
                f"({list(counts.systems)[:5]}); fit one model per system or use "
                f"HierarchicalMisclassificationModel."
            )
        check_calibration_classes(counts)
        warn_if_not_identified(counts.q0_hat, counts.q1_hat, counts.systems)
        successes, trials = (a[0] for a in counts_arrays(counts))
        return FitData(
            data={"successes": successes, "trials": trials},
            coords={"obs": list(OBS)},
            observed={"counts": (("obs",), successes), "trials": (("obs",), trials)},
            extra={"counts": counts},
        )

    def _build(self, fd: FitData) -> pm.Model:
        priors = self._resolved_priors()
        with pm.Model(coords={"obs": list(OBS)}) as model:
            successes = pm.Data("successes", fd.data["successes"], dims="obs")
            trials = pm.Data("trials", fd.data["trials"], dims="obs")
            theta = probability_parameter(priors["accuracy"], "accuracy")
            q0 = probability_parameter(priors["specificity"], "specificity", start=GOOD_JUDGE_START)
            q1 = probability_parameter(priors["sensitivity"], "sensitivity", start=GOOD_JUDGE_START)
            p = pm.Deterministic("judged_rate", judged_rate(theta, q0, q1))
            pm.Binomial("counts", n=trials, p=pt.stack([p, q0, q1]), observed=successes, dims="obs")
        return model

    def _pointwise_loglik(self, params, fd):
        return {"counts": binomial_loglik(params, fd.data["successes"], fd.data["trials"])}


    # -- public ----------------------------------------------------------------------
    def fit_counts(self, judged_pos: int, n: int, tp: int, m1: int, tn: int, m0: int, **fit_kwargs):
        """Fit to the six counts directly (the model's sufficient statistics).

        Parameters
        ----------
        judged_pos, n : int
            Test items the judge called 'correct', out of ``n``.
        tp, m1 : int
            Human-'correct' calibration items the judge called 'correct', out of ``m1``.
        tn, m0 : int
            Human-'incorrect' calibration items the judge called 'incorrect', out of ``m0``.
        **fit_kwargs
            ``method``, ``draws``, ``tune``, ``chains``, ... as in :meth:`fit`.
        """
        return self.fit(validate_judgment_counts(judged_pos, n, tp, m1, tn, m0), **fit_kwargs)

    @property
    def counts_(self) -> MisclassificationCounts:
        """The counts the model was fitted to (also after :meth:`load`)."""
        self._check_fitted()
        fd = getattr(self, "_fit_data", None)
        if fd is not None:
            return fd.extra["counts"]
        obs = self.idata_["observed_data"]
        s = np.asarray(obs["counts"].values, dtype=np.int64).reshape(-1, 3)
        t = np.asarray(obs["trials"].values, dtype=np.int64).reshape(-1, 3)
        systems = obs["system"].values if "system" in obs.coords else ["all"]
        return MisclassificationCounts(
            pd.Index(systems, name="system"), s[:, 0], t[:, 0], s[:, 2], t[:, 2], s[:, 1], t[:, 1]
        )

    def predict(self, ci_prob: float = CI_PROB, include_draws: bool = False) -> pd.DataFrame:
        """Posterior of the accuracy theta and of the judged rate p.

        Parameters
        ----------
        ci_prob : float
            Mass of the equal-tailed credible interval.
        include_draws : bool
            Add a ``draws`` column holding each quantity's posterior draws
            (Laplace draws for MAP fits).

        Returns
        -------
        pandas.DataFrame
            Rows ``accuracy`` and ``judged_rate`` (column ``quantity``); columns
            ``mean``, ``sd``, ``median``, ``lower``, ``upper`` and, for MAP fits,
            ``map`` (the optimum).
        """
        self._check_fitted()
        post = self.idata_["posterior"].to_dataset()
        draws = {k: post[k].values.reshape(-1) for k in ("accuracy", "judged_rate")}
        point = self.map_ if self.method_ == "map" else None
        return posterior_table(draws, ci_prob, point=point, include_draws=include_draws)


# --------------------------------------------------------------------------- allocation


@dataclass(frozen=True)
class BayesianAllocation:
    """Result of :func:`bayesian_allocation`.

    Attributes
    ----------
    m0, m1 : int
        Chosen human-'incorrect' and human-'correct' calibration sizes (pilot
        included), ``m0 + m1 == m``.
    expected_width : float
        Expected posterior ``ci_prob`` interval width of theta at (m0, m1).
    curve : pandas.DataFrame
        The whole search: ``m0``, ``m1``, ``expected_width``, ``se`` (Monte Carlo
        standard error of the expected width).
    """

    m0: int
    m1: int
    expected_width: float
    curve: pd.DataFrame


def _pilot_counts(pilot_calibration) -> tuple[int, int, int, int]:
    if isinstance(pilot_calibration, pd.DataFrame):
        c = validate_calibration(pilot_calibration)
        return tuple(int(c[k].iloc[0]) for k in ("tp", "m1", "tn", "m0"))
    if isinstance(pilot_calibration, Mapping):
        missing = {"tp", "m1", "tn", "m0"} - set(pilot_calibration)
        if missing:
            raise DataValidationError(
                f"pilot_calibration is missing count(s) {sorted(missing)}; pass a calibration "
                f"table or a mapping with keys tp, m1, tn, m0."
            )
        return tuple(int(pilot_calibration[k]) for k in ("tp", "m1", "tn", "m0"))
    raise DataValidationError(
        f"pilot_calibration must be a calibration DataFrame (item, judge_label, human_label) "
        f"or a mapping of counts tp, m1, tn, m0, got {type(pilot_calibration).__name__}."
    )


def _posterior_sample(c: MisclassificationCounts, size: int, rng: np.random.Generator):
    """Draws of (theta, q0, q1) from the uniform-prior posterior by sampling-importance-resampling.

    Proposal: the Beta factors of the posterior in (p, q0, q1) coordinates;
    weight 1[0 <= theta <= 1] / |q0 + q1 - 1| (the Jacobian of theta -> p).
    """
    pool = 50 * size
    q0 = rng.beta(c.tn[0] + 1, c.m0[0] - c.tn[0] + 1, pool)
    q1 = rng.beta(c.tp[0] + 1, c.m1[0] - c.tp[0] + 1, pool)
    p = rng.beta(c.judged_pos[0] + 1, c.n[0] - c.judged_pos[0] + 1, pool)
    youden = q0 + q1 - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = (p + q0 - 1) / youden
        w = np.where((theta >= 0) & (theta <= 1), 1 / np.abs(youden), 0.0)
    w[~np.isfinite(w)] = 0.0
    if w.sum() == 0:
        raise DataValidationError(
            "the pilot posterior puts no mass on theta in [0, 1] (check that the test and "
            "pilot counts belong to the same judge and label coding)."
        )
    pick = rng.choice(pool, size=size, p=w / w.sum())
    return theta[pick], q0[pick], q1[pick]


def bayesian_allocation(
    pilot_calibration: pd.DataFrame | Mapping[str, int],
    m: int,
    n_test: int,
    judged_pos: int,
    *,
    ci_prob: float = CI_PROB,
    n_sims: int = 200,
    grid_size: int = 41,
    n_draws: int = 2000,
    random_seed: int | None = 0,
) -> BayesianAllocation:
    r"""Split a calibration budget between the classes by preposterior analysis.

    The Bayesian counterpart of Algorithm 1 (Appendix A). Given a pilot
    calibration set (``tp`` of ``m1_pilot``, ``tn`` of ``m0_pilot``) and the test
    count (``judged_pos`` of ``n_test``), for each candidate ``m0`` on a grid
    (``m1 = m - m0``, never below the pilot sizes):

    1. draw (theta, q0, q1) ~ posterior(pilot, test) under uniform priors
       (``n_sims`` draws, sampling-importance-resampling);
    2. simulate the future calibration counts
       tn' ~ Bin(m0 - m0_pilot, q0), tp' ~ Bin(m1 - m1_pilot, q1);
    3. compute the posterior ``ci_prob`` interval width of theta given the pilot
       plus simulated counts and the observed test count, by the exact
       importance sampler
       :func:`bayesjudge.experiments.misclassification.bayes_posterior_theta`;

    and return the m0 minimising the average width, E[width | m0]. The test
    count is already observed and stays fixed. Common random numbers make the
    curve smooth in m0: every grid point reuses the same parameter draws, and
    the future items are one nested Bernoulli sequence per class (m0 + 1
    items extend the m0-item calibration set by one).

    Parameters
    ----------
    pilot_calibration : DataFrame or mapping
        Calibration table (``item``, ``judge_label``, ``human_label``) or counts
        ``{"tp": .., "m1": .., "tn": .., "m0": ..}``.
    m : int
        Total calibration budget, pilot included (as in Algorithm 1).
    n_test, judged_pos : int
        Test size and the number of test items the judge called 'correct'.
    ci_prob : float
        Credible-interval mass whose width is minimised.
    n_sims : int
        Preposterior simulations per grid point.
    grid_size : int
        At most this many m0 values, evenly spaced over the feasible range.
    n_draws : int
        Importance draws per simulated posterior.
    random_seed : int
        Seed of the only random generator used.

    Returns
    -------
    BayesianAllocation
        ``m0``, ``m1``, ``expected_width`` and the full ``curve``.
    """
    from bayesjudge.experiments.misclassification import bayes_posterior_theta

    tp, m1p, tn, m0p = _pilot_counts(pilot_calibration)
    c = validate_judgment_counts(judged_pos, n_test, tp, m1p, tn, m0p)
    if int(m) != m or m < m0p + m1p:
        raise DataValidationError(
            f"m (total budget, pilot included) must be an integer >= the pilot size "
            f"m0_pilot + m1_pilot = {m0p + m1p}, got m={m!r}."
        )
    if n_sims < 2 or grid_size < 2:
        raise ValueError(f"n_sims and grid_size must be >= 2, got {n_sims}, {grid_size}.")
    rng = np.random.default_rng(random_seed)
    free = int(m) - m0p - m1p
    theta, q0, q1 = _posterior_sample(c, n_sims, rng)
    # Nested future items per simulation: column a holds the count among the first a items.
    zero = np.zeros((n_sims, 1), dtype=np.int64)
    new_tn = np.hstack([zero, np.cumsum(rng.random((n_sims, free)) < q0[:, None], axis=1)])
    new_tp = np.hstack([zero, np.cumsum(rng.random((n_sims, free)) < q1[:, None], axis=1)])
    extra0 = np.unique(np.round(np.linspace(0, free, min(grid_size, free + 1))).astype(np.int64))
    extra1 = free - extra0
    post = bayes_posterior_theta(
        judged_pos, n_test,
        tp + new_tp[:, extra1].T, (m1p + extra1)[:, None],
        tn + new_tn[:, extra0].T, (m0p + extra0)[:, None],
        n_draws=n_draws, ci_prob=ci_prob, rng=rng,
    )
    width = np.asarray(post.upper) - np.asarray(post.lower)  # (grid, n_sims)
    curve = pd.DataFrame({
        "m0": m0p + extra0, "m1": m1p + extra1,
        "expected_width": np.nanmean(width, axis=1),
        "se": np.nanstd(width, axis=1, ddof=1) / np.sqrt(np.isfinite(width).sum(axis=1)),
    })
    best = int(np.argmin(curve["expected_width"].to_numpy()))
    return BayesianAllocation(
        int(curve["m0"].iloc[best]), int(curve["m1"].iloc[best]),
        float(curve["expected_width"].iloc[best]), curve,
    )
