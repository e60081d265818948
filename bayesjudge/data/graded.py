"""Graded verdicts (``A>>B, A>B, A=B, B>A, B>>A``): levels, validation, sufficient statistics.

Arena-Hard-Auto (Li et al. 2024, "From Crowdsourced Data to High-Quality Benchmarks:
Arena-Hard and BenchBuilder Pipeline", arXiv:2406.11939), MT-bench-style and many judge
prompts answer a pairwise question on an ordered scale instead of left / tie / right.
A graded table is the comparisons table of :mod:`bayesjudge.data.comparisons` whose
``outcome`` holds one of ``levels``, listed from the strongest preference for ``right``
to the strongest for ``left`` (default: Arena-Hard's labels with A = left). Labels are
matched as the family's labels are (letter case and surrounding spaces ignored,
:func:`~bayesjudge.data.schema.label_key`).

:func:`validate_graded` collapses the table to the cells of a
:class:`~bayesjudge.data.comparisons.Comparisons` (one per distinct context, aspect,
left, right, judge; every input row one observation) and the counts of each level per
cell. The cells' three-way ``outcomes`` are the levels collapsed to left / tie / right
(:func:`three_way`): the levels below the middle are ``right``, the middle level of an
odd number of levels is ``tie``, the levels above it ``left``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesjudge.data.arena import comparisons_table
from bayesjudge.data.comparisons import COMPARISON_OUTCOMES, Comparisons, collapse_rows
from bayesjudge.data.counts import apply_counts
from bayesjudge.data.messages import DataValidationError, show_rows, show_values
from bayesjudge.data.schema import require_frame
from bayesjudge.data.vocabulary import DEFAULT_LEVELS, check_levels, verdict_key

__all__ = ["DEFAULT_LEVELS", "check_levels", "collapse_levels", "three_way", "validate_graded"]

_NAME = "comparisons"


def three_way(n_levels: int) -> np.ndarray:
    """Column of :data:`COMPARISON_OUTCOMES` (0 left, 1 tie, 2 right) of each level code."""
    code = np.arange(n_levels)
    mid = (n_levels - 1) / 2
    return np.where(code > mid, 0, np.where(code < mid, 2, 1))


def level_codes(table: pd.DataFrame, levels: tuple[str, ...]) -> np.ndarray:
    """Level code (0 = ``levels[0]``) of every row's ``outcome``; unknown labels raise."""
    col = table["outcome"]
    missing = col.isna().to_numpy()
    if missing.any():
        raise DataValidationError(
            f"{_NAME}.outcome is missing (empty, NaN/None) at {show_rows(table.index[missing])}. "
            f"Fix: give every row one of the levels {list(levels)}, or drop those rows.")
    codes, labels = pd.factorize(col, sort=False)
    lookup = {verdict_key(v): i for i, v in enumerate(levels)}
    # numbers in the table meet the levels as text (1 .. 5, read from a file as numbers)
    code_of = np.array([lookup.get(verdict_key(v), -1) for v in labels], dtype=np.int64)
    out = code_of[codes]
    bad = out < 0
    if bad.any():
        raise DataValidationError(
            f"{_NAME}.outcome has label(s) {show_values(pd.unique(col[bad]))} at "
            f"{show_rows(table.index[bad])} that are not among the levels {list(levels)} "
            f"(listed from the strongest preference for right to the strongest for left; "
            f"letter case and surrounding spaces are ignored). Fix: pass levels=[...] with "
            f"your labels in that order, or map the outcome column to them.")
    return out


def collapse_levels(table: pd.DataFrame, levels=None) -> pd.DataFrame:
    """The graded table with ``outcome`` collapsed to left / tie / right (a copy).

    Levels below the middle become ``right``, the middle level of an odd number of
    levels ``tie``, the levels above it ``left``: the table DavidsonBT and BradleyTerry
    read. Other columns are kept as they are.
    """
    levels = check_levels(levels)
    require_frame(table, _NAME, ["outcome"])
    codes = level_codes(table, levels)
    out = table.copy()
    out["outcome"] = np.asarray(COMPARISON_OUTCOMES, dtype=object)[three_way(len(levels))[codes]]
    return out


def validate_graded(table: pd.DataFrame, levels=None) -> tuple[Comparisons, np.ndarray]:
    """Validate a graded comparisons table and collapse it to cells with level counts.

    Parameters
    ----------
    table : pandas.DataFrame
        ``judge``, ``left``, ``right``, ``outcome`` (one of ``levels``) and optional
        ``context`` / ``aspect``, as :func:`~bayesjudge.data.comparisons.validate_comparisons`.
    levels : sequence of str, optional
        The ordered labels, strongest preference for ``right`` first (default
        :data:`DEFAULT_LEVELS`).

    Returns
    -------
    comps : Comparisons
        The cells, their three-way outcomes from :func:`three_way` (ids, connectivity
        and self-comparisons checked as for any comparisons table).
    counts : ndarray of float64, shape (n_cells, n_levels)
        Rows of each level in each cell (sums to ``comps.n``).

    Raises
    ------
    DataValidationError
        A ``prob`` column (graded verdicts are labels), a missing or unknown label, and
        everything :func:`~bayesjudge.data.comparisons.validate_comparisons` refuses.
    """
    levels = check_levels(levels)
    df = comparisons_table(table)  # polars/pyarrow, no judge column, mapped names
    if not isinstance(df, pd.DataFrame) or "outcome" not in df.columns or not len(df):
        require_frame(df, _NAME, ["judge", "left", "right", "outcome"])  # raises, naming it
    # (collapse_rows runs the full require_frame: its look-alike id warnings come once)
    if "prob" in df.columns:
        raise DataValidationError(
            f"{_NAME} has a prob column: graded verdicts are read from outcome (one of "
            f"{list(levels)}). Fix: drop prob, or fit the probabilities with BradleyTerry.")
    df, weight = apply_counts(df, _NAME)  # a row with n = k is k verdicts; n = 0 rows dropped
    codes = level_codes(df, levels)
    three = df.copy(deep=False)
    three["outcome"] = np.asarray(COMPARISON_OUTCOMES, dtype=object)[three_way(len(levels))[codes]]
    comps, cell, _ = collapse_rows(three)
    k = len(levels)
    counts = np.bincount(cell * k + codes, weights=weight,
                         minlength=len(comps) * k).reshape(-1, k)
    if not np.allclose(counts.sum(axis=1), comps.n):  # the cells weigh what the rows count
        raise AssertionError("graded level counts disagree with the cells' row counts")
    return comps, counts.astype(float)
