"""Non-Bayesian baselines of the LLM-as-a-jury setting: Avg-Prob and Temp-BT's calibration.

Implements the baselines of Qian, Sun, Gales & Knill (2026), "Who can we trust?
LLM-as-a-jury for Comparative Assessment", arXiv:2602.16610: Avg-Prob (Section 5.1,
each item's mean win probability), temperature scaling of pairwise probabilities
(Section 3.2, eqs. 6-7) and the first step of Temp-BT (Section 5.2: one temperature
per judge and aspect minimising the expected calibration error against human
preferences, then soft BT), plus :func:`human_preferences`, which turns human scores
into the comparisons table those human preferences are read from. Temp-BT uses human
labels: it is a supervised reference point, not a fair competitor of BT-sigma.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, logit

from bayesjudge.data import (
    DataValidationError,
    check_no_missing,
    check_unit_interval,
    require_frame,
    show_values,
)
from bayesjudge.data.arena import comparisons_table
from bayesjudge.data.counts import expand_counts
from bayesjudge.data.frames import as_pandas
from bayesjudge.metrics.calibration import expected_calibration_error
from bayesjudge.metrics.ranking import comparison_probs

__all__ = [
    "avg_prob",
    "ece_temperature",
    "human_preferences",
    "temperature_calibrate",
    "temperature_scale",
]


def avg_prob(comparisons: pd.DataFrame, *, per_judge: bool = False) -> pd.DataFrame:
    """Avg-Prob: each item's mean probability of beating the others (Section 5.1).

    .. math:: w_i = \\frac{1}{N-1} \\sum_{j \\ne i} p_{ij}

    computed from the comparisons table, where an item appears both as ``left``
    (contributing :math:`p`) and as ``right`` (contributing :math:`1 - p`): its score
    is the unweighted mean over *all* rows that involve it. With every pair judged
    in both orders this equals the formula above applied to the symmetrised
    probabilities of eq. 3, :math:`p'_{ij} = (p_{ij} + 1 - p_{ji})/2`; with one order
    per pair it is the formula itself. Hard outcomes count as left = 1, tie = 0.5,
    right = 0 (then :math:`w_i` is a win rate with half a win per tie). No global
    ranking structure is imposed.

    Parameters
    ----------
    comparisons : pandas.DataFrame
        ``left``, ``right``, ``prob`` or ``outcome``; optional ``judge`` (without
        it, one judge ``"(one judge)"``), ``context``, ``aspect`` and a count ``n``
        (a row with ``n = k`` is ``k`` rows). Items are scored within their (context,
        aspect). A Chatbot Arena export is read as it is
        (:func:`bayesjudge.data.arena.comparisons_table`).
    per_judge : bool, default False
        One score per judge (Table 1's single-judge Avg-Prob) instead of pooling all
        judges' rows (the jury's Avg-Prob of Table 2, the mean over judges and pairs).

    Returns
    -------
    pandas.DataFrame
        One row per (``context``, ``judge`` if per_judge, ``aspect``, ``item``) --
        only the columns the table has -- in first-appearance order, with ``score``
        (:math:`w_i`) and ``n`` (number of rows used).
    """
    # Arena columns, polars, ...: the long table; a row with n = k is k rows
    comparisons = expand_counts(comparisons_table(comparisons), "comparisons")
    p = comparison_probs(comparisons)
    keys = [c for c in ("context", "judge", "aspect") if c in comparisons.columns]
    if not per_judge and "judge" in keys:
        keys.remove("judge")
    check_no_missing(comparisons, "comparisons", keys)
    base = comparisons[keys].reset_index(drop=True)
    long = pd.concat(
        [
            base.assign(item=comparisons["left"].to_numpy(), _p=p),
            base.assign(item=comparisons["right"].to_numpy(), _p=1.0 - p),
        ],
        ignore_index=True,
    )
    long["_order"] = np.tile(np.arange(len(p)), 2) * 2 + np.repeat([0, 1], len(p))
    long = long.sort_values("_order", kind="stable")
    out = long.groupby(keys + ["item"], sort=False, dropna=False).agg(
        score=("_p", "mean"), n=("_p", "size")
    )
    return out.reset_index()


def temperature_scale(prob: ArrayLike, temperature: ArrayLike) -> NDArray[np.float64]:
    """Temperature-annealed probabilities (eq. 6), computed in logit form (eq. 7).

    .. math:: \\tilde p = \\frac{p^{1/T}}{p^{1/T} + (1-p)^{1/T}}
              = \\sigma\\big(\\operatorname{logit}(p) / T\\big)

    The logit form is exact (divide numerator and denominator of eq. 6 by
    :math:`p^{1/T}`) and stable: 0 and 1 stay 0 and 1, 0.5 stays 0.5.
    :math:`T > 1` softens, :math:`T < 1` sharpens.

    Parameters
    ----------
    prob : array-like
        Probabilities in [0, 1].
    temperature : float or array-like
        :math:`T > 0`, broadcast against ``prob``.

    Returns
    -------
    numpy.ndarray
    """
    p = check_unit_interval(prob, "prob", "temperature_scale takes probabilities.")
    t = np.asarray(temperature, dtype=float)
    if not (np.isfinite(t).all() and (t > 0).all()):
        raise DataValidationError(
            f"temperature_scale: temperature must be finite and > 0; got "
            f"{show_values(np.ravel(t)[~(np.isfinite(np.ravel(t)) & (np.ravel(t) > 0))])}."
        )
    with np.errstate(divide="ignore"):
        return expit(logit(p) / t)


def ece_temperature(
    prob: ArrayLike,
    label: ArrayLike,
    n_bins: int = 10,
    bounds: tuple[float, float] = (0.05, 20.0),
    *,
    n_grid: int = 41,
    n_refine: int = 4,
) -> float:
    """The temperature minimising the expected calibration error (Temp-BT's first step).

    Qian et al. (2026), Section 5.2: "a separate temperature is estimated for each
    judge on each evaluation aspect by minimising expected calibration error (ECE)
    with respect to human judgments"; call this once per (judge, aspect) and apply
    :func:`temperature_scale` before soft BT. ECE is
    :func:`bayesjudge.metrics.calibration.expected_calibration_error` (K equal-width
    bins, confidence form) of :math:`\\sigma(\\operatorname{logit}(p)/T)`.

    ECE is piecewise constant in T (it jumps when a probability crosses a bin edge),
    so no gradient method applies. Search: ``n_grid`` points evenly spaced in
    :math:`\\log T` over ``bounds``, then ``n_refine`` times a new grid of ``n_grid``
    points between the neighbours of the best point (each pass narrows the interval
    by a factor ``(n_grid - 1) / 2``: 20 with the defaults, to a relative precision
    of about 1e-4 in T). A minimum narrower than the first grid's spacing (16 % in
    T by default) can be missed; raise ``n_grid`` for very small samples. Where several temperatures
    reach the minimum the one closest to T = 1 (least change) wins.

    Parameters
    ----------
    prob : array-like
        The judge's P(left beats right) (or any binary-event probability).
    label : array-like
        Binary human preference for the same event: 1 (left better) or 0. Human ties
        carry no binary label: drop them first (:func:`human_preferences` marks them
        with 0.5), as the calibration metrics require.
    n_bins : int, default 10
        Bins of the ECE.
    bounds : (float, float), default (0.05, 20)
        Search interval of T.
    n_grid, n_refine : int
        Grid size and number of refinements.

    Returns
    -------
    float
        The temperature T.
    """
    p = np.asarray(prob, dtype=float).ravel()
    y = np.asarray(label, dtype=float).ravel()
    lo, hi = (float(b) for b in bounds)
    if not (0 < lo < hi and np.isfinite(hi)):
        raise DataValidationError(f"bounds must satisfy 0 < low < high; got {bounds!r}.")
    if len(p) != len(y):
        raise DataValidationError(
            f"ece_temperature: prob ({len(p)}) and label ({len(y)}) differ in length."
        )
    if np.isin(y, [0.5]).any():
        raise DataValidationError(
            f"ece_temperature: label has {int((y == 0.5).sum())} ties (0.5); drop tied human "
            "preferences first (the ECE is defined on binary labels)."
        )
    temperature_scale(p, 1.0)  # validates prob
    with np.errstate(divide="ignore"):
        lp = logit(p)[None, :]
    grid = np.linspace(np.log(lo), np.log(hi), n_grid)
    for step in range(n_refine + 1):
        scaled = expit(lp / np.exp(grid)[:, None])  # eq. 7 for every grid temperature
        ece = np.asarray(expected_calibration_error(scaled, y[None, :], n_bins=n_bins))
        best = np.flatnonzero(ece <= ece.min() + 1e-12)
        k = best[np.argmin(np.abs(grid[best]))]
        if step == n_refine:
            break
        a, b = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
        grid = np.linspace(a, b, n_grid)
    return float(np.exp(grid[k]))


def temperature_calibrate(
    comparisons: pd.DataFrame,
    human: pd.DataFrame,
    *,
    by: Sequence[str] | None = None,
    n_bins: int = 10,
    bounds: tuple[float, float] = (0.05, 20.0),
) -> tuple[pd.DataFrame, pd.Series]:
    """Temp-BT's calibration: one ECE temperature per judge (and aspect), applied.

    Qian et al. (2026), Section 5.2: each judge's probabilities on each aspect are
    temperature-scaled (eq. 6) with the T minimising the ECE against human
    preferences (:func:`ece_temperature`), then aggregated by soft BT (fit the
    returned table). Every judged pair is matched to the human preference of the
    same (context, aspect, left, right); pairs the humans tied (0.5) or did not rate
    are not used to fit T, but every row is scaled and returned. **Uses human
    labels** -- the paper fits T on the evaluation data itself, so Temp-BT is a
    supervised reference point, not a fair competitor of BT-sigma.

    Parameters
    ----------
    comparisons : pandas.DataFrame
        Soft comparisons table (``judge``, ``left``, ``right``, ``prob``, optional
        ``context``, ``aspect``).
    human : pandas.DataFrame
        Human preferences in the same schema, e.g. :func:`human_preferences`
        (``prob`` in {0, 0.5, 1} or ``outcome``).
    by : sequence of str, optional
        One temperature per group; default ``judge`` and ``aspect`` (if present).
    n_bins, bounds
        Passed to :func:`ece_temperature`.

    Returns
    -------
    scaled : pandas.DataFrame
        ``comparisons`` (same rows and order) with ``prob`` replaced by the scaled
        probability.
    temperatures : pandas.Series
        T per group (indexed by the ``by`` columns).
    """
    comparisons, human = comparisons_table(comparisons), as_pandas(human)
    require_frame(comparisons, "comparisons", ["judge", "left", "right", "prob"])
    if "n" in comparisons.columns or "n" in human.columns:
        # T is fit on the counted rows (a row with n = k is k rows); the rows given are scaled
        by = [c for c in ("judge", "aspect") if c in comparisons.columns] if by is None else by
        _, temps = temperature_calibrate(
            expand_counts(comparisons, "comparisons"), expand_counts(human, "human"),
            by=by, n_bins=n_bins, bounds=bounds)
        t_row = (comparisons[list(by)].merge(temps.reset_index(), on=list(by), how="left")[
            "temperature"].to_numpy(float) if by else np.full(len(comparisons), temps.iloc[0]))
        out = comparisons.copy()
        out["prob"] = temperature_scale(comparison_probs(comparisons), t_row)
        return out, temps
    p = comparison_probs(comparisons)
    h = comparison_probs(human, name="human")
    keys = [c for c in ("context", "aspect") if c in comparisons.columns] + ["left", "right"]
    if by is None:
        by = [c for c in ("judge", "aspect") if c in comparisons.columns]
    by = list(by)
    require_frame(human, "human", keys)
    ref = human[keys].assign(_h=h).groupby(keys, sort=False, dropna=False)["_h"].mean()
    label = comparisons[keys].merge(
        ref.reset_index(), on=keys, how="left", sort=False)["_h"].to_numpy(float).round(12)
    usable = np.isin(label, [0.0, 1.0])
    groups = comparisons.groupby(by, sort=False).indices if by else {(): np.arange(len(p))}
    scaled = p.copy()
    temps = {}
    for g, rows in groups.items():
        fit = rows[usable[rows]]
        if len(fit) == 0:
            raise DataValidationError(
                f"temperature_calibrate: group {g!r} has no pair with a strict human "
                "preference; give human preferences for its (context, aspect, left, right)."
            )
        t = ece_temperature(p[fit], label[fit], n_bins=n_bins, bounds=bounds)
        scaled[rows] = temperature_scale(p[rows], t)
        temps[g] = t
    index = pd.MultiIndex.from_tuples(list(temps), names=by) if len(by) > 1 else pd.Index(
        list(temps), name=by[0] if by else None)
    out = comparisons.copy()
    out["prob"] = scaled
    return out, pd.Series(list(temps.values()), index=index, name="temperature")


def human_preferences(
    scores: pd.DataFrame,
    *,
    score: str = "score",
    judge: str = "human",
    orders: Literal["both", "one"] = "both",
    output: Literal["prob", "outcome"] = "prob",
    tie_tol: float = 1e-9,
    group: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Pairwise human preferences from per-item human scores, in the comparisons schema.

    For every (context, aspect) and every pair of its items i != j:
    :math:`p_{ij} = 1` if :math:`x_i > x_j`, 0.5 if :math:`|x_i - x_j| \\le`
    ``tie_tol``, 0 otherwise (``output="outcome"``: left / tie / right). These are
    the labels Temp-BT calibrates against (Qian et al. 2026, Section 5.2; drop the
    ties for the ECE) and the ground truth of Section 4 ("pairwise preferences are
    derived from these human scores").

    Parameters
    ----------
    scores : pandas.DataFrame
        ``item`` and ``score`` (name set by ``score``); optional ``context`` and
        ``aspect`` (e.g. :func:`bayesjudge.datasets.load_summeval`).
    score : str, default "score"
        Column of the human score (higher is better).
    judge : str, default "human"
        Value of the ``judge`` column.
    orders : {"both", "one"}
        Both ordered pairs (the paper's N(N-1) comparisons per context) or one row
        per unordered pair, left = the item that appears first.
    output : {"prob", "outcome"}
        Soft-schema column ``prob`` in {0, 0.5, 1} or hard ``outcome``.
    tie_tol : float, default 1e-9
        Largest score difference still counted as equal (float noise of averaged
        scores must not break a tie).
    group : sequence of str, optional
        Columns defining a set of comparable items; default ``context`` and
        ``aspect``, whichever exist.

    Returns
    -------
    pandas.DataFrame
        ``judge``, the group columns, ``left``, ``right``, ``prob`` or ``outcome``;
        pairs in the order of the items' first appearance.
    """
    scores = as_pandas(scores)  # polars, pyarrow, ...: pandas
    if orders not in ("both", "one"):
        raise DataValidationError(f"orders={orders!r}; choose 'both' or 'one'.")
    if output not in ("prob", "outcome"):
        raise DataValidationError(f"output={output!r}; choose 'prob' or 'outcome'.")
    if group is None:
        group = [c for c in ("context", "aspect") if c in scores.columns]
    group = list(group)
    require_frame(scores, "scores", group + ["item", score])
    check_no_missing(scores, "scores", group + ["item", score])
    x = pd.to_numeric(scores[score], errors="coerce")
    if x.isna().any() or not np.isfinite(x.to_numpy(float)).all():
        bad = scores.loc[~np.isfinite(x.to_numpy(float)), score]
        raise DataValidationError(
            f"scores.{score} must be finite numbers; got {show_values(bad.tolist())}."
        )
    dup = scores.duplicated(group + ["item"])
    if dup.any():
        raise DataValidationError(
            f"scores: (group {group}, item) must be unique; duplicated e.g. "
            f"{scores.loc[dup, group + ['item']].head(3).to_dict('records')}. Average "
            "repeated ratings first."
        )
    df = scores[group + ["item"]].reset_index(drop=True)
    df["_x"] = x.to_numpy(float)
    df["_pos"] = np.arange(len(df))
    key = group if group else None
    if key is None:
        df["_g"] = 0
        key = ["_g"]
    pairs = df.merge(df, on=key, suffixes=("_l", "_r"))
    keep = pairs["_pos_l"] < pairs["_pos_r"] if orders == "one" else (
        pairs["_pos_l"] != pairs["_pos_r"])
    pairs = pairs[keep].sort_values(["_pos_l", "_pos_r"], kind="stable")
    d = pairs["_x_l"].to_numpy() - pairs["_x_r"].to_numpy()
    prob = np.where(np.abs(d) <= tie_tol, 0.5, np.where(d > 0, 1.0, 0.0))
    out = pd.DataFrame({"judge": judge}, index=range(len(pairs)))
    for c in group:
        out[c] = pairs[c].to_numpy()
    out["left"] = pairs["item_l"].to_numpy()
    out["right"] = pairs["item_r"].to_numpy()
    if output == "prob":
        out["prob"] = prob
    else:
        out["outcome"] = np.where(prob == 1.0, "left", np.where(prob == 0.0, "right", "tie"))
    return out
