"""Noise-corrected alignment error of a probabilistic judge against the preference distribution.

Li, Li, Huang et al. (2025), "Judging with Confidence: Calibrating Autoraters to
Preference Distributions", arXiv:2510.00263, measure alignment as the MSE between
a judge's probability and p-hat = k/m (appendix C.1). By their Lemma 2 that MSE
carries a noise floor mean_i p*_i(1 - p*_i)/m_i no judge can beat; this module
reports the error against p* itself, E[(p - p*)^2], with a credible interval
from a fitted :class:`~bayesjudge.models.preference.model.PreferenceDistribution`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize, special  # not scipy.stats: ~1 s to import

from bayesjudge.base import CI_PROB
from bayesjudge.data import DataValidationError, check_ci_prob, show_values
from bayesjudge.data.annotations import align_outputs, validate_judge_outputs
from bayesjudge.data.frames import as_pandas
from bayesjudge.engine.messages import warn_user
from bayesjudge.metrics import mse_to_phat
from bayesjudge.models.preference.model import PreferenceDistribution
from bayesjudge.models.preference.posterior import beta_raw_moments, unique_rows

__all__ = ["alignment_error"]

MIN_ITEMS = 30  # the interval's normal approximation over items (docstring)


def alignment_error(
    judge_prob: pd.DataFrame,
    preference_model: PreferenceDistribution,
    *,
    ci_prob: float = CI_PROB,
) -> pd.Series:
    r"""Noise-corrected alignment error mean_i (p_i - p*_i)^2 of a judge, with an interval.

    The paper's alignment metric (Li et al. 2025, appendix C.1) is the MSE to
    p-hat = k/m (with ties: p-hat = (k_B + k_tie/2)/m, a tie counting half a
    vote each way as in :func:`bayesjudge.metrics.metric_table`, and p* read as
    p*_B + p*_tie/2, so p*(1 - p*) below becomes the variance of one annotation,
    p*_B + p*_tie/4 - (p*_B + p*_tie/2)^2). By Lemma 2, p-hat is unbiased with
    variance p*(1 - p*)/m, so
    for a judge probability p

    .. math::

        E[(p - \hat p)^2 \mid p^*] = (p - p^*)^2 + p^*(1 - p^*)/m ,

    and even the perfect judge p = p* scores the *noise floor* mean_i
    p*_i(1 - p*_i)/m_i (about 0.05 with m = 3 annotators and p* near 1/2): the
    MSE to p-hat cannot go below it, and a worse judge can score below a
    better one by chance. The noise-corrected error subtracts the floor,

    .. math::

        \widehat{AE} = \frac1N \sum_i (p_i - \hat p_i)^2
                      - \frac1N \sum_i E[p^*_i(1 - p^*_i) \mid \text{annotations}] / m_i ,

    with the floor's posterior expectation from the hierarchical model (items
    with one annotator included, where the unbiased p-hat(1 - p-hat)/(m - 1) is
    undefined). It is unbiased for AE = mean_i (p_i - p*_i)^2 whatever the judge
    knows about p*, and can come out slightly negative for a near-perfect judge
    (reported as is). (The posterior mean of (p_i - p*_i)^2 given the annotations
    alone would not do: it adds each item's posterior variance of p*, about the
    same floor again, because it ignores that a good judge's p carries
    information about p*.) The interval mixes, over the hyperparameter draws
    (NUTS; MAP fits: the MAP), normals centred at the estimate under that draw's
    floor with the CLT standard error of the per-item terms
    (p_i - p-hat_i)^2 - floor_i; use it with >= 30 items.

    Parameters
    ----------
    judge_prob : pandas.DataFrame
        One judge's outputs ``item, prob`` (P(B better)); every item must be annotated.
        A ``judge`` column with several judges is an error (one call per judge).
    preference_model : PreferenceDistribution
        Fitted on the annotations of those items.
    ci_prob : float
        Mass of the equal-tailed interval.

    Returns
    -------
    pandas.Series
        ``alignment_error`` (the estimate above, averaged over the hyperparameter
        posterior), ``alignment_error_lower``, ``alignment_error_upper``,
        ``mse_p_hat`` (the paper's MSE), ``noise_floor`` (posterior mean of
        mean_i p*_i(1 - p*_i)/m_i) and ``n_items``.
    """
    judge_prob = as_pandas(judge_prob)  # polars, pyarrow, ...: pandas
    if not isinstance(preference_model, PreferenceDistribution):
        raise TypeError("preference_model must be a fitted PreferenceDistribution, got "
                        f"{type(preference_model).__name__}.")
    check_ci_prob(ci_prob)
    outputs = validate_judge_outputs(judge_prob)
    if outputs.judge is not None and len(judges := list(pd.unique(outputs.judge))) > 1:
        raise DataValidationError(
            f"judge_prob.judge holds {len(judges)} judges {show_values(judges)}: the alignment "
            f"error is one judge's (its items would count once per judge). Fix: one call per "
            f"judge (judge_prob[judge_prob.judge == name]), or metric_table for every judge.")
    if outputs.prob_swapped is not None:  # before 2026-12-02: ignored without a word
        warn_user("alignment_error scores judge_prob.prob (the original order) only; "
                  "judge_prob.prob_swapped is not used. For the order-averaged judge pass "
                  "prob = (prob + 1 - prob_swapped) / 2; metric_table reports its "
                  "consistency and symmetry deviation.")
    ac = preference_model.annotation_counts()
    counts = ac.counts[align_outputs(outputs, ac)]
    patterns, inverse = unique_rows(counts)
    m = counts.sum(1)
    n = len(outputs.prob)
    weight = np.bincount(inverse, minlength=len(patterns))
    # (P, S): one column per hyperparameter draw (MAP fits: Laplace draws)
    floor_pattern, var_pattern = _floor_moments(preference_model, patterns)
    floor_draws = (floor_pattern * weight[:, None]).sum(0) / n
    p_hat = (counts[:, 2] + 0.5 * counts[:, 1]) / m
    sq = (outputs.prob - p_hat) ** 2
    mse = float(mse_to_phat(outputs.prob, p_hat))  # the paper's metric (= sq.mean())
    terms = sq - floor_pattern.mean(1)[inverse]
    # Posterior variance of the floor itself (items independent given the hyperparameters).
    var_floor = float((var_pattern * weight).sum()) / n ** 2
    se = float(np.sqrt(terms.var(ddof=1) / n + var_floor)) if n > 1 else np.inf
    if n < MIN_ITEMS:
        warn_user(f"alignment_error: {n} item(s); its interval is a normal approximation "
                  f"over items (CLT), unreliable below {MIN_ITEMS} items"
                  + (" and undefined for one (-inf, inf)" if n == 1 else "") + ".")
    centres = mse - floor_draws
    q = ((1 - ci_prob) / 2, (1 + ci_prob) / 2)
    if centres.size == 1 or not np.isfinite(se):
        lo, hi = (float(centres.mean() + se * special.ndtri(x)) for x in q)
    else:
        lo, hi = (_normal_mixture_quantile(centres, se, x) for x in q)
    return pd.Series({"alignment_error": float(centres.mean()), "alignment_error_lower": lo,
                      "alignment_error_upper": hi, "mse_p_hat": mse,
                      "noise_floor": float(floor_draws.mean()), "n_items": n})


def _floor_moments(model: PreferenceDistribution, patterns: np.ndarray):
    """Per count pattern: E[Var(y) | annotations] / m per draw, and Var of that over p*.

    One annotation is y = 1 (B), 1/2 (tie) or 0 (A), so p-hat = (k_B + k_tie/2)/m
    and its target is q* = p*_B + p*_tie/2, with Var(y) = p*_B + p*_tie/4 - q*^2
    (= p*(1 - p*) without ties). Given the hyperparameters the item's p* is
    Dirichlet(a_A, a_tie, a_B) (Beta(a_B, a_A) without ties), whose moments give
    E[Var(y)] exactly; the variance of Var(y) (a small term of the standard error)
    is exact without ties and a Monte Carlo estimate at the mean posterior
    parameters with them.
    """
    m = patterns.sum(1)
    a_b, b_b = model.posterior_beta(patterns, "B", laplace=True)
    total = a_b + b_b
    try:
        a_t, _ = model.posterior_beta(patterns, "tie", laplace=True)
    except ValueError:  # a model without ties
        a_t = None
    if a_t is None:
        _, ex1, ex2, ex3, ex4 = beta_raw_moments(a_b, b_b, 4)
        floor = (ex1 - ex2) / m[:, None]
        var = ((ex2 - 2 * ex3 + ex4 - (ex1 - ex2) ** 2) / m[:, None] ** 2).mean(1)
        return floor, var
    e_q2 = (a_b * (a_b + 1) + a_b * a_t + a_t * (a_t + 1) / 4) / (total * (total + 1))
    floor = ((a_b + a_t / 4) / total - e_q2) / m[:, None]
    rng = np.random.default_rng(0)
    alpha = np.stack([(total - a_b - a_t).mean(1), a_t.mean(1), a_b.mean(1)], axis=1)
    var = np.empty(len(patterns))
    for i, row in enumerate(alpha):
        p = rng.dirichlet(row, size=4000)
        q = p[:, 2] + p[:, 1] / 2
        var[i] = np.var(p[:, 2] + p[:, 1] / 4 - q ** 2) / m[i] ** 2
    return floor, var


def _normal_mixture_quantile(means: np.ndarray, sd: float, prob: float) -> float:
    sd = max(sd, 1e-300)
    lo = float(np.min(means)) - 10 * sd - 1e-12
    hi = float(np.max(means)) + 10 * sd + 1e-12
    return float(optimize.brentq(lambda x: special.ndtr((x - means) / sd).mean() - prob,
                                 lo, hi, xtol=1e-14))
