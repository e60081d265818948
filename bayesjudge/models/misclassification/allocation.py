"""Bayesian allocation of a calibration budget between the two human classes.

The Bayesian counterpart of Algorithm 1 (Appendix A) of Lee, Zeng, Jeong, Sohn &
Lee (2025), "How to Correctly Report LLM-as-a-Judge Evaluations",
arXiv:2511.21140: given a pilot calibration set and the test counts, choose how
many human-'incorrect' (m0) and human-'correct' (m1) items to label so that the
expected posterior interval of the accuracy theta is narrowest (preposterior
analysis with the exact posterior of
:func:`bayesjudge.models.misclassification.posterior.bayes_posterior_theta`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesjudge.constants import CI_PROB
from bayesjudge.data import (
    DataValidationError,
    MisclassificationCounts,
    validate_calibration,
    validate_judgment_counts,
)
from bayesjudge.data.frames import as_pandas
from bayesjudge.models.misclassification.posterior import bayes_posterior_theta

__all__ = ["BayesianAllocation", "bayesian_allocation"]


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
       :func:`~bayesjudge.models.misclassification.posterior.bayes_posterior_theta`;

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
    pilot_calibration = as_pandas(pilot_calibration)  # polars, pyarrow, ...: pandas
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
        # independent importance draws per simulation: with shared ones (the pilot's
        # q0 bank at m0 = m0_pilot, the test count's p bank everywhere) their error does
        # not average out over the simulations and `se` understated it (E[width] 5%
        # off a grid computation at se 0.5%)
        share_draws=False,
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
