"""Centred or non-centred judges' discriminators under NUTS, chosen from the data.

``log sigma_k ~ ZeroSumNormal(tau)`` can be sampled centred (the free coordinates of
``log sigma`` themselves) or non-centred (``log sigma = tau z``, ``z`` standard). Which
one NUTS can explore depends on how well the data pin each ``log sigma_k`` down
(its standard error ``se_k``) against the spread ``tau`` of the judges (Betancourt &
Girolami (2015), "Hamiltonian Monte Carlo for hierarchical models"): with
``se << tau`` the non-centred posterior is a ridge ``z ~ log sigma / tau`` bending with
``tau`` (SummEval's jury, the Arena subsample: divergences at large ``tau``), with
``se`` close to ``tau`` the centred one is a funnel at ``tau -> 0`` (PandaLM's jury,
whose judges agree: divergences at small ``tau``, its lower tail cut off).

:func:`centred_for_nuts` fits the model by MAP first (non-centred, the MAP form) and
compares a method-of-moments estimate of ``tau`` from the fitted ``log sigma_k``
(their spread less their sampling noise, as DerSimonian & Laird's) with the root mean
square of ``se_k`` (inverse Fisher information of ``log sigma_k`` at the MAP). Measured
(MAP estimates; NUTS 4 x (1000 + 1000)):

    data                          tau_mm   rms se   ratio  centred    non-centred (ta 0.9)
    PandaLM jury, DavidsonBT      0.15     0.11     1.4    10-87 div  0-3 div  (9 seeds)
    Arena 1,500 prompts, Davidson 0.68     0.09     7.0    0 div      1-3 div
    SummEval 10 articles, BTSigma 1.3      0.18     7      0 div      (not run)

so the threshold :data:`RATIO` sits between them (their geometric mean ~3).
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["RATIO", "centred_for_nuts", "spread_and_noise"]

#: Centred discriminators when tau (moment estimate) exceeds RATIO x rms(se of log sigma_k).
RATIO = 3.0


def centred_for_nuts(model, comparisons) -> bool:
    """Whether NUTS should sample ``model``'s discriminators centred, for these data.

    Fits a copy of ``model`` by MAP (its warnings are those of the NUTS fit itself,
    so they are not repeated) and applies the rule of the module docstring.
    """
    pilot = type(model)(**model.get_params())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pilot.fit(comparisons, method="map")
    tau, se = spread_and_noise(pilot)
    return bool(tau > RATIO * se)


def spread_and_noise(fitted) -> tuple[float, float]:
    """Moment estimate of tau and rms standard error of the log discriminators at the MAP.

    The Fisher information of ``log sigma_k`` sums, over judge k's comparisons,
    ``n (d - b)^2 I(d)`` with ``d`` the margin (``(s_i - s_j) / sigma_k + b_k``) and
    ``I(d) = P_L (1/2 - m)^2 + P_R (1/2 + m)^2 + P_T m^2``, ``m = (P_L - P_R) / 2``,
    Davidson's information about ``d`` (``P_L P_R`` without ties: Bradley-Terry's).
    """
    fd = fitted._fit_data
    comps = fd.extra["comps"]
    point = {k: np.asarray(v)[None] for k, v in fitted.map_.items()}
    sigma = np.asarray(fitted.map_["discriminator"], float)
    n_j = len(comps.judges)
    n_a = sigma.size // n_j
    aspect = comps.aspect % n_a
    cl, cr = fd.extra["cell_left"], fd.extra["cell_right"]
    p = np.exp(fitted._log_probs(point, cl, cr, comps.judge, aspect)[0])
    m = (p[:, 0] - p[:, 2]) / 2
    info = p[:, 0] * (0.5 - m) ** 2 + p[:, 2] * (0.5 + m) ** 2 + p[:, 1] * m ** 2
    skill = point["skill"][0].reshape(-1)
    col = comps.judge * n_a + aspect
    d = (skill[cl] - skill[cr]) / sigma.reshape(-1)[col]
    fisher = np.bincount(col, comps.n * info * d ** 2, n_j * n_a)
    with np.errstate(divide="ignore"):
        se2 = np.where(fisher > 0, 1.0 / np.maximum(fisher, 1e-300), np.inf)
    log_sigma = np.log(sigma.reshape(n_j, n_a))
    log_sigma = log_sigma - log_sigma.mean(axis=0)  # zero-sum over judges per aspect
    tau2 = (log_sigma ** 2).sum() / (n_a * (n_j - 1)) - se2.mean()
    return float(np.sqrt(max(tau2, 0.0))), float(np.sqrt(se2.mean()))
