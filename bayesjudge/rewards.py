"""Rewards and training data for finetuning a probabilistic judge (parser, proper rewards, SFT).

Implements Section 3 of Z. Li, X. Li, C. Huang et al. (2025), "Judging with
Confidence: Calibrating Autoraters to Preference Distributions", arXiv:2510.00263:
the deterministic parser g of a judge's ``<prob_rb_better>p</prob_rb_better>``
output (Setting 2), the piecewise Brier reward (eq. 1) and clipped logarithmic
reward (eq. 2) whose expectation is maximised by reporting the true preference
probability (Proposition 1), swap augmentation of a training set (Section 4), SFT
targets from multi-annotator :math:`\\hat p` (Setting 1) and a parsability report
(appendix D.4). The finetuning itself (SFT, GRPO) needs GPUs and stays outside
the package; these are the pieces such a pipeline consumes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from bayesjudge.data import DataValidationError, label_key, show_rows, show_values
from bayesjudge.data.annotations import validate_annotations
from bayesjudge.data.frames import as_pandas
from bayesjudge.metrics.calibration import as_binary_labels
from bayesjudge.metrics.table import reference_labels

__all__ = [
    "CLOSE_TAG",
    "OPEN_TAG",
    "UNPARSABLE",
    "ParsabilityReport",
    "brier_reward",
    "format_target",
    "log_reward",
    "parsability_report",
    "parse_probability",
    "sft_targets",
    "swap_augment",
]

UNPARSABLE: Literal["unparsable"] = "unparsable"
"""What :func:`parse_probability` returns for an output it cannot read (the paper's ⊥)."""

OPEN_TAG = "<prob_rb_better>"
CLOSE_TAG = "</prob_rb_better>"
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def parse_probability(text: object) -> float | Literal["unparsable"]:
    """The deterministic parser g: judge output -> probability in [0, 1] or :data:`UNPARSABLE`.

    The paper specifies g only as "rule-based string-matching" of the
    ``<prob_rb_better>`` field its prompts ask for ("a single float between 0.0
    and 1.0 enclosed in <prob_rb_better> and </prob_rb_better> tags"). The rules here:

    1. ``text`` must be a ``str`` containing exactly one ``<prob_rb_better>`` and
       exactly one ``</prob_rb_better>`` (lower case, as in the prompts), the
       opening one first. Text around the pair (a ``<think>`` block) is ignored.
       Two or more answers are unparsable: the reward cannot pick one, and a
       policy must not hedge by emitting several.
    2. Between the tags, after stripping whitespace, a plain decimal in ASCII
       digits: ``0.85``, ``.5``, ``1``, ``1.000``, ``0.`` -- no sign, exponent,
       percent sign, comma, fraction or words.
    3. Its value must lie in [0, 1] (``1.2`` and ``85`` are unparsable, not clipped).

    Never raises: any other input, of any type, returns :data:`UNPARSABLE`.

    Examples
    --------
    >>> parse_probability("<think>B is clearer.</think><prob_rb_better> 0.85 </prob_rb_better>")
    0.85
    >>> parse_probability("<prob_rb_better>85%</prob_rb_better>")
    'unparsable'
    """
    if not isinstance(text, str):
        return UNPARSABLE
    if text.count(OPEN_TAG) != 1 or text.count(CLOSE_TAG) != 1:
        return UNPARSABLE
    start = text.index(OPEN_TAG) + len(OPEN_TAG)
    end = text.index(CLOSE_TAG)
    if end < start:
        return UNPARSABLE
    body = text[start:end].strip()
    if not _NUMBER.fullmatch(body):
        return UNPARSABLE
    value = float(body)
    return value if 0.0 <= value <= 1.0 else UNPARSABLE


def _reports(p: object) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """(value, parsable) per report; value is 0 where unparsable (masked out by callers)."""
    # Lists go through object dtype: np.asarray(["...", 0.8]) would turn 0.8 into text.
    arr = np.asarray(p, dtype=object) if isinstance(p, (str, list, tuple)) else np.asarray(p)
    if arr.dtype == object and not any(isinstance(v, str) for v in arr.ravel()):
        if any(v is None or isinstance(v, bool) for v in arr.ravel()):
            raise DataValidationError(
                "`p` holds None or a bool; pass the judge's text, a parsed probability, or "
                "rewards.UNPARSABLE for an unreadable output."
            )
        arr = arr.astype(np.float64)
    if arr.dtype.kind in "OUS":
        flat = arr.ravel()
        values = np.zeros(flat.shape)
        ok = np.ones(flat.shape, dtype=bool)
        for i, v in enumerate(flat):
            if isinstance(v, str):
                parsed = parse_probability(v)
                ok[i] = parsed != UNPARSABLE
                values[i] = parsed if ok[i] else 0.0
            elif isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
                values[i] = float(v)
            else:
                raise DataValidationError(
                    f"`p` holds {v!r} ({type(v).__name__}); pass the judge's text, a parsed "
                    f"probability, or rewards.UNPARSABLE for an unreadable output."
                )
        values, ok = values.reshape(arr.shape), ok.reshape(arr.shape)
    elif arr.dtype.kind in "iuf":
        values, ok = arr.astype(np.float64), np.ones(arr.shape, dtype=bool)
    else:
        raise DataValidationError(
            f"`p` must hold judge texts or probabilities; got dtype {arr.dtype}."
        )
    bad = ok & ~((values >= 0.0) & (values <= 1.0))
    if bad.any():
        raise DataValidationError(
            f"`p` holds parsed values outside [0, 1] or NaN: {show_values(values[bad])}. A "
            f"parsed report is a probability; mark unreadable outputs with rewards.UNPARSABLE "
            f"(or pass the raw text) instead of NaN."
        )
    return values, ok


def _labels(label: ArrayLike) -> NDArray[np.float64]:
    arr = np.asarray(label)
    if arr.ndim == 0:
        return as_binary_labels(arr.reshape(1), "label").reshape(())
    return as_binary_labels(arr, "label")


def _finish(values: NDArray[np.float64]) -> float | NDArray[np.float64]:
    return float(values) if np.ndim(values) == 0 else values


def brier_reward(p: object, label: ArrayLike) -> float | NDArray[np.float64]:
    """Piecewise Brier reward (eq. 1).

    .. math::

        R_{Brier}(\\tau; y) = \\begin{cases} 1 - (p - y)^2 & g(\\tau) = p \\in [0, 1] \\\\
        0 & g(\\tau) = \\perp \\end{cases}

    Parameters
    ----------
    p : str, float, or array_like of them
        Each entry is either the judge's raw output text (parsed with
        :func:`parse_probability`), an already parsed probability in [0, 1], or
        :data:`UNPARSABLE`. Mixed object arrays are fine; NaN and None are
        rejected (say :data:`UNPARSABLE` when an output could not be read).
    label : int or array_like
        y = 1 (or "B") when B is better, 0 (or "A") when A is; broadcast with ``p``.

    Returns
    -------
    float, or ndarray of the broadcast shape.

    Examples
    --------
    >>> brier_reward(["<prob_rb_better>0.8</prob_rb_better>", 0.8, "no tag"], 1).round(2).tolist()
    [0.96, 0.96, 0.0]
    """
    values, ok = _reports(p)
    y = _labels(label)
    return _finish(np.where(ok, 1.0 - (values - y) ** 2, 0.0))


def log_reward(
    p: object, label: ArrayLike, epsilon: float = 1e-3
) -> float | NDArray[np.float64]:
    """Clipped logarithmic reward (eq. 2), :math:`p' = \\mathrm{clip}(p, \\epsilon, 1 - \\epsilon)`.

    .. math::

        R_{Log}(\\tau; y) = \\begin{cases} y \\log p' + (1 - y)\\log(1 - p') & g(\\tau) = p
        \\in [0, 1] \\\\ \\log \\epsilon & g(\\tau) = \\perp \\end{cases}

    Parameters as :func:`brier_reward`; ``epsilon`` in (0, 1/2) (the paper uses 1e-3).

    Examples
    --------
    >>> round(log_reward(0.0, 1), 4) == round(float(np.log(1e-3)), 4)
    True
    """
    if isinstance(epsilon, bool) or not (isinstance(epsilon, (int, float, np.floating))
                                         and 0.0 < epsilon < 0.5):
        raise DataValidationError(f"epsilon must lie in (0, 1/2), got {epsilon!r}.")
    values, ok = _reports(p)
    y = _labels(label)
    q = np.clip(values, epsilon, 1.0 - epsilon)
    return _finish(np.where(ok, y * np.log(q) + (1.0 - y) * np.log1p(-q), np.log(epsilon)))


@dataclass(frozen=True)
class ParsabilityReport:
    """Counts of parsable and unparsable judge outputs (appendix D.4).

    Attributes
    ----------
    n_total, n_parsable, n_unparsable : int
    parsable_rate : float
        n_parsable / n_total, the paper's parsability rate.
    unparsable_positions : ndarray of int
        Every unparsable output's position in the input (none is dropped).
    examples : tuple of (int, str)
        The first few unparsable outputs (position, text cut at 200 characters).
    """

    n_total: int
    n_parsable: int
    n_unparsable: int
    parsable_rate: float
    unparsable_positions: np.ndarray
    examples: tuple


def parsability_report(texts: ArrayLike, n_examples: int = 5) -> ParsabilityReport:
    """Parse every output and count what could not be read.

    Examples
    --------
    >>> r = parsability_report(["<prob_rb_better>0.3</prob_rb_better>", "B is better"])
    >>> r.n_parsable, r.n_unparsable, r.examples
    (1, 1, ((1, 'B is better'),))
    """
    flat = list(np.asarray(texts, dtype=object).ravel())
    if not flat:
        raise DataValidationError("`texts` is empty; pass the judge outputs to check.")
    bad = np.array([parse_probability(t) == UNPARSABLE for t in flat], dtype=bool)
    positions = np.flatnonzero(bad)
    examples = tuple((int(i), str(flat[i])[:200]) for i in positions[:n_examples])
    n = len(flat)
    return ParsabilityReport(n, int(n - bad.sum()), int(bad.sum()), float(1 - bad.mean()),
                             positions, examples)


def format_target(p_hat: float, decimals: int = 2) -> str:
    """The SFT target field for :math:`\\hat p`: ``<prob_rb_better>0.67</prob_rb_better>``.

    Examples
    --------
    >>> format_target(2 / 3)
    '<prob_rb_better>0.67</prob_rb_better>'
    """
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 1 <= decimals <= 10:
        raise DataValidationError(f"decimals must be an integer in 1..10, got {decimals!r}.")
    if not 0.0 <= p_hat <= 1.0:
        raise DataValidationError(f"p_hat must lie in [0, 1], got {p_hat!r}.")
    return f"{OPEN_TAG}{p_hat:.{decimals}f}{CLOSE_TAG}"


def sft_targets(annotations: pd.DataFrame, decimals: int = 2) -> pd.DataFrame:
    """SFT targets from multi-annotator labels (Setting 1).

    :math:`\\hat p = \\frac1m\\sum_j y^{(j)}` per item, formatted as the judge's answer field.

    A tie counts half a vote for each side, :math:`\\hat p = (k_B + k_{tie}/2)/m`
    (:func:`~bayesjudge.metrics.reference_labels`). The target string is what the
    paper's prompts ask the judge to emit, so ``parse_probability(target)``
    recovers :math:`\\hat p` to ``decimals`` places.

    Parameters
    ----------
    annotations : pandas.DataFrame
        ``item``, ``annotator``, ``label`` in {A, B, tie} (0/1 read as A/B).
    decimals : int, default 2

    Returns
    -------
    pandas.DataFrame
        ``item`` (first-appearance order, ids as given), ``m``, ``p_hat``, ``target``.

    Examples
    --------
    >>> ann = pd.DataFrame({"item": [1, 1, 1], "annotator": ["x", "y", "z"],
    ...                     "label": ["B", "B", "A"]})
    >>> sft_targets(ann)["target"].tolist()
    ['<prob_rb_better>0.67</prob_rb_better>']
    """
    annotations = as_pandas(annotations)  # polars, pyarrow, ...: pandas
    counts = validate_annotations(annotations)
    p_hat, _ = reference_labels(counts.counts)
    return pd.DataFrame({
        "item": counts.items.to_numpy(),
        "m": counts.counts.sum(axis=1),
        "p_hat": p_hat,
        "target": [format_target(float(v), decimals) for v in p_hat],
    })


_FLIP = {"A": "B", "B": "A", "a": "b", "b": "a", "tie": "tie", "Tie": "Tie", "TIE": "TIE",
         "0": "1", "1": "0"}
_FLIP_KEY = {"a": "B", "b": "A", "tie": "tie"}  # other spellings: labels ignore case, spaces


def _flip_labels(label: pd.Series) -> pd.Series:
    if pd.api.types.is_bool_dtype(label) or not (
        pd.api.types.is_numeric_dtype(label) or label.dtype == object
        or pd.api.types.is_string_dtype(label)
    ):
        raise DataValidationError(f"dataset.label has dtype {label.dtype}; use A/B/tie or 0/1.")
    if pd.api.types.is_numeric_dtype(label):
        bad = ~label.isin([0, 1])
        flipped = 1 - label
    else:
        flipped = label.map(lambda v: _FLIP.get(v, _FLIP_KEY.get(label_key(v)))
                            if isinstance(v, str) else
                            (1 - v if v in (0, 1) and not isinstance(v, bool) else None))
        bad = flipped.isna()
    if bad.any():
        raise DataValidationError(
            f"dataset.label must be A / B / tie or 0 / 1 (1 = B better) to be flipped; found "
            f"{show_values(pd.unique(label[bad.to_numpy()]))}."
        )
    return flipped


def swap_augment(dataset: pd.DataFrame) -> pd.DataFrame:
    """Swap augmentation (Section 4): every row again with A and B exchanged.

    The swapped copy exchanges each column pair ``<name>_a`` / ``<name>_b`` (also
    ``_A`` / ``_B``; e.g. ``response_a`` / ``response_b``), flips ``label``
    (A <-> B, 0 <-> 1, tie stays), and turns P(B better) columns around: with a
    ``prob_swapped`` column (the judge's output on the swapped prompt) ``prob`` and
    ``prob_swapped`` are exchanged -- the swapped copy *is* that prompt -- otherwise
    ``prob`` -> 1 - ``prob``; ``p_hat`` -> 1 - ``p_hat``. Other columns (``item``
    included) are copied unchanged.

    Returns
    -------
    pandas.DataFrame
        The original rows (``swapped`` False) followed by their swapped copies
        (``swapped`` True), index reset: 2n rows.
    """
    dataset = as_pandas(dataset)  # polars, pyarrow, ...: pandas
    if not isinstance(dataset, pd.DataFrame) or len(dataset) == 0:
        raise DataValidationError("dataset must be a non-empty pandas DataFrame.")
    if "swapped" in dataset.columns:
        raise DataValidationError(
            "dataset already has a `swapped` column: it looks augmented already; drop the "
            "swapped copies (or rename the column) before augmenting again."
        )
    if "prob_swapped" in dataset.columns and "prob" not in dataset.columns:
        raise DataValidationError(
            "dataset has prob_swapped but no prob: a swapped prediction needs its original "
            "(prob = P(B better) from the original prompt)."
        )
    copy = dataset.copy()
    for col in dataset.columns:
        for a, b in (("_a", "_b"), ("_A", "_B")):
            if isinstance(col, str) and col.endswith(a) and col[: -len(a)] + b in dataset:
                other = col[: -len(a)] + b
                copy[col], copy[other] = dataset[other].to_numpy(), dataset[col].to_numpy()
    if "label" in dataset.columns:
        copy["label"] = _flip_labels(dataset["label"])
    prob_cols = [c for c in ("prob", "prob_swapped", "p_hat") if c in dataset.columns]
    for col in prob_cols:
        values = pd.to_numeric(dataset[col], errors="coerce")
        bad = ~((values >= 0) & (values <= 1))
        if bad.any():
            raise DataValidationError(
                f"dataset.{col} must lie in [0, 1] on every row (a swapped copy needs both "
                f"orders' outputs); found "
                f"{show_values(dataset[col][bad.to_numpy()])} at "
                f"{show_rows(dataset.index[bad.to_numpy()])}."
            )
    if "prob_swapped" in dataset.columns:
        copy["prob"], copy["prob_swapped"] = dataset["prob_swapped"], dataset["prob"]
    elif "prob" in dataset.columns:
        copy["prob"] = 1.0 - dataset["prob"]
    if "p_hat" in dataset.columns:
        copy["p_hat"] = 1.0 - dataset["p_hat"]
    out = pd.concat([dataset.assign(swapped=False), copy.assign(swapped=True)],
                    ignore_index=True)
    return out
