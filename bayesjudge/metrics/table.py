"""The per-judge metric table (Table 1 / Table 2 shape) and win-rate prediction.

Assembles the metrics of Z. Li, X. Li, C. Huang et al. (2025), "Judging with
Confidence: Calibrating Autoraters to Preference Distributions", arXiv:2510.00263,
from the two long tables of a probabilistic-judge study -- human annotations
(``item, annotator, label``) and judge outputs (``item, prob`` = P(B better),
optional ``prob_swapped``, optional ``judge``) -- following appendix C.1 (MSE to
:math:`\\hat p`, agreement and macro P/R/F1 over {A, tie, B}, ECE and Brier on the
binarised labels with tie-labelled items skipped), Section 5.2 (consistency and
:math:`E|\\Delta_{SD}|`) and appendix D.1 (predicted win rate), each with a
bootstrap interval.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from bayesjudge.constants import CI_PROB
from bayesjudge.data import DataValidationError, check_ci_prob, show_values
from bayesjudge.data.annotations import (
    align_outputs,
    validate_annotations,
    validate_judge_outputs,
)
from bayesjudge.data.frames import as_pandas
from bayesjudge.data.messages import PACKAGE_DIR
from bayesjudge.data.vocabulary import ONE_JUDGE
from bayesjudge.metrics.calibration import (
    agreement,
    as_probabilities,
    brier_score,
    expected_calibration_error,
    macro_prf,
    mse_to_phat,
    predicted_label,
)
from bayesjudge.metrics.intervals import (
    paired_difference,
    percentile_interval,
    warn_zero_width,
)
from bayesjudge.metrics.positional import absolute_symmetry_deviation, swap_consistency

__all__ = ["TABLE_METRICS", "predicted_win_rate", "reference_labels", "metric_table"]

TABLE_METRICS = ("mse", "agreement", "precision", "recall", "f1", "ece", "brier",
                 "consistency", "abs_symmetry_deviation")
"""Rows of :func:`metric_table` per judge, in order (the last two need ``prob_swapped``)."""

_CODE = {"A": 0, "tie": 1, "B": 2}


def reference_labels(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:math:`\\hat p` and the majority label from per-item counts (k_A, k_tie, k_B).

    :math:`\\hat p = (k_B + k_{tie}/2)/m` (Section 2.1 with a tie as half a vote each
    way; without ties it is the paper's :math:`\\frac1m\\sum_j y^{(j)}`). The majority
    label is the mode over {A, tie, B}; two or three labels sharing the largest count
    give "tie" (no preference has a majority).

    Examples
    --------
    >>> p_hat, major = reference_labels(np.array([[1, 0, 2], [1, 1, 1], [0, 2, 1]]))
    >>> p_hat.round(3).tolist(), major.tolist()
    ([0.667, 0.5, 0.667], ['B', 'tie', 'tie'])
    """
    counts = np.asarray(counts, dtype=float)
    m = counts.sum(axis=1)
    if counts.ndim != 2 or counts.shape[1] != 3 or (m <= 0).any() or (counts < 0).any():
        raise DataValidationError(
            "counts must be an (n_items, 3) array of non-negative (k_A, k_tie, k_B) with at "
            "least one annotation per item."
        )
    p_hat = (counts[:, 2] + 0.5 * counts[:, 1]) / m
    top = counts.max(axis=1, keepdims=True)
    unique_mode = (counts == top).sum(axis=1) == 1
    major = np.array(["A", "tie", "B"], dtype=object)[counts.argmax(axis=1)]
    major[~unique_mode] = "tie"
    return p_hat, major


def _rows(judge, metric_fns, n_boot, ci_prob, random_seed):
    rows = []
    for name, fn, arrays in metric_fns:
        if arrays[0].shape[0] == 0:
            warnings.warn(
                f"judge {judge!r}: no item qualifies for '{name}' (e.g. every majority label "
                "is a tie); its row is NaN.", skip_file_prefixes=(PACKAGE_DIR,),
            )
            rows.append((judge, name, np.nan, np.nan, np.nan, 0))
            continue
        ci = percentile_interval(fn, arrays, n_boot, ci_prob, random_seed)
        rows.append((judge, name, ci.estimate, ci.lower, ci.upper, arrays[0].shape[0]))
    return rows


def metric_table(
    outputs: pd.DataFrame,
    annotations: pd.DataFrame,
    *,
    tie_band: float = 0.0,
    n_bins: int = 10,
    n_boot: int = 1000,
    ci_prob: float = CI_PROB,
    random_seed: int | None = 0,
) -> pd.DataFrame:
    """The paper's Table 1 (and Table 2) metrics per judge, with bootstrap intervals.

    Per item, :math:`\\hat p` and the majority label come from the annotations
    (:func:`reference_labels`); the judge's verdict is
    :func:`~bayesjudge.metrics.predicted_label` of ``prob``. Rows:

    * ``mse`` -- :func:`~bayesjudge.metrics.mse_to_phat`, all judged items;
    * ``agreement``, ``precision``, ``recall``, ``f1`` -- verdict vs majority label
      over {A, tie, B} (:func:`~bayesjudge.metrics.macro_prf`), all judged items;
    * ``ece``, ``brier`` -- against the binarised majority label, skipping items whose
      majority label is a tie (appendix C.1);
    * ``consistency``, ``abs_symmetry_deviation`` -- Section 5.2, items with
      ``prob_swapped`` (rows only when the column is present).

    Intervals are percentile bootstraps over items; a seed gives every judge
    the same resamples when they are scored on the same items in the same order.

    Parameters
    ----------
    outputs : pandas.DataFrame
        ``item``, ``prob`` (P(B better)), optional ``prob_swapped`` (P(A better) from
        the swapped prompt), optional ``judge`` (one table per judge otherwise; its
        rows are labelled ``"(one judge)"``, as the other tables label one judge).
    annotations : pandas.DataFrame
        ``item``, ``annotator``, ``label`` in {A, B, tie} (0/1 read as A/B). Every
        judged item needs at least one annotation.
    tie_band : float, default 0
        Verdict "tie" when :math:`|p - 1/2| \\le` ``tie_band``.
    n_bins : int, default 10
        K of the ECE.
    n_boot : int, default 1000
    ci_prob : float, default CI_PROB
    random_seed : int or None, default 0

    Returns
    -------
    pandas.DataFrame
        Long format: ``judge, metric, estimate, lower, upper, n_items`` (judges in
        first-appearance order, metrics in :data:`TABLE_METRICS` order).
        ``table.pivot(index="judge", columns="metric", values="estimate")`` gives
        the paper's layout.

    Examples
    --------
    >>> ann = pd.DataFrame({"item": [1, 1, 2, 2], "annotator": ["u", "v", "u", "v"],
    ...                     "label": ["B", "B", "A", "B"]})
    >>> out = pd.DataFrame({"item": [1, 2], "prob": [0.9, 0.5]})
    >>> table = metric_table(out, ann, n_boot=50).set_index("metric")
    >>> round(float(table.loc["mse", "estimate"]), 3), int(table.loc["brier", "n_items"])
    (0.005, 1)
    """
    outputs, annotations = as_pandas(outputs), as_pandas(annotations)
    ci_prob = check_ci_prob(ci_prob)
    judged = validate_judge_outputs(outputs)
    counts = validate_annotations(annotations)
    pos = align_outputs(judged, counts)
    p_hat_all, major_all = reference_labels(counts.counts)
    judges = (judged.judge if judged.judge is not None
              else np.full(len(judged), ONE_JUDGE, object))
    rows = []
    for judge in pd.unique(judges):
        sel = np.flatnonzero(judges == judge)
        prob, p_hat, major = judged.prob[sel], p_hat_all[pos[sel]], major_all[pos[sel]]
        pred = np.array([_CODE[v] for v in predicted_label(prob, tie_band)])
        true = np.array([_CODE[v] for v in major])
        cal = true != 1
        y = (true[cal] == 2).astype(float)
        fns = [
            ("mse", mse_to_phat, (prob, p_hat)),
            ("agreement", lambda a, b: agreement(a, b, labels=(0, 1, 2)), (pred, true)),
            ("precision", lambda a, b: macro_prf(a, b, labels=(0, 1, 2)).precision, (pred, true)),
            ("recall", lambda a, b: macro_prf(a, b, labels=(0, 1, 2)).recall, (pred, true)),
            ("f1", lambda a, b: macro_prf(a, b, labels=(0, 1, 2)).f1, (pred, true)),
            ("ece", lambda a, b: expected_calibration_error(a, b, n_bins), (prob[cal], y)),
            ("brier", brier_score, (prob[cal], y)),
        ]
        if judged.prob_swapped is not None:
            swap = judged.prob_swapped[sel]
            both = ~np.isnan(swap)
            fns.append(("consistency", lambda a, b: swap_consistency(a, b, tie_band),
                        (prob[both], swap[both])))
            fns.append(("abs_symmetry_deviation", absolute_symmetry_deviation,
                        (prob[both], swap[both])))
        rows += _rows(judge, fns, n_boot, ci_prob, random_seed)
    table = pd.DataFrame(rows, columns=["judge", "metric", "estimate", "lower", "upper",
                                        "n_items"])
    flat = table[table["upper"] <= table["lower"]]  # (NaN rows compare False: warned above)
    warn_zero_width([f"{j!r} {m} on {n} item{'s' if n != 1 else ''}"
                     for j, m, n in zip(flat["judge"], flat["metric"], flat["n_items"])])
    return table


def _orient(system_a, system_b, n):
    """Pair key per row in first-appearance orientation, and which rows are reversed."""
    if system_a is None and system_b is None:
        return np.zeros(n, dtype=np.int64), [(None, None)], np.zeros(n, dtype=bool)
    if system_a is None or system_b is None:
        raise DataValidationError("pass both system_a and system_b, or neither.")
    a, b = np.asarray(system_a, dtype=object), np.asarray(system_b, dtype=object)
    if a.shape != (n,) or b.shape != (n,):
        raise DataValidationError(
            f"system_a and system_b need one entry per item ({n}); got shapes {a.shape} and "
            f"{b.shape}."
        )
    if pd.isna(a).any() or pd.isna(b).any():
        raise DataValidationError("system_a / system_b have missing values; name every system.")
    pairs, codes, reverse = [], np.empty(n, dtype=np.int64), np.zeros(n, dtype=bool)
    seen: dict = {}
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        if (x, y) not in seen and (y, x) in seen:
            reverse[i], codes[i] = True, seen[(y, x)]
            continue
        if (x, y) not in seen:
            seen[(x, y)] = len(pairs)
            pairs.append((x, y))
        codes[i] = seen[(x, y)]
    return codes, pairs, reverse


def predicted_win_rate(
    prob: ArrayLike,
    human: ArrayLike,
    *,
    system_a: Sequence | None = None,
    system_b: Sequence | None = None,
    n_boot: int = 1000,
    ci_prob: float = CI_PROB,
    random_seed: int | None = 0,
) -> pd.DataFrame:
    """Win rate of system B over system A predicted by a judge vs the human one (appendix D.1).

    .. math:: \\Pr[\\pi_B \\succ \\pi_A] = E_{x}\\, \\Pr[\\tau_B \\succ \\tau_A \\mid x]
              \\approx \\frac1n \\sum_i p_i

    with :math:`p_i` the judge's P(B better) on prompt i, and the human win rate
    :math:`\\frac1n\\sum_i \\hat p_i` from the human preference per prompt (a share of
    annotators, or a 0/1 label). Per system pair: both win rates, their difference
    (judge - human; the paper's "absolute error" is its absolute value) and
    paired-bootstrap intervals over prompts.

    Parameters
    ----------
    prob, human : array_like, shape (n_items,)
        P(B better) from the judge and from the humans, per prompt.
    system_a, system_b : sequence, optional
        The systems shown as A and B per prompt. Rows of a pair seen first as
        (s, t) and later as (t, s) are turned around (:math:`p \\to 1 - p`, both
        sources) so every pair is reported in its first-appearance orientation.
    n_boot, ci_prob, random_seed
        As :func:`~bayesjudge.metrics.bootstrap_interval`.

    Returns
    -------
    pandas.DataFrame
        ``system_a, system_b, n_items, judge_win_rate, judge_lower, judge_upper,
        human_win_rate, human_lower, human_upper, difference, difference_lower,
        difference_upper`` (one row per pair, first-appearance order).

    Examples
    --------
    >>> out = predicted_win_rate([0.6, 0.8, 0.4], [1, 1, 0], n_boot=100)
    >>> out[["judge_win_rate", "human_win_rate"]].round(3).values.tolist()
    [[0.6, 0.667]]
    """
    ci_prob = check_ci_prob(ci_prob)
    p = as_probabilities(prob, "prob")
    h = as_probabilities(human, "human")
    if p.ndim != 1 or p.shape != h.shape:
        raise DataValidationError(
            f"`prob` and `human` must be 1-D with one entry per prompt; got shapes {p.shape} "
            f"and {h.shape}."
        )
    codes, pairs, reverse = _orient(system_a, system_b, p.shape[0])
    p, h = np.where(reverse, 1.0 - p, p), np.where(reverse, 1.0 - h, h)
    rows = []
    for k, (sa, sb) in enumerate(pairs):
        sel = codes == k
        mean = _mean_last
        jw = percentile_interval(mean, (p[sel],), n_boot, ci_prob, random_seed)
        hw = percentile_interval(mean, (h[sel],), n_boot, ci_prob, random_seed)
        diff = paired_difference(mean, (p[sel], h[sel]), n_boot, ci_prob, random_seed)
        rows.append((sa, sb, int(sel.sum()), jw.estimate, jw.lower, jw.upper, hw.estimate,
                     hw.lower, hw.upper, diff.estimate, diff.lower, diff.upper))
    if not rows:
        raise DataValidationError(f"no prompts given: {show_values(p)}.")
    table = pd.DataFrame(rows, columns=[
        "system_a", "system_b", "n_items", "judge_win_rate", "judge_lower", "judge_upper",
        "human_win_rate", "human_lower", "human_upper", "difference", "difference_lower",
        "difference_upper"])
    flat = []
    for _, row in table.iterrows():
        pair = "" if row["system_a"] is None else f"{row['system_a']!r} vs {row['system_b']!r} "
        flat += [f"{pair}{what} on {row['n_items']} prompt{'s' if row['n_items'] != 1 else ''}"
                 for what, lo, hi in (("judge", "judge_lower", "judge_upper"),
                                      ("human", "human_lower", "human_upper"),
                                      ("difference", "difference_lower", "difference_upper"))
                 if row[hi] <= row[lo]]
    warn_zero_width(flat)
    return table


def _mean_last(x: np.ndarray) -> float | np.ndarray:
    value = np.mean(x, axis=-1)
    return float(value) if np.ndim(value) == 0 else value
