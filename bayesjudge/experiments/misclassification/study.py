"""Naive, bias-adjusted and Bayesian win rates over random calibration splits, on any table.

Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report LLM-as-a-Judge
Evaluations", arXiv:2511.21140, validate the bias-adjusted estimator on real data
(Section 8.2, Figure 7, Table 2): the human labels are the truth, an LLM judge labels
every row, a random 10% of the items is the calibration set (human labels used) and
the other 90% the test set (judge labels only); over 100 random splits they report the
bias of the naive and the adjusted estimate and the coverage and length of the 95%
interval. :func:`misclassification_study` runs that protocol on any long table
``system, item, judge_label, human_label`` (optionally ``judge``), scores the closed
forms and the Bayesian models on the same splits, and returns a
:class:`~bayesjudge.experiments.misclassification.result.MisclassificationStudy`.
The closed forms and the importance sampler are vectorised over splits in this
process; the hierarchical fits run as one task per (judge, split) through
:func:`~bayesjudge.experiments.runner.run_tasks` (in-process, joblib or Dask).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from bayesjudge.data import DataValidationError, show_values, validate_judgment_counts
from bayesjudge.data.frames import as_pandas
from bayesjudge.data.messages import PACKAGE_DIR
from bayesjudge.engine import ConvergenceWarning, FitError
from bayesjudge.estimators import check_alpha, lang_reiczigel_rates, wald_interval
from bayesjudge.experiments.misclassification.result import (
    COUNTS,
    DEFAULT_JUDGE,
    METHODS,
    MisclassificationStudy,
    calibration_masks,
    split_counts,
    study_truth,
    tidy_frame,
    validate_study_table,
)
from bayesjudge.experiments.runner import Executor, Seed, executor_name, run_tasks, task_seeds
from bayesjudge.models.misclassification.hierarchical import HierarchicalMisclassificationModel
from bayesjudge.models.misclassification.posterior import bayes_posterior_theta, beta_parameters
from bayesjudge.priors import Prior

__all__ = [
    "COUNTS",
    "DEFAULT_JUDGE",
    "METHODS",
    "MisclassificationStudy",
    "calibration_masks",
    "misclassification_study",
    "split_counts",
    "validate_study_table",
]


# --------------------------------------------------------------------------- study


def misclassification_study(
    table: pd.DataFrame,
    *,
    n_splits: int = 100,
    calibration_fraction: float = 0.1,
    alpha: float = 0.05,
    bayes: bool = True,
    n_draws: int = 4000,
    priors: Mapping[str, Prior] | None = None,
    hierarchical_splits: int | None = None,
    hierarchical_method: Literal["nuts", "map"] = "nuts",
    pooling: Literal["partial", "complete", "none"] = "partial",
    draws: int = 500,
    tune: int = 500,
    chains: int = 2,
    sampler: Literal["nutpie", "pymc"] = "nutpie",
    executor: Executor = None,
    progressbar: bool = True,
    random_seed: Seed = 0,
) -> MisclassificationStudy:
    r"""Naive, bias-adjusted and Bayesian accuracies of every system over random splits.

    Protocol (Section 8.2 of Lee et al. (2025)):

    * **Truth.** Per (judge, system), the mean ``human_label`` over all that judge's rows
      of the system, calibration rows included (a finite-population number).
    * **Splits.** ``n_splits`` times, a random ``calibration_fraction`` of the distinct
      *items* (over the whole table) is the calibration set: every row of those items --
      every system the item involves, every judge -- uses its human label, as one human
      labelling effort would (one label of a comparison calibrates both systems). All
      other rows are test rows (judge labels only). All judges share the same splits.
    * **Estimates per split and system** (counts from :func:`split_counts`):

      - ``naive_wald``: the judge's rate on the test rows, :math:`\hat p` (eq. 2), with
        its Wald interval;
      - ``lang_reiczigel``: the clipped Rogan-Gladen :math:`\hat\theta` (eq. 5) and the
        Lang-Reiczigel interval (eq. 6) from the system's own calibration rows;
      - ``lang_reiczigel_pooled``: the same with the calibration counts summed over the
        systems (one q0, q1 per judge: Section 7's assumption that the judge's errors
        depend on the true label only);
      - ``bayes``: posterior mean and equal-tailed credible interval of
        :class:`~bayesjudge.models.misclassification.model.MisclassificationModel` per system,
        by the exact vectorised importance sampler
        :func:`~bayesjudge.models.misclassification.posterior.bayes_posterior_theta`;
      - ``hierarchical``: posterior mean and equal-tailed interval of every system's
        accuracy from one
        :class:`~bayesjudge.models.misclassification.hierarchical.HierarchicalMisclassificationModel`
        (``pooling``) per (judge, split), by NUTS or, with ``hierarchical_method="map"``,
        MAP + Laplace (fast but over-shrinks under partial pooling), on the first
        ``hierarchical_splits`` splits only (all by default; 0 skips it). Systems
        without a test row on a split are left out of that fit (NaN).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per judgment: ``system``, ``item``, ``judge_label`` and ``human_label``
        in {0, 1} (or bool); optional ``judge`` (several judges; without it one judge
        named :data:`DEFAULT_JUDGE`). Item ids identify the labelled unit (e.g. a
        comparison of two systems) across systems and judges.
    n_splits : int, default 100
        Random calibration / test splits.
    calibration_fraction : float, default 0.1
        Share of the distinct items whose human labels are used.
    alpha : float, default 0.05
        One minus the confidence / credible level, in (0, 0.5).
    bayes : bool, default True
        Compute the per-system posterior.
    n_draws : int, default 4000
        Importance draws per (split, system) for ``bayes``.
    priors : mapping of str to Prior, optional
        Beta priors of ``bayes`` (``"accuracy"``, ``"specificity"``, ``"sensitivity"``;
        uniform by default).
    hierarchical_splits : int, optional
        Number of splits (the first ones) to fit the hierarchical model on; default all.
    hierarchical_method : {"nuts", "map"}
        Inference for the hierarchical model.
    pooling : {"partial", "complete", "none"}
        Pooling of the hierarchical model.
    draws, tune, chains : int
        NUTS settings of the hierarchical fits.
    sampler : {"nutpie", "pymc"}
        NUTS implementation.
    executor : None, "joblib", joblib.Parallel, "dask" or dask.distributed.Client
        Where the hierarchical fits run (:mod:`bayesjudge.experiments.runner`); the
        results do not depend on it.
    progressbar : bool, default True
        Progress bar of the hierarchical fits (tasks done / total).
    random_seed : int or numpy.random.Generator, optional
        Root seed of the splits, the importance sampler and every hierarchical fit
        (each fit gets its own seed from :func:`~bayesjudge.experiments.runner.task_seeds`).

    Returns
    -------
    MisclassificationStudy
        ``truth``, ``counts``, ``replications``, ``diagnostics``, ``timings``,
        ``settings``; ``summary()`` gives bias, coverage and interval length per method.

    Notes
    -----
    The truth is a fixed, finite-population number and every test set is most of the
    same rows, so the naive score barely varies between splits: the binomial test-set
    term in every interval (and Wald's whole width) overstates the split-to-split
    variance, and coverages are conservative. What varies is the calibration set.
    The splits depend on the order in which items first appear in ``table``.

    Warnings of the hierarchical fits are recorded in ``diagnostics`` inside each task;
    one warning at the end reports fits with convergence problems or failures.
    """
    table = as_pandas(table)  # polars, pyarrow, ...: pandas
    clean = validate_study_table(table)
    check_alpha(alpha)
    if bayes:
        beta_parameters(priors)  # fail before the splits, not after them
    for name, value, allowed in (("hierarchical_method", hierarchical_method, ("nuts", "map")),
                                 ("pooling", pooling, ("partial", "complete", "none")),
                                 ("sampler", sampler, ("nutpie", "pymc"))):
        if value not in allowed:
            raise DataValidationError(f"{name} must be one of {allowed}, got {value!r}.")
    if hierarchical_splits is not None and (
        isinstance(hierarchical_splits, bool) or int(hierarchical_splits) != hierarchical_splits
        or hierarchical_splits < 0
    ):
        raise DataValidationError(
            f"hierarchical_splits must be None (all splits) or an integer >= 0, got "
            f"{hierarchical_splits!r}. Fix: e.g. 20, or 0 to skip the hierarchical model."
        )
    where = executor_name(executor)
    t0 = time.perf_counter()
    judges = pd.Index(pd.unique(clean["judge"]))
    systems = pd.Index(pd.unique(clean["system"]))
    items = pd.Index(pd.unique(clean["item"]))
    splits_seed, bayes_seed, hier_seed = task_seeds(random_seed, 3)
    masks = calibration_masks(len(items), n_splits, calibration_fraction, splits_seed)
    n_hier = n_splits if hierarchical_splits is None else min(int(hierarchical_splits), n_splits)
    if n_hier and len(systems) < 2:
        raise DataValidationError(
            f"table.system has one system {show_values(systems)}; the hierarchical model "
            f"pools a judge's error rates over at least 2 systems. Fix: hierarchical_splits=0."
        )
    settings = {
        "judges": judges.tolist(), "n_splits": n_splits,
        "calibration_fraction": calibration_fraction, "alpha": alpha, "bayes": bayes,
        "n_draws": n_draws, "priors": priors, "hierarchical_splits": hierarchical_splits,
        "hierarchical_method": hierarchical_method, "pooling": pooling, "draws": draws,
        "tune": tune, "chains": chains, "sampler": sampler, "executor": where,
        "random_seed": random_seed,
    }
    truth = study_truth(clean, judges, systems)
    theta_of = truth["truth"].to_numpy().reshape(len(judges), len(systems))
    split_ids = np.arange(n_splits)
    timings = {"setup": time.perf_counter() - t0}
    count_frames, rep_frames, tasks = [], [], []
    for j, (judge, seed_b, seed_h) in enumerate(zip(
        judges, task_seeds(bayes_seed, len(judges)), task_seeds(hier_seed, len(judges))
    )):
        t0 = time.perf_counter()
        _, c = split_counts(clean[clean["judge"] == judge], items, masks, systems)
        count_frames.append(tidy_frame(judge, systems, split_ids, c))

        def add(method, est, lower, upper, splits=split_ids, judge=judge, theta=theta_of[j]):
            columns = {"estimate": est, "lower": lower, "upper": upper,
                       "truth": np.broadcast_to(theta, np.shape(est))}
            rep_frames.append(tidy_frame(judge, systems, splits, columns, method=method))

        add("naive_wald", *_naive(c["judged_pos"], c["n"], alpha))
        f = {k: v.astype(np.float64) for k, v in c.items()}
        pooled = {k: np.broadcast_to(f[k].sum(axis=1, keepdims=True), f[k].shape)
                  for k in ("tp", "m1", "tn", "m0")}
        for method, cal in (("lang_reiczigel", f), ("lang_reiczigel_pooled", pooled)):
            add(method, *_adjusted(f["judged_pos"], f["n"], cal["tp"], cal["m1"], cal["tn"],
                                   cal["m0"], alpha))
        timings[f"{judge}: closed form"] = time.perf_counter() - t0
        if bayes:
            t0 = time.perf_counter()
            post = bayes_posterior_theta(*(c[k] for k in COUNTS), priors=priors,
                                         n_draws=n_draws, ci_prob=1 - alpha, rng=seed_b)
            add("bayes", *(np.asarray(v) for v in (post.mean, post.lower, post.upper)))
            timings[f"{judge}: bayes (importance sampler)"] = time.perf_counter() - t0
        tasks += [(j, r, s, {k: c[k][r] for k in COUNTS})
                  for r, s in enumerate(task_seeds(seed_h, n_hier))]

    diag_rows = []
    if n_hier:
        t0 = time.perf_counter()
        shared = {"pooling": pooling, "method": hierarchical_method, "draws": draws,
                  "tune": tune, "chains": chains, "sampler": sampler, "ci_prob": 1 - alpha}
        results = run_tasks(_fit_hierarchical, tasks, shared=shared, executor=executor,
                            progressbar=progressbar, desc="hierarchical fits")
        for j, judge in enumerate(judges):
            mine = results[j * n_hier:(j + 1) * n_hier]
            rep_frames.append(tidy_frame(judge, systems, split_ids[:n_hier], {
                "estimate": np.stack([m[0] for m in mine]),
                "lower": np.stack([m[1] for m in mine]),
                "upper": np.stack([m[2] for m in mine]),
                "truth": np.broadcast_to(theta_of[j], (n_hier, len(systems))),
            }, method="hierarchical"))
            diag_rows += [{"judge": judge, "split": r, **m[3]} for r, m in enumerate(mine)]
        timings[f"hierarchical ({hierarchical_method}, {len(tasks)} fits, {where})"] = (
            time.perf_counter() - t0)
    diagnostics = pd.DataFrame(diag_rows)
    _warn_fits(diagnostics)
    order = {m: i for i, m in enumerate(METHODS)}
    replications = pd.concat(rep_frames, ignore_index=True)
    jrank = judges.get_indexer(replications["judge"])
    mrank = replications["method"].map(order).to_numpy()
    replications = replications.iloc[np.lexsort((mrank, jrank))].reset_index(drop=True)
    return MisclassificationStudy(
        truth=truth,
        counts=pd.concat(count_frames, ignore_index=True),
        replications=replications,
        diagnostics=diagnostics,
        timings=timings,
        settings=settings,
        items=items,
        masks=masks,
    )


def _naive(judged_pos: NDArray, n: NDArray, alpha: float) -> tuple[NDArray, ...]:
    """p_hat on the test rows with its Wald interval; NaN where a system has no test row."""
    empty = n == 0
    ci = wald_interval(judged_pos, np.where(empty, 1, n), alpha=alpha)
    return tuple(np.where(empty, np.nan, v) for v in (ci.estimate, ci.lower, ci.upper))


def _adjusted(x, n, tp, m1, tn, m0, alpha):
    """Clipped Rogan-Gladen estimate and Lang-Reiczigel limits; NaN where undefined."""
    with np.errstate(divide="ignore", invalid="ignore"):  # empty sets: NaN rates
        ci = lang_reiczigel_rates(x / n, tn / m0, tp / m1, n, m0, m1, alpha=alpha)
    return ci.estimate, ci.lower, ci.upper


def _fit_hierarchical(
    task: tuple[int, int, int, dict[str, NDArray]],
    *,
    pooling: str,
    method: str,
    draws: int,
    tune: int,
    chains: int,
    sampler: str,
    ci_prob: float,
) -> tuple[NDArray, NDArray, NDArray, dict[str, Any]]:
    """One hierarchical fit (a task): accuracies' mean, lower, upper, and its diagnostics.

    Systems are named by position inside the fit (the model names systems by strings),
    so the caller's ids are never re-typed. Warnings are recorded, not raised: the
    caller reports them once for the whole study.
    """
    _, _, seed, counts = task
    k = len(counts["n"])
    est, lower, upper = np.full(k, np.nan), np.full(k, np.nan), np.full(k, np.nan)
    keep = np.flatnonzero(counts["n"] > 0)
    names = [f"system_{i}" for i in keep]
    start = time.perf_counter()
    diag: dict[str, Any] = {}
    error = ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            data = validate_judgment_counts(*(counts[c][keep] for c in COUNTS), systems=names)
            model = HierarchicalMisclassificationModel(pooling=pooling, random_seed=seed)
            model.fit(data, method=method, draws=draws, tune=tune, chains=chains,
                      sampler=sampler)
            acc = model.predict(ci_prob=ci_prob).query("quantity == 'accuracy'")
            acc = acc.set_index("system").reindex(names)
            est[keep], lower[keep], upper[keep] = (acc[c].to_numpy() for c in
                                                   ("mean", "lower", "upper"))
            diag = dict(model.diagnostics_ or {})
        except (DataValidationError, FitError) as err:
            error = f"{type(err).__name__}: {err}"
    bad = [issubclass(w.category, ConvergenceWarning) for w in caught]
    diag = {"seconds": time.perf_counter() - start, **diag, "convergence_warning": any(bad),
            "other_warnings": "; ".join(str(w.message)[:80]
                                        for w, b in zip(caught, bad) if not b),
            "error": error}
    return est, lower, upper, diag


def _warn_fits(diagnostics: pd.DataFrame) -> None:
    """One warning each for hierarchical fits that failed or did not converge."""
    if not len(diagnostics):
        return
    failed = int((diagnostics["error"] != "").sum())
    if failed:
        first = diagnostics.loc[diagnostics["error"] != "", "error"].iloc[0]
        warnings.warn(
            f"{failed} of {len(diagnostics)} hierarchical fits failed and are NaN (first: "
            f"{first[:160]}); see .diagnostics['error']. A larger calibration_fraction gives "
            f"every split calibration rows of both classes.",
            UserWarning,
            skip_file_prefixes=(PACKAGE_DIR,),
        )
    bad = int(diagnostics["convergence_warning"].sum())
    if bad:
        warnings.warn(
            f"{bad} of {len(diagnostics)} hierarchical fits raised a NUTS ConvergenceWarning "
            f"(see .diagnostics); raise draws/tune if the intervals matter.",
            ConvergenceWarning,
            skip_file_prefixes=(PACKAGE_DIR,),
        )
