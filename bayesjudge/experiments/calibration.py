"""Calibration-split protocol and leave-one-rater-out comparison of the Davidson aggregator.

Implements the experimental protocol of Section 5 of
``davidson_itc_aggregation.txt``: a random ``calibration_fraction`` (5%) of the
labelled items calibrates :class:`~bayesjudge.DavidsonAggregator` by MAP, the
other items evaluate it and every baseline (majority vote, Soft-SC, CI-SC,
rounded median) on the *same* items; this is repeated over 100 random splits,
reported as means with 95% intervals (Figure 2, Tables 3-4), and the methods
tied for rank 1 are found with the paired permutation test (the top cluster).
:func:`leave_one_rater_out` is the per-rater comparison of Table 5. The fits go
through the compile-once engine: the model is compiled once, every split only
swaps the data, and the vote table is validated once for the whole run.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from tqdm import tqdm

from bayesjudge.baselines import ci_self_consistency, majority_vote, soft_self_consistency
from bayesjudge.data import (
    DataValidationError,
    Labels,
    VoteCounts,
    align_calibration,
    check_integer_values,
    check_no_missing,
    require_frame,
    validate_labels,
    validate_votes,
)
from bayesjudge.experiments.significance import TopClusterResult, top_cluster
from bayesjudge.inference import FitError
from bayesjudge.metrics import mae, pairwise_accuracy
from bayesjudge.models.davidson import DavidsonAggregator

__all__ = [
    "BUILTIN_METHODS",
    "Split",
    "SplitProtocolResult",
    "calibration_splits",
    "leave_one_rater_out",
    "rounded_median_from_counts",
    "split_protocol",
]

Seed = int | np.random.Generator | None
OnFailure = Literal["resample", "skip"]

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


class Split(NamedTuple):
    """One calibration / evaluation split, as sorted integer positions of the items."""

    calibration: NDArray[np.intp]
    evaluation: NDArray[np.intp]


def calibration_splits(
    n_items: int,
    calibration_fraction: float = 0.05,
    n_splits: int = 100,
    random_seed: Seed = 0,
) -> list[Split]:
    """Random calibration / evaluation splits of ``n_items`` items (Section 5).

    Each split draws ``round(calibration_fraction * n_items)`` calibration items
    uniformly without replacement (no stratification, as in the paper); the
    remaining items are the evaluation set. Splits are independent draws of
    one numpy Generator, so a seed fixes all of them; no global RNG is used.

    Parameters
    ----------
    n_items : int
        Number of labelled items.
    calibration_fraction : float, default 0.05
        Share of the items used for calibration, in (0, 1).
    n_splits : int, default 100
    random_seed : int, Generator or None

    Returns
    -------
    list of Split
        ``Split(calibration, evaluation)``: disjoint sorted position arrays
        whose union is ``range(n_items)``.

    Examples
    --------
    >>> splits = calibration_splits(1000, 0.05, n_splits=3, random_seed=1)
    >>> [len(s.calibration) for s in splits], len(splits[0].evaluation)
    ([50, 50, 50], 950)
    """
    n_items = _positive_int(n_items, "n_items")
    n_splits = _positive_int(n_splits, "n_splits")
    n_cal = _calibration_size(n_items, calibration_fraction)
    rng = np.random.default_rng(random_seed)
    return [_draw_split(rng, n_items, n_cal) for _ in range(n_splits)]


# --------------------------------------------------------------------------- result


@dataclass
class SplitProtocolResult:
    """Scores of every method on the evaluation items of every calibration split.

    Attributes
    ----------
    methods : list of str
        Method names, in the order they were requested.
    items : pandas.Index
        The labelled items of the protocol; positions below index into it.
    calibration, evaluation : ndarray of int, shape (n_splits, n_cal) / (n_splits, n_eval)
        Item positions of each scored split (after any resampling of failed fits).
    mae, pairwise_accuracy : DataFrame
        One row per scored split (index ``split``), one column per method.
    abs_error, correct : dict of str to ndarray, shape (n_splits, n_eval)
        Per-item loss cubes: ``|y_hat - y*|`` and ``y_hat == y*`` of each method on
        ``evaluation[s]``, ready for :func:`~bayesjudge.experiments.top_cluster` and
        :func:`~bayesjudge.experiments.paired_permutation_test`.
    summary : DataFrame
        One row per method, best MAE first. For ``mae`` and ``pa`` (pairwise
        accuracy): ``_mean`` over splits, ``_sd`` (split-to-split standard
        deviation), ``_percentile_lower`` / ``_percentile_upper`` (2.5th and 97.5th
        percentiles of the split scores: where one split's score falls) and
        ``_se_lower`` / ``_se_upper`` (mean -/+ 1.96 SE, SE = sd / sqrt(n_splits):
        the 95% interval of the *mean*, the error bars of the paper's Figure 2);
        ``top_cluster_mae`` / ``top_cluster_pa`` mark rank-1 methods.
    top_cluster_mae, top_cluster_pa : TopClusterResult
        Top clusters (Freitag et al. 2023) by per-item absolute error and by
        per-item correctness.
    parameters : DataFrame
        MAP parameters of the Davidson fit of each scored split (empty without
        ``davidson``).
    failures : DataFrame
        One row per failed Davidson fit: ``split``, ``attempt``, ``error``,
        ``message``, ``action`` (``"resampled"`` or ``"skipped"``).
    settings : dict
        Arguments of the run (fraction, sizes, seed, model arguments, ...).
    """

    methods: list[str]
    items: pd.Index
    calibration: NDArray[np.intp]
    evaluation: NDArray[np.intp]
    mae: pd.DataFrame
    pairwise_accuracy: pd.DataFrame
    abs_error: dict[str, NDArray[np.float64]]
    correct: dict[str, NDArray[np.bool_]]
    summary: pd.DataFrame
    top_cluster_mae: TopClusterResult | None
    top_cluster_pa: TopClusterResult | None
    parameters: pd.DataFrame
    failures: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def n_splits(self) -> int:
        """Number of scored splits."""
        return len(self.mae)

    @property
    def n_failed(self) -> int:
        """Number of Davidson fits that failed (each was resampled or skipped)."""
        return len(self.failures)

    @property
    def n_skipped(self) -> int:
        """Number of splits left out of every method's scores."""
        return int((self.failures["action"] == "skipped").sum()) if len(self.failures) else 0

    def top_cluster_text(self) -> str:
        """The rank-1 methods by MAE and by pairwise accuracy, best first, as one line."""
        parts = []
        for label, tc in (("MAE", self.top_cluster_mae), ("PA", self.top_cluster_pa)):
            if tc is not None:
                parts.append(f"{label}: " + ", ".join(tc.members.index[tc.members.to_numpy()]))
        return "; ".join(parts) if parts else "(one method: no ranking)"

    def __repr__(self) -> str:
        cols = ["mae_mean", "mae_se_lower", "mae_se_upper", "pa_mean", "top_cluster_mae"]
        return (
            f"SplitProtocolResult({self.n_splits} splits x {len(self.methods)} methods, "
            f"{self.calibration.shape[1]} calibration / {self.evaluation.shape[1]} evaluation "
            f"items, {self.n_failed} failed fit(s))\n{self.summary[cols].to_string()}"
        )


# --------------------------------------------------------------------------- protocol


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
    executor: Literal["joblib"] | Any | None = None,
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
    executor : None, "joblib" or a ``joblib.Parallel``
        None runs in-process. ``"joblib"`` runs chunks of splits in
        ``joblib.Parallel(n_jobs=-1)`` (each worker process compiles the model
        once, ~3 s); pass a configured ``joblib.Parallel`` to choose ``n_jobs`` or
        a backend (e.g. Dask via ``joblib.parallel_config(backend="dask")``).
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
    raw_votes = votes if isinstance(votes, pd.DataFrame) else None
    counts_all = validate_votes(votes)
    gold = validate_labels(labels)
    counts = VoteCounts(gold.items, align_calibration(counts_all, gold))
    n_unlabelled = len(counts_all) - int(counts_all.items.isin(gold.items).sum())
    if n_unlabelled:
        warnings.warn(
            f"split_protocol: {n_unlabelled} voted item(s) have no label and are not scored.",
            UserWarning,
            stacklevel=2,
        )
    has_confidence = raw_votes is not None and "confidence" in raw_votes.columns
    methods = _resolve_methods(methods, has_confidence, counts)
    fixed = {
        m: _baseline_predictions(m, counts, raw_votes) for m in methods if m != "davidson"
    }
    rng = np.random.default_rng(random_seed)
    run = _run_splits(
        counts, gold, fixed, "davidson" in methods, calibration_fraction, n_splits, rng,
        dict(model_kwargs or {}), progressbar, on_failure, max_resamples, executor,
        desc="calibration splits",
    )
    _warn_failures(run["failures"], on_failure, n_splits, stacklevel=2)

    abs_error = {m: np.abs(run["pred"][m] - run["y"]).astype(float) for m in methods}
    correct = {m: run["pred"][m] == run["y"] for m in methods}
    split_ids = run["split_ids"]
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
        calibration=run["calibration"],
        evaluation=run["evaluation"],
        mae=mae_table,
        pairwise_accuracy=pa_table,
        abs_error=abs_error,
        correct=correct,
        summary=summary,
        top_cluster_mae=tc_mae,
        top_cluster_pa=tc_pa,
        parameters=run["parameters"],
        failures=run["failures"],
        settings={
            "calibration_fraction": calibration_fraction,
            "n_splits_requested": n_splits,
            "n_calibration": run["calibration"].shape[1],
            "n_evaluation": run["evaluation"].shape[1],
            "random_seed": random_seed if not isinstance(random_seed, np.random.Generator) else "Generator",
            "model_kwargs": dict(model_kwargs or {}),
            "on_failure": on_failure,
            "n_resamples": n_resamples,
            "tau": tau,
            "n_unlabelled_items": n_unlabelled,
        },
    )


# --------------------------------------------------------------------------- leave one rater out


def leave_one_rater_out(
    votes: pd.DataFrame | VoteCounts,
    ratings: pd.DataFrame,
    calibration_fraction: float = 0.05,
    n_splits: int = 100,
    random_seed: Seed = 0,
    model_kwargs: Mapping[str, Any] | None = None,
    progressbar: bool = True,
    *,
    min_other_raters: int = 1,
    on_failure: OnFailure = "resample",
    max_resamples: int = 10,
    executor: Literal["joblib"] | Any | None = None,
) -> pd.DataFrame:
    """Per-rater leave-one-out comparison of a human and the calibrated judge (Table 5).

    For each rater R_i: the gold label of every item R_i rated is the majority of
    the *other* raters' labels on it (tie rule below); on those items, the
    calibration-split protocol calibrates the Davidson aggregator on the gold
    labels of each split's calibration items and scores it, R_i and majority
    vote of the judge's votes on the same evaluation items. Pairwise accuracies
    are averaged over the splits.

    Tie rule of the gold label: the most frequent label among the other raters;
    when two or three labels share the top count (e.g. one +1 and one -1, or one
    +1 and one 0) the gold label is 0 (tie), as in
    :func:`~bayesjudge.baselines.majority_vote` with ``tie_break="tie"``.

    Parameters
    ----------
    votes : DataFrame or VoteCounts
        The LLM judge's votes (see :func:`split_protocol`).
    ratings : DataFrame
        Human ratings, one row per (item, rater): ``item``, ``rater`` (or
        ``annotator``), ``label`` in {-1, 0, +1}.
    calibration_fraction, n_splits, random_seed, model_kwargs, progressbar
        As in :func:`split_protocol` (splits are drawn per rater).
    min_other_raters : int, default 1
        An item enters R_i's comparison only if at least this many other raters
        rated it.
    on_failure, max_resamples, executor
        As in :func:`split_protocol`.

    Returns
    -------
    DataFrame
        One row per rater (index ``rater``): ``n_items`` (items R_i rated with a
        gold label and votes), ``n_evaluation`` (evaluation items per split),
        ``human_pa`` (R_i vs gold), ``davidson_pa`` (the calibrated aggregator),
        ``majority_vote_pa`` (uncalibrated majority of the judge's votes), each
        averaged over the same evaluation items of every split,
        ``davidson_pa_se`` (SE of that mean over splits), ``win`` (davidson_pa >
        human_pa) and ``n_failed_fits``. ``attrs`` hold ``wins`` (e.g. ``"5/8"``)
        and ``tie_rule``.
    """
    min_other_raters = _positive_int(min_other_raters, "min_other_raters")
    table = _validate_ratings(ratings)
    counts_all = validate_votes(votes)
    rated = pd.Index(pd.unique(table["item"]))
    n_no_votes = int((~rated.isin(counts_all.items)).sum())
    if n_no_votes:
        warnings.warn(
            f"leave_one_rater_out: {n_no_votes} rated item(s) have no judge votes and are "
            "left out of every rater's comparison.",
            UserWarning,
            stacklevel=2,
        )
        table = table[table["item"].isin(counts_all.items)]
    raters = np.sort(pd.unique(table["rater"]))
    seeds = np.random.SeedSequence(
        random_seed if not isinstance(random_seed, np.random.Generator)
        else int(random_seed.integers(2**63))
    ).spawn(len(raters))
    rows = []
    for r, rater in enumerate(raters):
        loo = _gold_for(table, rater, min_other_raters)
        if len(loo) == 0:
            raise DataValidationError(
                f"rater {rater!r} shares no voted item with {min_other_raters} other rater(s); "
                "drop that rater or lower min_other_raters."
            )
        gold = Labels(pd.Index(loo["item"].to_numpy(), name="item"), loo["label"].to_numpy(np.int64))
        counts = VoteCounts(gold.items, align_calibration(counts_all, gold))
        fixed = {
            "human": loo["rater_label"].to_numpy(np.int64),
            "majority_vote": _baseline_predictions("majority_vote", counts, None),
        }
        run = _run_splits(
            counts, gold, fixed, True, calibration_fraction, n_splits,
            np.random.default_rng(seeds[r]), dict(model_kwargs or {}), progressbar,
            on_failure, max_resamples, executor, desc=f"rater {rater}",
        )
        _warn_failures(run["failures"], on_failure, n_splits, stacklevel=2, who=f"rater {rater!r}: ")
        pa = {m: (run["pred"][m] == run["y"]).mean(axis=1) for m in ("davidson", "human", "majority_vote")}
        n_scored = len(pa["davidson"])
        rows.append(
            {
                "rater": rater,
                "n_items": len(gold),
                "n_evaluation": run["evaluation"].shape[1],
                "human_pa": pa["human"].mean(),
                "davidson_pa": pa["davidson"].mean(),
                "majority_vote_pa": pa["majority_vote"].mean(),
                "davidson_pa_se": pa["davidson"].std(ddof=1) / np.sqrt(n_scored) if n_scored > 1 else np.nan,
                "win": bool(pa["davidson"].mean() > pa["human"].mean()),
                "n_failed_fits": len(run["failures"]),
            }
        )
    out = pd.DataFrame(rows).set_index("rater")
    out.attrs = {
        "wins": f"{int(out['win'].sum())}/{len(out)}",
        "tie_rule": "gold = most frequent label among the other raters; shared top count -> 0 (tie)",
        "n_items_without_votes": n_no_votes,
    }
    return out


# --------------------------------------------------------------------------- internals


def _run_splits(
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
    executor,
    desc: str,
) -> dict[str, Any]:
    """Fit on every split and collect predictions of every method on its evaluation items."""
    if on_failure not in ("resample", "skip"):
        raise ValueError(f"on_failure must be 'resample' or 'skip'; got {on_failure!r}.")
    if isinstance(max_resamples, bool) or int(max_resamples) != max_resamples or max_resamples < 0:
        raise ValueError(f"max_resamples must be an integer >= 0; got {max_resamples!r}.")
    n_splits = _positive_int(n_splits, "n_splits")
    n_items = len(gold)
    n_cal = _calibration_size(n_items, calibration_fraction)
    splits = [_draw_split(rng, n_items, n_cal) for _ in range(n_splits)]
    # Replacement draws come from their own stream, keyed by (split, attempt), so the
    # scored splits do not depend on the executor or on which splits failed before.
    replace_seed = int(rng.integers(2**63))
    jobs = [(s, split.calibration, split.evaluation) for s, split in enumerate(splits)]
    args = (counts, gold, with_davidson, model_kwargs, on_failure, max_resamples, replace_seed, n_cal)

    outcomes: list[tuple] = []
    if executor is None:
        for job in tqdm(jobs, desc=desc, disable=not progressbar, leave=False):
            outcomes.append(_fit_split(job, *args))
    else:
        parallel = _make_parallel(executor)
        from joblib import delayed

        from joblib import effective_n_jobs

        # Two chunks per worker: each worker compiles once, and the load stays balanced.
        n_chunks = min(len(jobs), 2 * effective_n_jobs(getattr(parallel, "n_jobs", 1)))
        chunks = [c for c in np.array_split(np.arange(len(jobs)), n_chunks) if len(c)]
        results = parallel(delayed(_fit_chunk)([jobs[i] for i in c], *args) for c in chunks)
        with tqdm(total=len(jobs), desc=desc, disable=not progressbar, leave=False) as bar:
            for chunk_out in results:
                outcomes.extend(chunk_out)
                bar.update(len(chunk_out))
        outcomes.sort(key=lambda o: o[0])

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
    if with_davidson:
        pred["davidson"] = np.stack([o[3]["decision"] for o in kept])
        params = pd.DataFrame([o[3]["params"] for o in kept], index=pd.Index(split_ids, name="split"))
    else:
        params = pd.DataFrame(index=pd.Index(split_ids, name="split"))
    failure_table = pd.DataFrame(
        failures, columns=["split", "attempt", "error", "message", "action"]
    )
    return {
        "split_ids": split_ids,
        "calibration": cal,
        "evaluation": ev,
        "pred": pred,
        "y": gold.values[ev],
        "parameters": params,
        "failures": failure_table,
    }


def _fit_chunk(jobs, *args) -> list[tuple]:
    return [_fit_split(job, *args) for job in jobs]


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
            split = _draw_split(np.random.default_rng([replace_seed, s, attempt]), len(gold), n_cal)
            cal, ev = split.calibration, split.evaluation
            continue
        decision = model.predict(counts.take(ev))["decision"].to_numpy(np.int64)
        params = {k: float(np.asarray(v)) for k, v in model.map_.items() if np.ndim(v) == 0}
        return s, cal, ev, {"decision": decision, "params": params}, failures
    raise AssertionError("unreachable")  # pragma: no cover


def _make_parallel(executor):
    try:
        import joblib
    except ImportError as err:  # pragma: no cover - joblib ships with scikit-learn/pymc stacks
        raise ImportError("executor='joblib' needs joblib: pip install joblib") from err
    if isinstance(executor, str):
        if executor != "joblib":
            raise ValueError(f"executor must be None, 'joblib' or a joblib.Parallel; got {executor!r}.")
        return joblib.Parallel(n_jobs=-1, return_as="generator_unordered")
    if isinstance(executor, joblib.Parallel):
        return executor
    raise ValueError(f"executor must be None, 'joblib' or a joblib.Parallel; got {executor!r}.")


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


def _split_scores(metric, run, methods, y_true, split_ids) -> pd.DataFrame:
    ev = run["evaluation"]
    rows = np.arange(ev.shape[0])[:, None]
    mask = np.zeros((ev.shape[0], len(y_true)), dtype=bool)
    mask[rows, ev] = True
    out = {}
    for m in methods:
        full = np.full(mask.shape, np.nan)
        full[rows, ev] = run["pred"][m]
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


def _warn_failures(failures: pd.DataFrame, on_failure: str, n_splits: int, stacklevel: int,
                   who: str = "") -> None:
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
        stacklevel=stacklevel + 1,
    )


def _validate_ratings(ratings: pd.DataFrame) -> pd.DataFrame:
    if isinstance(ratings, pd.DataFrame) and "rater" not in ratings.columns and "annotator" in ratings.columns:
        ratings = ratings.rename(columns={"annotator": "rater"})
    require_frame(ratings, "ratings", ["item", "rater", "label"])
    check_no_missing(ratings, "ratings", ["item", "rater", "label"])
    label = check_integer_values(ratings, "ratings", "label", (-1, 0, 1))
    dup = ratings.duplicated(["item", "rater"])
    if dup.any():
        raise DataValidationError(
            f"ratings has {int(dup.sum())} duplicated (item, rater) row(s), e.g. "
            f"{ratings.loc[dup, ['item', 'rater']].head(3).to_dict('records')}; keep one "
            "label per rater and item."
        )
    if ratings["rater"].nunique() < 2:
        raise DataValidationError(
            "ratings has a single rater; leave-one-rater-out needs at least two raters."
        )
    return pd.DataFrame({"item": ratings["item"].to_numpy(), "rater": ratings["rater"].to_numpy(),
                         "label": label})


def _loo_gold(ratings: pd.DataFrame, rater, min_other_raters: int = 1) -> pd.DataFrame:
    """Gold labels for leaving ``rater`` out: ``item``, ``label`` (others' majority), ``rater_label``."""
    return _gold_for(_validate_ratings(ratings), rater, min_other_raters)


def _gold_for(table: pd.DataFrame, rater, min_other_raters: int) -> pd.DataFrame:
    codes, items = pd.factorize(table["item"], sort=False)
    label = table["label"].to_numpy(np.int64)
    mine = (table["rater"] == rater).to_numpy()
    others = np.zeros((len(items), 3), dtype=np.int64)  # (c+, c0, c-) of the other raters
    np.add.at(others, (codes[~mine], 1 - label[~mine]), 1)
    pos, own = codes[mine], label[mine]
    keep = others[pos].sum(axis=1) >= min_other_raters
    pos, own = pos[keep], own[keep]
    c = others[pos]
    gold = majority_vote(c[:, 0], c[:, 1], c[:, 2], tie_break="tie")
    return pd.DataFrame({"item": items[pos], "label": gold, "rater_label": own})


def _draw_split(rng: np.random.Generator, n_items: int, n_cal: int) -> Split:
    perm = rng.permutation(n_items)
    return Split(np.sort(perm[:n_cal]), np.sort(perm[n_cal:]))


def _calibration_size(n_items: int, fraction: float) -> int:
    if not (isinstance(fraction, (int, float, np.floating)) and 0 < fraction < 1):
        raise ValueError(f"calibration_fraction must lie in (0, 1); got {fraction!r}.")
    n_cal = int(np.floor(fraction * n_items + 0.5))
    if n_cal < 1 or n_cal >= n_items:
        raise ValueError(
            f"calibration_fraction={fraction} of {n_items} items gives {n_cal} calibration "
            f"and {n_items - n_cal} evaluation items; both need at least one. Change the "
            "fraction or use more items."
        )
    return n_cal


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}.")
    return int(value)
