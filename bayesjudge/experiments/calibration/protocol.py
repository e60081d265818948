"""Calibration-split protocol comparing the Davidson aggregator with the baselines.

Implements the experimental protocol of Section 5 of Dadkhahi, Trabelsi, Riley,
Juraska, Mirzazadeh et al. (2025), "Distribution-Calibrated Inference Time
Compute for Thinking LLM-as-a-Judge", arXiv:2512.03019: a random
``calibration_fraction`` (5%) of the labelled items calibrates
:class:`~bayesjudge.DavidsonAggregator` by MAP, the other items evaluate it and
every baseline (majority vote, Soft-SC, CI-SC, rounded median) on the *same*
items; this is repeated over 100 random splits, reported as means with 95%
intervals (Figure 2, Tables 3-4), and the methods tied for rank 1 are found with
the paired permutation test (the top cluster). The fits go through the
compile-once engine (:mod:`bayesjudge.experiments.calibration.fits`): the model is
compiled once, every split only swaps the data, and the vote table is validated
once for the whole run.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from bayesjudge.baselines import ci_self_consistency, majority_vote, soft_self_consistency
from bayesjudge.data import (
    DataValidationError,
    Labels,
    VoteCounts,
    align_calibration,
    validate_labels,
    validate_votes,
)
from bayesjudge.data.frames import as_pandas
from bayesjudge.data.messages import PACKAGE_DIR
from bayesjudge.experiments.calibration.fits import OnFailure, SplitRun, run_splits, warn_failures
from bayesjudge.experiments.calibration.result import SplitProtocolResult
from bayesjudge.experiments.calibration.significance import top_cluster
from bayesjudge.experiments.runner import Executor, Seed
from bayesjudge.metrics import mae, pairwise_accuracy

__all__ = ["BUILTIN_METHODS", "rounded_median_from_counts", "split_protocol"]

#: Methods :func:`split_protocol` knows by name. ``davidson`` is refitted on every
#: split; the others do not learn from the calibration set.
BUILTIN_METHODS = (
    "davidson",
    "majority_vote",
    "soft_sc",
    "soft_sc_mean",
    "soft_sc_prod",
    "ci_sc",
    "rounded_median",
)
_CONFIDENCE_METHODS = ("soft_sc", "soft_sc_mean", "soft_sc_prod", "ci_sc")
# The paper's Figure 2 error bars: mean +- 1.96 standard errors over the splits.
_Z = 1.96
_PERCENTILES = (2.5, 97.5)


def split_protocol(
    votes: pd.DataFrame | VoteCounts,
    labels: pd.DataFrame | Labels,
    methods: Sequence[str] | None = None,
    calibration_fraction: float = 0.05,
    n_splits: int = 100,
    random_seed: Seed = 0,
    model_kwargs: Mapping[str, Any] | None = None,
    progressbar: bool = True,
    *,
    on_failure: OnFailure = "resample",
    max_resamples: int = 10,
    n_resamples: int = 100,
    tau: float = 0.05,
    executor: Executor = None,
) -> SplitProtocolResult:
    """Score the calibrated Davidson aggregator and the baselines over random splits.

    For each of ``n_splits`` random splits (:func:`calibration_splits`), a fresh
    ``DavidsonAggregator(**model_kwargs)`` is fitted by MAP on the calibration
    items and decides the evaluation items (MAE Bayes action, eq. 6); every other
    method is scored on exactly the same evaluation items. Data are validated
    once; each fit reuses the compiled model (only the data are swapped).

    Parameters
    ----------
    votes : DataFrame or VoteCounts
        Votes table (``item``, ``vote`` [, ``confidence``]) or counts table
        (``item``, ``n_pos``, ``n_tie``, ``n_neg``). Voted items without a label
        are left out (with a warning).
    labels : DataFrame or Labels
        Gold labels (``item``, ``label`` in {-1, 0, +1}); every labelled item needs votes.
    methods : sequence of str, optional
        Names from :data:`BUILTIN_METHODS`. Default: ``davidson`` and
        ``majority_vote`` (ties in the vote counts -> 0), plus ``soft_sc``
        (min-reduction) and ``ci_sc`` when ``votes`` has a ``confidence``
        column, plus ``rounded_median`` when no item has more than 2 votes
        (the paper's GD/FS aggregation; a single vote is its own median).
    calibration_fraction : float, default 0.05
        Share of the labelled items used for calibration (paper: 5%).
    n_splits : int, default 100
    random_seed : int, Generator or None
        Seeds the splits, their replacements and the permutation tests.
    model_kwargs : mapping, optional
        Arguments of :class:`~bayesjudge.DavidsonAggregator`. The default priors
        are weakly informative; ``{"priors": "flat"}`` is the paper's MLE (eq. 8).
    progressbar : bool, default True
        tqdm bar over the splits.
    on_failure : {"resample", "skip"}, default "resample"
        What to do when a Davidson fit fails on a split (e.g. its calibration
        items lack a label class, :class:`~bayesjudge.DataValidationError`):
        ``"resample"`` draws a fresh random split in its place (up to
        ``max_resamples`` times, then raises); ``"skip"`` leaves that split out of
        *every* method's scores. Either way the failure is recorded in
        ``result.failures`` and a warning gives the count. Both condition the
        scored splits on a fittable calibration set; the paper does not stratify.
    max_resamples : int, default 10
        Replacement draws per split before giving up (``on_failure="resample"``).
    n_resamples : int, default 100
        Permutation resamples per split for the top clusters (paper: 100).
    tau : float, default 0.05
        Significance threshold of the top clusters (paper: 0.05).
    executor : None, "joblib", joblib.Parallel, "dask" or dask.distributed.Client
        Where the splits are fitted (:mod:`bayesjudge.experiments.runner`): None
        in-process; ``"joblib"`` in local worker processes (or a configured
        ``joblib.Parallel``); a Dask ``Client`` (``"dask"``: the current one) on the
        workers of a local or remote cluster. Each worker compiles the model once;
        the result is the same whatever the executor (the splits are drawn here).
        Davidson MAP fits take ~2 ms, so in-process is fastest for one data set.

    Returns
    -------
    SplitProtocolResult

    Examples
    --------
    >>> from bayesjudge.datasets import simulate_davidson_votes
    >>> votes, labels = simulate_davidson_votes(400, 8, beta=2.0, eta0=-0.5, random_seed=1)
    >>> res = split_protocol(votes, labels, n_splits=5, calibration_fraction=0.2,
    ...                      progressbar=False)
    >>> list(res.mae.columns)
    ['davidson', 'majority_vote']
    """
    votes, labels = as_pandas(votes), as_pandas(labels)
    raw_votes = votes if isinstance(votes, pd.DataFrame) else None
    counts_all = validate_votes(votes)
    gold = validate_labels(labels)
    counts = VoteCounts(gold.items, align_calibration(counts_all, gold))
    n_unlabelled = len(counts_all) - int(counts_all.items.isin(gold.items).sum())
    if n_unlabelled:
        warnings.warn(
            f"split_protocol: {n_unlabelled} voted item(s) have no label and are not scored.",
            UserWarning,
            skip_file_prefixes=(PACKAGE_DIR,),
        )
    has_confidence = raw_votes is not None and "confidence" in raw_votes.columns
    methods = _resolve_methods(methods, has_confidence, counts)
    fixed = {
        m: _baseline_predictions(m, counts, raw_votes) for m in methods if m != "davidson"
    }
    rng = np.random.default_rng(random_seed)
    run = run_splits(
        counts, gold, fixed, "davidson" in methods, calibration_fraction, n_splits, rng,
        dict(model_kwargs or {}), progressbar, on_failure, max_resamples, executor,
        desc="calibration splits",
    )
    warn_failures(run.failures, on_failure, n_splits)

    abs_error = {m: np.abs(run.pred[m] - run.y).astype(float) for m in methods}
    correct = {m: run.pred[m] == run.y for m in methods}
    split_ids = run.split_ids
    mae_table = _split_scores(mae, run, methods, gold.values, split_ids)
    pa_table = _split_scores(pairwise_accuracy, run, methods, gold.values, split_ids)

    tc_seed = int(rng.integers(2**63))
    tc_mae = tc_pa = None
    if len(methods) > 1:
        tc_mae = top_cluster(abs_error, lower_is_better=True, tau=tau,
                             n_resamples=n_resamples, random_seed=tc_seed)
        tc_pa = top_cluster({m: v.astype(float) for m, v in correct.items()},
                            lower_is_better=False, tau=tau, n_resamples=n_resamples,
                            random_seed=tc_seed + 1)
    summary = pd.concat([_summarize(mae_table, "mae"), _summarize(pa_table, "pa")], axis=1)
    summary["top_cluster_mae"] = (
        tc_mae.members.reindex(summary.index).to_numpy() if tc_mae else True
    )
    summary["top_cluster_pa"] = tc_pa.members.reindex(summary.index).to_numpy() if tc_pa else True
    summary = summary.sort_values("mae_mean", kind="stable")
    summary.index.name = "method"

    return SplitProtocolResult(
        methods=list(methods),
        items=gold.items,
        calibration=run.calibration,
        evaluation=run.evaluation,
        mae=mae_table,
        pairwise_accuracy=pa_table,
        abs_error=abs_error,
        correct=correct,
        summary=summary,
        top_cluster_mae=tc_mae,
        top_cluster_pa=tc_pa,
        parameters=run.parameters,
        failures=run.failures,
        settings={
            "calibration_fraction": calibration_fraction,
            "n_splits_requested": n_splits,
            "n_calibration": run.calibration.shape[1],
            "n_evaluation": run.evaluation.shape[1],
            "random_seed": (
                "Generator" if isinstance(random_seed, np.random.Generator) else random_seed
            ),
            "model_kwargs": dict(model_kwargs or {}),
            "on_failure": on_failure,
            "n_resamples": n_resamples,
            "tau": tau,
            "n_unlabelled_items": n_unlabelled,
        },
    )


def rounded_median_from_counts(counts: NDArray[np.int64]) -> NDArray[np.int64]:
    """Rounded median (GD/FS baseline) of each item's votes, from (c+, c0, c-) counts.

    Same rule as :func:`bayesjudge.baselines.rounded_median` (median of the sorted
    votes, half-integers rounded away from zero), for items with any number of votes.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = counts.sum(axis=1)
    cneg, ctie = counts[:, 2], counts[:, 1]

    def order_stat(k):  # value of the k-th (0-based) smallest vote
        return np.where(k < cneg, -1, np.where(k < cneg + ctie, 0, 1))

    m = (order_stat((n - 1) // 2) + order_stat(n // 2)) / 2.0
    return (np.sign(m) * np.ceil(np.abs(m))).astype(np.int64)


def _resolve_methods(
    methods: Sequence[str] | None, has_confidence: bool, counts: VoteCounts
) -> list[str]:
    if methods is None:
        out = ["davidson", "majority_vote"]
        if has_confidence:
            out += ["soft_sc", "ci_sc"]
        if counts.counts.sum(axis=1).max() <= 2:
            out.append("rounded_median")
        return out
    if isinstance(methods, str):
        methods = [methods]
    out = list(dict.fromkeys(methods))
    unknown = [m for m in out if m not in BUILTIN_METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(BUILTIN_METHODS)}.")
    if not out:
        raise ValueError(f"methods is empty; choose from {list(BUILTIN_METHODS)}.")
    need_conf = [m for m in out if m in _CONFIDENCE_METHODS]
    if need_conf and not has_confidence:
        raise DataValidationError(
            f"method(s) {need_conf} need a votes table with a `confidence` column (one row "
            "per vote); pass the long votes DataFrame, not counts."
        )
    return out


def _baseline_predictions(
    method: str, counts: VoteCounts, raw_votes: pd.DataFrame | None
) -> NDArray[np.int64]:
    """Predictions of a calibration-free method for every item of ``counts``, in order."""
    c = counts.counts
    if method == "majority_vote":
        return majority_vote(c[:, 0], c[:, 1], c[:, 2], tie_break="tie")
    if method == "rounded_median":
        return rounded_median_from_counts(c)
    reducer = {"soft_sc": "min", "soft_sc_mean": "mean", "soft_sc_prod": "prod"}
    if method in reducer:
        series = soft_self_consistency(raw_votes, reduce=reducer[method])
    elif method == "ci_sc":
        series = ci_self_consistency(raw_votes)
    else:  # pragma: no cover - _resolve_methods guards
        raise ValueError(method)
    return series.reindex(counts.items).to_numpy(np.int64)


def _split_scores(
    metric, run: SplitRun, methods: list[str], y_true: NDArray, split_ids: NDArray
) -> pd.DataFrame:
    ev = run.evaluation
    rows = np.arange(ev.shape[0])[:, None]
    mask = np.zeros((ev.shape[0], len(y_true)), dtype=bool)
    mask[rows, ev] = True
    out = {}
    for m in methods:
        full = np.full(mask.shape, np.nan)
        full[rows, ev] = run.pred[m]
        out[m] = metric(full, y_true, mask)
    return pd.DataFrame(out, index=pd.Index(split_ids, name="split"))


def _summarize(table: pd.DataFrame, prefix: str) -> pd.DataFrame:
    values = table.to_numpy(float)
    n = values.shape[0]
    mean = values.mean(axis=0)
    sd = values.std(axis=0, ddof=1) if n > 1 else np.full(values.shape[1], np.nan)
    se = sd / np.sqrt(n)
    lo, hi = np.percentile(values, _PERCENTILES, axis=0)
    return pd.DataFrame(
        {
            f"{prefix}_mean": mean,
            f"{prefix}_sd": sd,
            f"{prefix}_percentile_lower": lo,
            f"{prefix}_percentile_upper": hi,
            f"{prefix}_se_lower": mean - _Z * se,
            f"{prefix}_se_upper": mean + _Z * se,
        },
        index=table.columns,
    )
