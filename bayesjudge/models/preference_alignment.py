"""Noise-corrected alignment error of a probabilistic judge against the preference distribution.

Li, Li, Huang et al. (2025), "Judging with Confidence: Calibrating Autoraters to
Preference Distributions", arXiv:2510.00263, measure alignment as the MSE between
a judge's probability and p-hat = k/m (appendix C.1). By their Lemma 2 that MSE
carries a noise floor mean_i p*_i(1 - p*_i)/m_i no judge can beat; this module
reports the error against p* itself, E[(p - p*)^2], with a credible interval
from a fitted :class:`~bayesjudge.models.preference.PreferenceDistribution`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize, stats

from bayesjudge.base import CI_PROB
from bayesjudge.data import check_ci_prob
from bayesjudge.data.annotations import align_outputs, validate_judge_outputs
from bayesjudge.metrics import mse_to_phat
from bayesjudge.models.preference import PreferenceDistribution
from bayesjudge.models.preference_posterior import beta_raw_moments, unique_rows

__all__ = ["alignment_error"]


def alignment_error(
    judge_prob: pd.DataFrame,
    preference_model: PreferenceDistribution,
    *,
    ci_prob: float = CI_PROB,
) -> pd.Series:
    r"""Noise-corrected alignment error mean_i (p_i - p*_i)^2 of a judge, with an interval.

    The paper's alignment metric (Li et al. 2025, appendix C.1) is the MSE to
    p-hat = k/m. By Lemma 2, p-hat is unbiased with variance p*(1 - p*)/m, so
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
        Judge outputs ``item, prob`` (P(B better)); every item must be annotated.
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
    if not isinstance(preference_model, PreferenceDistribution):
        raise TypeError("preference_model must be a fitted PreferenceDistribution, got "
                        f"{type(preference_model).__name__}.")
    check_ci_prob(ci_prob)
    outputs = validate_judge_outputs(judge_prob)
    ac = preference_model.annotation_counts()
    counts = ac.counts[align_outputs(outputs, ac)]
    patterns, inverse = unique_rows(counts)
    # (P, S): one column per hyperparameter draw (MAP fits: Laplace draws)
    a, b = preference_model.posterior_beta(patterns, laplace=True)
    _, ex1, ex2, ex3, ex4 = beta_raw_moments(a, b, 4)
    m = counts.sum(1)
    # E[p*(1 - p*)] / m per pattern and draw (items of a pattern share m)
    floor_pattern = (ex1 - ex2) / patterns.sum(1)[:, None]
    n = len(outputs.prob)
    floor_draws = (floor_pattern * np.bincount(inverse, minlength=len(patterns))[:, None]
                   ).sum(0) / n
    sq = (outputs.prob - counts[:, 2] / m) ** 2
    mse = float(mse_to_phat(outputs.prob, counts[:, 2] / m))  # the paper's metric (= sq.mean())
    terms = sq - floor_pattern.mean(1)[inverse]
    # Posterior variance of the floor itself: Var[X(1 - X)] = E(X - X^2)^2 - (E X - E X^2)^2
    # per item, / m^2, summed over items / n^2 (items independent given the hyperparameters).
    var_floor = ((ex2 - 2 * ex3 + ex4 - (ex1 - ex2) ** 2) / patterns.sum(1)[:, None] ** 2
                 ).mean(1)
    var_floor = float((var_floor * np.bincount(inverse, minlength=len(patterns))).sum()) / n ** 2
    se = float(np.sqrt(terms.var(ddof=1) / n + var_floor)) if n > 1 else np.inf
    centres = mse - floor_draws
    q = ((1 - ci_prob) / 2, (1 + ci_prob) / 2)
    if centres.size == 1 or not np.isfinite(se):
        lo, hi = (float(stats.norm.ppf(x, centres.mean(), se)) for x in q)
    else:
        lo, hi = (_normal_mixture_quantile(centres, se, x) for x in q)
    return pd.Series({"alignment_error": float(centres.mean()), "alignment_error_lower": lo,
                      "alignment_error_upper": hi, "mse_p_hat": mse,
                      "noise_floor": float(floor_draws.mean()), "n_items": n})


def _normal_mixture_quantile(means: np.ndarray, sd: float, prob: float) -> float:
    sd = max(sd, 1e-300)
    lo = float(np.min(means)) - 10 * sd - 1e-12
    hi = float(np.max(means)) + 10 * sd + 1e-12
    return float(optimize.brentq(lambda x: stats.norm.cdf(x, means, sd).mean() - prob,
                                 lo, hi, xtol=1e-14))
