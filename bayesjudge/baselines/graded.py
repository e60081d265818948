"""Baselines for graded verdicts (``B>>A .. A>>B``) beside :class:`~bayesjudge.OrdinalBT`.

* :func:`arena_hard_score` -- Arena-Hard-Auto's own scoring (Li et al. 2024, "From
  Crowdsourced Data to High-Quality Benchmarks: Arena-Hard and BenchBuilder Pipeline",
  arXiv:2406.11939; ``show_result.py`` of github.com/lmarena/arena-hard-auto,
  ``load_judgments(weight=3)`` and ``print_leaderboard``): every verdict becomes
  battles, a strong one (``A>>B``) ``weight`` = 3 wins of A, a slight one one win, a tie
  one battle scored 0.5; a model's score is the mean over its battles (its weighted
  win rate). Arena-Hard compares every model with one baseline model; here every
  comparison counts for both of its items.
* :func:`linear_reward_score` -- the levels as equally spaced rewards (five levels:
  +2 / +1 / 0 / -1 / -2 for the item they favour), averaged per item.

Both pool the judges and read the same table as ``OrdinalBT`` (labels matched in any
letter case, surrounding spaces ignored; ``context`` / ``aspect`` give one ranking per
group, as the models).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesjudge.data import check_no_missing, require_frame
from bayesjudge.data.counts import apply_counts
from bayesjudge.data.graded import check_levels, level_codes

__all__ = ["arena_hard_score", "linear_reward_score"]


def _long(table: pd.DataFrame, levels, left_value: np.ndarray, n_rows: np.ndarray):
    """Per (group, item): sums of ``left_value`` (the left item's view; right gets its
    mirror ``value[K-1-m]``) and of ``n_rows`` over the item's comparisons."""
    levels = check_levels(levels)
    df = require_frame(table, "comparisons", ["left", "right", "outcome"])
    # a counts table (``n`` identical rows per row) weighs each row by its count, as the
    # models read it (before 2026-12-02 ``n`` was ignored: a row of n = 5 counted once)
    df, counts = apply_counts(df, "comparisons")
    weight = np.ones(len(df)) if counts is None else counts.astype(float)
    code = level_codes(df, levels)
    groups = [c for c in ("aspect", "context") if c in df.columns]
    check_no_missing(df, "comparisons", ["left", "right", *groups])
    k = len(levels)
    sides = []
    for side, value in (("left", left_value[code]), ("right", left_value[k - 1 - code])):
        part = df[groups].copy()
        part["item"] = df[side].to_numpy()
        part["_value"], part["_n"], part["_rows"] = weight * value, weight * n_rows[code], weight
        sides.append(part)
    long = pd.concat(sides, ignore_index=True)
    out = long.groupby([*groups, "item"], sort=False, dropna=False).agg(
        n_comparisons=("_rows", "sum"), _value=("_value", "sum"), _n=("_n", "sum"))
    out["n_comparisons"] = out["n_comparisons"].astype(np.int64)
    return out.reset_index(), groups


def _ranked(out: pd.DataFrame, groups: list[str], score: str) -> pd.DataFrame:
    """Groups in first-appearance order, items by ``score`` within them, and their rank."""
    group = (out.groupby(groups, sort=False, dropna=False).ngroup().to_numpy() if groups
             else np.zeros(len(out), dtype=int))
    out = out.assign(_g=group).sort_values(["_g", score], ascending=[True, False],
                                           kind="stable")
    out["rank"] = out.groupby("_g")[score].rank(ascending=False, method="min").astype(int)
    return out.drop(columns="_g").reset_index(drop=True)


def arena_hard_score(table: pd.DataFrame, levels=None, *, weight: int = 3) -> pd.DataFrame:
    """Arena-Hard-Auto's score: weighted win rate with a strong verdict as ``weight`` wins.

    Parameters
    ----------
    table : pandas.DataFrame
        ``left``, ``right``, ``outcome`` (one of ``levels``); optional ``judge`` (pooled),
        ``context`` / ``aspect`` (one ranking per group), ``n`` (identical rows the row
        stands for: each counts ``n`` times).
    levels : sequence of str, optional
        Ordered labels, strongest preference for ``right`` first (default Arena-Hard's
        ``["B>>A", "B>A", "A=B", "A>B", "A>>B"]``, A = left). The outermost two levels
        are the strong verdicts when there are at least four levels (with two or three
        every verdict counts once).
    weight : int
        Battles a strong verdict counts as (Arena-Hard: 3).

    Returns
    -------
    pandas.DataFrame
        Per item (within its group): ``n_comparisons`` (rows it appears in, each counted
        ``n`` times),
        ``n_battles`` (after weighting), ``score`` (wins / battles, a tie half a win)
        and ``rank`` (1 = best; equal scores share the best rank), sorted by score.
    """
    if isinstance(weight, bool) or not isinstance(weight, (int, np.integer)) or weight < 1:
        raise ValueError(f"weight must be a positive integer (Arena-Hard: 3), got {weight!r}")
    k = len(check_levels(levels))
    n_rows = np.ones(k)
    if k >= 4:
        n_rows[[0, -1]] = weight
    win = np.where(np.arange(k) > (k - 1) / 2, 1.0, np.where(np.arange(k) < (k - 1) / 2, 0.0,
                                                             0.5))
    out, groups = _long(table, levels, win * n_rows, n_rows)
    out["n_battles"] = out.pop("_n").astype(int)
    out["score"] = out.pop("_value") / out["n_battles"]
    return _ranked(out, groups, "score")


def linear_reward_score(table: pd.DataFrame, levels=None) -> pd.DataFrame:
    """Mean reward per item with equally spaced level rewards (+2 / +1 / 0 / -1 / -2).

    Level m of K is worth ``m - (K - 1) / 2`` to the left item and the opposite to the
    right item (five levels: -2, -1, 0, 1, 2; four: -1.5, -0.5, 0.5, 1.5).

    Parameters
    ----------
    table : pandas.DataFrame
        As :func:`arena_hard_score`.
    levels : sequence of str, optional
        As :func:`arena_hard_score`.

    Returns
    -------
    pandas.DataFrame
        Per item (within its group): ``n_comparisons``, ``reward`` (mean over its
        comparisons) and ``rank`` (1 = best), sorted by reward.
    """
    k = len(check_levels(levels))
    value = np.arange(k) - (k - 1) / 2
    out, groups = _long(table, levels, value, np.ones(k))
    out["reward"] = out.pop("_value") / out.pop("_n")
    return _ranked(out, groups, "reward")
