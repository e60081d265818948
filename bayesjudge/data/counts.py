"""The count column ``n`` of every table family, and the columns each family uses.

Aggregated exports (counts per pair and outcome, per item and label) are the
long tables with one row per *distinct* row and its multiplicity: a row with
``n = 5`` is exactly five identical rows, in every model, estimator, metric,
baseline and report of its family (the validators weight their sufficient
statistics by ``n``; the functions that read rows directly expand them with
:func:`expand_counts`). ``n`` must hold whole numbers >= 0; rows with ``n = 0``
are zero observations and are dropped, with a warning if that leaves an id with
no row at all (it then appears in no result).

A column a family does not use is never ignored silently: :func:`warn_unused_columns`
names it in an :class:`UnusedColumnWarning`. The columns each family knows are the
one table :data:`KNOWN_COLUMNS` (required + optional, ``n`` included). A loader that
adds columns on purpose, for the reader (``segment``, ``verdict``), lists them in the
table's ``attrs`` (:func:`mark_info_columns`), which pandas carries through filters,
renames and merges: those are not warned about.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from bayesjudge.data.messages import (
    ID_COLUMNS,
    PACKAGE_DIR,
    DataValidationError,
    show_rows,
    show_values,
)

__all__ = ["COUNT", "INFO_COLUMNS", "KNOWN_COLUMNS", "UnusedColumnWarning", "apply_counts",
           "expand_counts", "mark_info_columns", "row_counts", "warn_unused_columns"]

COUNT = "n"
"""The count column: a row with ``n = k`` stands for ``k`` identical rows."""

KNOWN_COLUMNS: dict[str, tuple[str, ...]] = {
    "votes": ("item", "vote", "confidence", "n_pos", "n_tie", "n_neg", COUNT),
    "labels": ("item", "label", COUNT),
    "comparisons": ("judge", "left", "right", "prob", "outcome", "context", "aspect", COUNT),
    "judgments": ("item", "judge_label", "system", COUNT),
    "calibration": ("item", "judge_label", "human_label", "system", COUNT),
    "annotations": ("item", "annotator", "label", COUNT),
    "judge outputs": ("item", "prob", "prob_swapped", "judge", COUNT),
    # AnchoredBT: one row per (battle, judge), so no count column (a battle is one instance)
    "battles": ("battle", "judge", "left", "right", "outcome"),
}
"""Columns each table family uses (required and optional); any other column is warned about."""

INFO_COLUMNS = "bayesjudge_info_columns"
"""Key of ``DataFrame.attrs`` listing the columns a loader adds for the reader only."""

# Column names that usually hold a multiplicity: the warning suggests renaming them to ``n``.
_COUNT_LIKE = {"count", "counts", "weight", "weights", "freq", "frequency", "num", "n_votes",
               "n_rows", "times", "multiplicity", "cnt"}


class UnusedColumnWarning(UserWarning):
    """A table holds a column its model does not use (a misspelling, a weight, extra data)."""


def mark_info_columns(df: pd.DataFrame, columns) -> pd.DataFrame:
    """``df`` with ``columns`` declared information for the reader (no unused-column warning).

    For loaders: the columns are stored in ``df.attrs[INFO_COLUMNS]``.
    """
    df.attrs[INFO_COLUMNS] = tuple(columns)
    return df


def warn_unused_columns(df: pd.DataFrame, family: str, name: str | None = None) -> None:
    """Warn, naming them, about the columns of ``df`` that ``family`` does not use."""
    known = KNOWN_COLUMNS[family]
    info = df.attrs.get(INFO_COLUMNS, ())
    unused = [c for c in df.columns if c not in known and c not in info]
    if not unused:
        return
    counts = [c for c in unused if isinstance(c, str) and c.strip().casefold() in _COUNT_LIKE]
    hint = (f" If {show_values(counts)} counts identical rows, rename it to `n` "
            f"(df.rename(columns={{{counts[0]!r}: 'n'}})): a row with n = k counts as k rows."
            if counts else " A column that counts identical rows must be named `n`.")
    # runnable code: every unused column, or (many of them) the used ones kept
    used = [c for c in df.columns if c not in unused]
    code = f"df.drop(columns={unused!r})" if len(unused) <= 8 else f"df[{used!r}]"
    warnings.warn(
        f"{name or family} has column(s) {show_values(unused, 8)} that are not used (they are "
        f"ignored); the columns of {family} are {list(known)}. Fix: rename a misspelt column, "
        f"or drop the others ({code}).{hint}",
        UnusedColumnWarning, skip_file_prefixes=(PACKAGE_DIR,))


#: Largest count read: float64 holds every whole number up to 2**53 exactly, and int64
#: takes it without wrapping (1e19 wrapped to a negative count and its row was dropped).
MAX_COUNT = 2**53


def row_counts(df: pd.DataFrame, name: str) -> np.ndarray | None:
    """The validated ``n`` column as int64 (None without one); raises naming bad rows."""
    if COUNT not in df.columns:
        return None
    raw = df[COUNT]
    x = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(x) | (x != np.round(x)) | (x < 0)
    bad |= x > MAX_COUNT
    if bad.any():
        raise DataValidationError(
            f"{name}.n counts identical rows, so it must be a whole number from 0 to 2**53 "
            f"(no NaN); "
            f"found {show_values(pd.unique(raw[bad]))} at {show_rows(df.index[bad])}. Fix: "
            f"repair those rows, or rename the column if it is not a count of rows.")
    return x.astype(np.int64)


def apply_counts(df: pd.DataFrame, name: str) -> tuple[pd.DataFrame, np.ndarray | None]:
    """``df`` without its ``n = 0`` rows, and the counts of the rows kept (None without ``n``).

    A row with ``n = 0`` is no observation: it is dropped, with a warning when an id
    has no other row (it then disappears from every result). A table whose every row
    has ``n = 0`` is an error.
    """
    n = row_counts(df, name)
    if n is None:
        return df, None
    keep = n > 0
    if keep.all():
        return df, n
    if not keep.any():
        raise DataValidationError(
            f"{name}.n is 0 on every row, so the table holds no observation. Fix: give the "
            f"counts of the rows (n >= 1 on at least one row).")
    _warn_vanishing_ids(df, keep, name)
    return df[keep], n[keep]


def _warn_vanishing_ids(df: pd.DataFrame, keep: np.ndarray, name: str) -> None:
    cols = [c for c in ID_COLUMNS if c in df.columns and c not in ("left", "right")]
    groups = [[c] for c in cols]
    if "left" in df.columns and "right" in df.columns:
        groups.append(["left", "right"])
    lost_all = []
    for group in groups:
        kept = pd.unique(pd.concat([df[c][keep] for c in group], ignore_index=True))
        gone = pd.unique(pd.concat([df[c][~keep] for c in group], ignore_index=True))
        lost = pd.Index(gone).difference(pd.Index(kept), sort=False)
        if len(lost):
            lost_all.append(f"{'/'.join(group)} {show_values(list(lost))}")
    if lost_all:
        warnings.warn(
            f"{name}: the rows with n = 0 (at {show_rows(df.index[~keep])}) are dropped (they "
            f"count zero observations), and with them every row of {'; '.join(lost_all)}, "
            f"which therefore appear in no result. Fix: give them counts, or remove them to "
            f"silence this warning.", UserWarning, skip_file_prefixes=(PACKAGE_DIR,))


def expand_counts(df: pd.DataFrame, name: str = "table") -> pd.DataFrame:
    """``df`` with each row repeated ``n`` times and the ``n`` column dropped.

    A table without ``n`` is returned as it is. The repeated rows keep their index
    label, so error messages still name the row of the counted table.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["a", "b"], "vote": [1, -1], "n": [2, 1]})
    >>> expand_counts(df)["item"].tolist()
    ['a', 'a', 'b']
    """
    if not isinstance(df, pd.DataFrame) or COUNT not in df.columns:
        return df
    df, n = apply_counts(df, name)
    return df.iloc[np.repeat(np.arange(len(df)), n)].drop(columns=COUNT)
