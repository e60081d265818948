"""Misclassification-adjusted accuracy of an LLM judge, as a Bayesian model.

Implements the model behind Sections 3-5 of Lee, Zeng, Jeong, Sohn & Lee (2025),
"How to Correctly Report LLM-as-a-Judge Evaluations", arXiv:2511.21140: the judge's
'correct' rate on the test set
is p = theta q1 + (1 - theta)(1 - q0) (Section 5.1), the sensitivity q1 and
specificity q0 (eq. 3) are learned from a human-labelled calibration set, and
the true accuracy theta (eq. 1) gets a posterior that carries the uncertainty of
both data sets -- the Bayesian counterpart of the Rogan-Gladen estimate (eq. 5)
and the Lang-Reiczigel interval (eq. 6). :func:`bayesian_allocation` is the
Bayesian counterpart of Algorithm 1 (Appendix A): it splits a calibration budget
between the two human classes by preposterior analysis.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from bayesjudge.base import CI_PROB, BayesianModel, ExampleData, FitData
from bayesjudge.data import (
    DataValidationError,
    MisclassificationCounts,
    check_calibration_classes,
    check_ci_prob,
    validate_judgment_counts,
    validate_misclassification,
)
from bayesjudge.engine import warn_user
from bayesjudge.engine.laplace_check import NUTS_FIX, warn_flagged
from bayesjudge.models.misclassification.checks import (
    BoundaryFlags,
    IdentifiabilityWarning,
    warn_if_conflicting,
    weakly_identified,
)
from bayesjudge.models.misclassification.starts import (
    GOOD_JUDGE_START,
    map_starts,
    set_start,
)
from bayesjudge.priors import Prior

OBS = ("test", "calibration_0", "calibration_1")
"""The three binomial observations: judged_pos of n test items (prob. p), tn of
the m0 human-'incorrect' calibration items (q0), tp of the m1 human-'correct' ones (q1)."""
PROBABILITIES = ("accuracy", "specificity", "sensitivity")


def judged_rate(theta, q0, q1):
    """Probability that the judge says 'correct': p = theta q1 + (1 - theta)(1 - q0)."""
    return theta * q1 + (1 - theta) * (1 - q0)


def probability_parameter(prior: Prior, name: str, dims=None, start: float | None = None):
    """A probability with ``prior``; ``Flat`` means flat on the logit scale.

    A flat prior on the logit is the improper Haldane prior Beta(0, 0) on the
    probability; its MAP is the maximum-likelihood estimate (as is the MAP under
    Beta(1, 1): the engine's MAP has no Jacobian term). ``start`` is the initial
    value of the probability (see :data:`GOOD_JUDGE_START`).
    """
    if prior.dist == "Flat":
        logit = pm.Flat(f"{name}_logit", dims=dims)
        set_start(logit, None if start is None else np.log(start / (1 - start)))
        return pm.Deterministic(name, pm.math.invlogit(logit), dims=dims)
    rv = prior.create(name, dims=dims)
    set_start(rv, start)
    return rv


def counts_arrays(counts: MisclassificationCounts) -> tuple[np.ndarray, np.ndarray]:
    """Successes and trials, shape (n_systems, 3), columns in :data:`OBS` order."""
    successes = np.stack([counts.judged_pos, counts.tn, counts.tp], axis=-1)
    trials = np.stack([counts.n, counts.m0, counts.m1], axis=-1)
    return successes, trials


def binomial_loglik(
    params: Mapping[str, np.ndarray], successes: np.ndarray, trials: np.ndarray
) -> np.ndarray:
    """Log-likelihood of each binomial in :data:`OBS` order (last axis), numpy.

    Includes the binomial coefficient, so the values sum to the log-likelihood of
    the counts; ``params`` carry leading (chain, draw) axes.
    """
    theta, q0, q1 = (np.asarray(params[k], dtype=float) for k in PROBABILITIES)
    prob = np.stack([judged_rate(theta, q0, q1), q0, q1], axis=-1)
    from scipy.stats import binom  # imported here: scipy.stats costs ~1 s at import

    return binom.logpmf(successes, trials, prob)


def as_counts(judgments, calibration, by_system: bool) -> MisclassificationCounts:
    """Tables or ready counts -> :class:`MisclassificationCounts` (validated once)."""
    if isinstance(judgments, MisclassificationCounts):
        if calibration is not None:
            raise TypeError("pass either MisclassificationCounts or the two tables, not both.")
        return judgments
    if calibration is None:
        raise TypeError(
            "fit needs the judgments table and the calibration table (or counts: "
            "use fit_counts(judged_pos, n, tp, m1, tn, m0))."
        )
    return validate_misclassification(judgments, calibration, by_system=by_system)


def warn_if_not_identified(cal: MisclassificationCounts, systems, first: bool = False) -> None:
    """Warn when the calibration counts make q0 + q1 <= 1 plausible (``first``: only the
    first row, for calibration pooled over systems)."""
    rows = slice(0, 1) if first else slice(None)
    total = (np.asarray(cal.q0_hat, dtype=float) + np.asarray(cal.q1_hat, dtype=float))[rows]
    weak = weakly_identified(cal)[rows]
    if not weak.any():
        return
    names = np.asarray(systems)[weak]
    shown = ", ".join(
        f"q0_hat + q1_hat = {t:.3f}" if len(total) == 1 else f"{s}: q0_hat + q1_hat = {t:.3f}"
        for s, t in zip(names, total[weak])
    )
    if (total[weak] <= 1).any():
        what = ("on the calibration set the judge is no better than chance, so the data "
                "barely identify the accuracy theta and its posterior will be wide (possibly "
                "bimodal). Check that judge_label = 1 and human_label = 1 both mean "
                "'correct' (swapped labels push the sum below 1), collect more calibration "
                "labels, or use a better judge.")
        head = f"calibration estimates give q0_hat + q1_hat <= 1 ({shown})"
    else:
        what = ("a judge no better than chance is plausible, so the accuracy theta is weakly "
                "identified: its posterior may be wide or bimodal, and a MAP fit's Laplace "
                "interval may describe one mode only. Fit with method='nuts' for the "
                "interval, and collect more calibration labels.")
        head = (f"calibration estimates give {shown}, within two standard errors of "
                f"q0 + q1 = 1")
    warn_user(f"{head}: {what}", IdentifiabilityWarning)


def posterior_table(
    draws: Mapping[str, np.ndarray],
    ci_prob: float,
    systems=None,
    point: Mapping[str, np.ndarray] | None = None,
    include_draws: bool = False,
    laplace_ok: Mapping[str, np.ndarray] | None = None,
    fix: str = NUTS_FIX,
) -> pd.DataFrame:
    """Mean, sd, median and equal-tailed interval of each quantity (and system).

    ``draws[name]`` has shape (samples,) or (samples, n_systems); ``laplace_ok``
    (MAP fits) adds that column, with a warning naming the rows where it is False.
    """
    tail = (1 - ci_prob) / 2
    rows = []
    for name, x in draws.items():
        x = x.reshape(x.shape[0], -1)
        lo, med, hi = np.quantile(x, [tail, 0.5, 1 - tail], axis=0)
        for k in range(x.shape[1]):
            row = {"quantity": name}
            if systems is not None:
                row = {"system": systems[k], **row}
            row.update(
                mean=x[:, k].mean(),
                sd=x[:, k].std(ddof=1),
                median=med[k],
                lower=lo[k],
                upper=hi[k],
            )
            if point is not None:
                row["map"] = float(np.ravel(point[name])[k])
            if laplace_ok is not None:
                row["laplace_ok"] = bool(np.ravel(laplace_ok[name])[k])
            if include_draws:
                row["draws"] = x[:, k].copy()
            rows.append(row)
    table = pd.DataFrame(rows)
    if laplace_ok is not None:
        warn_flagged(table, ["system", "quantity"] if systems is not None else ["quantity"], fix)
    return table


def simulate_judgments(
    accuracy: Mapping[str, float], q0: float, q1: float, n: int, m0: int, m1: int,
    random_seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Judgment and calibration tables of systems judged by one judge (known truth).

    Each system gets ``n`` test items whose true label is 1 with probability
    ``accuracy[system]`` and ``m0`` + ``m1`` calibration items with human label
    0 and 1; the judge reports the true label with probability q1 (label 1) or
    q0 (label 0). Item ids are strings unique across systems.
    """
    rng = np.random.default_rng(random_seed)
    tests, cals = [], []
    for k, (system, theta) in enumerate(accuracy.items()):
        truth = rng.random(n) < theta
        judged = np.where(truth, rng.random(n) < q1, rng.random(n) >= q0)
        human = np.r_[np.zeros(m0, bool), np.ones(m1, bool)]
        cal_judged = np.where(human, rng.random(m0 + m1) < q1, rng.random(m0 + m1) >= q0)
        tests.append(pd.DataFrame({"system": system, "item": [f"s{k}-t{i}" for i in range(n)],
                                   "judge_label": judged.astype(int)}))
        cals.append(pd.DataFrame({"system": system,
                                  "item": [f"s{k}-c{i}" for i in range(m0 + m1)],
                                  "judge_label": cal_judged.astype(int),
                                  "human_label": human.astype(int)}))
    return pd.concat(tests, ignore_index=True), pd.concat(cals, ignore_index=True)


class MisclassificationModel(BoundaryFlags, BayesianModel):
    r"""Bias-adjusted accuracy of one evaluated system from an imperfect LLM judge.

    With test counts (``judged_pos`` of ``n``) and calibration confusion counts
    (``tp`` of ``m1`` human-'correct' items, ``tn`` of ``m0`` human-'incorrect'
    items):

    .. math::

        \theta \sim \mathrm{Beta}(1, 1),\quad q_0 \sim \mathrm{Beta}(1, 1),\quad
        q_1 \sim \mathrm{Beta}(1, 1)

        tp \sim \mathrm{Bin}(m_1, q_1),\qquad tn \sim \mathrm{Bin}(m_0, q_0)  \quad (3)

        \text{judged\_pos} \sim \mathrm{Bin}(n, p),\qquad
        p = \theta q_1 + (1 - \theta)(1 - q_0)                              \quad (\S 5.1)

    Names: ``accuracy`` (theta, eq. 1), ``specificity`` (q0), ``sensitivity``
    (q1), deterministic ``judged_rate`` (p, the quantity the naive score p_hat of
    eq. 2 estimates). Nothing restricts q0 + q1 > 1: the calibration data decide
    (a warning is issued when their estimates say q0_hat + q1_hat <= 1).

    Priors. The default is uniform, Beta(1, 1), on all three probabilities.
    Uniform is the reference choice because (i) it is what the established
    implementation uses (R ``prevalence::truePrev`` with ``prior = c(1, 1)``,
    against which this model is tested); (ii) its posterior means of q0, q1 from
    the calibration counts alone, (tn + 1)/(m0 + 2) and (tp + 1)/(m1 + 2), are
    the Laplace-smoothed q~ of eq. (7) and Algorithm 1; (iii) a prior favouring
    good judges (q > 1/2) would pull q0_hat + q1_hat up and thereby bias theta
    toward p_hat's side of the Rogan-Gladen correction whenever the calibration
    set is small -- exactly when the prior matters. The posterior is proper for
    every data set, including a perfect calibration (tp = m1).

    ``priors="flat"`` puts flat priors on the logits; then ``method="map"``
    returns the maximum-likelihood estimate, which is the Rogan-Gladen estimate
    (eq. 5) with q0_hat = tn/m0, q1_hat = tp/m1 whenever that lies in (0, 1):
    the likelihood factorises into Bin(judged_pos | n, p) Bin(tp | m1, q1)
    Bin(tn | m0, q0), each factor is maximised separately by p = judged_pos/n,
    q1 = tp/m1, q0 = tn/m0, and (theta, q0, q1) -> (p, q0, q1) is one-to-one when
    q0 + q1 != 1, so theta_hat = (p_hat + q0_hat - 1)/(q0_hat + q1_hat - 1).
    The default Beta(1, 1) priors give the same MAP (the engine's MAP is the
    mode of the constrained posterior, no Jacobian); use NUTS for the posterior.

    Pointwise log-likelihood. The observation unit is one binomial, dim ``obs``
    = (``test``, ``calibration_0``, ``calibration_1``): the test count, the
    human-'incorrect' calibration count tn and the human-'correct' count tp,
    each with its binomial coefficient (the three sum to the full
    log-likelihood). PSIS-LOO therefore leaves out a whole data source; compare
    only fits of the same counts.

    Parameters
    ----------
    priors : None, "flat" or dict
        Priors of ``accuracy``, ``specificity``, ``sensitivity`` (default
        ``Prior("Beta", alpha=1, beta=1)`` each; any distribution on [0, 1], or
        ``Prior("Flat")`` for flat on the logit). ``"flat"``: all three flat.
    random_seed : int
        Seeds NUTS and the Laplace draws.

    Attributes
    ----------
    map_ : dict
        MAP values (``accuracy``, ``specificity``, ``sensitivity``, ``judged_rate``).
    idata_ : xarray.DataTree
        posterior, log_likelihood (``counts``, dim ``obs``), observed_data
        (``counts`` and ``trials``, dim ``obs``).
    counts_ : MisclassificationCounts
        The six counts the model was fitted to.

    Examples
    --------
    >>> model = MisclassificationModel(priors="flat").fit_counts(
    ...     judged_pos=480, n=1000, tp=90, m1=100, tn=70, m0=100)
    >>> round(float(model.map_["accuracy"]), 4)   # Rogan-Gladen: (0.48 + 0.7 - 1) / 0.6
    0.3
    """

    _map_newton = True  # three parameters: see bayesjudge.engine.optim

    default_priors = {k: Prior("Beta", alpha=1, beta=1) for k in PROBABILITIES}

    def __init__(self, priors: None | str | dict = None, random_seed: int | None = 0):
        self.priors = priors
        self.random_seed = random_seed

    @property
    def _summary_vars(self) -> tuple[str, ...]:
        return PROBABILITIES

    # -- pieces of the contract ---------------------------------------------------
    def _prepare(self, judgments, calibration=None) -> FitData:
        self.resolved_priors()  # fail on bad priors before any validation or compile
        counts = as_counts(judgments, calibration, by_system=False)
        if len(counts) != 1:
            raise DataValidationError(
                f"MisclassificationModel evaluates one system, got counts for {len(counts)} "
                f"({list(counts.systems)[:5]}); fit one model per system or use "
                f"HierarchicalMisclassificationModel."
            )
        check_calibration_classes(counts)
        warn_if_not_identified(counts, counts.systems)
        warn_if_conflicting(counts)
        self._check_improper(counts)
        successes, trials = (a[0] for a in counts_arrays(counts))
        return FitData(
            data={"successes": successes, "trials": trials},
            coords={"obs": list(OBS)},
            observed={"counts": (("obs",), successes), "trials": (("obs",), trials)},
            extra={"counts": counts},
            observation={"outcome_space": "binomial counts of the judge's positive verdicts on "
                                          "the test items and of its correct verdicts on the "
                                          "calibration items of each class"},
        )

    def _map_starts(self, fd: FitData, engine) -> list[np.ndarray | None]:
        return map_starts(engine, fd.extra["counts"], pooled=True)

    def _flat_logits(self) -> tuple[str, ...]:
        return tuple(k for k in PROBABILITIES if self._is_flat(k))

    def _build(self, fd: FitData) -> pm.Model:
        priors = self.resolved_priors()
        with pm.Model(coords={"obs": list(OBS)}) as model:
            successes = pm.Data("successes", fd.data["successes"], dims="obs")
            trials = pm.Data("trials", fd.data["trials"], dims="obs")
            theta = probability_parameter(priors["accuracy"], "accuracy")
            q0 = probability_parameter(priors["specificity"], "specificity", start=GOOD_JUDGE_START)
            q1 = probability_parameter(priors["sensitivity"], "sensitivity", start=GOOD_JUDGE_START)
            p = pm.Deterministic("judged_rate", judged_rate(theta, q0, q1))
            pm.Binomial("counts", n=trials, p=pt.stack([p, q0, q1]), observed=successes, dims="obs")
        return model

    def _pointwise_loglik(self, params, fd):
        return {"counts": binomial_loglik(params, fd.data["successes"], fd.data["trials"])}

    @classmethod
    def example_data(cls, random_seed: int = 0) -> ExampleData:
        """300 judged test items and 80 calibration items of one system.

        Simulated with accuracy 0.6, specificity 0.85, sensitivity 0.9.
        """
        judgments, calibration = simulate_judgments(
            {"system": 0.6}, q0=0.85, q1=0.9, n=300, m0=40, m1=40, random_seed=random_seed)
        return ExampleData(
            fit_args=(judgments.drop(columns="system"), calibration.drop(columns="system")),
            truth={"accuracy": 0.6, "specificity": 0.85, "sensitivity": 0.9},
        )

    # -- public ----------------------------------------------------------------------
    def fit_counts(self, judged_pos: int, n: int, tp: int, m1: int, tn: int, m0: int, **fit_kwargs):
        """Fit to the six counts directly (the model's sufficient statistics).

        Parameters
        ----------
        judged_pos, n : int
            Test items the judge called 'correct', out of ``n``.
        tp, m1 : int
            Human-'correct' calibration items the judge called 'correct', out of ``m1``.
        tn, m0 : int
            Human-'incorrect' calibration items the judge called 'incorrect', out of ``m0``.
        **fit_kwargs
            ``method``, ``draws``, ``tune``, ``chains``, ... as in :meth:`fit`.
        """
        return self.fit(validate_judgment_counts(judged_pos, n, tp, m1, tn, m0), **fit_kwargs)

    @property
    def counts_(self) -> MisclassificationCounts:
        """The counts the model was fitted to (also after :meth:`load`)."""
        self._check_fitted()
        fd = getattr(self, "_fit_data", None)
        if fd is not None:
            return fd.extra["counts"]
        obs = self.idata_["observed_data"]
        s = np.asarray(obs["counts"].values, dtype=np.int64).reshape(-1, 3)
        t = np.asarray(obs["trials"].values, dtype=np.int64).reshape(-1, 3)
        systems = obs["system"].values if "system" in obs.coords else ["all"]
        return MisclassificationCounts(
            pd.Index(systems, name="system"), s[:, 0], t[:, 0], s[:, 2], t[:, 2], s[:, 1], t[:, 1]
        )

    def predict(self, *, ci_prob: float = CI_PROB, include_draws: bool = False) -> pd.DataFrame:
        """Posterior of the accuracy theta and of the judged rate p.

        Parameters
        ----------
        ci_prob : float
            Mass of the equal-tailed credible interval.
        include_draws : bool
            Add a ``draws`` column holding each quantity's posterior draws
            (Laplace draws for MAP fits).

        Returns
        -------
        pandas.DataFrame
            Rows ``accuracy`` and ``judged_rate`` (column ``quantity``); columns
            ``mean``, ``sd``, ``median``, ``lower``, ``upper`` and, for MAP fits,
            ``map`` (the optimum) and ``laplace_ok`` (False, with a warning, where the
            Laplace interval cannot be trusted: :mod:`bayesjudge.engine.laplace_check`).
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        post = self._posterior()
        draws = {k: post[k].values.reshape(-1) for k in ("accuracy", "judged_rate")}
        point = self.map_ if self.method_ == "map" else None
        ok = {k: self.laplace_ok(k) for k in draws} if point is not None else None
        return posterior_table(draws, ci_prob, point=point, include_draws=include_draws,
                               laplace_ok=ok, fix=self._laplace_fix())
