"""Misclassification-adjusted win rates on real data: the Section 8.2 protocol on PandaLM.

Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report LLM-as-a-Judge
Evaluations", arXiv:2511.21140, validate the bias-adjusted estimator on Chatbot
Arena (Section 8.2, Figure 7, Table 2): the human verdicts are the truth, an LLM
judge labels every response pair, a random 10% of the items is the calibration
set (human labels used), the other 90% the test set (judge labels only), and
over 100 random splits it reports each model's bias of the naive and the
adjusted win rate and the coverage and length of the 95% interval. This module
runs the same protocol on the PandaLM test set shipped with the package, with
GPT-3.5 and PandaLM-7B as judges, and adds the Bayesian answers: the
single-system :class:`~bayesjudge.models.misclassification.MisclassificationModel`
per system and the
:class:`~bayesjudge.models.misclassification_hierarchical.HierarchicalMisclassificationModel`
pooling the judge's error rates across systems. The closed-form methods are
vectorised over splits (one array element per split and system); the Bayesian
ones are described in :func:`pandalm_misclassification_study`. The data side
(truth, splits, counts) lives in :mod:`bayesjudge.experiments.pandalm_splits`
and is re-exported here.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from bayesjudge.data import DataValidationError, validate_judgment_counts
from bayesjudge.datasets import PANDALM_JUDGES, load_pandalm
from bayesjudge.estimators import check_alpha, lang_reiczigel_rates, wald_interval
from bayesjudge.experiments.pandalm_splits import (  # noqa: F401  (re-exported)
    COUNTS,
    Judge,
    pandalm_calibration_masks,
    pandalm_split_counts,
    pandalm_win_rate_truth,
    study_judgments,
)
from bayesjudge.experiments.splits import Seed
from bayesjudge.models.misclassification_posterior import bayes_posterior_theta, beta_parameters
from bayesjudge.priors import Prior

__all__ = [
    "METHODS",
    "PandaLMMisclassificationStudy",
    "pandalm_calibration_masks",
    "pandalm_split_counts",
    "pandalm_misclassification_study",
    "pandalm_win_rate_truth",
]

#: Methods of the study, in the order they are reported.
METHODS = ("naive_wald", "lang_reiczigel", "lang_reiczigel_pooled", "bayes", "hierarchical")


# --------------------------------------------------------------------------- result


@dataclass
class PandaLMMisclassificationStudy:
    """Result of :func:`pandalm_misclassification_study`.

    Attributes
    ----------
    truth : pandas.DataFrame
        :func:`pandalm_win_rate_truth` for the judges studied.
    counts : pandas.DataFrame
        One row per (``judge``, ``split``, ``system``): the six counts of that split.
    replications : pandas.DataFrame
        One row per (``judge``, ``split``, ``system``, ``method``): ``estimate``,
        ``lower``, ``upper`` (NaN where the method is undefined on that split, e.g.
        :math:`\\hat q_0 + \\hat q_1 \\le 1`), ``truth``.
    diagnostics : pandas.DataFrame
        One row per hierarchical fit: ``judge``, ``split``, ``seconds`` and, for NUTS,
        ``max_rhat``, ``min_ess_bulk``, ``divergences``.
    timings : dict
        Wall-clock seconds of each part.
    settings : dict
        The arguments of the run.
    """

    truth: pd.DataFrame
    counts: pd.DataFrame
    replications: pd.DataFrame
    diagnostics: pd.DataFrame
    timings: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    def summary(self, common_splits: bool = False) -> pd.DataFrame:
        """Bias, RMSE, coverage and mean interval length per (judge, system, method).

        Parameters
        ----------
        common_splits : bool, default False
            Restrict every method to the splits on which *all* methods ran (the
            hierarchical model may run on fewer splits than the closed forms), so the
            numbers of different methods come from the same splits.

        Returns
        -------
        pandas.DataFrame
            ``judge``, ``system``, ``method``, ``truth``, ``mean_estimate``, ``bias``
            (mean estimate minus truth), ``rmse``, ``coverage`` (share of intervals
            containing the truth), ``mean_length``, ``n_valid`` (splits where the method
            is defined; bias, coverage and length are over these), ``n_splits``.
        """
        rep = self.replications
        if common_splits:
            per_method = rep.groupby(["judge", "method"])["split"].agg(lambda s: frozenset(s))
            keep = []
            for judge, sets in per_method.groupby(level="judge"):
                common = frozenset.intersection(*sets.to_list())
                keep.append(rep[(rep["judge"] == judge) & rep["split"].isin(common)])
            rep = pd.concat(keep, ignore_index=True)
        valid = rep[["estimate", "lower", "upper"]].notna().all(axis=1)
        r = rep.assign(
            valid=valid,
            err=(rep["estimate"] - rep["truth"]).where(valid),
            covered=((rep["lower"] <= rep["truth"]) & (rep["truth"] <= rep["upper"])).where(valid),
            length=(rep["upper"] - rep["lower"]).where(valid),
        )
        r["covered"] = r["covered"].astype(float)
        g = r.groupby(["judge", "system", "method"], sort=False)
        out = pd.DataFrame({
            "truth": g["truth"].first(),
            "mean_estimate": g["estimate"].apply(lambda s: s[r.loc[s.index, "valid"]].mean()),
            "bias": g["err"].mean(),
            "rmse": np.sqrt(g["err"].apply(lambda e: (e**2).mean())),
            "coverage": g["covered"].mean(),
            "mean_length": g["length"].mean(),
            "n_valid": g["valid"].sum().astype(int),
            "n_splits": g["split"].nunique(),
        }).reset_index()
        order = {m: i for i, m in enumerate(METHODS)}
        return out.sort_values(
            ["judge", "system", "method"], key=lambda c: c.map(order) if c.name == "method" else c,
            ignore_index=True,
        )


# --------------------------------------------------------------------------- study


def pandalm_misclassification_study(
    *,
    judges: Sequence[Judge] = PANDALM_JUDGES,
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
    data: pd.DataFrame | None = None,
    random_seed: Seed = 0,
) -> PandaLMMisclassificationStudy:
    r"""Naive, bias-adjusted and Bayesian win rates of the PandaLM systems over random splits.

    Protocol (Section 8.2 of Lee et al. (2025), on PandaLM):

    * **Truth.** Each system's strict human-majority win rate over all its items
      (ties are not wins; calibration items included), see :func:`pandalm_win_rate_truth`.
    * **Splits.** ``n_splits`` times, a random ``calibration_fraction`` of the 999
      PandaLM *items* is the calibration set; the rest is the test set. The same item
      splits serve both judges and every system (an item compares two systems, so it
      calibrates both), as one human labelling effort would. Per system this leaves
      ~40 calibration rows of ~400.
    * **Estimates per split and system** (counts from :func:`pandalm_split_counts`):

      - ``naive_wald``: the judge's win rate on the test rows, :math:`\hat p` (eq. 2),
        with its Wald interval;
      - ``lang_reiczigel``: the clipped Rogan-Gladen :math:`\hat\theta` (eq. 5) and the
        Lang-Reiczigel interval (eq. 6) from the system's own calibration rows;
      - ``lang_reiczigel_pooled``: the same with the calibration counts summed over the
        systems (one q0, q1 for the judge: Section 7's assumption that the judge's
        errors depend on the true label only);
      - ``bayes``: posterior mean and equal-tailed credible interval of
        :class:`~bayesjudge.models.misclassification.MisclassificationModel` (uniform
        priors) per system, computed by the exact vectorised importance sampler
        :func:`~bayesjudge.models.misclassification_posterior.bayes_posterior_theta`
        (``n_draws`` draws) -- the same posterior NUTS samples, at a small fraction of
        the cost of 100 x 5 NUTS runs;
      - ``hierarchical``: posterior mean and equal-tailed interval of every system's
        accuracy from one
        :class:`~bayesjudge.models.misclassification_hierarchical.HierarchicalMisclassificationModel`
        (``pooling``) per split, by NUTS (``draws``, ``tune``, ``chains``; the
        compiled model is reused, only the counts change) or, with
        ``hierarchical_method="map"``, MAP + Laplace (fast but over-shrinks under partial
        pooling, see the model's Notes). It runs on the first ``hierarchical_splits``
        splits only (all by default; 0 skips it); use
        :meth:`PandaLMMisclassificationStudy.summary` with ``common_splits=True`` to
        compare every method on exactly those splits.

    Parameters
    ----------
    judges : sequence of {"gpt35", "pandalm7b"}
        LLM judges to study.
    n_splits : int, default 100
        Random calibration / test splits.
    calibration_fraction : float, default 0.1
        Share of the items whose human labels are used.
    alpha : float, default 0.05
        One minus the confidence / credible level, in (0, 0.5).
    bayes : bool, default True
        Compute the per-system posterior.
    n_draws : int, default 4000
        Importance draws per (split, system) for ``bayes``.
    priors : mapping of str to Prior, optional
        Beta priors of ``bayes`` by parameter name (``"accuracy"``, ``"specificity"``,
        ``"sensitivity"``; uniform by default, as ``MisclassificationModel``), see
        :func:`~bayesjudge.models.misclassification_posterior.bayes_posterior_theta`.
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
    data : pandas.DataFrame, optional
        Output of :func:`~bayesjudge.datasets.load_pandalm`; loaded if omitted.
    random_seed : int or numpy.random.Generator, optional
        Drives the splits, the importance sampler and the NUTS seeds.

    Returns
    -------
    PandaLMMisclassificationStudy
        ``truth``, ``counts``, ``replications``, ``diagnostics``, ``timings``;
        ``summary()`` gives bias, coverage and interval length per method.

    Notes
    -----
    The truth is a fixed, finite-population number and every test set is 90% of the
    same rows, so the naive score barely varies between splits: the binomial test-set
    term in every interval (and Wald's whole width) overstates the split-to-split
    variance, and the coverages are conservative. What varies is the calibration set,
    which is what the adjusted intervals are mostly made of (~40 rows per system).

    Convergence and identifiability warnings of the individual hierarchical fits are
    collected in ``diagnostics`` and reported once, at the end.
    """
    from bayesjudge.inference import ConvergenceWarning
    from bayesjudge.models.misclassification_hierarchical import HierarchicalMisclassificationModel

    unknown = [j for j in judges if j not in PANDALM_JUDGES]
    if unknown:
        raise DataValidationError(f"judges {unknown} unknown; choose among {list(PANDALM_JUDGES)}.")
    check_alpha(alpha)
    if bayes:
        beta_parameters(priors)  # fail before the splits, not after them
    if hierarchical_method not in ("nuts", "map"):
        raise DataValidationError(
            f"hierarchical_method must be 'nuts' or 'map', got {hierarchical_method!r}."
        )
    settings = {
        "judges": list(judges), "n_splits": n_splits, "calibration_fraction": calibration_fraction,
        "alpha": alpha, "bayes": bayes, "n_draws": n_draws, "priors": priors,
        "hierarchical_splits": hierarchical_splits, "hierarchical_method": hierarchical_method,
        "pooling": pooling, "draws": draws, "tune": tune, "chains": chains, "sampler": sampler,
        "random_seed": random_seed,
    }
    rng = np.random.default_rng(random_seed)
    data = load_pandalm() if data is None else data
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    truth = pandalm_win_rate_truth(judges, data)
    items = data["item"].to_numpy()
    masks = pandalm_calibration_masks(len(items), n_splits, calibration_fraction, rng)
    n_hier = n_splits if hierarchical_splits is None else min(int(hierarchical_splits), n_splits)
    hier_seeds = rng.integers(0, 2**31 - 1, size=(len(judges), n_hier))
    count_frames, rep_frames, diag_rows = [], [], []
    timings["setup"] = time.perf_counter() - t0

    for j, judge in enumerate(judges):
        t0 = time.perf_counter()
        systems, c = pandalm_split_counts(study_judgments(judge, data), items, masks)
        theta = truth.set_index(["judge", "system"]).loc[judge, "truth"].reindex(systems).to_numpy()
        f = {k: v.astype(np.float64) for k, v in c.items()}
        split_ids = np.arange(n_splits)
        count_frames.append(_tidy(judge, systems, split_ids, {k: c[k] for k in COUNTS}))

        def add(method, est, lower, upper, splits=split_ids):
            columns = {"estimate": est, "lower": lower, "upper": upper,
                       "truth": np.broadcast_to(theta, est.shape)}
            rep_frames.append(_tidy(judge, systems, splits, columns, method=method))

        # naive: p_hat on the test rows with its Wald interval
        wald = wald_interval(f["judged_pos"], f["n"], alpha=alpha)
        add("naive_wald", wald.estimate, wald.lower, wald.upper)
        p = wald.estimate
        # per-system and pooled Lang-Reiczigel
        pooled = {
            k: np.broadcast_to(f[k].sum(axis=1, keepdims=True), p.shape)
            for k in ("tp", "m1", "tn", "m0")
        }
        for method, cal in (("lang_reiczigel", f), ("lang_reiczigel_pooled", pooled)):
            add(method, *_adjusted(f["judged_pos"], f["n"], cal["tp"], cal["m1"], cal["tn"],
                                   cal["m0"], alpha))
        timings[f"{judge}: closed form"] = time.perf_counter() - t0

        if bayes:
            t0 = time.perf_counter()
            post = bayes_posterior_theta(
                f["judged_pos"], f["n"], f["tp"], f["m1"], f["tn"], f["m0"],
                priors=priors, n_draws=n_draws, ci_prob=1 - alpha, rng=rng,
            )
            add("bayes", np.asarray(post.mean), np.asarray(post.lower), np.asarray(post.upper))
            timings[f"{judge}: bayes (importance sampler)"] = time.perf_counter() - t0

        if n_hier:
            t0 = time.perf_counter()
            est = np.full((n_hier, len(systems)), np.nan)
            lower, upper = est.copy(), est.copy()
            for r in range(n_hier):
                counts = validate_judgment_counts(*(c[k][r] for k in COUNTS), systems=systems)
                model = HierarchicalMisclassificationModel(
                    pooling=pooling, random_seed=int(hier_seeds[j, r])
                )
                start = time.perf_counter()
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    model.fit(counts, method=hierarchical_method, draws=draws, tune=tune,
                              chains=chains, sampler=sampler)
                    table = model.predict(ci_prob=1 - alpha)
                    acc = table.query("quantity == 'accuracy'").set_index("system")
                acc = acc.reindex(systems)
                converged_badly = [issubclass(w.category, ConvergenceWarning) for w in caught]
                est[r], lower[r], upper[r] = acc["mean"], acc["lower"], acc["upper"]
                diag_rows.append({
                    "judge": judge, "split": r, "seconds": time.perf_counter() - start,
                    **(model.diagnostics_ or {}),
                    "convergence_warning": any(converged_badly),
                    "other_warnings": "; ".join(
                        str(w.message)[:80] for w, bad in zip(caught, converged_badly) if not bad
                    ),
                })
            add("hierarchical", est, lower, upper, splits=split_ids[:n_hier])
            label = f"{judge}: hierarchical ({hierarchical_method}, {n_hier} splits)"
            timings[label] = time.perf_counter() - t0

    diagnostics = pd.DataFrame(diag_rows)
    if len(diagnostics) and diagnostics["convergence_warning"].any():
        bad = int(diagnostics["convergence_warning"].sum())
        warnings.warn(
            f"{bad} of {len(diagnostics)} hierarchical fits raised a NUTS ConvergenceWarning "
            f"(see .diagnostics); raise draws/tune if the intervals matter.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return PandaLMMisclassificationStudy(
        truth=truth,
        counts=pd.concat(count_frames, ignore_index=True),
        replications=pd.concat(rep_frames, ignore_index=True),
        diagnostics=diagnostics,
        timings=timings,
        settings=settings,
    )


def _adjusted(x, n, tp, m1, tn, m0, alpha):
    """Clipped Rogan-Gladen estimate and Lang-Reiczigel limits; NaN where undefined."""
    with np.errstate(divide="ignore", invalid="ignore"):  # empty classes: NaN rates
        ci = lang_reiczigel_rates(x / n, tn / m0, tp / m1, n, m0, m1, alpha=alpha)
    return ci.estimate, ci.lower, ci.upper


def _tidy(
    judge: str,
    systems: list[str],
    splits: NDArray,
    columns: dict[str, NDArray],
    method: str | None = None,
) -> pd.DataFrame:
    """(splits x systems) arrays -> long frame with judge, split, system[, method]."""
    s, k = np.meshgrid(splits, np.arange(len(systems)), indexing="ij")
    frame = {"judge": judge, "split": s.ravel(), "system": np.asarray(systems)[k.ravel()]}
    if method is not None:
        frame["method"] = method
    frame.update({name: np.asarray(v).reshape(s.shape).ravel() for name, v in columns.items()})
    return pd.DataFrame(frame)
