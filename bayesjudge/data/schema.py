"""Schemas and validation of the long tables every model consumes.

Validation happens once, here, and raises :class:`DataValidationError` naming
the column, the offending values and the fix. Nothing downstream re-checks, so
every function returns clean, typed data (and collapses votes to the count
sufficient statistics the likelihoods use).

Tables (column names are the API, see CONTRIBUTING.md):

* votes  -- ``item``, ``vote`` in {-1, 0, +1}, optional ``confidence`` in [0, 1];
  or counts ``item``, ``n_pos``, ``n_tie``, ``n_neg`` (one form, not both).
* labels -- ``item``, ``label`` in {-1, 0, +1} (or {0, 1} for binary models).

Id columns (:data:`ID_COLUMNS`: ``item``, ``system``, ...) are labels, not
numbers: they are compared exactly as given, so whoever reads a file should read
them as strings (``bayesjudge`` on the command line does), or ``000`` becomes
``0`` and the distinct ids ``1.1`` and ``1.10`` merge. Ids that differ only by
leading/trailing spaces or by letter case stay distinct, with a warning
(:func:`warn_spaced_ids`, :func:`bayesjudge.data.lookalikes.warn_case_ids`).
Labels (outcomes, A/B/tie) are not ids: they ignore letter case and surrounding
spaces (:func:`~bayesjudge.data.vocabulary.label_key`).

Error messages name rows by their index labels (``rows [3]``); a table read from a
file by the command line carries its file lines as index (:data:`LINE_INDEX`), so
there they say ``file lines [5]``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesjudge.constants import CI_PROB
from bayesjudge.data.counts import COUNT, MAX_COUNT, apply_counts, warn_unused_columns
from bayesjudge.data.frames import as_pandas
from bayesjudge.data.lookalikes import (
    check_equal_number_ids,
    check_id_types,
    check_repeated_columns,
    distinct_ids,
    warn_case_ids,
)
from bayesjudge.data.messages import (
    PACKAGE_DIR,
    DataValidationError,
    show_rows,
    show_values,
)
from bayesjudge.data.vocabulary import ADDED_COLUMNS, COLUMN_ROLES, ID_COLUMNS

COUNT_COLUMNS = ("n_pos", "n_tie", "n_neg")
TERNARY = (-1, 0, 1)
BINARY = (0, 1)

_MEANING = {
    TERNARY: "ternary: +1 = first/A better, -1 = second/B better, 0 = tie",
    BINARY: "binary: 1 = 'correct' / a win, 0 = not",
}


@dataclass(frozen=True)
class VoteCounts:
    """Validated vote counts: the sufficient statistic of a votes table.

    Build with :func:`validate_votes`; models accept it wherever they accept a
    votes table and skip re-validation, so a loop over calibration splits
    validates the data once.

    Attributes
    ----------
    items : pandas.Index
        Item ids in first-appearance order (unique).
    counts : ndarray of int64, shape (n_items, 3)
        Columns (c+, c0, c-) = (n_pos, n_tie, n_neg).
    """

    items: pd.Index
    counts: np.ndarray

    def __len__(self) -> int:
        return len(self.items)

    def take(self, positions) -> "VoteCounts":
        """Subset by integer positions (no re-validation)."""
        positions = np.asarray(positions)
        return VoteCounts(self.items[positions], self.counts[positions])

    def to_frame(self) -> pd.DataFrame:
        """The counts form of the votes table."""
        out = pd.DataFrame(self.counts, columns=list(COUNT_COLUMNS))
        out.insert(0, "item", self.items.to_numpy())
        return out


@dataclass(frozen=True)
class Labels:
    """Validated gold labels (build with :func:`validate_labels`)."""

    items: pd.Index
    values: np.ndarray

    def __len__(self) -> int:
        return len(self.items)

    def take(self, positions) -> "Labels":
        """Subset by integer positions (no re-validation)."""
        positions = np.asarray(positions)
        return Labels(self.items[positions], self.values[positions])


def check_unit_interval(values, name: str, fix: str) -> np.ndarray:
    """``values`` as float64 if every one lies in [0, 1], else a DataValidationError.

    NaN fails the check. The message names ``name``, counts and shows the bad
    values and ends with ``fix``.
    """
    arr = np.asarray(values, dtype=np.float64)
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # NaN fails both comparisons
    if bad.any():
        raise DataValidationError(
            f"`{name}` must lie in [0, 1] without NaN; found {int(bad.sum())} bad value(s) "
            f"{show_values(arr[bad])}. {fix}")
    return arr


def require_frame(df, name: str, columns: Iterable[str]) -> pd.DataFrame:
    """Check that ``df`` is a non-empty DataFrame holding ``columns``, each column name once.

    The one entry point of every table's validation: it also names a repeated header
    line and warns about ids that differ only by spaces or letter case. A polars or
    pyarrow table (any table :func:`~bayesjudge.data.frames.as_pandas` reads) is
    returned as a pandas DataFrame: use the returned frame.
    """
    df = as_pandas(df)
    if not isinstance(df, pd.DataFrame):
        raise DataValidationError(
            f"{name} must be a pandas DataFrame, got {type(df).__name__}; "
            f"build one with pd.DataFrame({{...}}) or pd.read_csv(...)."
        )

    columns = list(columns)
    check_repeated_columns(df, name, columns)
    check_index_roles(df, name, columns)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        added = [c for c in df.attrs.get(ADDED_COLUMNS, ()) if c in df.columns]
        said = f" (and {added}, added: a table without a judge is one judge)" if added else ""
        raise DataValidationError(
            f"{name} is missing column(s) {missing}; it has "
            f"{[c for c in df.columns if c not in added]}{said}. "
            f"Rename your columns to {[c for c in columns if c not in added]}."
        )
    if len(df) == 0:
        raise DataValidationError(f"{name} is empty: it needs at least one row.")
    check_header_rows(df, name)
    check_id_types(df, name)
    check_equal_number_ids(df, name)
    ids = distinct_ids(df)  # once for both checks
    warn_spaced_ids(df, name, ids)
    warn_case_ids(df, name, ids)
    return df


def check_index_roles(df: pd.DataFrame, name: str, columns: Iterable[str] = ()) -> None:
    """Raise if an index level is named like a column the table is read by (``judge``,
    ``context``, ``left``, ``n``, ...) and no column has that name.

    Validation reads columns only: ``df.set_index("judge")`` made every row one judge,
    and ``set_index("context")`` pooled every context into one ranking, without a word.
    """
    roles = {*ID_COLUMNS, *COLUMN_ROLES, *columns}
    held = [lvl for lvl in df.index.names
            if isinstance(lvl, str) and lvl in roles and lvl not in df.columns]
    if held:
        raise DataValidationError(
            f"{name} holds {held} in its index, not as column(s), and only columns are read "
            f"(an index of judges would make every row one judge; of contexts, one ranking "
            f"of all). Fix: df.reset_index() before passing the table.")


def check_header_rows(df: pd.DataFrame, name: str) -> None:
    """Raise if a row holds the column names: a repeated header line (concatenated files).

    Read as data it would give every column a value such as ``'outcome'``.
    """
    names = list(df.columns)
    if not names or not all(isinstance(c, str) for c in names):
        return
    header = np.ones(len(df), dtype=bool)
    for col in names:  # the first column rules out almost every row, cheaply
        header &= (df[col] == col).to_numpy(dtype=bool, na_value=False)
        if not header.any():
            return
    raise DataValidationError(
        f"{name} has a repeated header line at {show_rows(df.index[header])}: its values are "
        f"the column names {names}. Fix: delete that line (files joined with their headers?).")


def warn_spaced_ids(df: pd.DataFrame, name: str,
                    ids: dict[str, pd.Series] | None = None) -> None:
    """Warn when ids of a column differ only by leading/trailing spaces.

    Ids are compared exactly as written, so ``" mistral-large "`` and
    ``"mistral-large"`` are two items: never merged silently, but the user hears of it.
    ``left`` and ``right`` hold one set of ids and are checked together. The ids are
    not changed. ``ids``: :func:`~bayesjudge.data.lookalikes.distinct_ids` of ``df``, if
    already computed.
    """
    for cols, values in (distinct_ids(df) if ids is None else ids).items():
        if values.empty:
            continue
        stripped = values.str.strip()
        if (stripped == values).all():
            continue  # no id with outer spaces: nothing can collide
        clash = stripped.duplicated(keep=False)
        if not clash.any():
            continue
        sets = [show_values(sorted(v)) for _, v in values[clash].groupby(stripped[clash],
                                                                       sort=False)]
        shown = "; ".join(sets[:3]) + (f" ... ({len(sets)} sets in all)" if len(sets) > 3 else "")
        where = f"{name}.{cols}"
        warnings.warn(
            f"{where} has ids that differ only by leading/trailing spaces: {shown}. They are "
            f"kept as different ids (ids are compared exactly as written). If they name the "
            f"same thing, remove the spaces in the data (pandas: "
            f"{'; '.join(f'df[{c!r}] = df[{c!r}].str.strip()' for c in cols.split('/'))}).",
            UserWarning, skip_file_prefixes=(PACKAGE_DIR,))


def check_no_missing(df: pd.DataFrame, name: str, columns: Iterable[str]) -> None:
    """Raise if any of ``columns`` holds NaN / None, naming the rows."""
    for col in columns:
        bad = df.index[df[col].isna().to_numpy()]
        if len(bad):
            raise DataValidationError(
                f"{name}.{col} has {len(bad)} missing value(s) (NaN/None) at "
                f"{show_rows(bad)}; drop or fill those rows before fitting (nothing is "
                f"dropped silently)."
            )


def check_integer_values(
    df: pd.DataFrame, name: str, col: str, allowed: Iterable[int], meaning: str | None = None
) -> np.ndarray:
    """Return ``df[col]`` as int64, raising if a value is outside ``allowed``.

    ``meaning`` explains the codes in the error message; by default the ternary
    codes {-1, 0, +1} and the binary codes {0, 1} explain themselves, other sets
    get no explanation.
    """
    allowed = tuple(allowed)
    if meaning is None:
        meaning = _MEANING.get(tuple(sorted(allowed)))
    explain = f" ({meaning})" if meaning else ""
    raw = df[col]
    if -1 in allowed and 0 in allowed:
        _refuse_booleans(raw, name, col)
    numeric = pd.to_numeric(raw, errors="coerce")
    as_float = numeric.to_numpy(dtype=float, na_value=np.nan)
    ok = np.isin(as_float, np.asarray(allowed, dtype=float))
    if not ok.all():
        bad = pd.unique(raw[~ok])
        raise DataValidationError(
            f"{name}.{col} must take values in {set(allowed)}; found {show_values(bad)} "
            f"(e.g. at {show_rows(df.index[~ok])}). Map your labels to "
            f"{set(allowed)}{explain}."
        )
    return as_float.astype(np.int64)


def _refuse_booleans(raw: pd.Series, name: str, col: str) -> None:
    """Raise if a ternary code column holds True/False: numbers would read False as 0, a tie."""
    if raw.dtype != object:
        is_bool = np.full(len(raw), pd.api.types.is_bool_dtype(raw))
    elif pd.api.types.infer_dtype(raw, skipna=True) in ("integer", "floating", "string"):
        return  # (in C) no boolean among them
    else:
        is_bool = raw.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(bool)
    if is_bool.any():
        raise DataValidationError(
            f"{name}.{col} holds True/False (e.g. at {show_rows(raw.index[is_bool])}), but its "
            f"codes are +1 / 0 / -1 and 0 is a tie: False would be read as a tie. Fix: map "
            f"the booleans, e.g. df[{col!r}] = df[{col!r}].map({{True: 1, False: -1}}).")


def validate_votes(votes: pd.DataFrame | VoteCounts) -> VoteCounts:
    """Validate a votes table and collapse it to per-item vote counts.

    Accepts either the long form (``item``, ``vote``; one row per sampled vote, or
    ``n`` identical votes with a count column ``n``) or the counts form (``item``,
    ``n_pos``, ``n_tie``, ``n_neg``; no ``n`` column there).

    Returns
    -------
    VoteCounts
        Items in first-appearance order with their (c+, c0, c-) counts.
    """
    if isinstance(votes, VoteCounts):
        return votes
    votes = as_pandas(votes)
    if isinstance(votes, pd.DataFrame):
        count_cols = [c for c in COUNT_COLUMNS if c in votes.columns]
        if count_cols and "vote" in votes.columns:
            raise DataValidationError(
                f"votes has both a vote column (one row per sampled vote) and count "
                f"column(s) {count_cols} (one row per item), so it is unclear which to use. "
                f"Fix: drop the vote column to use the counts, or drop {count_cols} to count "
                f"the vote rows."
            )
        if count_cols and COUNT in votes.columns:
            raise DataValidationError(
                f"votes has both count column(s) {count_cols} (the counts of one item's votes) "
                f"and a count column n (identical rows), so it is unclear what a row counts. "
                f"Fix: give the votes as n_pos/n_tie/n_neg per item without n, or as item, "
                f"vote, n.")
        if count_cols:  # counts form (a partial set of columns is named there)
            return _validate_counts(votes)
    votes = require_frame(votes, "votes", ["item", "vote"])
    warn_unused_columns(votes, "votes")
    votes, weight = apply_counts(votes, "votes")
    check_no_missing(votes, "votes", ["item", "vote"])
    v = check_integer_values(votes, "votes", "vote", TERNARY)
    if "confidence" in votes.columns:
        check_no_missing(votes, "votes", ["confidence"])
        conf = pd.to_numeric(votes["confidence"], errors="coerce").to_numpy(float)
        bad = ~((conf >= 0) & (conf <= 1))
        if bad.any():
            raise DataValidationError(
                f"votes.confidence must lie in [0, 1]; found "
                f"{show_values(votes['confidence'][bad])} at {show_rows(votes.index[bad])}. "
                f"Rescale it (e.g. a sequence "
                f"probability, not a log-probability)."
            )
    codes, items = pd.factorize(votes["item"], sort=False)
    counts = np.zeros((len(items), 3), dtype=np.int64)
    np.add.at(counts, (codes, 1 - v), 1 if weight is None else weight)  # 0: +1, 1: tie, 2: -1
    return VoteCounts(pd.Index(items, name="item"), counts)


def _validate_counts(votes: pd.DataFrame) -> pd.DataFrame:
    votes = require_frame(votes, "votes", ["item", *COUNT_COLUMNS])
    warn_unused_columns(votes, "votes")
    check_no_missing(votes, "votes", ["item", *COUNT_COLUMNS])
    dup = votes["item"][votes["item"].duplicated()]
    if len(dup):
        raise DataValidationError(
            f"votes.item has duplicated ids in counts form: {show_values(pd.unique(dup))} "
            f"(at {show_rows(dup.index)}). "
            f"Each item needs exactly one row of n_pos/n_tie/n_neg; sum the rows "
            f"per item (df.groupby('item', sort=False).sum()) or fix the ids."
        )
    counts = np.empty((len(votes), 3), dtype=np.int64)
    for j, col in enumerate(COUNT_COLUMNS):
        x = pd.to_numeric(votes[col], errors="coerce").to_numpy(float)
        bad = ~np.isfinite(x) | (x != np.round(x)) | (x > MAX_COUNT)
        if bad.any():
            raise DataValidationError(
                f"votes.{col} must hold whole numbers up to 2**53; found "
                f"{show_values(votes[col][bad])} "
                f"at {show_rows(votes.index[bad])}."
            )
        if (x < 0).any():
            raise DataValidationError(
                f"votes.{col} has negative counts {show_values(votes[col][x < 0])} for items "
                f"{show_values(votes['item'][x < 0])} at {show_rows(votes.index[x < 0])}; "
                f"counts must be >= 0."
            )
        counts[:, j] = x.astype(np.int64)
    empty = counts.sum(axis=1) == 0
    if empty.any():
        raise DataValidationError(
            f"items {show_values(votes['item'][empty])} have zero votes (n_pos = n_tie = "
            f"n_neg = 0); an item needs at least one vote to be aggregated. Remove "
            f"them or collect votes."
        )
    return VoteCounts(pd.Index(votes["item"].to_numpy(), name="item"), counts)


def validate_labels(
    labels: pd.DataFrame | Labels, allowed: Iterable[int] = TERNARY, name: str = "labels"
) -> Labels:
    """Validate a labels table (``item``, ``label``; optional ``n``).

    One gold label per item: a count column ``n`` may only be 0 (the row is
    dropped) or 1, as an item's label repeated is a duplicated item.
    """
    if isinstance(labels, Labels):
        return labels
    labels = require_frame(labels, name, ["item", "label"])
    warn_unused_columns(labels, "labels", name)
    labels, weight = apply_counts(labels, name)
    if weight is not None and (weight > 1).any():
        many = weight > 1
        raise DataValidationError(
            f"{name}.n is above 1 for item(s) {show_values(labels['item'][many])} at "
            f"{show_rows(labels.index[many])}: n = k repeats the row k times, but each item "
            f"has one gold label. Fix: set n to 1 (or drop the n column).")
    check_no_missing(labels, name, ["item", "label"])
    y = check_integer_values(labels, name, "label", allowed)
    dup = labels["item"][labels["item"].duplicated()]
    if len(dup):
        raise DataValidationError(
            f"{name}.item has duplicated ids {show_values(pd.unique(dup))} (at "
            f"{show_rows(dup.index)}); give one gold "
            f"label per item (e.g. the majority of your raters)."
        )
    return Labels(pd.Index(labels["item"].to_numpy(), name="item"), y)


def align_calibration(votes: VoteCounts, labels: Labels) -> np.ndarray:
    """Counts of the labelled items, in label order; every labelled item needs votes.

    Returns
    -------
    ndarray of int64, shape (len(labels), 3)
    """
    if len(votes) == len(labels) and np.array_equal(votes.items, labels.items):
        return votes.counts  # already aligned (the split protocol's fast path)
    pos = votes.items.get_indexer(labels.items)
    if (pos < 0).any():
        missing = labels.items[pos < 0]
        raise DataValidationError(
            f"{len(missing)} labelled item(s) have no votes: {show_values(missing)}. Every "
            f"item in labels must appear in votes (check the item ids match, e.g. "
            f"int vs str)."
        )
    return votes.counts[pos]


def check_ci_prob(ci_prob: float) -> float:
    """Return ``ci_prob`` as a float, or raise a DataValidationError unless it lies in (0, 1).

    The one check of an interval's mass, used by every ``ci_prob`` argument.
    """
    if isinstance(ci_prob, bool) or not (
        isinstance(ci_prob, (int, float, np.floating)) and 0 < ci_prob < 1
    ):
        raise DataValidationError(
            f"ci_prob must lie in (0, 1), got ci_prob={ci_prob!r}. Fix: pass the interval's "
            f"probability as a fraction, e.g. ci_prob={CI_PROB} (not {100 * CI_PROB:g})."
        )
    return float(ci_prob)
