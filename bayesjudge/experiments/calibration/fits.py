"""Fit the Davidson aggregator on many calibration splits, in-process or in parallel.

The engine behind :func:`~bayesjudge.experiments.calibration.protocol.split_protocol` and
:func:`~bayesjudge.experiments.calibration.leave_one_out.leave_one_rater_out`: every split fits a
fresh :class:`~bayesjudge.DavidsonAggregator` by MAP on its calibration items (the
compiled model is reused, only the data are swapped) and decides its evaluation
items. Failed fits are redrawn or skipped; chunks of splits can run in
``joblib`` or Dask workers (:func:`~bayesjudge.experiments.runner.run_tasks`), each
compiling the model once.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from bayesjudge.data import DataValidationError, Labels, VoteCounts
from bayesjudge.data.messages import PACKAGE_DIR
from bayesjudge.engine import FitError
from bayesjudge.experiments.calibration.splits import calibration_size, draw_split
from bayesjudge.experiments.runner import Executor, check_positive_int, run_tasks
from bayesjudge.models.davidson.aggregator import DavidsonAggregator

__all__ = ["OnFailure", "SplitRun", "run_splits", "warn_failures"]

OnFailure = Literal["resample", "skip"]
_FAILURE_COLUMNS = ["split", "attempt", "error", "message", "action"]


@dataclass(frozen=True)
class SplitRun:
    """Predictions of every method on the evaluation items of every scored split.

    Attributes
    ----------
    split_ids : ndarray of int
        Index of each scored split among those requested.
    calibration, evaluation : ndarray of int, shape (n_scored, n_cal) / (n_scored, n_eval)
        Item positions of each scored split (after any redraw of a failed fit).
    pred : dict of str to ndarray, shape (n_scored, n_eval)
        Decisions of each method (``davidson`` and the fixed ones) on ``evaluation``.
    y : ndarray, shape (n_scored, n_eval)
        Gold labels of the evaluation items.
    parameters : pandas.DataFrame
        MAP parameters of each Davidson fit (index ``split``; no columns without it).
    failures : pandas.DataFrame
        One row per failed fit: ``split``, ``attempt``, ``error``, ``message``, ``action``.
    """

    split_ids: NDArray[np.intp]
    calibration: NDArray[np.intp]
    evaluation: NDArray[np.intp]
    pred: dict[str, NDArray[np.int64]]
    y: NDArray[np.int64]
    parameters: pd.DataFrame
    failures: pd.DataFrame


def run_splits(
    counts: VoteCounts,
    gold: Labels,
    fixed: dict[str, NDArray[np.int64]],
    with_davidson: bool,
    calibration_fraction: float,
    n_splits: int,
    rng: np.random.Generator,
    model_kwargs: dict[str, Any],
    progressbar: bool,
    on_failure: OnFailure,
    max_resamples: int,
    executor: Executor,
    desc: str,
) -> SplitRun:
    """Fit on every split and collect predictions of every method on its evaluation items.

    Parameters
    ----------
    counts, gold : VoteCounts, Labels
        Validated votes and gold labels of the same items, in the same order.
    fixed : dict of str to ndarray
        Decisions of the calibration-free methods for every item (scored per split).
    with_davidson : bool
        Fit and score the Davidson aggregator.
    calibration_fraction, n_splits, model_kwargs, progressbar, on_failure, max_resamples, executor
        As in :func:`~bayesjudge.experiments.calibration.protocol.split_protocol`.
    rng : numpy.random.Generator
        Draws the splits and seeds the replacement draws.
    desc : str
        Label of the progress bar.

    Returns
    -------
    SplitRun

    Raises
    ------
    FitError
        When every split failed, or a split failed ``max_resamples + 1`` times in a row.
    """
    if on_failure not in ("resample", "skip"):
        raise ValueError(f"on_failure must be 'resample' or 'skip'; got {on_failure!r}.")
    if isinstance(max_resamples, bool) or int(max_resamples) != max_resamples or max_resamples < 0:
        raise ValueError(f"max_resamples must be an integer >= 0; got {max_resamples!r}.")
    n_splits = check_positive_int(n_splits, "n_splits")
    n_items = len(gold)
    n_cal = calibration_size(n_items, calibration_fraction)
    splits = [draw_split(rng, n_items, n_cal) for _ in range(n_splits)]
    # Replacement draws come from their own stream, keyed by (split, attempt), so the
    # scored splits do not depend on the executor or on which splits failed before.
    replace_seed = int(rng.integers(2**63))
    jobs = [(s, split.calibration, split.evaluation) for s, split in enumerate(splits)]
    shared = dict(counts=counts, gold=gold, with_davidson=with_davidson,
                  model_kwargs=model_kwargs, on_failure=on_failure,
                  max_resamples=max_resamples, replace_seed=replace_seed, n_cal=n_cal)
    outcomes = run_tasks(_fit_split, jobs, shared=shared, executor=executor,
                         progressbar=progressbar, desc=desc)

    failures = [f for o in outcomes for f in o[4]]
    kept = [o for o in outcomes if o[3] is not None]
    if not kept:
        raise FitError(
            f"the Davidson fit failed on every split ({len(failures)} failures; first: "
            f"{failures[0][3] if failures else '?'}). Use a larger calibration_fraction."
        )
    split_ids = np.array([o[0] for o in kept])
    cal = np.stack([o[1] for o in kept])
    ev = np.stack([o[2] for o in kept])
    pred = {m: p[ev] for m, p in fixed.items()}
    index = pd.Index(split_ids, name="split")
    if with_davidson:
        pred["davidson"] = np.stack([o[3]["decision"] for o in kept])
        params = pd.DataFrame([o[3]["params"] for o in kept], index=index)
    else:
        params = pd.DataFrame(index=index)
    return SplitRun(
        split_ids=split_ids,
        calibration=cal,
        evaluation=ev,
        pred=pred,
        y=gold.values[ev],
        parameters=params,
        failures=pd.DataFrame(failures, columns=_FAILURE_COLUMNS),
    )


def warn_failures(
    failures: pd.DataFrame, on_failure: str, n_splits: int, who: str = ""
) -> None:
    """One UserWarning summarising the failed Davidson fits of a run (none if none failed).

    Parameters
    ----------
    failures : pandas.DataFrame
        :attr:`SplitRun.failures`.
    on_failure : {"resample", "skip"}
        What was done with the failed splits.
    n_splits : int
        Splits requested.
    who : str, optional
        Prefix of the message, e.g. ``"rater 'a': "``.
    """
    if not len(failures):
        return
    reasons = failures["error"].value_counts().to_dict()
    if on_failure == "resample":
        what = f"{failures['split'].nunique()} of {n_splits} split(s) were redrawn"
    else:
        what = f"{len(failures)} of {n_splits} split(s) were left out of every method's scores"
    warnings.warn(
        f"{who}{len(failures)} Davidson fit(s) failed on their calibration set {reasons}; "
        f"{what}. See result.failures (e.g. a calibration set without tie labels: raise "
        f"calibration_fraction).",
        UserWarning,
        skip_file_prefixes=(PACKAGE_DIR,),
    )


def _fit_split(
    job: tuple[int, NDArray[np.intp], NDArray[np.intp]],
    counts: VoteCounts,
    gold: Labels,
    with_davidson: bool,
    model_kwargs: dict[str, Any],
    on_failure: OnFailure,
    max_resamples: int,
    replace_seed: int,
    n_cal: int,
) -> tuple:
    """(split, calibration, evaluation, fit or None if skipped, failures) of one split."""
    s, cal, ev = job
    if not with_davidson:
        return s, cal, ev, {}, []
    failures = []
    for attempt in range(max_resamples + 1):
        try:
            model = DavidsonAggregator(**model_kwargs).fit(counts.take(cal), gold.take(cal))
        except (DataValidationError, FitError) as err:
            action = "skipped" if on_failure == "skip" else "resampled"
            failures.append((s, attempt, type(err).__name__, str(err), action))
            if on_failure == "skip":
                return s, cal, ev, None, failures
            if attempt == max_resamples:
                raise FitError(
                    f"split {s}: the Davidson fit failed on {max_resamples + 1} random "
                    f"calibration sets in a row (last error: {err}). Use a larger "
                    f"calibration_fraction, or on_failure='skip'."
                ) from err
            rng = np.random.default_rng([replace_seed, s, attempt])
            cal, ev = draw_split(rng, len(gold), n_cal)
            continue
        decision = model.predict(counts.take(ev))["decision"].to_numpy(np.int64)
        params = {k: float(np.asarray(v)) for k, v in model.map_.items() if np.ndim(v) == 0}
        return s, cal, ev, {"decision": decision, "params": params}, failures
    raise AssertionError("unreachable")  # pragma: no cover
