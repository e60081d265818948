"""Rank correlations of the LLM-as-a-jury evaluation: per-context SRC, reliability vs quality.

Qian, Sun, Gales & Knill (2026), "Who can we trust? LLM-as-a-jury for Comparative
Assessment", arXiv:2602.16610: Spearman's rank correlation per context averaged over
contexts (SRC, Section 4) and the correlation of the learned judge reliability
1/sigma_k with judge quality (Section 5.3, Tables 3-4). Re-exported by
:mod:`bayesjudge.metrics.ranking`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from bayesjudge.data import DataValidationError, show_values

__all__ = ["reliability_correlation", "spearman_per_context"]


def spearman_per_context(
    scores: ArrayLike,
    truth: ArrayLike,
    context: ArrayLike | None = None,
    *,
    per_context: bool = False,
    tie_tol: float = 1e-9,
) -> float | tuple[float, pd.Series]:
    """Spearman's rank correlation per context, averaged over contexts (SRC, Section 4).

    Within each context (an article or dialogue), both score vectors are ranked with
    average ranks for ties and Spearman's rho is the Pearson correlation of the ranks
    (the definition of :func:`scipy.stats.spearmanr`); the SRC is the unweighted mean
    over contexts, as in Qian et al. (2026), Section 4 ("We calculate the SRC on each
    article or context then average").

    Scores closer than ``tie_tol`` times max(1, max |score|) (chained: a run of such
    neighbours) are ties. Fitted skills that are equal in exact arithmetic (e.g. hard
    BT items with the same win record in a balanced design) differ in the last
    digits by rounding, and ranking that noise made the SRC change with the
    summation order (0.1 points in the SummEval notebook); ``tie_tol=0`` ranks exact
    values as scipy does.

    A context where either vector is constant (e.g. every summary of an article got
    the same human consistency score), or that has fewer than two items, has no
    defined rho: it is *skipped* -- left out of the mean, NaN in the per-context
    values -- and can be counted with ``per_context=True``. If every context is
    skipped the result is NaN.

    Parameters
    ----------
    scores, truth : array-like of float
        Predicted scores (e.g. BT skills) and reference scores (human), aligned.
    context : array-like, optional
        Context id of each entry (compared exactly); default: one context.
    per_context : bool, default False
        Also return the rho of each context.
    tie_tol : float, default 1e-9
        Relative distance below which two scores (or two truth values) tie.

    Returns
    -------
    float, or (float, pandas.Series)
        The SRC; with ``per_context=True`` also a Series of rho indexed by context
        (first-appearance order), NaN for skipped contexts.
    """
    s = np.asarray(scores, dtype=float).ravel()
    t = np.asarray(truth, dtype=float).ravel()
    c = np.zeros(len(s), np.int64) if context is None else np.asarray(context, dtype=object)
    if not (len(s) == len(t) == len(c)):
        raise DataValidationError(
            f"spearman_per_context: scores ({len(s)}), truth ({len(t)}) and context ({len(c)}) "
            "must have the same length; pass aligned arrays."
        )
    for name, v in (("scores", s), ("truth", t)):
        bad = np.flatnonzero(~np.isfinite(v))
        if len(bad):
            raise DataValidationError(
                f"spearman_per_context: {name} has non-finite values {show_values(v[bad])} at "
                f"positions {show_values(bad)}; drop or fill them first."
            )
    if not (np.isfinite(tie_tol) and tie_tol >= 0):
        raise DataValidationError(f"spearman_per_context: tie_tol must be >= 0, got {tie_tol}.")
    df = pd.DataFrame({"c": pd.Series(c, dtype=object), "s": s, "t": t})
    code = pd.factorize(df["c"])[0]
    df["rs"] = _tolerant_ranks(s, code, tie_tol)
    df["rt"] = _tolerant_ranks(t, code, tie_tol)
    g = df.groupby("c", sort=False)
    df["ds"] = df["rs"] - g["rs"].transform("mean")
    df["dt"] = df["rt"] - g["rt"].transform("mean")
    sums = pd.DataFrame(
        {"c": df["c"], "st": df["ds"] * df["dt"], "ss": df["ds"] ** 2, "tt": df["dt"] ** 2}
    ).groupby("c", sort=False).sum()
    denom = np.sqrt(sums["ss"].to_numpy() * sums["tt"].to_numpy())
    ok = denom > 1e-12
    rho = np.full(len(sums), np.nan)
    rho[ok] = np.clip(sums["st"].to_numpy()[ok] / denom[ok], -1.0, 1.0)
    per = pd.Series(rho, index=sums.index.rename("context"), name="spearman")
    mean = float(np.mean(rho[ok])) if ok.any() else float("nan")
    return (mean, per) if per_context else mean


def _tolerant_ranks(values: np.ndarray, group: np.ndarray, rel_tol: float) -> np.ndarray:
    """Average ranks (1-based) within each group, values within rel_tol (chained) tied."""
    n = len(values)
    if n == 0:
        return np.zeros(0)
    order = np.lexsort((values, group))
    v, g = values[order], group[order]
    tol = rel_tol * max(1.0, float(np.max(np.abs(values))))
    new_group = np.r_[True, g[1:] != g[:-1]]
    tie_run = np.cumsum(new_group | np.r_[True, np.diff(v) > tol]) - 1
    start = np.maximum.accumulate(np.where(new_group, np.arange(n), 0))
    position = np.arange(n) - start + 1.0
    mean_position = np.bincount(tie_run, position) / np.bincount(tie_run)
    ranks = np.empty(n)
    ranks[order] = mean_position[tie_run]
    return ranks


def reliability_correlation(reliability: ArrayLike, quality: ArrayLike) -> pd.Series:
    """Pearson and Spearman correlation of judge reliability with judge quality.

    Tables 3-4 and Figures 4, 6, 8-9 of Qian et al. (2026) correlate the learned
    reliability :math:`1/\\sigma_k` of each judge with an independent measure of its
    quality: its individual SRC against humans, or :math:`1 - \\text{CycleRate}`.
    Pearson's r is the correlation of the values, Spearman's rho that of their
    average ranks.

    Parameters
    ----------
    reliability, quality : array-like or pandas.Series
        One value per judge. Two Series are aligned on their index (which must hold
        the same judges); otherwise the values are taken in order.

    Returns
    -------
    pandas.Series
        ``pearson``, ``spearman`` and ``n`` (number of judges).
    """
    if isinstance(reliability, pd.Series) and isinstance(quality, pd.Series):
        if set(reliability.index) != set(quality.index) or not reliability.index.is_unique:
            raise DataValidationError(
                "reliability_correlation: the two Series must be indexed by the same unique "
                f"judges; got {show_values(list(reliability.index))} and "
                f"{show_values(list(quality.index))}."
            )
        quality = quality.loc[reliability.index]
    x = np.asarray(reliability, dtype=float).ravel()
    y = np.asarray(quality, dtype=float).ravel()
    if len(x) != len(y) or len(x) < 3:
        raise DataValidationError(
            f"reliability_correlation: need two aligned arrays of >= 3 judges; got lengths "
            f"{len(x)} and {len(y)}."
        )
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise DataValidationError(
            "reliability_correlation: values must be finite; drop judges with NaN/inf first."
        )

    def pearson(a: np.ndarray, b: np.ndarray) -> float:
        a, b = a - a.mean(), b - b.mean()
        d = np.sqrt((a * a).sum() * (b * b).sum())
        return float((a * b).sum() / d) if d > 0 else float("nan")

    rx = pd.Series(x).rank(method="average").to_numpy()
    ry = pd.Series(y).rank(method="average").to_numpy()
    return pd.Series({"pearson": pearson(x, y), "spearman": pearson(rx, ry), "n": len(x)})
