"""Replication chunks of the misclassification Monte Carlo studies, one runner task each.

The simulations of Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report
LLM-as-a-Judge Evaluations", arXiv:2511.21140 -- Section 8.1 / Figure 6
(:func:`~bayesjudge.experiments.misclassification.monte_carlo.misclassification_monte_carlo`)
and Section 7 / Figure 5
(:func:`~bayesjudge.experiments.misclassification.monte_carlo.distribution_shift_study`)
-- are cut into tasks of one theta value and at most :data:`CHUNK_REPS` replications.
Chunk boundaries depend only on ``n_rep``, and each task draws every random number
from its own seed (:func:`~bayesjudge.experiments.runner.task_seeds`), so the study's
output is the same whichever executor runs the tasks and however many workers it has.
Inside a task every replication is an array element (vectorised numpy).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from bayesjudge.estimators import (
    allocate_calibration,
    conditional_calibration_rates,
    lang_reiczigel_rates,
    rogan_gladen_rates,
    wald_interval,
)
from bayesjudge.experiments.runner import Seed, task_seeds
from bayesjudge.models.misclassification.posterior import bayes_posterior_theta
from bayesjudge.priors import Prior

__all__ = ["CHUNK_REPS", "monte_carlo_chunk", "replication_chunks", "shift_chunk"]

#: Replications per task. Large enough that the vectorised work of a task dwarfs its
#: dispatch cost (measured on a shared 2-core VM: ~0.7 s with the Bayesian posterior at
#: 500 draws and 2 allocations, ~10 ms for the closed forms alone; the runner sends
#: joblib workers several tasks at once).
CHUNK_REPS = 2_500

Interval = tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]


def replication_chunks(
    n_values: int, n_rep: int, random_seed: Seed
) -> list[tuple[int, int, int]]:
    """``(value index, replications, seed)`` of every task, value-major.

    Each of the ``n_values`` simulated settings (theta values) gets ``n_rep``
    replications in chunks of :data:`CHUNK_REPS` (the last one shorter); seeds are
    the children of ``random_seed`` in this order.
    """
    sizes = [CHUNK_REPS] * (n_rep // CHUNK_REPS)
    if n_rep % CHUNK_REPS:
        sizes.append(n_rep % CHUNK_REPS)
    cells = [(k, size) for k in range(n_values) for size in sizes]
    seeds = task_seeds(random_seed, len(cells))
    return [(k, size, seed) for (k, size), seed in zip(cells, seeds)]


def monte_carlo_chunk(
    task: tuple[int, int, int],
    *,
    thetas: NDArray[np.float64],
    q0: float,
    q1: float,
    n: int,
    m: int,
    m_pilot: int,
    alpha: float,
    allocations: Sequence[str],
    bayes: bool,
    n_draws: int,
    priors: Mapping[str, Prior] | None,
) -> dict[str, object]:
    r"""Simulate one chunk of Section 8.1 replications at one theta.

    ``judged_pos ~ Bin(n, p)``, :math:`p = \theta q_1 + (1-\theta)(1-q_0)`, shared by
    the allocations; per allocation the calibration counts and every method's point
    estimate and interval (see ``misclassification_monte_carlo``). Draws, in this order
    from ``default_rng(seed)``: the test set, then per allocation its calibration set
    and (``bayes``) the importance draws of the posterior.

    Returns
    -------
    dict
        ``naive``: (estimate, lower, upper) of :math:`\hat p` and its Wald interval;
        ``allocations``: per allocation a dict with ``methods`` (name -> (estimate,
        lower, upper)), ``m0`` and ``m1``; arrays of length ``replications``.
    """
    k, size, seed = task
    theta = float(thetas[k])
    rng = np.random.default_rng(seed)
    x = rng.binomial(n, theta * q1 + (1 - theta) * (1 - q0), size=size).astype(np.float64)
    p_hat = x / n
    wald = wald_interval(x, n, alpha=alpha)
    out: dict[str, object] = {"naive": (p_hat, wald.lower, wald.upper), "allocations": {}}
    for allocation in allocations:
        if allocation == "equal":
            m1 = np.full(size, m // 2)
            m0 = m - m1
            tn = rng.binomial(m0, q0)
            tp = rng.binomial(m1, q1)
        else:
            tn_pilot = rng.binomial(m_pilot, q0, size=size)
            tp_pilot = rng.binomial(m_pilot, q1, size=size)
            m0, m1 = allocate_calibration(m, p_hat, tn_pilot / m_pilot, tp_pilot / m_pilot, m_pilot)
            # Algorithm 1 keeps the pilot items: only the remainder of each class is new.
            tn = tn_pilot + rng.binomial(m0 - m_pilot, q0)
            tp = tp_pilot + rng.binomial(m1 - m_pilot, q1)
        m0, m1, tn, tp = (np.asarray(v, dtype=np.float64) for v in (m0, m1, tn, tp))
        # estimate: clipped eq. (5), NaN where q0_hat + q1_hat <= 1; limits NaN where eq. (7)
        # leaves the smoothed q0~ + q1~ <= 1
        lr = lang_reiczigel_rates(p_hat, tn / m0, tp / m1, n, m0, m1, alpha=alpha)
        methods: dict[str, Interval] = {"lang_reiczigel": (lr.estimate, lr.lower, lr.upper)}
        if bayes:
            post = bayes_posterior_theta(
                x, n, tp, m1, tn, m0, priors=priors, n_draws=n_draws, ci_prob=1 - alpha, rng=rng
            )
            methods["bayes_equal_tailed"] = (post.mean, post.lower, post.upper)
            methods["bayes_hpd"] = (post.mean, post.hpd_lower, post.hpd_upper)
        out["allocations"][allocation] = {"methods": methods, "m0": m0, "m1": m1}
    return out


def shift_chunk(
    task: tuple[int, int, int],
    *,
    theta_p: float,
    theta_q: NDArray[np.float64],
    q0: float,
    q1: float,
    n: int,
    m: int,
) -> dict[str, NDArray[np.float64]]:
    """Simulate one chunk of Section 7 replications at one calibration accuracy theta_q.

    ``judged_pos ~ Bin(n, p_P)``, ``m1 ~ Bin(m, theta_q)``, ``m0 = m - m1``,
    ``tp ~ Bin(m1, q1)``, ``tn ~ Bin(m0, q0)``, drawn in this order from
    ``default_rng(seed)``. Returns every Table 1 estimator's values (NaN where it is
    undefined), by name.
    """
    k, size, seed = task
    rng = np.random.default_rng(seed)
    p_hat = rng.binomial(n, theta_p * q1 + (1 - theta_p) * (1 - q0), size=size) / n
    m1 = rng.binomial(m, theta_q[k], size=size).astype(np.float64)
    m0 = m - m1
    tp = rng.binomial(m1.astype(np.int64), q1).astype(np.float64)
    tn = rng.binomial(m0.astype(np.int64), q0).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        q0_hat, q1_hat = tn / m0, tp / m1
        return {
            "naive": p_hat,
            "calibration_only": m1 / m,
            "difference": p_hat + ((m1 - tp) - (m0 - tn)) / m,
            "conditional_calibration": conditional_calibration_rates(p_hat, q0_hat, q1_hat, m0, m1),
            "misclassification_adjusted": rogan_gladen_rates(p_hat, q0_hat, q1_hat),
        }
