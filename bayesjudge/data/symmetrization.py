"""Eq. 3 of Qian, Sun, Gales & Knill (2026): symmetrising pairs judged in both orders.

"Who can we trust? LLM-as-a-jury for Comparative Assessment", arXiv:2602.16610, 3.1:
:math:`p'_{ij} = (p_{ij} + 1 - p_{ji}) / 2` removes a judge's positional preference
from a pair judged in both orders. Eq. 3 is written for one probability per ordered
pair; here every input row stays an observation (the symmetrised pair weighs all the
rows of both orders), so repeated judgments keep their information.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from bayesjudge.data.comparisons import (
    Comparisons,
    collapse_rows,
    collapse_rows_with_values,
    outcome_code,
)

__all__ = ["symmetrize", "symmetrized_cells"]


def symmetrize(comparisons: pd.DataFrame | Comparisons) -> pd.DataFrame | Comparisons:
    r"""Debias positional preference by eq. 3: :math:`p'_{ij} = (p_{ij} + 1 - p_{ji}) / 2`.

    For each (context, aspect, judge, unordered pair) judged in *both* orders,
    the rows of both orders become rows of the first-seen order, and every row
    stays an observation: the pair keeps the weight of all its rows
    (:math:`n_{ij} + n_{ji}`), never one. Eq. 3 is written for one probability
    per ordered pair; with repeated judgments:

    * probabilities (``prob``): p' is eq. 3 of each order's mean probability
      (both orders weigh equally, which is what removes a positional bias even
      when one order was judged more often), and every row of the pair carries p'.
      With as many rows in each order this leaves the soft likelihood (eqs. 2,
      11, 13) exactly as it was: the soft likelihood is linear in p, and
      :math:`p_{ij}` and :math:`1 - p_{ji}` enter it the same way.
      A hard model with ``symmetrize=True`` (``kind="hard"``, ``DavidsonBT``) fitted on
      the raw table reads each row's own verdict with the order shift removed
      (:func:`symmetrized_cells`); with one row per order that is the paper's
      y = 1[p' >= 0.5] (an exact 0.5 a tie, not a win for the item written on the
      left). The table returned here carries the pair's p' on every row: fitting it
      hard with ``symmetrize=False`` counts one thresholded mean once per row, right
      only when each order was judged once.
    * outcomes (``outcome``): every verdict counts once, so the reversed order's
      verdicts are turned around (``left`` <-> ``right``): the pair's win share is
      eq. 3 of the two orders' shares weighted by their numbers of verdicts. With
      one verdict per order (the paper's design) it is exactly eq. 3,
      (y_ij + 1 - y_ji) / 2, counted twice. Averaging the orders' shares with equal
      weight instead would give fractional verdicts; thresholding p' would turn
      2,000 verdicts into one. A positional bias in hard verdicts judged more
      often in one order is modelled by ``DavidsonBT(position_bias=True)``.

    Rows of pairs judged in one order only are kept as they are: eq. 3 needs
    both orders (the model-based alternative for them is
    ``DavidsonBT(position_bias=True)``).

    Parameters
    ----------
    comparisons : pandas.DataFrame or Comparisons
        A comparisons table (see :func:`validate_comparisons`) or its cells.

    Returns
    -------
    pandas.DataFrame or Comparisons
        Same type as the input. A DataFrame has one row per input row (but those
        with a count ``n = 0``), in input order, with the columns ``[context,]
        [aspect,] judge, left, right, prob|outcome[, n]`` (others are dropped); a
        ``Comparisons`` has one cell per symmetrised pair with ``n`` = the rows of
        both orders, and ``n_rows`` unchanged.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"judge": ["k"] * 3, "left": ["a", "b", "a"],
    ...                    "right": ["b", "a", "c"], "prob": [0.9, 0.3, 0.6]})
    >>> out = symmetrize(df)  # (0.9 + 1 - 0.3) / 2 for both a-b rows; a-c kept
    >>> out[["left", "right"]].values.tolist(), out["prob"].round(3).tolist()
    ([['a', 'b'], ['a', 'b'], ['a', 'c']], [0.8, 0.8, 0.6])
    """
    if isinstance(comparisons, Comparisons):
        return _symmetrize_cells(comparisons)
    comps, cell, comparisons = collapse_rows(comparisons)  # the long table, no n = 0 rows
    first, partner, p_sym = _pairs(comps)
    # target cell of every cell: its first-seen partner for the second order, else itself
    target = np.arange(len(comps))
    target[partner[first]] = np.flatnonzero(first)
    flipped = (target != np.arange(len(comps)))[cell]  # rows of a reversed order
    cols = [c for c in ("context", "aspect") if c in comparisons.columns]
    value = "prob" if comps.kind == "soft" else "outcome"
    count = ["n"] if "n" in comparisons.columns else []  # a counted row stays counted
    out = comparisons[[*cols, "judge", "left", "right", value, *count]].copy()
    out[value] = out[value].astype(object) if comps.kind == "hard" else pd.to_numeric(out[value])
    flip_at = np.flatnonzero(flipped)
    for a, b in (("left", "right"), ("right", "left")):
        out.iloc[flip_at, out.columns.get_loc(a)] = comparisons[b].to_numpy()[flip_at]
    if comps.kind == "soft":
        p_cell = np.full(len(comps), np.nan)
        p_cell[first] = p_sym
        p_row = p_cell[target[cell]]
        paired = ~np.isnan(p_row)
        out.iloc[np.flatnonzero(paired), out.columns.get_loc(value)] = p_row[paired]
    else:
        # the validator accepted the labels; turned rows get the canonical label
        turn = {"left": "right", "right": "left", "tie": "tie"}
        verdicts = out[value].to_numpy()[flip_at]
        out.iloc[flip_at, out.columns.get_loc(value)] = [turn[str(v).strip().lower()]
                                                         for v in verdicts]
    return out.reset_index(drop=True)


def _pairs(comps: Comparisons) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells judged in both orders: mask of the earlier cell, partner of each, p' (eq. 3)."""
    n_items, n_j = len(comps.items), len(comps.judges)
    g = comps.group
    key = (g * n_items + comps.left) * n_items * n_j + comps.right * n_j + comps.judge
    rev = (g * n_items + comps.right) * n_items * n_j + comps.left * n_j + comps.judge
    partner = pd.Index(key).get_indexer(rev)
    first = (partner >= 0) & (np.arange(len(key)) < partner)
    mean = comps.prob_sum / comps.n
    p_sym = 0.5 * (mean[first] + 1.0 - mean[partner[first]])  # eq. 3
    return first, partner, p_sym


def symmetrized_cells(comparisons: pd.DataFrame | Comparisons) -> Comparisons:
    r"""The cells of :func:`symmetrize`, with each row's own debiased verdict.

    What a model with ``symmetrize=True`` fits. Probabilities (``prob``) as
    :func:`symmetrize`'s cells: a pair judged in both orders carries eq. 3's p' on the
    weight of all its rows. Its hard outcomes (what ``kind="hard"`` and ``DavidsonBT`` read)
    are the rows' own verdicts with the order bias removed: a row of the order (i, j) with
    probability p says left / tie / right by

    .. math:: p'_{row} = p'_{ij} + (p - \bar p_{ij}), \qquad
              p'_{ij} = (\bar p_{ij} + 1 - \bar p_{ji}) / 2

    (:math:`\bar p`: an order's mean probability), the reversed order's verdicts turned
    around. With one row per order, the paper's design, every row says what eq. 3's p'
    says, as before; with repeated judgments each row is its own verdict, so a pair judged
    500 times each way is not one thresholded mean counted 1,000 times. Outcome tables
    (``outcome``) and cells without their rows (a ``Comparisons``) are
    :func:`symmetrize`'s cells.
    """
    if isinstance(comparisons, Comparisons):
        return _symmetrize_cells(comparisons)
    comps, cell, _, p, w = collapse_rows_with_values(comparisons)
    if comps.kind == "hard":
        return _symmetrize_cells(comps)
    pairs = first, partner, p_sym = _pairs(comps)
    if not first.any():
        return comps
    mean = comps.prob_sum / comps.n
    shifted = mean.copy()  # p'_ij of each cell, from its own order's side
    shifted[first] = p_sym
    shifted[partner[first]] = 0.5 * (mean[partner[first]] + 1.0 - mean[first])
    # p - mean is exactly 0 for a cell of one row: its verdict is exactly eq. 3's
    own = np.bincount(cell * 3 + outcome_code(shifted[cell] + (p - mean[cell])), weights=w,
                      minlength=3 * len(comps)).reshape(-1, 3)
    return _symmetrize_cells(replace(comps, outcomes=own), own_verdicts=True, pairs=pairs)


def _symmetrize_cells(comps: Comparisons, own_verdicts: bool = False,
                      pairs: tuple | None = None) -> Comparisons:
    """Eq. 3 on cells; ``own_verdicts``: ``comps.outcomes`` of a soft table hold each row's
    debiased verdict (:func:`symmetrized_cells`), turned around like hard verdicts;
    ``pairs``: :func:`_pairs` of ``comps`` where the caller has it."""
    first, partner, p_sym = _pairs(comps) if pairs is None else pairs
    if not first.any():
        return comps
    other = partner[first]
    keep = np.ones(len(comps), dtype=bool)
    keep[other] = False
    n, prob_sum, outcomes = comps.n.copy(), comps.prob_sum.copy(), comps.outcomes.copy()
    # every row stays an observation: the pair weighs the rows of both orders
    n[first] = comps.n[first] + comps.n[other]
    if comps.kind == "soft":
        prob_sum[first] = n[first] * p_sym
        outcomes[first] = (comps.outcomes[first] + comps.outcomes[other][:, ::-1]
                           if own_verdicts else n[first, None] * np.eye(3)[outcome_code(p_sym)])
    else:  # each verdict once, the reversed order's turned around
        prob_sum[first] = comps.prob_sum[first] + comps.n[other] - comps.prob_sum[other]
        outcomes[first] = comps.outcomes[first] + comps.outcomes[other][:, ::-1]
    return replace(comps, context=comps.context[keep], aspect=comps.aspect[keep],
                   left=comps.left[keep], right=comps.right[keep], judge=comps.judge[keep],
                   n=n[keep], prob_sum=prob_sum[keep], outcomes=outcomes[keep])
