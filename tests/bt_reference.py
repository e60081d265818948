"""Independent numpy + scipy reference of the Bradley-Terry family's likelihoods and MLEs.

Written from the equations alone (no bayesjudge import): soft / hard Bradley-Terry
(Qian, Sun, Gales & Knill 2026, arXiv:2602.16610, eqs. 1-2), BT-sigma (eq. 13),
Davidson's ties (Davidson 1970) with per-judge tie parameters, discriminators and
a left-slot bias. Log-likelihoods have analytic gradients; the MLEs use scipy's
L-BFGS-B on a full-rank parametrisation (one reference item per group and one
reference judge per discriminator group fixed at 0) and then move to the
package's constraints: skills centred per group, sum of log sigma = 0 per
discriminator group (the likelihood is invariant under both moves). The tests
and the benchmarks import it.

Conventions: one entry per observation (row or collapsed cell); ``prob`` is P(left
wins) (hard: 1 / 0.5 / 0 for left / tie / right), ``weight`` the rows it stands
for; Davidson takes ``counts`` (n_obs, 3) = (left, tie, right).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize
from scipy.special import expit

OPTIONS = {"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-10, "maxcor": 30}


def _softplus(x):
    return np.logaddexp(0.0, x)


def bt_loglik_grad(skill, log_sigma, left, right, sigma_idx, prob, weight):
    """Soft-BT / BT-sigma log-likelihood and gradients (skill, log_sigma).

    l = sum_c weight_c [p_c log sigma(d_c) + (1 - p_c) log sigma(-d_c)],
    d_c = (s_left - s_right) / exp(log_sigma[k_c]).
    """
    sig = np.exp(log_sigma)[sigma_idx]
    raw = skill[left] - skill[right]
    d = raw / sig
    ll = np.sum(weight * (prob * d - _softplus(d)))
    r = weight * (prob - expit(d))  # dl/dd
    g_skill = np.bincount(left, r / sig, len(skill)) - np.bincount(right, r / sig, len(skill))
    g_log_sigma = np.bincount(sigma_idx, -r * d, len(log_sigma))
    return ll, g_skill, g_log_sigma


def davidson_log_probs(d, tie_logit):
    """log P(left), log P(tie), log P(right) = (d/2, log nu, -d/2) - log Z (last axis)."""
    logits = np.stack(np.broadcast_arrays(0.5 * d, tie_logit, -0.5 * d), axis=-1)
    m = logits.max(-1, keepdims=True)
    return logits - (m + np.log(np.exp(logits - m).sum(-1, keepdims=True)))


def davidson_loglik_grad(skill, log_sigma, tie_logit, bias, left, right, sigma_idx, tie_idx,
                         bias_idx, counts):
    """Davidson log-likelihood and gradients; d = (s_l - s_r) / sigma_k + b_k."""
    sig = np.exp(log_sigma)[sigma_idx]
    raw = skill[left] - skill[right]
    d = raw / sig + bias[bias_idx]
    theta = tie_logit[tie_idx]
    lp = davidson_log_probs(d, theta)
    ll = np.sum(counts * lp)
    total = counts.sum(1)
    p = np.exp(lp)
    r = 0.5 * (counts[:, 0] - counts[:, 2]) - 0.5 * total * (p[:, 0] - p[:, 2])  # dl/dd
    g_skill = np.bincount(left, r / sig, len(skill)) - np.bincount(right, r / sig, len(skill))
    g_log_sigma = np.bincount(sigma_idx, -r * raw / sig, len(log_sigma))
    g_tie = np.bincount(tie_idx, counts[:, 1] - total * p[:, 1], len(tie_logit))
    g_bias = np.bincount(bias_idx, r, len(bias))
    return ll, g_skill, g_log_sigma, g_tie, g_bias


def _normalise(skill, log_sigma, item_group, item_scale, sigma_group):
    """Centre skills per group; sum log sigma = 0 per sigma group (rescaling its skills)."""
    n_sg = sigma_group.max() + 1
    shift = np.bincount(sigma_group, log_sigma, n_sg) / np.bincount(sigma_group, None, n_sg)
    log_sigma = log_sigma - shift[sigma_group]
    skill = skill * np.exp(-shift[item_scale])
    mean = np.bincount(item_group, skill) / np.bincount(item_group)
    return skill - mean[item_group], log_sigma


def _reference_mask(group, n):
    """True for the parameters that are free: all but the first member of each group."""
    free = np.ones(n, dtype=bool)
    _, first = np.unique(group, return_index=True)
    free[first] = False
    return free


def fit_bt_sigma_mle(left_idx, right_idx, judge_idx, prob, n_items, n_judges, weight=None,
                     item_group=None, sigma_idx=None, sigma_group=None, item_scale=None,
                     fit_sigma=True, warm_start=False):
    """MLE of BT-sigma (eq. 13) under sum-zero skills and sum log sigma = 0.

    Parameters
    ----------
    left_idx, right_idx, judge_idx : int arrays
        Items (global skill index) and judge of each observation.
    prob : float array
        P(left wins) (hard BT: 1, 0.5, 0).
    weight : float array, optional
        Rows each observation stands for (default 1).
    item_group : int array (n_items,), optional
        Ranking group of each item (default: one group).
    sigma_idx, sigma_group, item_scale : optional
        Discriminator of each observation (default its judge), the
        normalisation group of each discriminator (default one) and the
        discriminator group that sets each item's scale (default 0): for
        BT-sigma-asp, sigma_idx = judge * n_aspects + aspect, sigma_group =
        aspect of each discriminator, item_scale = aspect of each item.
    fit_sigma : bool
        False fixes sigma = 1 (plain soft / hard BT).
    warm_start : bool
        Start the joint fit from the plain-BT skills (sigma = 1) instead of 0.
        From 0, L-BFGS-B can drift one noisy judge's sigma up a ridge and stop
        there: on a simulated SummEval jury it ended at sigma_8 ~ 1e9 with a
        negative log-likelihood 216 above the MLE.

    Returns
    -------
    skill : ndarray (n_items,)
    sigma : ndarray (n_sigma,)
    """
    left, right = np.asarray(left_idx), np.asarray(right_idx)
    prob = np.asarray(prob, float)
    weight = np.ones_like(prob) if weight is None else np.asarray(weight, float)
    item_group = np.zeros(n_items, int) if item_group is None else np.asarray(item_group)
    sigma_idx = np.asarray(judge_idx) if sigma_idx is None else np.asarray(sigma_idx)
    n_sigma = int(sigma_idx.max()) + 1 if fit_sigma else 1
    if not fit_sigma:
        sigma_idx = np.zeros_like(left)
    sigma_group = np.zeros(n_sigma, int) if sigma_group is None else np.asarray(sigma_group)
    item_scale = np.zeros(n_items, int) if item_scale is None else np.asarray(item_scale)
    free_s = _reference_mask(item_group, n_items)
    free_k = _reference_mask(sigma_group, n_sigma) if fit_sigma else np.zeros(n_sigma, bool)
    ns = free_s.sum()

    def unpack(x):
        s = np.zeros(n_items)
        s[free_s] = x[:ns]
        ls = np.zeros(n_sigma)
        ls[free_k] = x[ns:]
        return s, ls

    def fun(x):
        s, ls = unpack(x)
        ll, gs, gk = bt_loglik_grad(s, ls, left, right, sigma_idx, prob, weight)
        return -ll, -np.concatenate([gs[free_s], gk[free_k]])

    x0 = np.zeros(ns + free_k.sum())
    if warm_start and fit_sigma:
        s0, _ = fit_bt_sigma_mle(left, right, judge_idx, prob, n_items, n_judges, weight=weight,
                                 item_group=item_group, fit_sigma=False)
        ref_item = np.zeros(int(item_group.max()) + 1, dtype=int)
        ref_item[item_group[~free_s]] = np.flatnonzero(~free_s)  # each group's fixed item
        x0[:ns] = (s0 - s0[ref_item[item_group]])[free_s]
    res = optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", options=OPTIONS)
    s, ls = unpack(res.x)
    s, ls = _normalise(s, ls, item_group, item_scale, sigma_group)
    return s, np.exp(ls)


def fit_bt_mle(left_idx, right_idx, prob, n_items, weight=None, item_group=None):
    """MLE of soft / hard BT (eqs. 1-2): skills centred per group."""
    left = np.asarray(left_idx)
    return fit_bt_sigma_mle(left, right_idx, np.zeros_like(left), prob, n_items, 1,
                            weight=weight, item_group=item_group, fit_sigma=False)[0]


def fit_davidson_mle(left_idx, right_idx, judge_idx, counts, n_items, n_judges,
                     tie="global", position_bias=False, discriminators=False,
                     item_group=None):
    """MLE of Davidson's tie model with the package's options.

    Returns
    -------
    dict
        ``skill`` (centred per group), ``tie_logit`` (log nu; scalar or per judge),
        ``sigma`` (per judge, sum log = 0; ones without discriminators) and
        ``bias`` (per judge; zeros without position bias).
    """
    left, right, judge = (np.asarray(v) for v in (left_idx, right_idx, judge_idx))
    counts = np.asarray(counts, float)
    item_group = np.zeros(n_items, int) if item_group is None else np.asarray(item_group)
    free_s = _reference_mask(item_group, n_items)
    free_k = _reference_mask(np.zeros(n_judges, int), n_judges) if discriminators else \
        np.zeros(n_judges, bool)
    n_tie = n_judges if tie == "per_judge" else 1
    tie_idx = judge if tie == "per_judge" else np.zeros_like(judge)
    n_b = n_judges if position_bias else 0
    sizes = np.cumsum([free_s.sum(), free_k.sum(), n_tie, n_b])

    def unpack(x):
        s = np.zeros(n_items)
        s[free_s] = x[:sizes[0]]
        ls = np.zeros(n_judges)
        ls[free_k] = x[sizes[0]:sizes[1]]
        b = np.zeros(n_judges)
        if position_bias:
            b[:] = x[sizes[2]:sizes[3]]
        return s, ls, x[sizes[1]:sizes[2]], b

    def fun(x):
        s, ls, t, b = unpack(x)
        ll, gs, gk, gt, gb = davidson_loglik_grad(s, ls, t, b, left, right, judge, tie_idx,
                                                  judge, counts)
        grad = [gs[free_s], gk[free_k], gt] + ([gb] if position_bias else [])
        return -ll, -np.concatenate(grad)

    res = optimize.minimize(fun, np.zeros(sizes[-1]), jac=True, method="L-BFGS-B",
                            options=OPTIONS)
    s, ls, t, b = unpack(res.x)
    s, ls = _normalise(s, ls, item_group, np.zeros(n_items, int), np.zeros(n_judges, int))
    return {"skill": s, "tie_logit": t if tie == "per_judge" else t[0], "sigma": np.exp(ls),
            "bias": b}


def simulate_jury(n_contexts=2, n_items=5, sigma=(0.5, 1.0, 2.0), noise=0.3, share=1.0,
                  repeats=1, outcome=False, tie_width=0.0, bias=None, aspects=None,
                  random_seed=0):
    """A comparisons table from BT-sigma (eq. 13) with pair-level logit noise.

    Each judge k sees each ordered pair of a context with probability ``share``
    (``repeats`` rows each); logit = (s_i - s_j) / sigma_k + b_k + N(0, noise^2).
    ``outcome=True`` draws left / right from that probability, a tie when
    |logit| < ``tie_width``. ``aspects`` (a list of names) gives each aspect its own
    skills. Returns (table, truth) with truth ``skill`` of shape
    (n_aspects, n_contexts, n_items) and ``sigma``.
    """
    import pandas as pd

    rng = np.random.default_rng(random_seed)
    names = list(aspects) if aspects is not None else [None]
    skill = rng.normal(0.0, 1.0, size=(len(names), n_contexts, n_items))
    skill -= skill.mean(-1, keepdims=True)
    sigma = np.asarray(sigma, float)
    bias = np.zeros(len(sigma)) if bias is None else np.asarray(bias, float)
    rows = [(a, c, i, j, k) for a in range(len(names)) for c in range(n_contexts)
            for i in range(n_items) for j in range(n_items) for k in range(len(sigma))
            if i != j and rng.random() < share for _ in range(repeats)]
    a, c, i, j, k = (np.array(v) for v in zip(*rows))
    logit = (skill[a, c, i] - skill[a, c, j]) / sigma[k] + bias[k] + rng.normal(0, noise, len(c))
    out = {"context": np.array([f"ctx-{x}" for x in range(n_contexts)])[c],
           "judge": np.array([f"judge-{x}" for x in range(len(sigma))])[k],
           "left": np.array([f"item-{x}" for x in range(n_items)])[i],
           "right": np.array([f"item-{x}" for x in range(n_items)])[j]}
    if aspects is not None:
        out = {"aspect": np.array(names, dtype=object)[a], **out}
    p = expit(logit)
    if outcome:
        won = rng.random(len(p)) < p
        out["outcome"] = np.where(np.abs(logit) < tie_width, "tie", np.where(won, "left", "right"))
    else:
        out["prob"] = p
    return pd.DataFrame(out), {"skill": skill, "sigma": sigma, "bias": bias}
