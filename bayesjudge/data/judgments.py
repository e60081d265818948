"""Validation of judgment and calibration tables for misclassification-adjusted reporting.

The misclassification model of Lee, Zeng, Jeong, Sohn & Lee (2025), How to
Correctly Report LLM-as-a-Judge Evaluations, arXiv:2511.21140 (Sections 3-5),
only needs six counts per evaluated system: of the ``n`` test items the judge calls
``judged_pos`` 'correct'; of the ``m1`` human-'correct' calibration items it
calls ``tp`` 'correct' (sensitivity q1 = tp / m1) and of the ``m0``
human-'incorrect' ones it calls ``tn`` 'incorrect' (specificity q0 = tn / m0).
This module checks the long tables once and collapses them to those sufficient
statistics, a :class:`MisclassificationCounts`, which the models accept in place
of the tables (so a loop over splits validates once).

Tables (column names are the API, CONTRIBUTING.md):

* judgments   -- ``item``, ``judge_label`` in {0, 1}; optional ``system``.
* calibration -- ``item``, ``judge_label``, ``human_label`` in {0, 1}; optional ``system``.

Both take an optional count ``n``: a row with ``n = k`` stands for ``k`` items with
the same labels (its ``item`` then names the group; ids stay unique per system, as
rows are checked as given), so it counts as ``k`` rows with distinct ids in every
count. Rows with ``n = 0`` are dropped.

Test and calibration items must be different items: an item in both tables
would have its judge label counted twice (once in the test binomial, once in a
calibration binomial).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesjudge.data.counts import MAX_COUNT, apply_counts, warn_unused_columns
from bayesjudge.data.frames import as_pandas
from bayesjudge.data.messages import DataValidationError, show_rows, show_values
from bayesjudge.data.schema import BINARY, check_integer_values, require_frame

SINGLE_SYSTEM = "all"
"""System label used when the tables have no ``system`` column."""
COUNT_FIELDS = ("judged_pos", "n", "tp", "m1", "tn", "m0")


@dataclass(frozen=True)
class MisclassificationCounts:
    """Sufficient statistics of the misclassification model, one entry per system.

    Build with :func:`validate_misclassification` (tables) or
    :func:`validate_judgment_counts` (counts). Every array is int64 of shape
    ``(n_systems,)``.

    Attributes
    ----------
    systems : pandas.Index
        System names (``"all"`` for a table without a ``system`` column).
    judged_pos, n : ndarray
        Test items judged 'correct', out of ``n`` test items (p_hat = judged_pos / n, eq. 2).
    tp, m1 : ndarray
        Human-'correct' calibration items judged 'correct', out of ``m1``.
    tn, m0 : ndarray
        Human-'incorrect' calibration items judged 'incorrect', out of ``m0``.
    """

    systems: pd.Index
    judged_pos: np.ndarray
    n: np.ndarray
    tp: np.ndarray
    m1: np.ndarray
    tn: np.ndarray
    m0: np.ndarray

    def __len__(self) -> int:
        return len(self.systems)

    @property
    def p_hat(self) -> np.ndarray:
        """Naive judged rate judged_pos / n (eq. 2)."""
        return self.judged_pos / self.n

    @property
    def q0_hat(self) -> np.ndarray:
        """Empirical specificity tn / m0 (NaN where m0 = 0)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.tn / self.m0

    @property
    def q1_hat(self) -> np.ndarray:
        """Empirical sensitivity tp / m1 (NaN where m1 = 0)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.tp / self.m1

    def take(self, positions) -> "MisclassificationCounts":
        """Subset of systems by integer positions (no re-validation)."""
        positions = np.atleast_1d(np.asarray(positions))
        return MisclassificationCounts(
            self.systems[positions], *(getattr(self, f)[positions] for f in COUNT_FIELDS)
        )

    def pooled_calibration(self) -> "MisclassificationCounts":
        """Every system's test counts with the calibration counts summed over systems."""
        ones = np.ones(len(self), dtype=np.int64)
        return MisclassificationCounts(
            self.systems, self.judged_pos, self.n,
            *(ones * getattr(self, f).sum() for f in ("tp", "m1", "tn", "m0")),
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per system: ``system`` and the six counts."""
        out = pd.DataFrame({f: getattr(self, f) for f in COUNT_FIELDS})
        out.insert(0, "system", self.systems.to_numpy())
        return out


# --------------------------------------------------------------------------- counts


def validate_judgment_counts(
    judged_pos, n, tp, m1, tn, m0, systems: Sequence[str] | None = None
) -> MisclassificationCounts:
    """Validate counts given directly (scalars, or one value per system).

    Parameters
    ----------
    judged_pos, n, tp, m1, tn, m0 : int or sequence of int
        As in :class:`MisclassificationCounts`; scalars broadcast across systems.
    systems : sequence of str, optional
        System names (default ``"all"`` for one system, else ``system_0, ...``).

    Raises
    ------
    DataValidationError
        Non-integer or negative counts, ``n == 0``, or a count above its total
        (``judged_pos > n``, ``tp > m1``, ``tn > m0``). Empty calibration classes
        are checked by the model (:func:`check_calibration_classes`).
    """
    raw = {"judged_pos": judged_pos, "n": n, "tp": tp, "m1": m1, "tn": tn, "m0": m0}
    arrays = {}
    for name, value in raw.items():
        arr = np.atleast_1d(np.asarray(value))
        if arr.ndim != 1 or arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
            raise DataValidationError(
                f"{name} must be an integer count or a 1-d sequence of counts (one per "
                f"system), got {value!r}."
            )
        as_float = arr.astype(float)
        bad = ~np.isfinite(as_float) | (as_float != np.round(as_float))
        bad |= as_float > MAX_COUNT
        if bad.any():
            raise DataValidationError(
                f"{name} must hold whole numbers of items (up to 2**53), got "
                f"{show_values(arr[bad])}; pass "
                f"counts, not proportions (e.g. tp = round(q1_hat * m1))."
            )
        if (as_float < 0).any():
            raise DataValidationError(
                f"{name} has negative count(s) {show_values(arr[as_float < 0])}; counts must "
                f"be >= 0."
            )
        arrays[name] = as_float.astype(np.int64)
    sizes = {a.size for a in arrays.values()} - {1}
    if len(sizes) > 1:
        raise DataValidationError(
            f"counts must be scalars or share one length (one per system); got lengths "
            f"{ {k: a.size for k, a in arrays.items()} }."
        )
    k = sizes.pop() if sizes else 1
    if systems is not None:
        systems = list(systems)
        if k != 1 and len(systems) != k:
            raise DataValidationError(f"systems has {len(systems)} names for {k} count values.")
        k = len(systems)
    else:
        systems = [SINGLE_SYSTEM] if k == 1 else [f"system_{i}" for i in range(k)]
    arrays = {name: np.broadcast_to(a, (k,)).copy() for name, a in arrays.items()}
    names = pd.Index(systems, name="system")
    if names.has_duplicates:
        raise DataValidationError(
            f"systems has duplicated names {show_values(names[names.duplicated()])}."
        )
    zero_n = arrays["n"] == 0
    if zero_n.any():
        where = f" for system(s) {show_values(names[zero_n])}" if k > 1 else ""
        raise DataValidationError(
            f"n (test items) is 0{where}; each system needs at least one judged test item."
        )
    for part, total, what in (
        ("judged_pos", "n", "test items the judge called 'correct'"),
        ("tp", "m1", "human-'correct' calibration items the judge called 'correct'"),
        ("tn", "m0", "human-'incorrect' calibration items the judge called 'incorrect'"),
    ):
        bad = arrays[part] > arrays[total]
        if bad.any():
            pairs = [f"{part}={a}, {total}={b}"
                     for a, b in zip(arrays[part][bad], arrays[total][bad])]
            where = f" for system(s) {show_values(names[bad])}" if k > 1 else ""
            raise DataValidationError(
                f"{part} exceeds {total}{where} ({'; '.join(pairs[:5])}); "
                f"{part} counts the {what}, so it cannot exceed {total}."
            )
    return MisclassificationCounts(names, *(arrays[f] for f in COUNT_FIELDS))


def check_calibration_classes(counts: MisclassificationCounts, per_system: bool = True) -> None:
    """Raise if a calibration class is empty (per system, or summed over systems).

    Specificity q0 is learned only from human-'incorrect' items (m0) and
    sensitivity q1 only from human-'correct' items (m1); with either class empty
    the parameter -- and so theta -- is identified by the prior alone.
    """
    for total, label, what in (("m0", 0, "specificity q0"), ("m1", 1, "sensitivity q1")):
        values = getattr(counts, total)
        bad = values == 0 if per_system else np.atleast_1d(values.sum() == 0)
        if bad.any():
            where = (f" for system(s) {show_values(counts.systems[bad])}"
                     if per_system and len(counts) > 1 else "")
            raise DataValidationError(
                f"the calibration set has no items with human_label {label} ({total} = 0){where}, "
                f"so the {what} of the judge cannot be estimated and theta is not identified. "
                f"Label calibration items of both classes (Algorithm 1 allocates a budget "
                f"between them; bayesjudge.estimators.allocate_calibration)."
            )


# --------------------------------------------------------------------------- tables


def _systems_column(df: pd.DataFrame, name: str, by_system: bool) -> pd.Series:
    if by_system:
        require_frame(df, name, ["system"])
        _no_missing(df, name, "system", "give every row its evaluated system")
        return df["system"]
    if "system" in df.columns:
        values = pd.unique(df["system"].dropna())
        if len(values) > 1:
            raise DataValidationError(
                f"{name}.system holds {len(values)} systems {show_values(values)}; this model "
                f"evaluates one system. Filter the table to one system, or use "
                f"HierarchicalMisclassificationModel for several systems judged by the same judge."
            )
        if len(values) == 1:
            return pd.Series(values[0], index=df.index)
    return pd.Series(SINGLE_SYSTEM, index=df.index)


def _no_missing(df: pd.DataFrame, name: str, col: str, fix: str) -> None:
    bad = df.index[df[col].isna().to_numpy()]
    if len(bad):
        items = df.loc[bad, "item"] if "item" in df.columns else bad
        raise DataValidationError(
            f"{name}.{col} is missing (NaN/None) for {len(bad)} row(s) at {show_rows(bad)}, "
            f"items {show_values(items)}; {fix}."
        )


def _check_unique(df: pd.DataFrame, name: str, system: pd.Series) -> None:
    key = pd.DataFrame({"system": system.to_numpy(), "item": df["item"].to_numpy()})
    dup = key.duplicated()
    if dup.any():
        raise DataValidationError(
            f"{name} has {int(dup.sum())} duplicated item id(s) "
            f"{show_values(pd.unique(key['item'][dup]))} (per system) at "
            f"{show_rows(df.index[dup.to_numpy()])}; each item is one "
            f"Bernoulli judgment. Keep one judgment per item (e.g. the majority of repeated "
            f"samples) or fix the ids."
        )


def validate_judgments(judgments: pd.DataFrame, by_system: bool = False) -> pd.DataFrame:
    """Validate a judgments table and count it per system.

    Parameters
    ----------
    judgments : pandas.DataFrame
        ``item``, ``judge_label`` in {0, 1} (1 = the judge calls the response
        'correct'); ``system`` required when ``by_system``.
    by_system : bool
        Count per ``system`` (several systems) or as one system.

    Returns
    -------
    pandas.DataFrame
        Index ``system`` (first-appearance order), columns ``judged_pos``, ``n``.
    """
    judgments = require_frame(judgments, "judgments", ["item", "judge_label"])
    warn_unused_columns(judgments, "judgments")
    judgments, weight = apply_counts(judgments, "judgments")
    _no_missing(judgments, "judgments", "item", "give every judged item an id")
    _no_missing(judgments, "judgments", "judge_label", "drop items the judge did not label "
                "(an unparsable verdict is not a 0)")
    z_hat = check_integer_values(judgments, "judgments", "judge_label", BINARY)
    system = _systems_column(judgments, "judgments", by_system)
    _check_unique(judgments, "judgments", system)
    w = np.ones(len(z_hat), dtype=np.int64) if weight is None else weight
    frame = pd.DataFrame({"system": system.to_numpy(), "judged_pos": z_hat * w, "n": w})
    return frame.groupby("system", sort=False).sum().astype(np.int64)


def validate_calibration(calibration: pd.DataFrame, by_system: bool = False) -> pd.DataFrame:
    """Validate a calibration table and collapse it to confusion counts per system.

    Parameters
    ----------
    calibration : pandas.DataFrame
        ``item``, ``judge_label`` and ``human_label`` in {0, 1} (human_label is
        the ground truth z, eq. 1); ``system`` required when ``by_system``.
    by_system : bool
        Count per ``system`` or as one system.

    Returns
    -------
    pandas.DataFrame
        Index ``system``, columns ``tp``, ``m1``, ``tn``, ``m0``.
    """
    calibration = require_frame(calibration, "calibration", ["item", "judge_label", "human_label"])
    warn_unused_columns(calibration, "calibration")
    calibration, weight = apply_counts(calibration, "calibration")
    _no_missing(calibration, "calibration", "item", "give every calibration item an id")
    _no_missing(
        calibration, "calibration", "human_label",
        "every calibration item needs its human label; drop unlabelled rows from the "
        "calibration table (unlabelled judged items belong in the judgments table)",
    )
    _no_missing(calibration, "calibration", "judge_label", "drop items the judge did not label")
    z_hat = check_integer_values(calibration, "calibration", "judge_label", BINARY)
    z = check_integer_values(calibration, "calibration", "human_label", BINARY)
    system = _systems_column(calibration, "calibration", by_system)
    _check_unique(calibration, "calibration", system)
    w = np.ones(len(z), dtype=np.int64) if weight is None else weight
    frame = pd.DataFrame({
        "system": system.to_numpy(),
        "tp": ((z == 1) & (z_hat == 1)) * w, "m1": (z == 1) * w,
        "tn": ((z == 0) & (z_hat == 0)) * w, "m0": (z == 0) * w,
    })
    return frame.groupby("system", sort=False).sum().astype(np.int64)


def validate_misclassification(
    judgments: pd.DataFrame, calibration: pd.DataFrame, by_system: bool = False
) -> MisclassificationCounts:
    """Validate both tables and collapse them to :class:`MisclassificationCounts`.

    Systems are ordered as they first appear in ``judgments``. With one system
    (``by_system=False``) a table without a ``system`` column belongs to the system the
    other table names (a shared calibration file beside one system's judgments). A system in
    ``judgments`` without calibration items gets zero calibration counts (the
    model decides whether that is allowed); a system only in ``calibration``,
    or an item in both tables, is an error.
    """
    judgments, calibration = as_pandas(judgments), as_pandas(calibration)
    test = validate_judgments(judgments, by_system)
    cal = validate_calibration(calibration, by_system)
    if not by_system:  # one system: a table without a system column describes the other's
        if "system" not in calibration.columns:
            cal.index = test.index
        elif "system" not in judgments.columns:
            test.index = cal.index
    extra = cal.index.difference(test.index, sort=False)
    if len(extra):
        raise DataValidationError(
            f"calibration has system(s) {show_values(extra)} with no rows in judgments; each "
            f"system needs test judgments. Drop them or add their judgments (system names "
            f"must match exactly)."
        )
    _check_disjoint(judgments, calibration, by_system)
    cal = cal.reindex(test.index, fill_value=0)
    return validate_judgment_counts(
        test["judged_pos"].to_numpy(), test["n"].to_numpy(), cal["tp"].to_numpy(),
        cal["m1"].to_numpy(), cal["tn"].to_numpy(), cal["m0"].to_numpy(),
        systems=list(test.index),
    )


def _check_disjoint(judgments: pd.DataFrame, calibration: pd.DataFrame, by_system: bool) -> None:
    keys = ["system", "item"] if by_system else ["item"]
    test_keys = pd.MultiIndex.from_frame(judgments[keys].astype(object))
    cal_keys = pd.MultiIndex.from_frame(calibration[keys].astype(object))
    both = cal_keys[cal_keys.isin(test_keys)]
    if len(both):
        shown = [k[-1] for k in both[:5]]
        raise DataValidationError(
            f"{len(both)} calibration item(s) also appear in judgments, e.g. items "
            f"{show_values(shown)}; their judge labels would be counted twice. Test and "
            f"calibration sets must be disjoint (the paper's random split): remove the "
            f"calibration items from the judgments table."
        )
