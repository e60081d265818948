"""Validation of the tables of probabilistic judges: human annotations and judge outputs.

The preference-distribution setting of Li, Li, Huang et al. (2025), "Judging with
Confidence: Calibrating Autoraters to Preference Distributions", arXiv:2510.00263
(section 2.1): each item (a prompt with responses A and B) has a population
preference p*(x) = Pr[B better], estimated from m annotators, and a judge reports
a probability p(x) of the same event. Two long tables carry that:

* annotations -- ``item``, ``annotator``, ``label`` in {"A", "B", "tie"}. The
  codes 0 and 1 are accepted as A and B in the paper's convention (Y = 1 means
  B is preferred, section 2.1), so ``1 -> "B"`` and ``0 -> "A"``; ties are
  optional. One row per (item, annotator); collapsed to per-item counts
  (k_A, k_tie, k_B) and m = k_A + k_tie + k_B in first-appearance item order.
  An optional count ``n``: a row with ``n = k`` is ``k`` annotators giving that
  label (its ``annotator`` then names the group; (item, annotator) stays unique
  as the rows are given); rows with ``n = 0`` are dropped.
* judge outputs -- ``item``, ``prob`` = P(B better) and optionally
  ``prob_swapped`` = P(A better) from the prompt with A and B swapped (so an
  unbiased judge has prob + prob_swapped = 1, section 5.2), optionally ``judge``.
  One prediction per (judge, item): a count ``n`` may only be 1 (the counts of
  human labels belong in the annotations).

Everything raises :class:`~bayesjudge.data.DataValidationError` naming the
column, the first bad values and the fix; nothing is dropped silently.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesjudge.data.counts import COUNT, apply_counts, warn_unused_columns
from bayesjudge.data.messages import PACKAGE_DIR, DataValidationError, show_rows, show_values
from bayesjudge.data.schema import BINARY, Labels, check_no_missing, require_frame
from bayesjudge.data.vocabulary import label_key

__all__ = [
    "OUTCOME_LABELS",
    "AnnotationCounts",
    "JudgeOutputs",
    "align_outputs",
    "calibration_targets",
    "check_both_classes",
    "validate_annotations",
    "validate_judge_outputs",
]

OUTCOME_LABELS = ("A", "tie", "B")
"""Column order of every annotation-count array: (k_A, k_tie, k_B)."""

# label spelling -> column of OUTCOME_LABELS; 0/1 follow the paper's Y (1 = B better).
_CODES = {"a": 0, "tie": 1, "b": 2, "0": 0, "1": 2, "0.0": 0, "1.0": 2}


@dataclass(frozen=True)
class AnnotationCounts:
    """Per-item annotation counts (the sufficient statistic of an annotations table).

    Attributes
    ----------
    items : pandas.Index
        Item ids in first-appearance order (unique, exactly as given).
    counts : ndarray of int64, shape (n_items, 3)
        Columns (k_A, k_tie, k_B), see :data:`OUTCOME_LABELS`.
    """

    items: pd.Index
    counts: np.ndarray

    def __len__(self) -> int:
        return len(self.items)

    @property
    def m(self) -> np.ndarray:
        """Annotations per item, k_A + k_tie + k_B."""
        return self.counts.sum(axis=1)

    @property
    def has_ties(self) -> bool:
        """Whether any annotator chose tie."""
        return bool(self.counts[:, 1].any())

    def take(self, positions) -> "AnnotationCounts":
        """Subset by integer positions (no re-validation)."""
        positions = np.asarray(positions)
        return AnnotationCounts(self.items[positions], self.counts[positions])

    def to_frame(self) -> pd.DataFrame:
        """Columns ``item, k_a, k_tie, k_b, m``."""
        out = pd.DataFrame(self.counts, columns=["k_a", "k_tie", "k_b"])
        out.insert(0, "item", self.items.to_numpy())
        out["m"] = self.m
        return out


@dataclass(frozen=True)
class JudgeOutputs:
    """A validated judge-outputs table, one entry per input row (input order).

    Attributes
    ----------
    items : ndarray of object
        ``item`` of each row, exactly as given.
    prob : ndarray of float
        P(B better) of each row.
    prob_swapped : ndarray of float or None
        P(A better) from the swapped prompt, NaN where a row has none; None
        when the table has no ``prob_swapped`` column.
    judge : ndarray of object or None
        The ``judge`` column, when present.
    """

    items: np.ndarray
    prob: np.ndarray
    prob_swapped: np.ndarray | None = None
    judge: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.items)


def validate_annotations(
    annotations: pd.DataFrame | AnnotationCounts, *, allow_ties: bool = True,
    name: str = "annotations",
) -> AnnotationCounts:
    """Validate an annotations table and collapse it to per-item counts.

    Parameters
    ----------
    annotations : pandas.DataFrame or AnnotationCounts
        Columns ``item``, ``annotator``, ``label``; label "A", "B" or "tie"
        (any letter case) or 0 / 1, read as A / B (paper: Y = 1 means B better).
        Without an ``annotator`` column each row is one label: ``item, label`` (one
        label per item, e.g. a gold or majority label) or ``item, label, n`` (n
        labels of that value; one row per item and label).
    allow_ties : bool
        False declares the label set {A, B}: a tie label then raises.
    name : str
        The table's name in error messages (the argument the user passed).

    Returns
    -------
    AnnotationCounts
        Items in first-appearance order with (k_A, k_tie, k_B).

    Raises
    ------
    DataValidationError
        Missing columns or values, labels outside the declared set, or a
        duplicated (item, annotator) pair.
    """
    if isinstance(annotations, AnnotationCounts):
        if not allow_ties and annotations.has_ties:
            raise DataValidationError(_tie_message(annotations.items[annotations.counts[:, 1] > 0]))
        return annotations
    df = require_frame(annotations, name, ["item", "label"])
    if "annotator" not in df.columns:
        df = _one_row_per_label(df, name)
    warn_unused_columns(df, "annotations", name)
    df, weight = apply_counts(df, name)
    check_no_missing(df, name, ["item", "annotator", "label"])
    raw = df["label"]
    keys = raw.map(_label_key)
    codes = keys.map(_CODES)
    bad = codes.isna().to_numpy()
    if bad.any():
        raise DataValidationError(
            f"{name}.label must be one of 'A', 'B', 'tie' (or 0 = A better, 1 = B "
            f"better); found {show_values(pd.unique(raw[bad]))} at "
            f"{show_rows(df.index[bad])}. Map your labels onto A / B / tie."
        )
    codes = codes.to_numpy(dtype=np.int64)
    if not allow_ties and (codes == 1).any():
        raise DataValidationError(_tie_message(pd.unique(df["item"][codes == 1])))
    dup = df.duplicated(["item", "annotator"]).to_numpy()
    if dup.any():
        pairs = list(zip(df["item"][dup], df["annotator"][dup]))
        raise DataValidationError(
            f"{name} has {int(dup.sum())} duplicated (item, annotator) row(s), e.g. "
            f"{show_values(pairs, 3)} at {show_rows(df.index[dup], 3)}; each annotator "
            f"labels an item once. Keep one row per pair (or give repeated labels distinct "
            f"annotator ids if they are independent draws)."
        )
    item_codes, items = pd.factorize(df["item"], sort=False)
    counts = np.zeros((len(items), 3), dtype=np.int64)
    np.add.at(counts, (item_codes, codes), 1 if weight is None else weight)
    return AnnotationCounts(pd.Index(items, name="item"), counts)


def _one_row_per_label(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """``item, label`` (one label per item) or ``item, label, n`` as annotation rows."""
    if COUNT in df.columns:  # n labels of one value: (item, label) names the group
        key, what = ["item", "label"], "an (item, label) pair"
    else:
        key, what = ["item"], "an item"
    dup = df.duplicated(key).to_numpy()
    if dup.any():
        shown = (pd.unique(df["item"][dup]) if len(key) == 1
                 else list(zip(df["item"][dup], df["label"][dup])))
        raise DataValidationError(
            f"{name} has no annotator column but repeats {what}: "
            f"{show_values(shown)} at {show_rows(df.index[dup])}. "
            f"Fix: give one label per item (or one row per item and label with a count n), "
            f"or add an annotator column for several annotators per item.")
    return df.assign(annotator=df["label"].astype(str) if COUNT in df.columns else "label")


def _label_key(value) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, np.integer, float, np.floating)):
        return str(float(value))
    if isinstance(value, str):
        return label_key(value)
    return None


def _tie_message(items) -> str:
    return (
        f"annotations.label holds 'tie' for item(s) {show_values(list(items))} but this "
        f"model was declared without ties (label set {{A, B}}). Use ties=True / 'auto', or "
        f"decide how ties count before fitting."
    )


def _check_probability(df: pd.DataFrame, col: str, allow_missing: bool) -> np.ndarray:
    column = df[col]
    if pd.api.types.is_float_dtype(column.dtype) and not pd.api.types.is_extension_array_dtype(
            column.dtype):
        values = column.to_numpy()  # fast path of a refit loop: already float
        given = ~np.isnan(values)
    else:
        values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        given = column.notna().to_numpy()
    bad = given & ~((values >= 0) & (values <= 1))
    if bad.any():
        raise DataValidationError(
            f"judge outputs.{col} must be a probability in [0, 1]; found "
            f"{show_values(pd.unique(column[bad]))} at {show_rows(df.index[bad])}. "
            f"Pass probabilities (not percentages, logits or log-probabilities)."
        )
    if not allow_missing:
        check_no_missing(df, "judge outputs", [col])
    return values


def validate_judge_outputs(outputs: pd.DataFrame | JudgeOutputs,
                           unique: bool = True) -> JudgeOutputs:
    """Validate a judge-outputs table (``item``, ``prob``, optional ``prob_swapped``, ``judge``).

    ``prob`` is P(B better) and must be given on every row; ``prob_swapped`` is
    P(A better) from the swapped prompt and may be missing (NaN) on rows judged
    in one order only. The key (``judge``, ``item``) -- or ``item`` without a
    ``judge`` column -- must be unique when ``unique`` (a fit, or a table matched to
    labels by item); a prediction, row by row, takes repeated rows as they are.

    Raises
    ------
    DataValidationError
        A probability outside [0, 1] or NaN, a swapped prediction without its
        original (``prob_swapped`` given, ``prob`` missing), a duplicated key.
    """
    if isinstance(outputs, JudgeOutputs):
        return outputs
    df = require_frame(outputs, "judge outputs", ["item", "prob"])
    warn_unused_columns(df, "judge outputs")
    if COUNT in df.columns:
        many = pd.to_numeric(df[COUNT], errors="coerce").to_numpy(float, na_value=np.nan) != 1
        if many.any():
            raise DataValidationError(
                f"judge outputs.n must be 1 on every row: a judge output is one prediction per "
                f"(judge, item), not a count of rows; found "
                f"{show_values(pd.unique(df[COUNT][many]))} at {show_rows(df.index[many])}. "
                f"Fix: drop the n column (counts of human labels belong in the annotations table).")
    check_no_missing(df, "judge outputs", ["item"])
    swapped = None
    if "prob_swapped" in df.columns:
        orphan = (df["prob"].isna() & df["prob_swapped"].notna()).to_numpy()
        if orphan.any():
            raise DataValidationError(
                f"judge outputs has a prob_swapped (P(A better), swapped prompt) without its "
                f"original prob for item(s) {show_values(df['item'][orphan].tolist())} at "
                f"{show_rows(df.index[orphan])}; a "
                f"swapped prediction is only interpretable next to the original. Add the "
                f"original order's prob or drop those rows."
            )
        swapped = _check_probability(df, "prob_swapped", allow_missing=True)
    prob = _check_probability(df, "prob", allow_missing=False)
    key = ["judge", "item"] if "judge" in df.columns else ["item"]
    if "judge" in df.columns:
        check_no_missing(df, "judge outputs", ["judge"])
    keys = pd.MultiIndex.from_frame(df[key]) if len(key) > 1 else pd.Index(df["item"])
    if unique and not keys.is_unique:
        dup = df.duplicated(key).to_numpy()
        raise DataValidationError(
            f"judge outputs has duplicated {tuple(key)} key(s) "
            f"{show_values(df.loc[dup, key].to_records(index=False).tolist())} at "
            f"{show_rows(df.index[dup])}; give one "
            f"row per {' and '.join(key)} (put both prompt orders on one row: prob and "
            f"prob_swapped)."
        )
    judge = df["judge"].to_numpy(dtype=object) if "judge" in df.columns else None
    return JudgeOutputs(df["item"].to_numpy(dtype=object), prob, swapped, judge)


def align_outputs(outputs: JudgeOutputs, annotations: AnnotationCounts) -> np.ndarray:
    """Row positions in ``annotations`` of every judge-output row (raise if an item has none).

    Returns
    -------
    ndarray of int64
        ``annotations.items[pos[i]] == outputs.items[i]``.
    """
    if len(outputs.items) == len(annotations.items) and np.array_equal(
            outputs.items, annotations.items.to_numpy()):
        return np.arange(len(outputs.items))  # already aligned (a refit loop's fast path)
    pos = annotations.items.get_indexer(pd.Index(outputs.items))
    missing = pos < 0
    if missing.any():
        raise DataValidationError(
            f"{int(missing.sum())} judge-output item(s) have zero annotations: "
            f"{show_values(pd.unique(outputs.items[missing]).tolist())}. Every judged item "
            f"needs at least one human label here; drop those rows or annotate them (check "
            f"that the ids match exactly, e.g. '7' vs 7)."
        )
    return pos.astype(np.int64)


def check_both_classes(successes: np.ndarray, trials: np.ndarray, what: str) -> None:
    """Raise unless the calibration labels hold both outcomes (some B, some A).

    With one class only the recalibration is separable: a bias, or a
    temperature when every probability is on the label's side of 1/2, runs
    off to infinity instead of being estimated.
    """
    successes, trials = np.asarray(successes, float), np.asarray(trials, float)
    if successes.sum() == 0 or successes.sum() == trials.sum():
        only = "A (0)" if successes.sum() == 0 else "B (1)"
        raise DataValidationError(
            f"{what} hold only one class ({only} better in every one of "
            f"{int(trials.sum())} labels), so the calibration map is not identified (a "
            f"bias or temperature would run off to infinity). Calibrate on items where "
            f"both A and B are preferred."
        )


def separated(x: np.ndarray, successes: np.ndarray, trials: np.ndarray, bias: bool) -> bool:
    """Whether the judge logits ``x`` separate the labels, so T -> 0 raises the likelihood.

    Each row's log-likelihood s z - n softplus(z), z = (x - b) / T, grows as T -> 0 unless
    it holds a label on the wrong side of b: without a bias (b = 0) when every row with
    x > 0 holds only B labels and every row with x < 0 only A labels; with a bias when
    some threshold b splits them so (the largest x of a row with an A label is at most
    the smallest x of a row with a B label). Then the maximum-likelihood T is 0.
    """
    has_b, has_a = successes > 0, successes < trials
    if not bias:
        return bool(np.any(x != 0) and not np.any(has_a & (x > 0)) and not np.any(has_b & (x < 0)))
    if not has_a.any() or not has_b.any():
        return True
    return bool(x[has_a].max() <= x[has_b].min())


def calibration_targets(out: JudgeOutputs, labels) -> tuple[np.ndarray, np.ndarray]:
    """Successes (B better) and trials per judge-output row, from labels or annotations
    (the binomial targets of :class:`~bayesjudge.TemperatureScaling`).

    A table (``item, label`` or ``item, annotator, label``) is read as annotations, with
    their labels (A / B / tie or 0 = A, 1 = B), as the command line reads it; validated
    gold :class:`~bayesjudge.data.Labels` are 0 / 1 (1 = B better).
    """
    if not isinstance(labels, Labels):
        ac = validate_annotations(labels, name="labels")
        counts = ac.counts[align_outputs(out, ac)]
        success, trials = counts[:, 2], counts[:, 0] + counts[:, 2]
        only_ties = trials == 0
        if only_ties.any():
            warnings.warn(
                f"{int(only_ties.sum())} judged item(s) have only tie annotations and do not "
                f"inform the calibration (ties are left out, as in the paper's calibration "
                f"metrics).", UserWarning, skip_file_prefixes=(PACKAGE_DIR,))
        check_both_classes(success, trials, "the calibration annotations")
        return success.astype(np.int64), trials.astype(np.int64)
    lab = labels
    if not np.isin(lab.values, BINARY).all():
        raise DataValidationError(
            f"labels hold values {show_values(pd.unique(lab.values[~np.isin(lab.values, BINARY)]))}"
            f"; TemperatureScaling needs 1 = B better, 0 = A better. Fix: pass the table "
            f"(item, label with A / B / tie) instead.")
    ac = AnnotationCounts(lab.items, np.stack([1 - lab.values, 0 * lab.values, lab.values], 1))
    pos = align_outputs(out, ac)
    y = lab.values[pos]
    check_both_classes(y, np.ones_like(y), "the calibration labels")
    return y.astype(np.int64), np.ones_like(y, dtype=np.int64)
