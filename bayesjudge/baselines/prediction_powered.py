"""Prediction-powered rank-sets: human votes on a few battles, an LLM judge's on all.

Implements Prediction-Powered Ranking (PPR) of Chatzi, Straitouri, Thejaswi &
Gomez-Rodriguez (NeurIPS 2024), "Prediction-Powered Ranking of Large Language
Models", arXiv:2402.17826: a prediction-powered (PPI++, power-tuned) estimate of every
item's *win probability* with its covariance (their Algorithms 1, 3 and 4), and rank
sets from pairwise comparisons through the chi-square confidence ellipsoid (their
Algorithm 2).

Definitions (as in the paper and its code). An item's win probability ``theta_m`` is
the probability that it *wins* a battle it takes part in: a tie is a win for neither
side (``w = 1`` for the winner, ``0`` for the loser and for both sides of a tie). From
the ``n`` battles with a reference (human) vote ``h`` and an LLM verdict ``f`` and the
``N`` battles with the LLM verdict only, with per-item means over the battles that
involve the item (``c_m`` of them in a set of battles):

* ``a_m`` -- mean of ``f`` over the ``N`` LLM-only battles;
* ``b_m`` -- mean of ``lambda * f - h`` over the ``n`` labelled battles;
* ``theta_hat = lambda * a - b``;
* ``Sigma = lambda^2 A A^T / N^2 + B B^T / n^2`` with ``A[m, j] = f_mj - a_m`` and
  ``B[m, j] = lambda f_mj - h_mj - b_m`` on the battles ``j`` that involve ``m`` (0
  elsewhere);
* ``lambda = tr(Cov_n(h, f)) / ((1 + n / N) tr(Var_N(f)))`` clipped to [0, 1] (PPI++
  power tuning; per-battle covariances, same centring as above).

``lambda = 0`` is the classical (reference-only) estimate: per-item win rates from the
``n`` labelled battles. Items ``m1, m2`` are ordered when ``|theta_m1 - theta_m2| >
sqrt(chi2_{k, 1-alpha} * Var(theta_m1 - theta_m2))`` (the confidence ellipsoid's extent
along ``e_m1 - e_m2``, ``k`` items); ``rank_lower`` = 1 + items certainly better,
``rank_upper`` = k - items certainly worse.

Note on ``Sigma``: the default normalisation by ``N^2`` and ``n^2`` (not by
``c_m c_m'``) is the **authors' code's** (their ``src/estimate.py``, the same in its
first version); the paper's own text was not available to check it. It is not
consistent with ``theta``, a mean over each item's own ``c_m`` battles: for a design
with every item in a share ``2/k`` of the battles it is ``(2/k)^2`` times the
covariance of those means, so the reported ``theta_se`` is ~``2/k`` of the estimate's
real standard deviation (a simulation with k = 12, n = 990: 0.17) and the sets cover
the whole ranking less often than ``1 - alpha`` (arena_ppr, GPT-4: ~0.3-0.45). It is
the default because it is the peer as published (it reproduces the issue's and the
paper's set sizes). ``covariance="per_item"`` divides by ``c_m c_m'`` instead: the
sampling covariance of the per-item means, valid, and, with the chi-square quantile
over ``k`` degrees of freedom, conservative (sets of ~7 of 12 ranks on arena_ppr).

Several LLM judges (``judge`` a list) are not in the paper: their win indicators are
averaged into one prediction per battle (any prediction keeps PPI valid; averaging
only changes its power).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy.stats import chi2

from bayesjudge.data import DataValidationError, require_frame, show_values

__all__ = ["prediction_powered_ranksets"]

OUTCOMES = ("left", "tie", "right")


def _judges(judge, reference, present) -> list:
    judges = [judge] if isinstance(judge, str) or not isinstance(judge, Sequence) else list(judge)
    if not judges:
        raise ValueError("judge must name at least one LLM judge; got an empty list.")
    if reference in judges:
        raise ValueError(f"judge must not include the reference judge {reference!r}.")
    missing = [j for j in [reference, *judges] if j not in present]
    if missing:
        raise DataValidationError(
            f"comparisons.judge has no rows of {show_values(missing)}; judges present: "
            f"{show_values(sorted(present, key=str))}. Fix: pass reference= / judge= as "
            f"written in the judge column.")
    return judges


def _battle_table(comparisons: pd.DataFrame, reference, judges) -> pd.DataFrame:
    """One row per battle: left, right, h (reference outcome or NaN), one column per judge."""
    require_frame(comparisons, "comparisons", ["battle", "judge", "left", "right", "outcome"])
    df = comparisons[comparisons["judge"].isin([reference, *judges])]
    bad = ~df["outcome"].isin(OUTCOMES)
    if bad.any():
        raise DataValidationError(
            f"comparisons.outcome must be one of {OUTCOMES}; got "
            f"{show_values(pd.unique(df.loc[bad, 'outcome']))}. Fix: map the verdicts to "
            f"left / tie / right.")
    dup = df.duplicated(["battle", "judge"], keep=False)
    if dup.any():
        raise DataValidationError(
            f"comparisons has several rows of one judge on one battle (battles "
            f"{show_values(pd.unique(df.loc[dup, 'battle']))}); PPR takes one verdict per "
            f"(battle, judge). Fix: give repeated judgements their own battle ids.")
    sides = df.groupby("battle", sort=False)[["left", "right"]].nunique()
    clash = sides.index[(sides > 1).any(axis=1)]
    if len(clash):
        raise DataValidationError(
            f"battles {show_values(list(clash))} have different left/right across judges; a "
            f"battle is one pair of responses. Fix: swap those rows' left/right (and "
            f"outcome) to the battle's order.")
    wide = df.pivot(index="battle", columns="judge", values="outcome")
    pair = df.drop_duplicates("battle").set_index("battle").loc[wide.index, ["left", "right"]]
    out = pd.concat([pair, wide.reindex(columns=[reference, *judges])], axis=1)
    unjudged = out[judges].isna().any(axis=1)
    if unjudged.any():
        raise DataValidationError(
            f"battles {show_values(list(out.index[unjudged]))} lack a verdict of some of the "
            f"LLM judges {show_values(judges)}; PPR needs the LLM's verdict on every battle. "
            f"Fix: drop those battles or judge them.")
    return out


def _wins(outcome: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(left wins, right wins) indicators; a tie is a win for neither side."""
    return (outcome == "left").astype(float), (outcome == "right").astype(float)


def _residuals(value_l, value_r, il, ir, k):
    """Per-item means of a per-side value and the (k x battles) centred residual matrix."""
    count = np.bincount(il, minlength=k) + np.bincount(ir, minlength=k)
    mean = (np.bincount(il, value_l, k) + np.bincount(ir, value_r, k)) / count
    res = np.zeros((k, len(il)))
    cols = np.arange(len(il))
    res[il, cols] = value_l - mean[il]
    res[ir, cols] = value_r - mean[ir]
    return mean, res, count


def _norm(count_n, n, covariance):
    return float(n) ** 2 if covariance == "paper" else np.outer(count_n, count_n)


def prediction_powered_ranksets(
    comparisons: pd.DataFrame,
    reference: str = "human",
    judge: str | Sequence[str] = "gpt-4-0125-preview",
    alpha: float = 0.1,
    *,
    lam: float | None = None,
    covariance: Literal["paper", "per_item"] = "paper",
) -> pd.DataFrame:
    """Prediction-powered win probabilities and rank-sets (Chatzi et al. 2024).

    Parameters
    ----------
    comparisons : pandas.DataFrame
        Long table, one row per (battle, judge): ``battle`` (id of one judged pair of
        responses), ``judge``, ``left``, ``right``, ``outcome`` (left / tie / right).
        The reference judge's rows cover the ``n`` battles it judged; every battle
        needs a verdict of each LLM judge. Rows of other judges are ignored.
    reference : str, default "human"
        The judge whose preferences are ranked.
    judge : str or list of str
        The LLM judge(s). A list averages their win indicators per battle (module
        docstring; not in the paper).
    alpha : float, default 0.1
        Error rate: the sets cover the reference's ranking with probability >= 1 -
        alpha (asymptotically).
    lam : float in [0, 1], optional
        Fixed power-tuning weight of the LLM verdicts; default: the PPI++ optimum
        (``0`` is the reference-only estimate).
    covariance : {"paper", "per_item"}
        Normalisation of ``Sigma`` (module docstring): "paper" is the authors' code's
        (under-estimates the covariance by ~(2/k)^2), "per_item" the per-item means'.

    Returns
    -------
    pandas.DataFrame
        One row per item, sorted by ``theta`` (best first): ``item``, ``theta`` (the
        estimated win probability), ``theta_se`` (``sqrt(diag Sigma)``), ``rank`` (1 =
        best by ``theta``), ``rank_lower``, ``rank_upper`` (the rank-set),
        ``lambda`` (the weight used), ``n_reference`` and ``n_judge`` (battles of the
        item with a reference vote, and with the LLM verdict only). ``attrs`` hold
        ``covariance`` (the k x k ``Sigma`` in row order), ``n`` and ``N``.
    """
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}.")
    if lam is not None and not 0.0 <= float(lam) <= 1.0:
        raise ValueError(f"lam must be in [0, 1] or None (tuned); got {lam!r}.")
    if covariance not in ("paper", "per_item"):
        raise ValueError(f"covariance must be 'paper' or 'per_item'; got {covariance!r}.")
    require_frame(comparisons, "comparisons", ["battle", "judge", "left", "right", "outcome"])
    judges = _judges(judge, reference, set(pd.unique(comparisons["judge"])))
    table = _battle_table(comparisons, reference, judges)
    items = pd.Index(pd.unique(table[["left", "right"]].to_numpy().ravel()))
    k = len(items)
    il, ir = items.get_indexer(table["left"]), items.get_indexer(table["right"])
    fl = np.mean([_wins(table[j].to_numpy())[0] for j in judges], axis=0)
    fr = np.mean([_wins(table[j].to_numpy())[1] for j in judges], axis=0)
    lab = table[reference].notna().to_numpy()
    hl, hr = _wins(table[reference].to_numpy())
    n, big_n = int(lab.sum()), int((~lab).sum())
    count_n = np.bincount(il[lab], minlength=k) + np.bincount(ir[lab], minlength=k)
    count_big = np.bincount(il[~lab], minlength=k) + np.bincount(ir[~lab], minlength=k)
    if (count_n == 0).any():
        raise DataValidationError(
            f"items {show_values(list(items[count_n == 0]))} have no battle judged by "
            f"{reference!r}: their win probability has no estimate. Fix: add reference "
            f"votes on their battles or drop them.")
    if big_n == 0 and lam is not None and lam > 0:
        raise ValueError(f"lam={lam} weights LLM-only battles, but every battle has a "
                         f"{reference!r} vote (N = 0). Fix: pass lam=0 or lam=None.")
    use_big = big_n > 0 and lam != 0
    if use_big and (count_big == 0).any():
        raise DataValidationError(
            f"items {show_values(list(items[count_big == 0]))} have no battle judged by the "
            f"LLM only; the prediction-powered estimate needs one. Fix: pass lam=0 "
            f"(reference only) or add LLM-judged battles of them.")
    a = np.zeros(k)
    cov_big = np.zeros((k, k))
    if use_big:
        a, res_a, _ = _residuals(fl[~lab], fr[~lab], il[~lab], ir[~lab], k)
        cov_big = res_a @ res_a.T
    if lam is None:
        if not use_big:
            lam_used = 0.0
        else:
            _, res_f, _ = _residuals(fl[lab], fr[lab], il[lab], ir[lab], k)
            _, res_h, _ = _residuals(hl[lab], hr[lab], il[lab], ir[lab], k)
            num = np.trace(res_h @ res_f.T) / n
            den = (1 + n / big_n) * np.trace(cov_big) / big_n
            lam_used = float(np.clip(num / den, 0.0, 1.0)) if den > 0 else 0.0
    else:
        lam_used = float(lam)
    b, res_b, _ = _residuals(lam_used * fl[lab] - hl[lab], lam_used * fr[lab] - hr[lab],
                             il[lab], ir[lab], k)
    theta = lam_used * a - b
    sigma = res_b @ res_b.T / _norm(count_n, n, covariance)
    if use_big and lam_used > 0:
        sigma = sigma + lam_used**2 * cov_big / _norm(count_big, big_n, covariance)
    lower, upper = _rank_sets(theta, sigma, alpha)
    order = np.argsort(-theta, kind="stable")
    rank = np.empty(k, dtype=np.int64)
    rank[order] = np.arange(1, k + 1)
    out = pd.DataFrame({
        "item": items.to_numpy(dtype=object), "theta": theta,
        "theta_se": np.sqrt(np.clip(np.diag(sigma), 0, None)), "rank": rank,
        "rank_lower": lower, "rank_upper": upper, "lambda": lam_used,
        "n_reference": count_n, "n_judge": count_big,
    }).iloc[order].reset_index(drop=True)
    out.attrs.update(covariance=sigma[np.ix_(order, order)], n=n, N=big_n)
    return out


def _rank_sets(theta: np.ndarray, sigma: np.ndarray, alpha: float):
    """Rank-sets from the chi-square ellipsoid's pairwise extents (the paper's Algorithm 2)."""
    k = len(theta)
    crit = chi2.ppf(1 - alpha, k)
    diff = theta[:, None] - theta[None, :]
    var = np.diag(sigma)[:, None] + np.diag(sigma)[None, :] - 2 * sigma
    apart = np.abs(diff) > np.sqrt(np.clip(var, 0, None) * crit)
    np.fill_diagonal(apart, False)
    lower = 1 + (apart & (diff < 0)).sum(axis=1)
    upper = k - (apart & (diff > 0)).sum(axis=1)
    return lower.astype(np.int64), upper.astype(np.int64)
