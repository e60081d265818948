"""Several evaluated systems, one LLM judge: misclassification model with pooled judge rates.

Extends :class:`~bayesjudge.models.misclassification.model.MisclassificationModel`
(Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report LLM-as-a-Judge
Evaluations", arXiv:2511.21140, Sections 3-5) to K systems
judged by the same judge. Each system k has its own accuracy theta_k; its
specificity and sensitivity are partially pooled toward the judge's shared
values on the logit scale, so a small per-system calibration set borrows
strength from the others. ``pooling="complete"`` (one q0, q1 for all systems:
the paper's assumption that the judge's behaviour depends only on the true
label, Section 7) and ``pooling="none"`` (K separate models) are the two limits.
The output is every system's bias-adjusted accuracy and the posterior of the
pairwise differences between systems.
"""

from __future__ import annotations

from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from bayesjudge.base import CI_PROB, BayesianModel, ExampleData, FitData
from bayesjudge.data import DataValidationError, check_calibration_classes, check_ci_prob
from bayesjudge.engine.diagnostics import share_mcse
from bayesjudge.engine.laplace_check import warn_flagged, warn_point_outside
from bayesjudge.engine.messages import warn_user
from bayesjudge.models.misclassification.checks import BoundaryFlags, warn_if_conflicting
from bayesjudge.models.misclassification.model import (
    OBS,
    PROBABILITIES,
    IdentifiabilityWarning,
    as_counts,
    binomial_loglik,
    counts_arrays,
    judged_rate,
    posterior_table,
    probability_parameter,
    simulate_judgments,
    warn_if_not_identified,
)
from bayesjudge.models.misclassification.starts import (
    GOOD_JUDGE_START,
    map_starts,
    set_start,
)
from bayesjudge.priors import Prior
from bayesjudge.rank_sets import rank_columns

Pooling = Literal["partial", "complete", "none"]
RATES = ("specificity", "sensitivity")


class HierarchicalMisclassificationModel(BoundaryFlags, BayesianModel):
    r"""Bias-adjusted accuracies of K systems judged by one judge, with pooled q0, q1.

    For system k with test counts (judged_pos_k of n_k) and calibration counts
    (tp_k of m1_k, tn_k of m0_k):

    .. math::

        \theta_k \sim \mathrm{Beta}(1, 1)

        \operatorname{logit} q_{0k} = \mu_0 + \tau_0 z_{0k},\quad
        \operatorname{logit} q_{1k} = \mu_1 + \tau_1 z_{1k},\quad
        z_{\cdot k} \sim \mathrm{Normal}(0, 1)      \quad(\text{partial, non-centred})

        \mu_0, \mu_1 \sim \mathrm{Logistic}(0, 1),\qquad \tau_0, \tau_1 \sim \mathrm{HalfNormal}(1)

        tn_k \sim \mathrm{Bin}(m_{0k}, q_{0k}),\quad tp_k \sim \mathrm{Bin}(m_{1k}, q_{1k}),\quad
        \text{judged\_pos}_k \sim \mathrm{Bin}(n_k, \theta_k q_{1k} + (1-\theta_k)(1-q_{0k}))

    ``pooling="complete"`` sets tau = 0 (q_k = invlogit(mu) for every system);
    ``pooling="none"`` gives each system its own logit q_k ~ Logistic(0, 1),
    i.e. K independent :class:`MisclassificationModel` fits.

    Priors. ``Logistic(0, 1)`` on a logit is exactly uniform on the probability,
    so the judge-level rates invlogit(mu) -- and, under ``"none"``, every q_k --
    have the Beta(1, 1) prior of the single-system model; under ``"complete"``
    the model is the single-system model with shared q0, q1. ``HalfNormal(1)``
    on the between-system sd of the logits lets a judge with q = 0.9 vary from
    about 0.77 to 0.96 across systems at one sd, and shrinks toward a common
    judge when the data cannot tell systems apart. ``priors="flat"`` makes
    ``accuracy`` and the logit means flat (MAP = maximum likelihood); the sds
    keep their HalfNormal prior, since a flat prior on a hierarchical sd has no
    finite joint mode.

    Names (dims): ``accuracy``, ``specificity``, ``sensitivity``,
    ``judged_rate`` (``system``); ``judge_specificity``, ``judge_sensitivity``
    (invlogit of the logit means: the typical system's rates; partial and
    complete pooling); ``specificity_logit_mean``, ``specificity_logit_sd``,
    ``specificity_offset`` (and the same for sensitivity; partial pooling).

    Pointwise log-likelihood: one binomial per (``system``, ``obs``), ``obs`` =
    (``test``, ``calibration_0``, ``calibration_1``), as in the single model.

    Parameters
    ----------
    pooling : {"partial", "complete", "none"}
        How the systems' specificity and sensitivity are tied together.
    priors : None, "flat" or dict
        Overrides of :attr:`default_priors` by name::

            accuracy                Prior('Beta', alpha=1, beta=1, dims=('system',))
            specificity_logit_mean  Prior('Logistic', mu=0, s=1)
            sensitivity_logit_mean  Prior('Logistic', mu=0, s=1)
            specificity_logit_sd    Prior('HalfNormal', sigma=1)   (partial pooling)
            sensitivity_logit_sd    Prior('HalfNormal', sigma=1)   (partial pooling)

        Under ``pooling="none"`` the logit-mean priors are those of each
        system's own logit (dims ``system``).
    random_seed : int
        Seeds NUTS and the Laplace draws.

    Notes
    -----
    Fit partial pooling with ``method="nuts"``: its MAP is the joint mode over
    the offsets and the sds, which over-shrinks (the usual hierarchical funnel).
    Under ``"partial"`` and ``"complete"`` a system may lack calibration items
    of one class (it borrows the judge-level rate); under ``"none"`` every
    system needs both classes.

    Examples
    --------
    >>> from bayesjudge.datasets import simulate_misclassification
    >>> judgments, calibration = simulate_misclassification(
    ...     theta=[0.3, 0.5, 0.7], q0=0.8, q1=0.9, n=500, m0=30, m1=30)
    >>> model = HierarchicalMisclassificationModel(pooling="complete").fit(judgments, calibration)
    >>> list(model.differences()["system_a"])
    ['system_0', 'system_0', 'system_1']
    """

    _map_newton = True  # a few per system: see bayesjudge.engine.optim

    default_priors = {
        "accuracy": Prior("Beta", alpha=1, beta=1, dims="system"),
        "specificity_logit_mean": Prior("Logistic", mu=0, s=1),
        "sensitivity_logit_mean": Prior("Logistic", mu=0, s=1),
        "specificity_logit_sd": Prior("HalfNormal", sigma=1),
        "sensitivity_logit_sd": Prior("HalfNormal", sigma=1),
    }

    def __init__(
        self,
        pooling: Pooling = "partial",
        priors: None | str | dict = None,
        random_seed: int | None = 0,
    ):
        self.pooling = pooling
        self.priors = priors
        self.random_seed = random_seed

    @property
    def _sampler_defaults(self) -> dict[str, float]:
        """NUTS settings each pooling's geometry needs (measured; see models/misclassification.md).

        Partial pooling: 15-40 calibration items per system pin each system's
        logit q_k = mu + tau z_k, so at a large between-system sd tau the
        non-centred offsets z_k live in a band of width ~1/tau that bends with
        tau -- the wide end of the funnel, not its neck. Every divergence traced
        on the README's PandaLM fit started there (tau 1.7-4, log-tau gradient
        -400 to -1100) and its leapfrog step overshot to tau ~ 0. Per 40 fits of
        that example at target_accept 0.95: non-centred 16 divergences, centred
        2419, partially non-centred (w = 0.5) 27, judged-rate parametrisation
        of theta 37, low-rank mass matrix 16, HalfNormal(0.5) sd prior 8;
        target_accept 0.98 or 0.99: 0 (for ~1.4x / 1.8x the leapfrog steps).
        0.99 also cut the 4-system 15 + 15 test data from 53 to 3 per 20 fits.
        Complete and no pooling have no funnel and keep 0.95.
        """
        return {"target_accept": 0.99 if self.pooling == "partial" else 0.95}

    @property
    def _summary_vars(self) -> tuple[str, ...]:
        judge = () if self.pooling == "none" else ("judge_specificity", "judge_sensitivity")
        sds = ("specificity_logit_sd", "sensitivity_logit_sd") if self.pooling == "partial" else ()
        return PROBABILITIES + judge + sds

    def _check_options(self) -> None:
        if self.pooling not in ("partial", "complete", "none"):
            raise ValueError(
                f"pooling must be 'partial', 'complete' or 'none', got {self.pooling!r}"
            )

    def _prior_names(self) -> tuple[str, ...]:
        self._check_options()
        if self.pooling == "partial":
            return tuple(self.default_priors)
        return tuple(k for k in self.default_priors if not k.endswith("_sd"))

    def _flat_priors(self) -> dict[str, Prior]:
        # A flat prior on a hierarchical sd has no finite joint mode: the sds keep theirs.
        return {k: (v if k.endswith("_sd") else Prior("Flat", dims=v.dims))
                for k, v in self.default_priors.items()}

    # -- pieces of the contract ---------------------------------------------------
    def _prepare(self, judgments, calibration=None) -> FitData:
        self._check_options()
        self.resolved_priors()
        counts = as_counts(judgments, calibration, by_system=True)
        if len(counts) < 2:
            raise DataValidationError(
                f"HierarchicalMisclassificationModel needs at least 2 systems, got "
                f"{list(counts.systems)}; use MisclassificationModel for one system."
            )
        if self.pooling == "none":
            check_calibration_classes(counts, per_system=True)
            warn_if_not_identified(counts, counts.systems)
            warn_if_conflicting(counts)
        else:
            check_calibration_classes(counts, per_system=False)
            pooled = counts.pooled_calibration()
            warn_if_not_identified(pooled, ["pooled"], first=True)
            # partial pooling lets each system's rates leave the pooled ones: only a conflict
            # with the system's own calibration (free rates, the looser bound) is certain
            warn_if_conflicting(pooled if self.pooling == "complete" else counts)
        self._check_improper(counts, pooled=self.pooling != "none")
        successes, trials = counts_arrays(counts)
        systems = list(counts.systems)  # ids exactly as the user gave them (not str()ed)
        return FitData(
            data={"successes": successes, "trials": trials},
            coords={"system": systems, "obs": list(OBS)},
            observed={
                "counts": (("system", "obs"), successes),
                "trials": (("system", "obs"), trials),
            },
            shape_key=(len(systems),),
            extra={"counts": counts},
            observation={"outcome_space": "binomial counts of the judge's positive verdicts on "
                                          "the test items and of its correct verdicts on the "
                                          "calibration items of each class"},
        )

    def _map_starts(self, fd: FitData, engine) -> list[np.ndarray | None]:
        return map_starts(engine, fd.extra["counts"], pooled=self.pooling != "none")

    def _flat_logits(self) -> tuple[str, ...]:
        # a flat logit mean: the systems' own logits (none), or their common one
        flat = [k for k in RATES if self._is_flat(f"{k}_logit_mean")]
        return ("accuracy",) * self._is_flat("accuracy") + tuple(
            n for k in flat for n in (k, f"judge_{k}"))

    def _build(self, fd: FitData) -> pm.Model:
        priors = self.resolved_priors()
        coords = {"system": fd.coords["system"], "obs": list(OBS)}
        with pm.Model(coords=coords) as model:
            successes = pm.Data("successes", fd.data["successes"], dims=("system", "obs"))
            trials = pm.Data("trials", fd.data["trials"], dims=("system", "obs"))
            theta = probability_parameter(priors["accuracy"], "accuracy", dims="system")
            q0 = self._rate("specificity", priors, len(fd.coords["system"]))
            q1 = self._rate("sensitivity", priors, len(fd.coords["system"]))
            p = pm.Deterministic("judged_rate", judged_rate(theta, q0, q1), dims="system")
            pm.Binomial(
                "counts", n=trials, p=pt.stack([p, q0, q1], axis=-1), observed=successes,
                dims=("system", "obs"),
            )
        return model

    def _rate(self, name: str, priors: dict[str, Prior], k: int):
        mean_prior = priors[f"{name}_logit_mean"]
        start = np.log(GOOD_JUDGE_START / (1 - GOOD_JUDGE_START))
        if self.pooling == "none":
            logit = mean_prior.create(f"{name}_logit", dims="system")
            set_start(logit, start)
        else:
            mu = mean_prior.create(f"{name}_logit_mean")
            set_start(mu, start)
            pm.Deterministic(f"judge_{name}", pm.math.invlogit(mu))
            if self.pooling == "complete":
                logit = mu + pt.zeros(k)
            else:
                tau = priors[f"{name}_logit_sd"].create(f"{name}_logit_sd")
                z = pm.Normal(f"{name}_offset", 0.0, 1.0, dims="system")
                logit = mu + tau * z
        return pm.Deterministic(name, pm.math.invlogit(logit), dims="system")

    def _pointwise_loglik(self, params, fd):
        return {"counts": binomial_loglik(params, fd.data["successes"], fd.data["trials"])}

    @classmethod
    def example_data(cls, random_seed: int = 0) -> ExampleData:
        """Three systems (accuracy 0.3, 0.5, 0.7) judged by one judge (q0 0.8, q1 0.9).

        200 test items and 40 calibration items per system.
        """
        accuracy = {"system-a": 0.3, "system-b": 0.5, "system-c": 0.7}
        judgments, calibration = simulate_judgments(
            accuracy, q0=0.8, q1=0.9, n=200, m0=20, m1=20, random_seed=random_seed)
        return ExampleData(fit_args=(judgments, calibration),
                           truth={"accuracy": list(accuracy.values()),
                                  "judge_specificity": 0.8, "judge_sensitivity": 0.9})

    def _state(self) -> dict:
        return {"systems": self.systems_}

    def _set_state(self, state: dict) -> None:
        self._systems = list(state["systems"])

    # -- public ----------------------------------------------------------------------
    @property
    def systems_(self) -> list[str]:
        """System names in model order."""
        self._check_fitted()
        fd = getattr(self, "_fit_data", None)
        return list(fd.coords["system"]) if fd is not None else list(self._systems)

    def _accuracy_draws(self) -> np.ndarray:
        post = self._posterior()
        return post["accuracy"].values.reshape(-1, len(self.systems_))

    def predict(self, *, ci_prob: float = CI_PROB, include_draws: bool = False) -> pd.DataFrame:
        """Posterior of every system's accuracy theta_k and judged rate p_k.

        Returns
        -------
        pandas.DataFrame
            One row per (``system``, ``quantity``), quantity in {``accuracy``,
            ``judged_rate``}; columns ``mean``, ``sd``, ``median``, ``lower``,
            ``upper``, ``map`` and ``laplace_ok`` (MAP fits; see
            :mod:`bayesjudge.engine.laplace_check`) and ``draws`` (if ``include_draws``).
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        post = self._posterior()
        k = len(self.systems_)
        draws = {q: post[q].values.reshape(-1, k) for q in ("accuracy", "judged_rate")}
        point = self.map_ if self.method_ == "map" else None
        ok = {q: self.laplace_ok(q) for q in draws} if point is not None else None
        table = posterior_table(draws, ci_prob, systems=self.systems_, point=point,
                                include_draws=include_draws, laplace_ok=ok,
                                fix=self._laplace_fix())
        self._warn_weakly_identified(ci_prob)
        return table.sort_values(
            ["system", "quantity"], key=_system_order(self.systems_), ignore_index=True
        )

    def ranking(self, *, ci_prob: float = CI_PROB, joint: bool = False) -> pd.DataFrame:
        """Leaderboard of the systems by bias-adjusted accuracy theta_k, with rank intervals.

        ``ci_prob`` is the mass of the intervals; ``joint=True`` gives simultaneous rank
        sets instead of marginal intervals, as every ``ranking()``
        (:func:`bayesjudge.rank_sets.rank_columns`).

        Returns
        -------
        pandas.DataFrame
            One row per system sorted by ``rank`` (1 = highest accuracy): ``accuracy``
            (MAP or posterior mean) with ``accuracy_lower``/``accuracy_upper``, ``rank``
            with ``rank_lower``/``rank_upper``, ``p_best`` = P(theta_k is the largest) with
            its Monte Carlo standard error ``p_best_mcse``; MAP fits add ``laplace_ok``.
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        draws = self._accuracy_draws()
        point = (np.asarray(self.map_["accuracy"]) if self.method_ == "map"
                 else draws.mean(axis=0))
        post, laplace = self._posterior(), self.method_ == "map"
        out = pd.DataFrame({"system": np.asarray(self.systems_, dtype=object),
                            "accuracy": point})
        out["accuracy_lower"], out["accuracy_upper"] = np.quantile(
            draws, [(1 - ci_prob) / 2, (1 + ci_prob) / 2], axis=0)
        out = out.assign(**rank_columns(point, draws, ci_prob, joint,
                                        lambda hits: share_mcse(hits, post, laplace)))
        if laplace:
            out["laplace_ok"] = self.laplace_ok("accuracy")
            warn_flagged(out, ["system"], self._laplace_fix())
            warn_point_outside(out, ["system"], ["accuracy", "rank"],
                               "HierarchicalMisclassificationModel.ranking")
        self._warn_weakly_identified(ci_prob)
        return out.sort_values("rank", kind="stable").reset_index(drop=True)

    def _warn_weakly_identified(self, ci_prob: float) -> None:
        """Under pooling, name the systems whose q0 + q1 <= 1 lies inside its interval.

        ``pooling="none"`` warns at fit from each system's own calibration estimates;
        pooled fits have one check of the pooled estimates there, so a system whose own
        calibration items leave the judge no better than chance is named here, from the
        posterior, as the command line's ``weakly-identified`` flag does.
        """
        if self.pooling == "none":
            return
        post, k = self._posterior(), len(self.systems_)
        youden = (post["specificity"].values.reshape(-1, k)
                  + post["sensitivity"].values.reshape(-1, k))
        lower = np.quantile(youden, (1 - ci_prob) / 2, axis=0)
        weak = np.flatnonzero(lower <= 1)
        if weak.size:
            shown = ", ".join(f"{self.systems_[i]}: P(q0 + q1 <= 1) = "
                              f"{float(np.mean(youden[:, i] <= 1)):.2f}" for i in weak[:10])
            warn_user(
                f"q0 + q1 <= 1 lies inside the {ci_prob:.0%} interval for {weak.size} "
                f"system(s) ({shown}): the judge may be no better than chance on them, so "
                f"their accuracy is weakly identified and its interval leans on the pooling "
                f"prior. Label more calibration items of these systems, or check that "
                f"judge_label = 1 and human_label = 1 both mean 'correct'.",
                IdentifiabilityWarning)

    def differences(self, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """Posterior of theta_a - theta_b for every pair of systems (a before b).

        Returns
        -------
        pandas.DataFrame
            Columns ``system_a``, ``system_b``, ``mean``, ``sd``, ``lower``,
            ``upper`` (equal-tailed ``ci_prob`` interval of theta_a - theta_b),
            ``prob_a_better`` = P(theta_a > theta_b | data) and its Monte Carlo
            standard error ``prob_a_better_mcse`` (NUTS: ArviZ's ``mcse_mean`` of the
            indicator; MAP: binomial over the Laplace draws' effective number; 0 where
            every draw agrees).
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        theta = self._accuracy_draws()
        names = self.systems_
        tail = (1 - ci_prob) / 2
        rows, better = [], []
        for i, j in combinations(range(len(names)), 2):
            d = theta[:, i] - theta[:, j]
            lo, hi = np.quantile(d, [tail, 1 - tail])
            better.append(d > 0)
            rows.append({
                "system_a": names[i], "system_b": names[j], "mean": d.mean(), "sd": d.std(ddof=1),
                "lower": lo, "upper": hi, "prob_a_better": float(better[-1].mean()),
            })
        out = pd.DataFrame(rows)
        out["prob_a_better_mcse"] = share_mcse(np.stack(better, axis=1), self._posterior(),
                                               self.method_ == "map")
        return out

    def win_table(self) -> pd.DataFrame:
        """Square table of P(theta_row > theta_column | data); NaN on the diagonal."""
        self._check_fitted()
        theta = self._accuracy_draws()
        # one row at a time: draws x systems, never a draws x systems x systems array
        wins = np.stack([(theta[:, [i]] > theta).mean(axis=0) for i in range(theta.shape[1])])
        np.fill_diagonal(wins, np.nan)
        names = pd.Index(self.systems_, name="system")
        return pd.DataFrame(wins, index=names, columns=names.rename("opponent"))


def _system_order(systems: list[str]):
    rank = {s: i for i, s in enumerate(systems)}

    def key(col: pd.Series) -> pd.Series:
        return col.map(rank) if col.name == "system" else col

    return key
