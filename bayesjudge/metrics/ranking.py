"""Ranking metrics of the LLM-as-a-jury setting: cycle inconsistency, per-context SRC.

Implements the diagnostics and evaluation metrics of Qian, Sun, Gales & Knill (2026),
"Who can we trust? LLM-as-a-jury for Comparative Assessment", arXiv:2602.16610:
the cycle inconsistency rate of Section 3.2 (eqs. 8-10), Spearman's rank correlation
per context averaged over contexts (SRC, Section 4), and the correlation of the
learned judge reliability 1/sigma_k with judge quality (Section 5.3, Tables 3-4).
Tables are in the comparisons schema (a row with a count ``n = k`` is ``k`` rows);
everything is vectorised: no Python loop over contexts, judges or triples.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

import numpy as np
import pandas as pd

from bayesjudge.data import DataValidationError, check_no_missing, comparisons_table, show_values
from bayesjudge.data.counts import expand_counts
from bayesjudge.data.messages import show_rows
from bayesjudge.data.schema import require_frame
from bayesjudge.data.vocabulary import label_key
from bayesjudge.metrics.rank_correlation import (  # noqa: F401  (re-exports)
    reliability_correlation,
    spearman_per_context,
)

__all__ = [
    "OUTCOME_PROBS",
    "comparison_probs",
    "cycle_rate",
    "reliability_correlation",
    "spearman_per_context",
]

#: Hard outcomes as probabilities that ``left`` beats ``right`` (a tie is 0.5).
OUTCOME_PROBS = {"left": 1.0, "tie": 0.5, "right": 0.0}

#: Columns that split a comparisons table into separate preference matrices.
_CELL_COLUMNS = ("judge", "context", "aspect")


def comparison_probs(comparisons: pd.DataFrame, name: str = "comparisons") -> np.ndarray:
    """P(left beats right) of every row of a comparisons table, soft or hard.

    ``prob`` is taken as given (it must lie in [0, 1]); ``outcome`` in {left, right,
    tie} becomes 1, 0 and 0.5. A table may hold both columns only if each row fills
    exactly one of them.

    Parameters
    ----------
    comparisons : pandas.DataFrame
        Columns ``left``, ``right`` and ``prob`` and/or ``outcome``.
    name : str
        Name of the table in error messages.

    Returns
    -------
    numpy.ndarray
        float64, one value per row, in row order.

    Raises
    ------
    DataValidationError
        Missing columns, NaN or out-of-range probabilities, unknown outcome labels,
        rows with both or neither of ``prob`` / ``outcome``, self-comparisons.
    """
    comparisons = require_frame(comparisons_table(comparisons), name, ["left", "right"])
    check_no_missing(comparisons, name, ["left", "right"])
    has_p, has_o = "prob" in comparisons.columns, "outcome" in comparisons.columns
    if not (has_p or has_o):
        raise DataValidationError(
            f"{name} needs a column 'prob' (P(left beats right), soft) or 'outcome' "
            f"(left/right/tie, hard); it has {list(comparisons.columns)}."
        )
    p_given = comparisons["prob"].notna().to_numpy() if has_p else np.zeros(len(comparisons), bool)
    o_given = (
        comparisons["outcome"].notna().to_numpy() if has_o else np.zeros(len(comparisons), bool)
    )
    bad = np.flatnonzero(p_given == o_given)
    if len(bad):
        which = "both" if (p_given & o_given)[bad[0]] else "neither"
        raise DataValidationError(
            f"{name}: {show_rows(comparisons.index[bad])} have {which} of 'prob' and "
            "'outcome'; give each row exactly one (prob for soft, outcome for hard judgments)."
        )
    out = np.empty(len(comparisons))
    if has_p:
        raw = pd.to_numeric(comparisons["prob"], errors="coerce").to_numpy(float)
        p = raw[p_given]
        wrong = ~np.isfinite(p) | (p < 0) | (p > 1)
        if wrong.any():
            raise DataValidationError(
                f"{name}.prob must be a number in [0, 1]; got "
                f"{show_values(comparisons['prob'].to_numpy()[p_given][wrong])} at "
                f"{show_rows(comparisons.index[p_given][wrong])}. Pass probabilities, "
                "not logits or percentages."
            )
        out[p_given] = p
    if has_o:
        o = comparisons["outcome"].to_numpy()[o_given]
        codes, labels = pd.factorize(o)  # labels: any letter case, spaces ignored
        mapped = np.array([OUTCOME_PROBS.get(label_key(v), np.nan) for v in labels])[codes]
        if (wrong := np.isnan(mapped)).any():
            raise DataValidationError(
                f"{name}.outcome must be one of {list(OUTCOME_PROBS)} (any case); got labels "
                f"{show_values(pd.unique(o[wrong]))} at "
                f"{show_rows(comparisons.index[o_given][wrong])}. Recode them ('A' -> 'left').")
        out[o_given] = mapped
    self_cmp = np.flatnonzero(comparisons["left"].eq(comparisons["right"]).to_numpy(bool))
    if len(self_cmp):
        raise DataValidationError(
            f"{name}: left == right (a self-comparison) at "
            f"{show_rows(comparisons.index[self_cmp])}; drop those rows."
        )
    return out


def _codes(values: pd.Series) -> np.ndarray:
    """Integer codes of exact values, first-appearance order (no copy to Python objects)."""
    return pd.factorize(values, sort=False)[0].astype(np.int64)


def cycle_rate(
    comparisons: pd.DataFrame,
    by: Sequence[str] | None = None,
    *,
    symmetrize: bool = True,
    per_context: bool = False,
) -> pd.DataFrame:
    """Cycle inconsistency rate (eqs. 8-10) per judge (and aspect), averaged over contexts.

    For every preference matrix -- one per (``judge``, ``context``, ``aspect``), with
    whichever of those columns the table has -- the adjacency matrix is

    .. math:: A_{ij} = \\mathbb 1[p_{ij} > 0.5] \\qquad (8)

    and the number of directed 3-cycles, either orientation, is

    .. math:: N_{cycles} = \\sum_{i<j<k} \\mathbb 1(A_{ij}A_{jk}A_{ki}=1)
              + \\mathbb 1(A_{ik}A_{kj}A_{ji}=1) = \\operatorname{tr}(A^3)/3 \\qquad (9)

    (``tr(A^3)`` counts each directed cycle once per rotation), so that
    ``CycleRate = N_cycles / N_triples`` (eq. 10). The matrices are built with numpy
    and counted by batched matrix products, grouped by matrix size.

    Choices (the paper leaves them open):

    * ``symmetrize=True`` (default): when a pair was judged in both orders, its
      probabilities are first symmetrised as in eq. 3,
      :math:`p'_{ij} = (p_{ij} + 1 - p_{ji})/2`, which the paper applies before every
      BT model; then :math:`A_{ji} = 1 - A_{ij}` unless :math:`p'_{ij} = 0.5`.
      ``symmetrize=False`` reads each ordered entry from its own rows, so a judge with
      positional bias may prefer both i over j and j over i (then a triple can hold
      both orientations of eq. 9 and the rate can exceed 1); a pair judged in one
      order only fills :math:`A_{ji}` from :math:`1 - p_{ij}` in both modes. Repeated
      rows of one ordered pair are averaged first.
    * Hard outcomes count as 1 (left), 0 (right), 0.5 (tie): a tie is an edge in
      neither direction, so it can never close a cycle.
    * Sparse designs: only triples whose three pairs were all judged can be counted;
      ``N_triples`` is the number of such *countable* triples (``C(n, 3)`` for a
      complete design, the paper's case) and ``n_triples_total`` is ``C(n, 3)`` over
      the items the judge compared in that matrix.

    The paper reports one rate per judge per aspect, the mean over articles of the
    per-article rate; ``cycle_rate`` is that mean over the matrices of a group that
    have at least one countable triple (``n_matrices``; those without are skipped
    and counted in ``n_matrices_skipped``).

    Parameters
    ----------
    comparisons : pandas.DataFrame
        Comparisons table: ``left``, ``right``, ``prob`` (P(left beats right)) or
        ``outcome`` (left/right/tie); optional ``judge``, ``context``, ``aspect``, ``n``.
        Ids are compared exactly as given.
    by : sequence of str, optional
        Columns to report rates for (each a subset of ``judge``, ``context``,
        ``aspect``). Default: ``judge`` and ``aspect``, whichever exist. ``by=()``
        gives one overall rate.
    symmetrize : bool, default True
        Apply eq. 3 to pairs judged in both orders first (see above).
    per_context : bool, default False
        Return one row per matrix instead of the group means.

    Returns
    -------
    pandas.DataFrame
        One row per group (in first-appearance order): the ``by`` columns,
        ``cycle_rate``, ``n_cycles`` (sum over matrices), ``n_triples`` (countable),
        ``n_triples_total``, ``n_matrices``, ``n_matrices_skipped``. With
        ``per_context=True``: one row per matrix with the cell columns, ``n_items``,
        ``n_cycles``, ``n_triples``, ``n_triples_total``, ``cycle_rate`` (NaN when
        nothing is countable).

    Examples
    --------
    >>> df = pd.DataFrame({"judge": "j", "left": ["a", "b", "c"], "right": ["b", "c", "a"],
    ...                    "prob": [0.9, 0.8, 0.7]})
    >>> float(cycle_rate(df)["cycle_rate"].iloc[0])
    1.0
    """
    comparisons = expand_counts(comparisons_table(comparisons), "comparisons")  # n = k: k rows
    p = comparison_probs(comparisons)
    cells = [c for c in _CELL_COLUMNS if c in comparisons.columns]
    if by is None:
        by = [c for c in ("judge", "aspect") if c in comparisons.columns]
    by = list(by)
    unknown = [c for c in by if c not in cells]
    if unknown:
        raise DataValidationError(
            f"cycle_rate: by={by} names {unknown}, which are not columns of the table among "
            f"{list(_CELL_COLUMNS)}; choose from {cells}."
        )
    check_no_missing(comparisons, "comparisons", cells)

    # Items are indexed within their context (shared by the judges and aspects of it).
    if "context" in cells:
        ctx_code = _codes(comparisons["context"])
    else:
        ctx_code = np.zeros(len(p), np.int64)
    item_code = _codes(
        pd.concat([comparisons["left"], comparisons["right"]], ignore_index=True)
    )
    n_glob = int(item_code.max()) + 1
    pair = np.concatenate([ctx_code, ctx_code]) * n_glob + item_code
    uniq, inv = np.unique(pair, return_inverse=True)
    u_ctx = uniq // n_glob
    first = np.searchsorted(u_ctx, u_ctx, side="left")
    local = (np.arange(len(uniq)) - first)[inv]
    n_ctx = np.bincount(u_ctx)
    li, ri = local[: len(p)], local[len(p):]

    # One matrix per cell (judge, context, aspect).
    cell_frame = comparisons[cells] if cells else pd.DataFrame(index=comparisons.index)
    mid = np.zeros(len(p), np.int64)
    for col in cells:  # combined code of the cell columns, then compacted
        code = ctx_code if col == "context" else _codes(comparisons[col])
        mid = mid * (int(code.max()) + 1) + code
        if mid.max() > 2**40:  # keep the combined code far from int64 overflow
            mid = np.unique(mid, return_inverse=True)[1].ravel()
    mid = np.unique(mid, return_inverse=True)[1].ravel()
    n_mat = int(mid.max()) + 1
    m_ctx = np.zeros(n_mat, np.int64)
    m_ctx[mid] = ctx_code
    m_size = n_ctx[m_ctx]

    cycles = np.zeros(n_mat)
    countable = np.zeros(n_mat)
    n_items = np.zeros(n_mat, np.int64)
    for n in np.unique(m_size):
        mats = np.flatnonzero(m_size == n)
        pos = np.full(n_mat, -1)
        pos[mats] = np.arange(len(mats))
        rows = np.flatnonzero(pos[mid] >= 0)
        flat = pos[mid[rows]] * n * n + li[rows] * n + ri[rows]
        size = len(mats) * n * n
        s = np.bincount(flat, weights=p[rows], minlength=size).reshape(len(mats), n, n)
        c = np.bincount(flat, minlength=size).reshape(len(mats), n, n).astype(float)
        obs = c > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            pm = np.where(obs, s / np.where(obs, c, 1.0), 0.0)
        obs_t = np.swapaxes(obs, 1, 2)
        rev = 1.0 - np.swapaxes(pm, 1, 2)  # 1 - p_ji
        if symmetrize:
            k = obs.astype(float) + obs_t
            q = (pm * obs + rev * obs_t) / np.where(k > 0, k, 1.0)
            adj = (k > 0) & (q > 0.5)
        else:
            adj = np.where(obs, pm > 0.5, obs_t & (rev > 0.5))
        a = adj.astype(float)
        u = (obs | obs_t).astype(float)
        # tr(A^3) = sum_ij (A A)_ij A_ji; batched BLAS products
        cycles[mats] = np.rint((np.matmul(a, a) * np.swapaxes(a, 1, 2)).sum(axis=(1, 2)) / 3.0)
        countable[mats] = np.rint((np.matmul(u, u) * u).sum(axis=(1, 2)) / 6.0)
        n_items[mats] = (obs | obs_t).any(axis=2).sum(axis=1)

    total = np.array([comb(int(k), 3) for k in n_items], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(countable > 0, cycles / np.where(countable > 0, countable, 1), np.nan)
    first_row = np.unique(mid, return_index=True)[1]
    per = cell_frame.iloc[first_row].reset_index(drop=True) if cells else pd.DataFrame(
        index=range(n_mat))
    per["n_items"] = n_items
    per["n_cycles"] = cycles.astype(np.int64)
    per["n_triples"] = countable.astype(np.int64)
    per["n_triples_total"] = total.astype(np.int64)
    per["cycle_rate"] = rate
    if per_context:
        return per
    per["_ok"] = np.isfinite(rate)
    keys = by if by else np.zeros(len(per), np.int64)
    g = per.groupby(keys, sort=False, dropna=False)
    out = g.agg(
        cycle_rate=("cycle_rate", "mean"),
        n_cycles=("n_cycles", "sum"),
        n_triples=("n_triples", "sum"),
        n_triples_total=("n_triples_total", "sum"),
        n_matrices=("_ok", "sum"),
    )
    out["n_matrices_skipped"] = g.size().to_numpy() - out["n_matrices"].to_numpy()
    out["n_matrices"] = out["n_matrices"].astype(np.int64)
    out = out.reset_index(drop=not by)
    return out
