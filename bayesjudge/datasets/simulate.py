"""Simulators with known truth for the Davidson aggregator and the misclassification model.

The simulators draw data whose generating parameters are exactly the parameters of
the package's models: :func:`simulate_davidson_votes` follows eqs. 2-4 of
Dadkhahi, Trabelsi, Riley, Juraska, Mirzazadeh et al. (2025), "Distribution-Calibrated
Inference Time Compute for Thinking LLM-as-a-Judge", arXiv:2512.03019, and
:func:`simulate_misclassification` eqs. 1 and 3 of Lee, Zeng, Jeong, Sohn & Lee
(2025), "How to Correctly Report LLM-as-a-Judge Evaluations", arXiv:2511.21140.
Every simulator takes one ``random_seed`` and never touches global RNG state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from bayesjudge.datasets.files import SeedLike
from bayesjudge.models.davidson.aggregator import davidson_log_probs

__all__ = ["simulate_davidson_votes", "simulate_misclassification"]


def simulate_davidson_votes(
    n_items: int,
    n_votes: int | Sequence[int] | np.ndarray,
    beta: float,
    eta0: float | None = None,
    random_seed: SeedLike = 0,
    *,
    tie: Literal["global", "local"] = "global",
    gamma: float | None = None,
    alpha: float = 1.0,
    kappa: float = 1.0,
    class_prior: Sequence[float] = (0.4, 0.2, 0.4),
    concentration: tuple[float, float] = (4.0, 1.0),
    votes_format: Literal["counts", "long"] = "counts",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Judge votes and gold labels whose conditional law is exactly the Davidson model.

    Generative process per item i (Dadkhahi et al., 2025, eqs. 2-4):

    1. a latent class ``z_i`` in (+1, 0, -1) ~ ``class_prior``; it only shapes the
       judge's vote distribution ``pi_i ~ Dirichlet(c_off + (c_on - c_off) e_{z_i})``
       with ``(c_on, c_off) = concentration``, so votes are realistic mixtures;
    2. vote counts ``(c+, c0, c-) ~ Multinomial(n_i, pi_i)``;
    3. features ``s_i = 0.5 log((c+ + alpha) / (c- + alpha))`` (eq. 2) and
       ``t_i = log((c0 + kappa) / (n_i + kappa))`` (eq. 3);
    4. the label ``y_i ~ Davidson(u = beta s_i, eta)`` (eq. 4), with ``eta = eta0``
       (global tie) or ``eta = gamma t_i`` (local tie).

    Because step 4 draws the label from the model given the votes, (``beta``,
    ``eta0``) or (``beta``, ``gamma``) are exactly the true parameters of the
    conditional label model that :class:`DavidsonAggregator` fits.

    Parameters
    ----------
    n_items : int
        Number of items.
    n_votes : int or array of int
        Votes per item (one number, or one per item).
    beta : float
        Margin scale (``margin_scale``), u = beta * s.
    eta0 : float, optional
        Global tie logit (``tie_logit``); required when ``tie="global"``.
    random_seed : int, numpy Generator or None, default 0
        Seed of the only random generator used.
    tie : {"global", "local"}
        Tie model: eta = eta0, or eta = gamma * t.
    gamma : float, optional
        Local tie slope; required when ``tie="local"``.
    alpha, kappa : float, default 1.0
        Smoothing of s (eq. 2) and t (eq. 3), as in the paper.
    class_prior : 3 floats
        Probabilities of the latent class (+1, 0, -1); normalised.
    concentration : (float, float)
        Dirichlet concentration on the latent class and on the other two outcomes.
    votes_format : {"counts", "long"}
        ``"counts"``: columns ``item, n_pos, n_tie, n_neg``; ``"long"``: one row
        per vote, columns ``item, vote``.

    Returns
    -------
    votes : pandas.DataFrame
        Vote counts (or long votes) per item, items ``0..n_items-1``.
    labels : pandas.DataFrame
        Columns ``item``, ``label`` in {-1, 0, +1}.

    Examples
    --------
    >>> votes, labels = simulate_davidson_votes(500, 8, beta=2.0, eta0=-0.5, random_seed=1)
    >>> list(votes.columns)
    ['item', 'n_pos', 'n_tie', 'n_neg']
    """
    if tie == "global":
        if eta0 is None or gamma is not None:
            raise ValueError('tie="global" takes eta0 (a float) and no gamma.')
    elif tie == "local":
        if gamma is None or eta0 is not None:
            raise ValueError('tie="local" takes gamma (a float) and no eta0.')
    else:
        raise ValueError(f'tie={tie!r}; choose "global" or "local".')
    if votes_format not in ("counts", "long"):
        raise ValueError(f'votes_format={votes_format!r}; choose "counts" or "long".')
    if int(n_items) != n_items or n_items < 1:
        raise ValueError(f"n_items={n_items!r}; pass a positive integer.")
    n_items = int(n_items)
    n = np.broadcast_to(np.asarray(n_votes), (n_items,)).astype(np.int64)
    if (n < 0).any():
        raise ValueError("n_votes must be >= 0.")
    if alpha <= 0 or kappa <= 0:
        raise ValueError(f"alpha={alpha}, kappa={kappa}; both must be > 0.")
    prior = np.asarray(class_prior, dtype=float)
    if prior.shape != (3,) or (prior < 0).any() or prior.sum() <= 0:
        raise ValueError(f"class_prior={class_prior!r}; pass 3 non-negative weights.")
    c_on, c_off = map(float, concentration)
    if c_on <= 0 or c_off <= 0:
        raise ValueError(f"concentration={concentration!r}; both must be > 0.")

    rng = np.random.default_rng(random_seed)
    z = rng.choice(3, size=n_items, p=prior / prior.sum())  # 0:+1, 1:tie, 2:-1
    conc = np.full((n_items, 3), c_off)
    conc[np.arange(n_items), z] = c_on
    g = rng.gamma(conc)
    pi = g / g.sum(axis=1, keepdims=True)
    counts = rng.multinomial(n, pi)  # columns (+, 0, -)
    c_pos, c_tie, c_neg = counts[:, 0], counts[:, 1], counts[:, 2]
    s = 0.5 * np.log((c_pos + alpha) / (c_neg + alpha))
    if tie == "global":
        eta = np.full(n_items, float(eta0))
    else:
        t = np.log((c_tie + kappa) / (n + kappa))
        eta = float(gamma) * t
    # eq. 4, columns (-1, 0, +1), reversed to the (+1, 0, -1) order the draw has always used
    p = np.exp(davidson_log_probs(beta * s, eta))[:, ::-1]
    cls = (rng.random(n_items)[:, None] > np.cumsum(p, axis=1)[:, :2]).sum(axis=1)
    label = np.array([1, 0, -1])[cls]

    items = np.arange(n_items, dtype=np.int64)
    labels = pd.DataFrame({"item": items, "label": label.astype(np.int64)})
    if votes_format == "counts":
        votes = pd.DataFrame({"item": items, "n_pos": c_pos, "n_tie": c_tie, "n_neg": c_neg})
    else:
        reps = counts.reshape(-1)
        votes = pd.DataFrame(
            {
                "item": np.repeat(np.repeat(items, 3), reps),
                "vote": np.repeat(np.tile(np.array([1, 0, -1], dtype=np.int64), n_items), reps),
            }
        )
    return votes, labels


def simulate_misclassification(
    theta: float | Sequence[float],
    q0: float | Sequence[float],
    q1: float | Sequence[float],
    n: int | Sequence[int],
    m0: int | Sequence[int],
    m1: int | Sequence[int],
    random_seed: SeedLike = 0,
    *,
    systems: Sequence[str] | None = None,
    return_truth: bool = False,
) -> tuple[pd.DataFrame, ...]:
    """Test judgments and a human-labelled calibration set from an imperfect judge.

    Per system k (Lee et al., 2025, eqs. 1 and 3):
    test items have a true label ``Z ~ Bernoulli(theta_k)`` and a judge label with
    ``P(Zhat = 1 | Z = 1) = q1_k`` (sensitivity) and ``P(Zhat = 0 | Z = 0) = q0_k``
    (specificity); the calibration set has exactly ``m0_k`` items with Z = 0 and
    ``m1_k`` with Z = 1 (stratified, as in the paper), judged the same way.

    Parameters
    ----------
    theta, q0, q1 : float or sequence of float
        True accuracy, specificity and sensitivity, one value or one per system.
    n, m0, m1 : int or sequence of int
        Test size and calibration sizes per true class, one value or one per system.
    random_seed : int, numpy Generator or None, default 0
        Seed of the only random generator used.
    systems : sequence of str, optional
        System names; default ``system_0, system_1, ...`` when any argument has
        several values. With one system and no names, no ``system`` column is added.
    return_truth : bool, default False
        Also return the test items' true labels.

    Returns
    -------
    judgments : pandas.DataFrame
        ``[system,] item, judge_label`` for the test items (``item`` 0..n-1).
    calibration : pandas.DataFrame
        ``[system,] item, judge_label, human_label`` (``item`` n..n+m0+m1-1, so
        never equal to a test item of the same system).
    truth : pandas.DataFrame, only if ``return_truth``
        ``[system,] item, true_label`` for the test items.
    """
    args = {"theta": theta, "q0": q0, "q1": q1, "n": n, "m0": m0, "m1": m1}
    arrays = {k: np.atleast_1d(np.asarray(v)) for k, v in args.items()}
    sizes = {a.size for a in arrays.values()} - {1}
    if len(sizes) > 1 or any(a.ndim != 1 for a in arrays.values()):
        raise ValueError(
            "theta, q0, q1, n, m0, m1 must each be one value or one value per system "
            f"(same length); got lengths { {k: a.size for k, a in arrays.items()} }."
        )
    n_sys = sizes.pop() if sizes else 1
    if systems is not None:
        systems = [str(s) for s in systems]
        if len(systems) != n_sys and n_sys != 1:
            raise ValueError(f"systems has {len(systems)} names for {n_sys} parameter values.")
        n_sys = len(systems)
    arrays = {k: np.broadcast_to(a, (n_sys,)) for k, a in arrays.items()}
    for k in ("theta", "q0", "q1"):
        v = arrays[k].astype(float)
        if ((v < 0) | (v > 1) | ~np.isfinite(v)).any():
            raise ValueError(f"{k}={args[k]!r}; probabilities must lie in [0, 1].")
    for k in ("n", "m0", "m1"):
        v = arrays[k]
        if not np.issubdtype(v.dtype, np.integer) or (v < 0).any():
            raise ValueError(f"{k}={args[k]!r}; pass non-negative integers.")
    with_system = systems is not None or n_sys > 1
    names = systems if systems is not None else [f"system_{k}" for k in range(n_sys)]

    rng = np.random.default_rng(random_seed)
    judg, calib, truth = [], [], []
    for k in range(n_sys):
        th, s0, s1 = (float(arrays[x][k]) for x in ("theta", "q0", "q1"))
        nk, m0k, m1k = (int(arrays[x][k]) for x in ("n", "m0", "m1"))
        z = (rng.random(nk) < th).astype(np.int64)
        zhat = (rng.random(nk) < np.where(z == 1, s1, 1.0 - s0)).astype(np.int64)
        zc = np.repeat(np.array([0, 1], dtype=np.int64), [m0k, m1k])
        zc_hat = (rng.random(zc.size) < np.where(zc == 1, s1, 1.0 - s0)).astype(np.int64)
        test_items = np.arange(nk, dtype=np.int64)
        cal_items = np.arange(nk, nk + zc.size, dtype=np.int64)
        prefix = {"system": names[k]} if with_system else {}
        judg.append(pd.DataFrame({**prefix, "item": test_items, "judge_label": zhat}))
        calib.append(
            pd.DataFrame({**prefix, "item": cal_items, "judge_label": zc_hat, "human_label": zc})
        )
        truth.append(pd.DataFrame({**prefix, "item": test_items, "true_label": z}))
    out = (pd.concat(judg, ignore_index=True), pd.concat(calib, ignore_index=True))
    if return_truth:
        out = out + (pd.concat(truth, ignore_index=True),)
    return out
