"""Monte Carlo studies of misclassification-adjusted reporting.

Reproduces the simulations of Lee, Zeng, Jeong, Sohn & Lee (2025), "How to
Correctly Report LLM-as-a-Judge Evaluations", arXiv:2511.21140: Section 8.1 /
Figure 6 (bias of the naive and Rogan-Gladen estimators, coverage of the naive
Wald and Lang-Reiczigel intervals, interval length under equal versus
Algorithm 1 allocation) and Section 7 / Figure 5 / Appendix D (bias of the
Table 1 estimators under label shift between test and calibration sets). It
adds the Bayesian answer to the same model: the exact, vectorised importance
sampler :func:`~bayesjudge.models.misclassification.posterior.bayes_posterior_theta`,
whose credible-interval
coverage is reported next to the frequentist intervals. Every replication is an
array element; the work is cut into tasks of one theta value and a chunk of
replications (:mod:`~bayesjudge.experiments.misclassification.tasks`), run in-process,
in local processes or on a Dask cluster (:func:`~bayesjudge.experiments.runner.run_tasks`).
One ``random_seed`` (int or numpy Generator) gives every task its own seed, so the
numbers do not depend on the executor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from bayesjudge.data import DataValidationError
from bayesjudge.estimators import as_counts, check_alpha
from bayesjudge.experiments.misclassification.tasks import (
    monte_carlo_chunk,
    replication_chunks,
    shift_chunk,
)
from bayesjudge.experiments.runner import Executor, Seed, executor_name, run_tasks
from bayesjudge.models.misclassification.posterior import (
    beta_parameters,
)
from bayesjudge.priors import Prior

__all__ = [
    "distribution_shift_study",
    "misclassification_monte_carlo",
]

Allocation = Literal["equal", "adaptive"]


# --------------------------------------------------------------------------- Section 8.1


def _check_n_rep(n_rep: int) -> None:
    if isinstance(n_rep, bool) or int(n_rep) != n_rep or n_rep < 1:
        raise DataValidationError(
            f"n_rep must be a positive integer, got {n_rep!r}. Fix: e.g. n_rep=10_000."
        )


def _coverage_rows(
    truth: float, est: NDArray, lower: NDArray, upper: NDArray, **keys: object
) -> dict[str, object]:
    valid = np.isfinite(est) & np.isfinite(lower) & np.isfinite(upper)
    err = est[valid] - truth
    covered = (lower[valid] <= truth) & (truth <= upper[valid])
    return {
        **keys,
        "bias": err.mean(),
        "rmse": np.sqrt((err**2).mean()),
        "coverage": covered.mean(),
        "mean_length": (upper[valid] - lower[valid]).mean(),
        "n_valid": int(valid.sum()),
    }


def _join(parts: list[tuple]) -> tuple:
    """Concatenate (estimate, lower, upper) triples of consecutive chunks."""
    return tuple(np.concatenate(arrays) for arrays in zip(*parts))


def misclassification_monte_carlo(
    *,
    q0: float = 0.7,
    q1: float = 0.9,
    thetas: ArrayLike | None = None,
    n: int = 1000,
    m: int = 200,
    m_pilot: int = 10,
    n_rep: int = 10_000,
    alpha: float = 0.05,
    allocations: tuple[Allocation, ...] = ("equal", "adaptive"),
    bayes: bool = True,
    n_draws: int = 500,
    priors: Mapping[str, Prior] | None = None,
    random_seed: Seed = None,
    executor: Executor = None,
    progressbar: bool = False,
) -> pd.DataFrame:
    r"""Monte Carlo study of Section 8.1 (Figure 6), plus the Bayesian posterior.

    For each theta: ``judged_pos ~ Bin(n, p)`` with :math:`p = \theta q_1 + (1-\theta)(1-q_0)`;
    a calibration set of ``m`` human labels, split either equally (:math:`m_0 = m_1`) or by
    Algorithm 1 (a pilot of ``m_pilot`` per class, kept in the set, then
    :func:`~bayesjudge.estimators.allocate_calibration` from :math:`\hat p` and the pilot);
    ``tn ~ Bin(m0, q0)``, ``tp ~ Bin(m1, q1)``. Both allocations share the test data.

    Parameters
    ----------
    q0, q1 : float, default 0.7, 0.9
        True specificity and sensitivity of the judge.
    thetas : array_like, optional
        True accuracies; default the paper's 21 values 0, 0.05, ..., 1.
    n, m, m_pilot : int, default 1000, 200, 10
        Test-set size, calibration budget, pilot items per class.
    n_rep : int, default 10000
        Replications per theta.
    alpha : float, default 0.05
        One minus the confidence / credible level, in (0, 0.5).
    allocations : tuple of {"equal", "adaptive"}
        Calibration designs to run.
    bayes : bool, default True
        Also compute the posterior of
        :func:`~bayesjudge.models.misclassification.posterior.bayes_posterior_theta` for every
        replication (the expensive part:
        ``n_rep * len(thetas) * len(allocations) * n_draws`` draws).
    n_draws : int, default 500
        Importance draws per replication for the posterior (more for replications with
        low effective sample size, see
        :func:`~bayesjudge.models.misclassification.posterior.bayes_posterior_theta`). The
        Monte Carlo jitter of the interval limits costs under 0.2 points of coverage at 500 draws.
    priors : mapping of str to Prior, optional
        Beta priors of the posterior by parameter name (``"accuracy"``, ``"specificity"``,
        ``"sensitivity"``), as in
        :func:`~bayesjudge.models.misclassification.posterior.bayes_posterior_theta`; uniform
        by default.
    random_seed : int or numpy.random.Generator, optional
        Seed or generator for all simulation and sampling: each task (one theta, a chunk
        of at most 2,500 replications) gets its own child seed.
    executor : None, "joblib", joblib.Parallel, "dask" or dask.distributed.Client
        Where the tasks run (:func:`~bayesjudge.experiments.runner.run_tasks`); the output
        is the same for every executor.
    progressbar : bool, default False
        Show tasks done / total.

    Returns
    -------
    pandas.DataFrame
        Tidy: one row per ``theta`` x ``allocation`` x ``method`` with ``method`` in
        ``naive_wald`` (:math:`\hat p` and its Wald interval; it ignores the calibration
        set, so its rows repeat across allocations), ``lang_reiczigel`` (clipped
        :math:`\hat\theta`, eq. 5, and the interval of eq. 6), ``bayes_equal_tailed`` and
        ``bayes_hpd`` (posterior mean and credible intervals), and columns ``bias``,
        ``rmse`` (of the point estimate), ``coverage``, ``mean_length``, ``n_valid``
        (replications where the method is defined, e.g. not :math:`\hat q_0 + \hat q_1 \le 1`),
        ``mean_m0``, ``mean_m1``.
    """
    thetas = np.linspace(0.0, 1.0, 21) if thetas is None else np.asarray(thetas, dtype=np.float64)
    if not (np.all((thetas >= 0) & (thetas <= 1)) and 0 <= q0 <= 1 and 0 <= q1 <= 1):
        raise DataValidationError(
            f"thetas, q0 and q1 must lie in [0, 1]; got thetas={thetas}, q0={q0}, q1={q1}. "
            "Fix: pass probabilities."
        )
    unknown = set(allocations) - {"equal", "adaptive"}
    if unknown:
        raise DataValidationError(
            f"allocations must be 'equal' or 'adaptive', got {sorted(unknown)}. "
            "Fix: e.g. ('equal',)."
        )
    _check_n_rep(n_rep)
    as_counts(n=n, m=m, m_pilot=m_pilot)
    check_alpha(alpha)
    if bayes:
        beta_parameters(priors)  # fail before the simulation, not after it
    executor_name(executor)  # a bad executor fails before any work
    shared = dict(thetas=thetas, q0=q0, q1=q1, n=n, m=m, m_pilot=m_pilot, alpha=alpha,
                  allocations=tuple(allocations), bayes=bayes, n_draws=n_draws, priors=priors)
    tasks = replication_chunks(len(thetas), int(n_rep), random_seed)
    chunks = run_tasks(monte_carlo_chunk, tasks, shared=shared, executor=executor,
                       progressbar=progressbar, desc="Monte Carlo chunks")

    rows = []
    for allocation in allocations:
        for k, theta in enumerate(thetas):
            mine = [c for (j, _, _), c in zip(tasks, chunks) if j == k]
            parts = [c["allocations"][allocation] for c in mine]
            methods = {"naive_wald": _join([c["naive"] for c in mine])}
            methods.update({name: _join([p["methods"][name] for p in parts])
                            for name in parts[0]["methods"]})
            m0 = np.concatenate([p["m0"] for p in parts])
            m1 = np.concatenate([p["m1"] for p in parts])
            for method, (est, lower, upper) in methods.items():
                keys = {"theta": theta, "allocation": allocation, "method": method}
                row = _coverage_rows(theta, est, lower, upper, **keys)
                rows.append({**row, "mean_m0": m0.mean(), "mean_m1": m1.mean()})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- Section 7


def distribution_shift_study(
    *,
    theta_p: float = 0.5,
    theta_q: ArrayLike | None = None,
    q0: float = 0.7,
    q1: float = 0.9,
    n: int = 1000,
    m: int = 200,
    n_rep: int = 10_000,
    random_seed: Seed = None,
    executor: Executor = None,
    progressbar: bool = False,
) -> pd.DataFrame:
    r"""Label-shift study of Section 7 (Figure 5, Appendix D) with the Table 1 estimators.

    The judge behaves identically on both sets (:math:`\Pr(\hat Z\mid Z)` fixed by q0, q1);
    the test set has accuracy ``theta_p`` and the calibration set ``theta_q``:
    ``judged_pos ~ Bin(n, p_P)``, ``m1 ~ Bin(m, theta_q)``, ``m0 = m - m1``,
    ``tp ~ Bin(m1, q1)``, ``tn ~ Bin(m0, q0)``.

    Parameters
    ----------
    theta_p : float, default 0.5
        Test-set accuracy :math:`\theta_P`.
    theta_q : array_like, optional
        Calibration-set accuracies :math:`\theta_Q`; default 11 values in [0.25, 0.75]
        (shift ratio :math:`\theta_Q/\theta_P` from 0.5 to 1.5).
    q0, q1 : float, default 0.7, 0.9
        Specificity and sensitivity of the judge.
    n, m : int, default 1000, 200
        Test and calibration set sizes.
    n_rep : int, default 10000
        Replications per :math:`\theta_Q`.
    random_seed : int or numpy.random.Generator, optional
        One child seed per task (one theta_Q, a chunk of at most 2,500 replications).
    executor : None, "joblib", joblib.Parallel, "dask" or dask.distributed.Client
        Where the tasks run; the output is the same for every executor.
    progressbar : bool, default False
        Show tasks done / total.

    Returns
    -------
    pandas.DataFrame
        Tidy: one row per ``theta_q`` x ``estimator`` (``naive``, ``calibration_only``,
        ``difference``, ``conditional_calibration``, ``misclassification_adjusted`` — the
        unclipped eq. 5, as in Table 1), with ``shift_ratio``, ``mean``, ``bias``
        (mean minus ``theta_p``), ``sd`` and ``n_valid`` (replications where the
        estimator is defined).
    """
    if theta_q is None:
        theta_q = np.linspace(0.25, 0.75, 11)
    theta_q = np.asarray(theta_q, dtype=np.float64)
    scalars_ok = 0 <= theta_p <= 1 and 0 <= q0 <= 1 and 0 <= q1 <= 1
    if not (np.all((theta_q >= 0) & (theta_q <= 1)) and scalars_ok):
        raise DataValidationError(
            f"theta_p, theta_q, q0 and q1 must lie in [0, 1]; got theta_p={theta_p}, "
            f"theta_q={theta_q}, q0={q0}, q1={q1}. Fix: pass probabilities."
        )
    _check_n_rep(n_rep)
    as_counts(n=n, m=m)
    executor_name(executor)  # a bad executor fails before any work
    tasks = replication_chunks(len(theta_q), int(n_rep), random_seed)
    chunks = run_tasks(shift_chunk, tasks, shared=dict(theta_p=theta_p, theta_q=theta_q, q0=q0,
                                                      q1=q1, n=n, m=m),
                       executor=executor, progressbar=progressbar, desc="label-shift chunks")
    estimates = {name: [np.concatenate([c[name] for (j, _, _), c in zip(tasks, chunks) if j == k])
                        for k in range(len(theta_q))] for name in chunks[0]}
    rows = []
    for k, tq in enumerate(theta_q):
        for name, est in estimates.items():
            e = est[k][np.isfinite(est[k])]
            rows.append(
                {
                    "theta_q": tq,
                    "shift_ratio": tq / theta_p if theta_p > 0 else np.nan,
                    "estimator": name,
                    "mean": e.mean(),
                    "bias": e.mean() - theta_p,
                    "sd": e.std(ddof=1),
                    "n_valid": e.size,
                }
            )
    return pd.DataFrame(rows)
