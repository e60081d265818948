"""Simultaneous (joint) rank sets from posterior draws of ranks; pairwise skill differences.

A marginal ``ci_prob`` rank interval covers one item's rank with posterior probability
``ci_prob``; over ``n`` items the chance that *every* rank lies in its interval at once
is lower (for 12 items and 90% intervals often ~0.6). A leaderboard read as a whole
needs simultaneous sets: rectangles ``[lower_i, upper_i]`` whose product holds the
whole rank vector with posterior probability >= ``ci_prob``.

:func:`simultaneous_rank_sets` builds two such rectangles from the draws and returns
the tighter (smaller total width):

* **common level** -- every item's equal-tailed interval at one marginal level
  ``gamma >= ci_prob``, the smallest ``gamma`` (bisection over the draws) at which the
  share of draws with all ranks inside reaches ``ci_prob``;
* **greedy peeling** -- start from each item's range over the draws and repeatedly move
  the one bound (of any item, either side) whose move loses the fewest of the draws
  still inside, while at least ``ceil(ci_prob * n_draws)`` draws stay inside. Items
  whose rank is certain are not widened for the uncertain ones, so this is usually the
  tighter of the two.

Both keep each item's marginal equal-tailed ``ci_prob`` interval inside its set
(``lower_i <= marginal lower``, ``upper_i >= marginal upper``), so the joint sets are
never narrower than the marginal intervals of the same draws. Coverage is exact over
the draws given (>= ``ci_prob`` of them lie inside); the sets are chosen on those same
draws, so with few draws they cover a fresh posterior draw slightly less often (the
selection has a handful of degrees of freedom: use >= 1000 draws).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

__all__ = ["differences_table", "rank_columns", "rank_draws", "simultaneous_rank_sets"]

#: Elements (draws x pairs) of one block of skill differences: ~32 MB of float64.
PAIR_BLOCK = 4_000_000


def _check(rank_draws: np.ndarray, ci_prob: float) -> np.ndarray:
    ranks = np.asarray(rank_draws)
    if ranks.ndim != 2 or ranks.shape[0] < 1 or ranks.shape[1] < 1:
        raise ValueError(
            f"rank_draws must be a 2-D array (n_draws, n_items) of ranks; got shape "
            f"{ranks.shape}. Fix: pass one row of ranks per posterior draw.")
    if not np.issubdtype(ranks.dtype, np.integer):
        if not np.all(np.isfinite(ranks)) or np.any(ranks != np.round(ranks)):
            raise ValueError("rank_draws must hold integer ranks 1..n_items; got non-integer "
                             "values. Fix: rank the skill draws first (1 = best).")
        ranks = ranks.astype(np.int64)
    n = ranks.shape[1]
    bad = (ranks < 1) | (ranks > n)
    if bad.any():
        raise ValueError(
            f"rank_draws must hold ranks 1..{n} (n_items = {n}); got values "
            f"{np.unique(ranks[bad])[:5].tolist()}. Fix: rank within the items of one group.")
    if not (isinstance(ci_prob, float | int) and 0.0 < float(ci_prob) < 1.0):
        raise ValueError(f"ci_prob must be a probability in (0, 1); got {ci_prob!r}.")
    return ranks


def _marginal(ranks: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed rank interval at ``level`` per item (bounds taken outwards)."""
    lo = np.quantile(ranks, (1 - level) / 2, axis=0, method="lower")
    hi = np.quantile(ranks, (1 + level) / 2, axis=0, method="higher")
    return lo.astype(np.int64), hi.astype(np.int64)


def _inside(ranks, lo, hi) -> int:
    return int(np.all((ranks >= lo) & (ranks <= hi), axis=1).sum())


def _common_level(ranks, ci_prob, need):
    """Smallest common marginal level (bisection) whose intervals hold ``need`` draws."""
    lo, hi = _marginal(ranks, ci_prob)
    if _inside(ranks, lo, hi) >= need:
        return lo, hi
    a, b = ci_prob, 1.0  # coverage(a) < need <= coverage(b): level 1 spans every draw
    best = (ranks.min(axis=0).astype(np.int64), ranks.max(axis=0).astype(np.int64))
    for _ in range(40):  # quantiles over D draws change at steps of 1/D: 40 halvings suffice
        mid = (a + b) / 2
        lo, hi = _marginal(ranks, mid)
        if _inside(ranks, lo, hi) >= need:
            b, best = mid, (lo, hi)
        else:
            a = mid
        if b - a < 0.25 / len(ranks):
            break
    return best


def _greedy(ranks, ci_prob, need):
    """Peel bounds inwards, fewest lost draws first, keeping the marginal intervals."""
    d, n = ranks.shape
    m_lo, m_hi = _marginal(ranks, ci_prob)
    lo = ranks.min(axis=0).astype(np.int64)
    hi = ranks.max(axis=0).astype(np.int64)
    # counts[i, r]: draws still inside with item i at rank r (r = 1..n)
    counts = np.zeros((n, n + 2), dtype=np.int64)
    cols = np.arange(n)
    np.add.at(counts, (np.broadcast_to(cols, ranks.shape), ranks), 1)
    alive = np.ones(d, dtype=bool)
    n_alive = d
    while True:
        loss_lo = np.where(lo < m_lo, counts[cols, lo], np.iinfo(np.int64).max)
        loss_hi = np.where(hi > m_hi, counts[cols, hi], np.iinfo(np.int64).max)
        i_lo, i_hi = int(np.argmin(loss_lo)), int(np.argmin(loss_hi))
        if min(loss_lo[i_lo], loss_hi[i_hi]) == np.iinfo(np.int64).max:
            break
        if loss_lo[i_lo] <= loss_hi[i_hi]:
            item, side, loss = i_lo, "lo", loss_lo[i_lo]
        else:
            item, side, loss = i_hi, "hi", loss_hi[i_hi]
        if n_alive - loss < need:
            break
        bound = lo[item] if side == "lo" else hi[item]
        drop = alive & (ranks[:, item] == bound)
        if drop.any():
            np.subtract.at(counts, (np.broadcast_to(cols, (int(drop.sum()), n)), ranks[drop]), 1)
            alive &= ~drop
            n_alive -= int(loss)
        if side == "lo":
            lo[item] += 1
        else:
            hi[item] -= 1
    return lo, hi


def simultaneous_rank_sets(rank_draws: np.ndarray, ci_prob: float
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Joint rank sets: all items' ranks lie in their sets at once in >= ``ci_prob`` of draws.

    Parameters
    ----------
    rank_draws : ndarray, shape (n_draws, n_items)
        Ranks 1..n_items (1 = best) of the items of one ranking group, one row per
        posterior (or Laplace) draw.
    ci_prob : float
        Joint posterior probability the sets must hold, in (0, 1).

    Returns
    -------
    lower, upper : ndarray of int, shape (n_items,)
        Bounds of each item's rank set ``[lower_i, upper_i]``: the tighter (smaller sum
        of widths) of the common-level and the greedy-peeling rectangle (module
        docstring). Each contains the item's marginal equal-tailed ``ci_prob``
        interval; the share of draws with every rank inside is >= ``ci_prob``.

    Examples
    --------
    >>> import numpy as np
    >>> draws = np.array([[1, 2, 3]] * 99 + [[2, 1, 3]])  # one draw in 100 swaps 1 and 2
    >>> simultaneous_rank_sets(draws, 0.9)
    (array([1, 2, 3]), array([1, 2, 3]))
    """
    ranks = _check(rank_draws, ci_prob)
    need = math.ceil(float(ci_prob) * len(ranks) - 1e-9)
    a = _common_level(ranks, float(ci_prob), need)
    b = _greedy(ranks, float(ci_prob), need)
    best = a if (a[1] - a[0]).sum() <= (b[1] - b[0]).sum() else b
    return best[0].astype(np.int64), best[1].astype(np.int64)


def differences_table(labels: pd.DataFrame, draws: np.ndarray, rank: np.ndarray,
                      group: np.ndarray, ci_prob: float,
                      share_mcse: Callable[[np.ndarray], np.ndarray],
                      ok: np.ndarray | None = None) -> pd.DataFrame:
    """Posterior of s_a - s_b for every pair of items of a ranking group, a ranked above b.

    Parameters
    ----------
    labels : DataFrame
        One row per skill: the group's columns (``aspect``, ``context``) and ``item``.
    draws : ndarray, shape (n_draws, n_skills)
        Posterior (or Laplace) draws of the skills.
    rank : ndarray, shape (n_skills,)
        Each skill's rank in its group (1 = best; the ranking's ``rank``): pairs are
        listed best first, ``a`` the better ranked.
    group : ndarray, shape (n_skills,)
        Ranking group of each skill; groups come in order of their label.
    ci_prob : float
        Mass of the equal-tailed interval of each difference.
    share_mcse : callable
        (n_draws, k) booleans -> (k,) Monte Carlo standard errors of their shares of True.
    ok : ndarray of bool, optional
        Per skill: its Laplace interval can be trusted; a pair's ``laplace_ok`` is both.

    Returns
    -------
    pandas.DataFrame
        One row per pair: the group's columns, ``item_a``, ``item_b``, ``mean``, ``sd``,
        ``lower``, ``upper`` of s_a - s_b, ``prob_a_better`` = P(s_a > s_b) and its
        ``prob_a_better_mcse`` (and ``laplace_ok`` with ``ok``). Computed in blocks of
        pairs (:data:`PAIR_BLOCK` elements), never a draws x pairs array of a whole group.
    """
    q = [(1 - ci_prob) / 2, (1 + ci_prob) / 2]
    step = max(1, PAIR_BLOCK // max(1, len(draws)))
    parts = []
    for idx in pd.Series(np.arange(len(group))).groupby(group).indices.values():
        order = idx[np.argsort(rank[idx], kind="stable")]
        a, b = (order[i] for i in np.triu_indices(len(order), 1))
        stats = {k: np.empty(len(a)) for k in ("mean", "sd", "lower", "upper", "prob_a_better",
                                                "prob_a_better_mcse")}
        for start in range(0, len(a), step):
            sl = slice(start, start + step)
            diff = draws[:, a[sl]] - draws[:, b[sl]]
            better = diff > 0
            stats["mean"][sl] = diff.mean(axis=0)
            stats["sd"][sl] = diff.std(axis=0, ddof=1) if len(diff) > 1 else np.nan
            stats["lower"][sl], stats["upper"][sl] = np.quantile(diff, q, axis=0)
            stats["prob_a_better"][sl] = better.mean(axis=0)
            stats["prob_a_better_mcse"][sl] = share_mcse(better)
        part = labels.iloc[a].reset_index(drop=True).rename(columns={"item": "item_a"})
        part.insert(part.columns.get_loc("item_a") + 1, "item_b",
                    labels["item"].to_numpy()[b])
        part = part.assign(**stats)
        if ok is not None:
            part["laplace_ok"] = np.asarray(ok, dtype=bool)[a] & np.asarray(ok, dtype=bool)[b]
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def rank_draws(values: np.ndarray) -> np.ndarray:
    """Rank (1 = largest) of every column per row; ``values`` is (draws, items)."""
    order = np.argsort(-values, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, values.shape[1] + 1)[None, :], axis=1)
    return ranks


def point_ranks(values: np.ndarray) -> np.ndarray:
    """Rank (1 = largest) of every value of ``values`` (items,); exactly equal values share
    the best of their ranks (1, 2, 2, 4), never an order the input's row order made up."""
    ordered = np.sort(values)
    return 1 + len(values) - np.searchsorted(ordered, values, side="right")


def rank_columns(point: np.ndarray, draws: np.ndarray, ci_prob: float, joint: bool,
                 share_mcse: Callable[[np.ndarray], np.ndarray]) -> dict[str, np.ndarray]:
    """The rank columns of a leaderboard of one group, larger values ranked first.

    ``point`` (items,): the estimate the ``rank`` comes from (MAP or posterior mean; equal
    estimates share a rank, :func:`point_ranks`);
    ``draws`` (draws, items). Returns ``rank``, ``rank_lower``/``rank_upper`` (each item's
    equal-tailed ``ci_prob`` interval of its rank over the draws, or with ``joint`` the
    simultaneous sets of :func:`simultaneous_rank_sets`), ``p_best`` (share of draws in
    which the item ranks first) and its ``p_best_mcse`` (``share_mcse`` of that indicator).
    """
    ranks = rank_draws(draws)
    if joint:
        lower, upper = simultaneous_rank_sets(ranks, ci_prob)
    else:
        lower = np.quantile(ranks, (1 - ci_prob) / 2, axis=0, method="lower")
        upper = np.quantile(ranks, (1 + ci_prob) / 2, axis=0, method="higher")
    return {"rank": point_ranks(point), "rank_lower": lower, "rank_upper": upper,
            "p_best": (ranks == 1).mean(axis=0), "p_best_mcse": share_mcse(ranks == 1)}
