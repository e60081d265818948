"""Simulated probabilistic judges with stated miscalibration against a known p*.

The data-generating process behind Li, Li, Huang et al. (2025), "Judging with
Confidence: Calibrating Autoraters to Preference Distributions", arXiv:2510.00263
(section 2.1 and the positional bias of section 5.2): every item has a true
preference distribution p* drawn from a Beta population, m annotators label it
(Bernoulli(p*) each, ties optional), and a judge reports P(B better) through a
known distortion -- a temperature, a bias toward the second-shown response, and
optionally noise. The truth is returned in the parameters of
:class:`~bayesjudge.models.preference.model.PreferenceDistribution` and
:class:`~bayesjudge.models.preference.temperature.TemperatureScaling`, so a test
checks that each model recovers what it should.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special

__all__ = ["SimulatedAutorater", "simulate_autorater"]


@dataclass(frozen=True)
class SimulatedAutorater:
    """Tables and truth of :func:`simulate_autorater`.

    Attributes
    ----------
    annotations : pandas.DataFrame
        ``item, annotator, label`` with label in {"A", "B", "tie"}.
    outputs : pandas.DataFrame
        ``item, prob`` (P(B better)) and, with ``swapped=True``, ``prob_swapped``
        (P(A better) from the swapped prompt).
    p_star : pandas.DataFrame
        ``item, p_b, p_tie``: each item's true preference distribution.
    truth : dict
        ``population_mean``, ``concentration``, ``tie_mean``, ``temperature``,
        ``bias`` -- the variable names of the models that should recover them.
    """

    annotations: pd.DataFrame
    outputs: pd.DataFrame
    p_star: pd.DataFrame
    truth: dict = field(default_factory=dict)


def simulate_autorater(
    n_items: int = 500,
    n_annotators: int | tuple[int, int] = 3,
    *,
    population_mean: float = 0.5,
    concentration: float = 4.0,
    tie_mean: float = 0.0,
    temperature: float = 0.5,
    bias: float = 0.0,
    noise_sd: float = 0.0,
    swapped: bool = False,
    random_seed: int | None = 0,
) -> SimulatedAutorater:
    r"""Items, annotators and one miscalibrated probabilistic judge with known truth.

    Item i: (P(A), P(tie), P(B)) ~ Dirichlet(kappa * ((1 - tau)(1 - mu), tau,
    (1 - tau) mu)) (without ties, tau = 0: p*_i ~ Beta(mu kappa, (1 - mu) kappa));
    m_i annotators draw labels from it. The judge sees the item in order (A, B)
    and reports

    .. math::

        p_i = \sigma(T \cdot \operatorname{logit} q^*_i + b + \varepsilon_i), \qquad
        q^*_i = P_i(B) / (P_i(A) + P_i(B)),

    and, in the swapped order, P(A better) = sigma(T logit(1 - q*_i) + b + eps'_i):
    b pulls toward whichever response is shown second (positional bias, so the
    symmetry deviation p + p_swapped - 1 is positive for b > 0), and T < 1 makes
    the judge under-confident, T > 1 over-confident. This is the inverse of
    :class:`~bayesjudge.models.preference.temperature.TemperatureScaling`'s map
    sigma((logit p - b)/T), so the truth it should recover is ``temperature`` = T
    and ``bias`` = b (for noise_sd = 0). The equivalent parametrisation
    sigma(logit(p*) / T' + b') has T' = 1/T, b' = b.

    Parameters
    ----------
    n_items : int
        Number of items.
    n_annotators : int or (low, high)
        Annotators per item, fixed or uniform on low..high (inclusive).
    population_mean, concentration, tie_mean : float
        mu, kappa, tau of the population (tau = 0: no ties).
    temperature, bias : float
        T > 0 and b of the judge's distortion.
    noise_sd : float
        Sd of the independent logit noise eps (0: the judge is a deterministic
        distortion of p*).
    swapped : bool
        Also report the swapped order (``prob_swapped``).
    random_seed : int or None
        The only source of randomness.

    Returns
    -------
    SimulatedAutorater
    """
    if not (0 < population_mean < 1 and concentration > 0 and 0 <= tie_mean < 1
            and temperature > 0 and noise_sd >= 0 and n_items >= 1):
        raise ValueError("need 0 < population_mean < 1, concentration > 0, 0 <= tie_mean < 1, "
                         "temperature > 0, noise_sd >= 0 and n_items >= 1.")
    rng = np.random.default_rng(random_seed)
    if tie_mean > 0:
        alpha = concentration * np.array([(1 - tie_mean) * (1 - population_mean), tie_mean,
                                          (1 - tie_mean) * population_mean])
        pi = rng.dirichlet(alpha, size=n_items)
    else:
        p_b = rng.beta(population_mean * concentration, (1 - population_mean) * concentration,
                       size=n_items)
        pi = np.stack([1 - p_b, np.zeros(n_items), p_b], axis=1)
    if isinstance(n_annotators, tuple):
        m = rng.integers(n_annotators[0], n_annotators[1] + 1, size=n_items)
    else:
        m = np.full(n_items, int(n_annotators))
    items = np.array([f"item-{i:05d}" for i in range(n_items)], dtype=object)
    row_item = np.repeat(np.arange(n_items), m)
    cum = np.cumsum(pi, axis=1)[row_item]
    codes = (rng.random(len(row_item))[:, None] > cum[:, :2]).sum(axis=1)
    rank = np.arange(len(row_item)) - np.repeat(np.cumsum(m) - m, m)
    annotators = np.char.add("rater-", rank.astype(str)).astype(object)
    annotations = pd.DataFrame({"item": np.repeat(items, m), "annotator": annotators,
                                "label": np.array(["A", "tie", "B"], dtype=object)[codes]})
    q = np.clip(pi[:, 2] / (pi[:, 0] + pi[:, 2]), 1e-12, 1 - 1e-12)
    logit_q = special.logit(q)
    prob = special.expit(temperature * logit_q + bias + noise_sd * rng.normal(size=n_items))
    outputs = pd.DataFrame({"item": items, "prob": prob})
    if swapped:
        outputs["prob_swapped"] = special.expit(-temperature * logit_q + bias
                                                + noise_sd * rng.normal(size=n_items))
    p_star = pd.DataFrame({"item": items, "p_b": pi[:, 2], "p_tie": pi[:, 1]})
    truth = {"population_mean": population_mean, "concentration": concentration,
             "tie_mean": tie_mean, "temperature": temperature, "bias": bias}
    return SimulatedAutorater(annotations, outputs, p_star, truth)
