"""Monte Carlo studies of LLM juries: simulate a jury, fit every model, score it against the truth.

The simulation studies behind the judge-aware Bradley-Terry models of Qian, Sun,
Gales & Knill (2026), "Who can we trust? LLM-as-a-jury for Comparative Assessment",
arXiv:2602.16610 (sections 3-4): each replicate draws a jury of known reliabilities
1/sigma_k (eq. 13), position biases and pair-level noise on top of real human scores
(:func:`~bayesjudge.datasets.simulate_jury`), fits every model of the study on that
same jury and scores the fit against the truth -- the per-context Spearman
correlation of the skills (the paper's SRC), the coverage of the skills' credible
intervals, the recovery of the judges' reliabilities and position biases, and the
fit time. One replicate is one task of :func:`~bayesjudge.experiments.runner.run_tasks`
with its own seed, so the numbers do not depend on the executor (in-process, joblib,
Dask), and each worker compiles a model structure once.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from bayesjudge.constants import CI_PROB
from bayesjudge.data import DataValidationError, check_ci_prob
from bayesjudge.data.frames import as_pandas
from bayesjudge.data.messages import PACKAGE_DIR
from bayesjudge.datasets import simulate_jury
from bayesjudge.engine import FitError
from bayesjudge.experiments.runner import (
    Executor,
    Seed,
    check_positive_int,
    executor_name,
    run_tasks,
    task_seeds,
)
from bayesjudge.metrics.ranking import reliability_correlation, spearman_per_context
from bayesjudge.models.bradley_terry.base import PairwiseModel

__all__ = ["JURY_METRICS", "JuryStudy", "jury_simulation_study", "score_jury_fit"]

#: Metric columns of :attr:`JuryStudy.replications`, in the order of :meth:`JuryStudy.summary`.
JURY_METRICS = (
    "src", "src_perceived", "skill_coverage", "skill_rmse", "reliability_pearson",
    "reliability_spearman", "reliability_order", "discriminator_coverage",
    "position_bias_coverage", "position_bias_mae", "fit_seconds",
)

Simulator = Callable[..., tuple[pd.DataFrame, dict]]
ModelSpec = tuple[type[PairwiseModel], Mapping[str, Any]]


@dataclass(frozen=True)
class JuryStudy:
    """Result of :func:`jury_simulation_study`.

    Attributes
    ----------
    replications : pandas.DataFrame
        One row per replicate x model: ``replicate``, ``seed`` (of the simulated jury),
        ``model``, the metrics of :func:`score_jury_fit` (NaN where the model has no such
        parameter), ``fit_seconds``, ``error`` (empty unless the fit failed: then the
        metrics are NaN) and ``warnings`` (messages the fit raised, ``"; "``-joined).
    judges : pandas.DataFrame
        One row per replicate x model x judge (x aspect) for the models with
        discriminators or position biases: ``replicate``, ``model``, the columns of the
        model's ``judges()`` table and the truth on the model's scale, ``sigma_true``
        (sigma_k over the jury's geometric mean) and ``position_bias_true``.
    settings : dict
        The study's arguments (models as ``name -> (class name, kwargs)``).
    """

    replications: pd.DataFrame
    judges: pd.DataFrame
    settings: dict

    def summary(self) -> pd.DataFrame:
        """Mean and Monte Carlo standard error of every metric, per model.

        Returns
        -------
        pandas.DataFrame
            Index (``model``, ``metric``) in the study's model order and the order of
            :data:`JURY_METRICS`; columns ``mean``, ``mcse`` (sample sd / sqrt(n)) and
            ``n`` (replicates where the metric is defined). Metrics a model never has
            (e.g. reliability for soft BT) are left out.
        """
        long = self.replications.melt(id_vars=["model"], value_vars=list(JURY_METRICS),
                                      var_name="metric").dropna(subset=["value"])
        grouped = long.groupby(["model", "metric"], sort=False)["value"]
        out = pd.DataFrame({"mean": grouped.mean(), "n": grouped.count()})
        sd = grouped.std(ddof=1).fillna(0.0)  # one replicate: no spread to report
        out["mcse"] = sd / np.sqrt(out["n"])
        order = pd.MultiIndex.from_product([list(self.settings["models"]), list(JURY_METRICS)],
                                           names=["model", "metric"])
        return out.reindex(order).dropna(subset=["n"])[["mean", "mcse", "n"]].astype(
            {"n": int})


def jury_simulation_study(
    scores: pd.DataFrame,
    judges: Mapping[str, float] | pd.DataFrame,
    models: Mapping[str, ModelSpec],
    *,
    n_rep: int = 20,
    simulate: Mapping[str, Any] | Simulator | None = None,
    method: Literal["map", "nuts"] = "map",
    fit_kwargs: Mapping[str, Any] | None = None,
    ci_prob: float = CI_PROB,
    executor: Executor = None,
    progressbar: bool = True,
    random_seed: Seed = 0,
) -> JuryStudy:
    """Simulate ``n_rep`` juries, fit every model on each, and score the fits against the truth.

    Replicate ``r`` draws a jury with
    ``simulate_jury(scores, judges, random_seed=seed_r, **simulate)``, where ``seed_r`` is
    ``task_seeds(random_seed, n_rep)[r]`` (:func:`~bayesjudge.experiments.runner.task_seeds`),
    then fits ``cls(**kwargs)`` of every entry of ``models`` on it with
    ``fit(table, method=method, **fit_kwargs)`` and scores it with :func:`score_jury_fit`.
    A model whose kwargs do not set ``random_seed`` gets ``task_seeds(seed_r, 1)[0]`` (its
    Laplace or NUTS draws then share no stream with the simulation). One replicate is one
    task, so all models see the same jury.

    Parameters
    ----------
    scores : pandas.DataFrame
        Human scores, the ground truth (``item``, ``score``, optional ``context``,
        ``aspect``; e.g. :func:`~bayesjudge.datasets.load_summeval`). With a custom
        ``simulate`` function, whatever it takes (passed as is).
    judges : mapping judge -> sigma_k, or DataFrame
        The jury, as for :func:`~bayesjudge.datasets.simulate_jury` (passed as is to a
        custom ``simulate``).
    models : mapping of str to (class, kwargs)
        Models to fit, e.g. ``{"bt": (BradleyTerry, {}), "bt_sigma": (BTSigma, {}),
        "davidson": (DavidsonBT, {"discriminators": True})}``.
    n_rep : int, default 20
        Replicates (simulated juries).
    simulate : mapping or callable, optional
        Keyword arguments of :func:`~bayesjudge.datasets.simulate_jury` (``pair_noise``,
        ``position_bias``, ``kind``, ...), or a function with its signature,
        ``simulate(scores, judges, random_seed=...) -> (table, truth)``, whose truth has at
        least ``skill`` (group columns, ``item``, ``skill``, optionally ``perceived``) and,
        for judge metrics, ``sigma`` / ``position_bias`` Series by judge.
    method : {"map", "nuts"}, default "map"
        MAP with Laplace intervals, or NUTS.
    fit_kwargs : mapping, optional
        Further arguments of ``fit`` (e.g. ``{"chains": 2, "draws": 500, "tune": 500}``).
    ci_prob : float, default CI_PROB
        Mass of the equal-tailed intervals whose coverage is scored.
    executor : None, "joblib", joblib.Parallel, "dask" or dask.distributed.Client
        Where the replicates run (:func:`~bayesjudge.experiments.runner.run_tasks`).
    progressbar : bool, default True
        Replicates done / total.
    random_seed : int or numpy.random.Generator, default 0
        The one seed of the study.

    Returns
    -------
    JuryStudy

    Raises
    ------
    DataValidationError
        For bad ``models``, ``simulate``, ``fit_kwargs`` or ``ci_prob``, and bad scores or
        judges (the first replicate's jury is simulated here once to check them).
    FitError
        When every fit of one model failed (failures of some replicates are recorded in
        ``error`` instead, with a warning).

    Examples
    --------
    >>> from bayesjudge import BTSigma
    >>> from bayesjudge.datasets import load_summeval
    >>> scores = load_summeval().query("aspect == 'coherence'").head(64)  # 4 articles
    >>> study = jury_simulation_study(scores, {"a": 0.5, "b": 1.0, "c": 2.0},
    ...                               {"bt_sigma": (BTSigma, {})}, n_rep=2, progressbar=False)
    >>> int(study.summary().loc[("bt_sigma", "reliability_order"), "n"])
    2
    """
    scores, judges = as_pandas(scores), as_pandas(judges)
    specs = _check_models(models)
    n_rep = check_positive_int(n_rep, "n_rep")
    if method not in ("map", "nuts"):
        raise DataValidationError(f"method must be 'map' or 'nuts'; got {method!r}.")
    ci_prob = check_ci_prob(ci_prob)
    if not isinstance(fit_kwargs, (Mapping, type(None))) or "method" in (fit_kwargs or {}):
        raise DataValidationError(
            f"fit_kwargs must be a mapping of fit() arguments other than method; got "
            f"{fit_kwargs!r}. Fix: pass method=... to jury_simulation_study.")
    fit_kwargs = dict(fit_kwargs or {})
    executor_name(executor)  # a bad executor fails before any work
    seeds = task_seeds(random_seed, n_rep)
    simulator, sim_kwargs = _check_simulate(simulate)
    _check_truth(simulator(scores, judges, random_seed=seeds[0], **sim_kwargs)[1])
    shared = dict(scores=scores, judges=judges, specs=specs, simulator=simulator,
                  sim_kwargs=sim_kwargs, method=method, fit_kwargs=fit_kwargs, ci_prob=ci_prob)
    results = run_tasks(_replicate, list(enumerate(seeds)), shared=shared, executor=executor,
                        progressbar=progressbar, desc="jury replicates")
    reps = pd.DataFrame([row for rows, _ in results for row in rows])
    judge_frames = [f for _, frames in results for f in frames]
    judge_table = (pd.concat(judge_frames, ignore_index=True) if judge_frames
                   else pd.DataFrame(columns=["replicate", "model", "judge"]))
    failed = reps["error"] != ""
    for name in specs:
        mine = reps[reps["model"] == name]
        if (mine["error"] != "").all():
            raise FitError(f"every fit of models[{name!r}] failed; first error: "
                           f"{mine['error'].iloc[0]}")
    if failed.any() or (reps["warnings"] != "").any():
        warnings.warn(
            f"jury_simulation_study: {int(failed.sum())} of {len(reps)} fits failed and "
            f"{int((reps['warnings'] != '').sum())} raised warnings; see the study's "
            f"replications['error'] and ['warnings'] (failed fits are left out of summary()).",
            UserWarning, skip_file_prefixes=(PACKAGE_DIR,))
    settings = dict(n_rep=n_rep, models={k: (cls.__name__, dict(kw)) for k, (cls, kw)
                                         in specs.items()},
                    simulate=simulate if callable(simulate) else sim_kwargs, method=method,
                    fit_kwargs=fit_kwargs, ci_prob=ci_prob, random_seed=random_seed,
                    executor=executor_name(executor))
    return JuryStudy(replications=reps, judges=judge_table, settings=settings)


def score_jury_fit(
    model: PairwiseModel, truth: Mapping[str, Any], *, ci_prob: float = CI_PROB
) -> tuple[dict[str, float], pd.DataFrame | None]:
    """Score one fitted Bradley-Terry-family model against a simulated jury's truth.

    The truth is put on the model's scale first. Skills are identified up to a shift per
    ranking group (zero-sum per context x aspect) and, with discriminators, up to the
    scale shared with sigma_k, fixed by sum_k log sigma_k = 0: the true skills are
    centred per group (over the items the model ranks) and divided by the jury's
    geometric-mean sigma, and sigma_k by the same. For a model without discriminators
    on a jury of unequal sigma_k that scale is a convention (the model is misspecified,
    which its coverage then shows); pair-level noise also shrinks every fitted scale.

    Metrics: ``src`` (per-context Spearman of the skills against the true ``skill``,
    averaged over groups, :func:`~bayesjudge.metrics.ranking.spearman_per_context`),
    ``src_perceived`` (against ``perceived``, the skills the jury saw), ``skill_coverage``
    (share of the ``ci_prob`` skill intervals containing the true perceived skill) and
    ``skill_rmse`` (of the point skills), ``n_skills``; with discriminators
    ``reliability_pearson`` / ``reliability_spearman`` (of 1/sigma_k against the true
    1/sigma_k; NaN with fewer than 3 judges), ``reliability_order`` (1 if every pair of
    judges with different true sigma_k is ordered correctly, else 0) and
    ``discriminator_coverage``; with position bias ``position_bias_coverage`` and
    ``position_bias_mae``. Absent parameters give NaN.

    Returns
    -------
    metrics : dict of str to float
    judges : pandas.DataFrame or None
        The model's ``judges(ci_prob)`` table with ``sigma_true`` and
        ``position_bias_true``; None for a model without per-judge parameters.
    """
    out = dict.fromkeys(JURY_METRICS[:-1], np.nan)
    skill = truth["skill"]
    rank = model.ranking(ci_prob=ci_prob)
    keys = [c for c in ("aspect", "context") if c in rank.columns and c in skill.columns]
    m = rank.merge(skill, on=keys + ["item"], how="inner", suffixes=("", "_true"),
                   validate="one_to_one")
    group = pd.MultiIndex.from_frame(m[keys]).factorize()[0] if keys else np.zeros(len(m), int)
    sigma = truth.get("sigma")
    scale = float(np.exp(np.log(np.asarray(sigma, float)).mean())) if sigma is not None else 1.0
    perceived = m["perceived"] if "perceived" in m.columns else m["skill_true"]
    target = (perceived - perceived.groupby(group).transform("mean")) / scale
    point = m["skill"] - m["skill"].groupby(group).transform("mean")
    out["src"] = spearman_per_context(m["skill"], m["skill_true"], group)
    out["src_perceived"] = spearman_per_context(m["skill"], perceived, group)
    out["skill_coverage"] = float(((m["skill_lower"] <= target)
                                   & (target <= m["skill_upper"])).mean())
    out["skill_rmse"] = float(np.sqrt(((point - target) ** 2).mean()))
    out["n_skills"] = float(len(m))
    table = model.judges(ci_prob=ci_prob)
    has_sigma, has_bias = "discriminator" in table.columns, "position_bias" in table.columns
    if not (has_sigma or has_bias):
        return out, None
    if sigma is not None:
        table["sigma_true"] = table["judge"].map(pd.Series(sigma) / scale).astype(float)
    if truth.get("position_bias") is not None:
        table["position_bias_true"] = table["judge"].map(truth["position_bias"]).astype(float)
    if has_sigma and "sigma_true" in table.columns:
        out.update(_reliability_metrics(table))
    if has_bias and "position_bias_true" in table.columns:
        b = table["position_bias_true"]
        out["position_bias_coverage"] = float(((table["position_bias_lower"] <= b)
                                               & (b <= table["position_bias_upper"])).mean())
        out["position_bias_mae"] = float((table["position_bias"] - b).abs().mean())
    return out, table


# -- internals -------------------------------------------------------------------------
def _reliability_metrics(table: pd.DataFrame) -> dict[str, float]:
    true_rel = 1.0 / table["sigma_true"].to_numpy()
    fitted = table["reliability"].to_numpy()
    out = {}
    if len(table) >= 3:
        corr = reliability_correlation(fitted, true_rel)
        out["reliability_pearson"], out["reliability_spearman"] = corr["pearson"], corr["spearman"]
    i, j = np.triu_indices(len(table), 1)
    differ = true_rel[i] != true_rel[j]
    if differ.any():
        agree = np.sign(fitted[i] - fitted[j]) == np.sign(true_rel[i] - true_rel[j])
        out["reliability_order"] = float(agree[differ].all())
    s = table["sigma_true"]
    out["discriminator_coverage"] = float(((table["discriminator_lower"] <= s)
                                           & (s <= table["discriminator_upper"])).mean())
    return out


def _replicate(task, *, scores, judges, specs, simulator, sim_kwargs, method, fit_kwargs,
               ci_prob) -> tuple[list[dict], list[pd.DataFrame]]:
    """Simulate replicate ``r``'s jury, fit and score every model (one runner task)."""
    r, seed = task
    table, truth = simulator(scores, judges, random_seed=seed, **sim_kwargs)
    fit_seed = task_seeds(seed, 1)[0]
    rows, frames = [], []
    for name, (cls, kwargs) in specs.items():
        row = {"replicate": r, "seed": seed, "model": name}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            try:
                model = cls(**{"random_seed": fit_seed, **kwargs})
                model.fit(table, method=method, **fit_kwargs)
                row["fit_seconds"] = time.perf_counter() - start
                metrics, judge_table = score_jury_fit(model, truth, ci_prob=ci_prob)
                row.update(metrics, error="")
            except (FitError, DataValidationError) as err:
                row.update(dict.fromkeys(JURY_METRICS, np.nan), n_skills=np.nan,
                           error=f"{type(err).__name__}: {err}")
                judge_table = None
        row["warnings"] = "; ".join(dict.fromkeys(str(w.message) for w in caught))
        rows.append(row)
        if judge_table is not None:
            frames.append(judge_table.assign(replicate=r, model=name)[
                ["replicate", "model", *judge_table.columns]])
    return rows, frames


def _check_models(models) -> dict[str, ModelSpec]:
    if not isinstance(models, Mapping) or not models:
        raise DataValidationError(
            f"models must be a non-empty mapping name -> (model class, kwargs); got "
            f"{models!r}. Fix: e.g. {{'bt_sigma': (BTSigma, {{}})}}.")
    specs = {}
    for name, spec in models.items():
        ok = (isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], type)
              and issubclass(spec[0], PairwiseModel) and isinstance(spec[1], Mapping))
        if not ok:
            raise DataValidationError(
                f"models[{name!r}] must be (a Bradley-Terry-family class, kwargs dict); got "
                f"{spec!r}. Fix: e.g. (BTSigma, {{}}) or (DavidsonBT, {{'discriminators': True}}).")
        try:
            spec[0](**spec[1])
        except TypeError as err:
            raise DataValidationError(
                f"models[{name!r}]: {spec[0].__name__}(**{dict(spec[1])!r}) fails: {err}. "
                f"Fix: pass keyword arguments of {spec[0].__name__}.") from err
        specs[str(name)] = (spec[0], dict(spec[1]))
    return specs


def _check_simulate(simulate) -> tuple[Simulator, dict[str, Any]]:
    if simulate is None:
        return simulate_jury, {}
    if callable(simulate):
        return simulate, {}
    if not isinstance(simulate, Mapping) or "random_seed" in simulate:
        raise DataValidationError(
            f"simulate must be a mapping of simulate_jury arguments (without random_seed: "
            f"each replicate gets its own) or a function; got {simulate!r}.")
    return simulate_jury, dict(simulate)


def _check_truth(truth) -> None:
    skill = truth.get("skill") if isinstance(truth, Mapping) else None
    if not (isinstance(skill, pd.DataFrame) and {"item", "skill"} <= set(skill.columns)):
        raise DataValidationError(
            "simulate returned a truth without a 'skill' DataFrame (columns item, skill, "
            "optional perceived and group columns). Fix: return (table, truth) as "
            "bayesjudge.datasets.simulate_jury does.")
