"""Laplace approximation integrated over a hierarchical scale on a grid (INLA-style).

Where the judges agree, the spread ``tau`` of their log discriminators ``tau z_k`` has
most of its posterior mass near 0: a funnel whose log-tau marginal has a long tail
(the prior's ``tau`` density times a likelihood flat in ``tau``). No single Gaussian
covers it, in ``(z, log tau)`` or ``(tau z, log tau)`` (PandaLM's five judges, 999
comparisons each: Pareto k ~0.9, MAP intervals of IoU 0.47-0.49 with NUTS's).
Conditionally on ``log tau`` the rest is close to Gaussian, so, as in INLA (Rue,
Martino & Chopin (2009), JRSS-B 71:319-392, sec. 3), the scale is integrated out
numerically:

1. a grid ``t_g`` of ``log tau`` values, from the largest Laplace marginal found by
   climbing from the Laplace centre (:func:`_climb`: with many offsets that centre lies
   far above the scale's mass) outwards in steps of
   :data:`STEP` Laplace standard deviations (longer where the marginal is flat, up to
   :data:`MAX_STEP`) until the log marginal falls :data:`DROP` nats below its largest
   value;
2. at each ``t_g`` the conditional mode ``m_g`` and Cholesky factor ``L_g`` of the
   negative Hessian of the other coordinates (``log tau`` held fixed; started from the
   line through the two neighbours' modes and found by Newton steps in the neighbour's
   metric ``L_{g-1}``, L-BFGS-B where those stall; the Hessian by forward differences), and the
   Laplace estimate of the marginal density
   ``log p(t_g) ~ log p(m_g, t_g) - sum log diag L_g``;
3. draws from the mixture ``sum_g w_g N(t; t_g, c_g^2) N(rest; m_g + b_g (t - t_g), L_g)``
   with ``w_g`` proportional to ``p(t_g) c_g``, ``c_g`` the width of the point's cell
   (half-way to its neighbours) and ``b_g`` the slope of the conditional mode between
   neighbours; the mixture's density is exact, so the draws are then
   importance-resampled (PSIS) as the plain Laplace ones are, and trusted only if
   the Pareto k passes.

The coordinates are the centred ones of :class:`bayesjudge.engine.laplace_check.ScaledOffsets`
(the conditional mode of ``tau z_k`` barely moves with ``tau`` for a judge the data
pin down).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
from scipy import linalg

from bayesjudge.engine import hessian, optim
from bayesjudge.engine.grid_mixture import ScaleGrid
from bayesjudge.engine.laplace_check import (
    LINE_T,
    LINE_TOL,
    MIN_ESS,
    ImportanceResult,
    ScaledOffsets,
    k_threshold,
    pareto_weights,
)

__all__ = ["DROP", "GRID_LBFGS", "MAX_POINTS", "MAX_STEP", "STEP", "WIDEN", "ScaleGrid",
           "closer", "grid_resample", "integrate_scale", "scale_grid", "scale_is_gaussian"]

#: First grid step in standard deviations of the Laplace marginal of log tau.
STEP = 0.5
#: The grid stops where the Laplace log marginal is this many nats below its maximum.
DROP = 7.0
#: Most grid points on each side of the mode (the cost bound).
MAX_POINTS = 24
#: L-BFGS-B tolerances of a grid point's conditional mode: a proposal's centre, which the
#: importance weights correct, needs no float64-tight optimum (the MAP's own options stop
#: ~1e-14 relative; this ~1e-10, about half the evaluations).
GRID_LBFGS = {"ftol": 1e-10, "gtol": 1e-6}
#: Most Newton steps in a neighbour's metric (:func:`_metric_ascent`) before L-BFGS-B.
METRIC_STEPS = 30
#: Factors (sd times s) by which every grid point's conditional Gaussian is widened, in
#: turn, where the plain mixture's importance weights fail (:func:`grid_resample`).
WIDEN = (1.2, 1.5)
#: Longest step (log tau): where the log marginal changes by < 0.5 nats a step, the step
#: grows by half (the long tail of a funnel, ~1 nat per unit of log tau) up to this.
MAX_STEP = 1.0


def scale_grid(
    fy: Callable[[np.ndarray], tuple[float, np.ndarray]], start: np.ndarray, tau: int,
    tau_sd: float, blocks: np.ndarray | None = None,
) -> ScaleGrid | None:
    """Build the grid mixture of the log scale at coordinate ``tau``.

    Parameters
    ----------
    fy : callable
        ``y -> (log density, gradient)`` in the grid's coordinates.
    start : ndarray
        Where to start (the Laplace centre); its ``tau`` entry is the first grid point.
    tau : int
        Index of the log scale.
    tau_sd : float
        Laplace standard deviation of ``log tau`` (sets the step).
    blocks : ndarray or None
        Hessian block labels of the full vector
        (:func:`bayesjudge.engine.hessian.compressed_hessian`).

    Returns
    -------
    ScaleGrid or None
        None where a conditional mode has no negative definite Hessian.
    """
    d = start.size
    rest = np.arange(d) != tau
    sub_blocks = None if blocks is None else np.asarray(blocks)[rest]
    h = STEP * tau_sd

    cache: dict[float, tuple | None] = {}

    def point(t, init, metric=None):  # each t once: the climb's points serve the sweep
        if t not in cache:
            cache[t] = _conditional_point(fy, t, init, tau, rest, sub_blocks, metric)
        return cache[t]

    found = _climb(point, float(start[tau]), start, h)
    if found is None:
        return None
    t0, first = found
    pts = {t0: first}
    for sign in (-1, 1):
        prev, best, t, step = first, first[2], t0, h
        before = None  # the point before prev: the conditional mode's slope for the start
        for _ in range(MAX_POINTS):
            t += sign * step
            init = prev[0]
            if before is not None:  # linear extrapolation of the conditional mode
                init = prev[0] + (prev[0] - before[0]) * (t - prev[0][tau]) / (
                    prev[0][tau] - before[0][tau])
            p = point(t, init, prev[1])
            if p is None:
                return None
            pts[t] = p
            best = max(best, p[2])
            if p[2] < best - DROP:
                break
            if abs(p[2] - prev[2]) < 0.5:  # a flat stretch (a funnel's tail): longer steps
                step = min(1.5 * step, MAX_STEP)
            before, prev = prev, p
    t = np.array(sorted(pts))
    modes = np.stack([pts[k][0] for k in t])
    slopes = np.gradient(modes, t, axis=0) if len(t) > 1 else np.zeros_like(modes)
    slopes[:, tau] = 0.0
    # each point stands for the cell half-way to its neighbours (weight p(t_g) x width),
    # and its Gaussian along log tau is as wide as that cell (a kernel density estimate)
    edges = np.r_[t[0] - (t[1] - t[0]) / 2 if len(t) > 1 else t[0] - h,
                  (t[1:] + t[:-1]) / 2,
                  t[-1] + (t[-1] - t[-2]) / 2 if len(t) > 1 else t[-1] + h]
    width = np.diff(edges)
    log_w = np.array([pts[k][2] for k in t]) + np.log(width)
    return ScaleGrid(tau, t, log_w, modes, slopes, [pts[k][1] for k in t], width)


def _climb(point, t0: float, start: np.ndarray, h: float):
    """(t, point) at the largest Laplace log marginal of log tau found from ``t0`` by steps
    of ``h`` that double (up to :data:`MAX_STEP`) while it rises: the grid's centre; None
    where ``t0`` has no conditional mode.

    ``t0`` is the Laplace centre's log tau, whose conditional offsets are near the mode of
    ``(z, log tau)``: with many offsets that mode lies near sqrt(n) times the spread's
    posterior (the density of ``z`` is largest where ``tau z`` fits the data with the
    smallest ``z``), many of the posterior's standard deviations away. Swept from there at
    steps of ``h`` the grid ran out of points before it reached the mass (100 items, two
    judges: the grid's tau 0.24 - 1.8, NUTS's 95% interval 0.13 - 0.20; Pareto k 4.8).
    Where ``t0`` is the maximum already, the two points tried are the sweep's first ones.
    """
    first = point(t0, start)
    if first is None:
        return None
    for sign in (-1, 1):
        t, prev, step = t0, first, h
        for _ in range(MAX_POINTS):
            p = point(t + sign * step, prev[0], prev[1])
            if p is None or not p[2] > prev[2]:  # no mode there: the sweep decides
                break
            t, prev, step = t + sign * step, p, min(2 * step, MAX_STEP)
        if t != t0:  # it rose on this side: the maximum lies within the last step
            return t, prev
    return t0, first


def _metric_ascent(f, r, chol, refresh):
    """Maximise ``f(r) -> (lp, grad)`` by Newton steps in the fixed metric ``L L^T``.

    ``L``: the Cholesky factor of the negative Hessian at the neighbouring grid point,
    whose conditional posterior differs little from this one's, so the steps
    ``(L L^T)^-1 g`` converge fast (linearly, at the rate of the Hessians' mismatch),
    each for one gradient call where L-BFGS-B spends ~60 calls and as much again in its
    own bookkeeping per point. Steps are halved until the density does not fall (to
    within rounding). Returns ``(r, lp, g)`` once ``max |g|`` or the predicted gain
    ``g' (L L^T)^-1 g / 2`` (relative to ``|lp|``) passes :data:`GRID_LBFGS`'s ``gtol``
    or ``ftol`` (L-BFGS-B's two tests), or None when the steps stall (the caller falls
    back to L-BFGS-B). Half-way through the allowed steps the metric is replaced by
    ``refresh(r, g)``, the Cholesky factor of the negative Hessian at the current point.
    """
    lp, g = f(r)
    for i in range(METRIC_STEPS):
        if not np.isfinite(lp):
            return None
        if i == METRIC_STEPS // 2:  # slow (a far start in a funnel's tail): a fresh metric
            chol = refresh(r, g)
            if chol is None:
                return None
        step = linalg.cho_solve((chol, True), g)
        if (np.max(np.abs(g), initial=0.0) <= GRID_LBFGS["gtol"]
                or g @ step / 2 <= GRID_LBFGS["ftol"] * max(1.0, abs(lp))):
            return r, lp, g
        slack = 1e-12 * max(1.0, abs(lp))  # rounding of a sum over many cells
        for _ in range(12):
            lp_new, g_new = f(r + step)
            if np.isfinite(lp_new) and lp_new >= lp - slack:
                break
            step = step / 2
        else:
            return None
        r, lp, g = r + step, lp_new, g_new
    return None


def _conditional_point(fy, t, init, tau, rest, sub_blocks, metric=None):
    """(mode, Cholesky factor, Laplace log marginal) with log tau held at ``t``, or None.

    ``metric``: a neighbouring point's Cholesky factor, for :func:`_metric_ascent`.
    """
    d = init.size

    def full(r):
        y = np.empty(d)
        y[rest], y[tau] = r, t
        return y

    def f(r):  # the log density with log tau held at t
        lp, g = fy(full(r))
        return lp, g[rest]

    def chol_at(r, g):
        return hessian.laplace_cholesky(
            hessian.compressed_hessian(lambda v: f(v)[1], r, sub_blocks, grad_x=g), sub_blocks)

    found = None if metric is None else _metric_ascent(f, init[rest], metric, chol_at)
    if found is None:
        res = optim.lbfgs_maximise(f, init[rest], GRID_LBFGS)
        found = (res.x, -res.fun, -res.jac)
    x, lp, g = found
    if not np.isfinite(lp):
        return None
    # forward differences from the gradient the ascent ends with (half the calls): the
    # point's Gaussian is a proposal the importance weights correct
    chol = chol_at(x, g)
    if chol is None:
        return None
    return full(x), chol, lp - np.sum(np.log(np.diag(chol)))


def scale_is_gaussian(
    fy: Callable[[np.ndarray], tuple[float, np.ndarray]], start: np.ndarray, tau: int,
    tau_sd: float, blocks: np.ndarray | None = None,
) -> bool:
    """Whether the Laplace marginal of log tau is the Gaussian's at +-``LINE_T`` sd.

    A single Gaussian whose importance weights pass the Pareto k test can still miss a
    funnel's mass it never proposes: on a notebook-05 draw (990 human votes, GPT-4's
    own preferences) one seed in eight gave tau's 90% interval [0.39, 0.74] from the
    Gaussian, with k = 0.62, against [0.01, 0.33] from the grid. The Laplace log marginal
    ``log p(m_t, t) - sum log diag L_t`` at ``t0 +- LINE_T sd`` (three conditional modes)
    must fall by ``LINE_T^2 / 2`` within :data:`bayesjudge.engine.laplace_check.LINE_TOL`
    nats on both sides, else the grid integrates the scale.
    """
    rest = np.arange(start.size) != tau
    sub_blocks = None if blocks is None else np.asarray(blocks)[rest]
    t0 = float(start[tau])
    centre = _conditional_point(fy, t0, start, tau, rest, sub_blocks)
    if centre is None:
        return False
    for sign in (-1, 1):
        p = _conditional_point(fy, t0 + sign * LINE_T * tau_sd, centre[0], tau, rest,
                               sub_blocks, centre[1])
        if p is None or not abs(p[2] - centre[2] + 0.5 * LINE_T**2) <= LINE_TOL:
            return False
    return True


def grid_resample(
    logp: Callable[[np.ndarray], float], grid: ScaleGrid, rng: np.random.Generator, n: int,
) -> ImportanceResult:
    """``n`` draws of the grid mixture importance-resampled towards ``logp`` (PSIS), with
    the same acceptance rule as :func:`bayesjudge.engine.laplace_check.importance_resample`;
    where ``n`` draws fail it, ``n`` more are drawn once (the Pareto k of a mixture this
    close to the target is noisy at ``n`` = 1,000: 1 of 8 seeds failed on a notebook-05
    draw whose other seeds gave k 0.2 - 0.6).

    Where ``2 n`` draws still fail, the same mixture with every point's conditional
    Gaussian widened by the factors :data:`WIDEN` (sd times s, in turn) is the proposal
    (a fresh ``n``, then ``2 n`` draws each): the conditional Gaussians are Laplace
    approximations, too narrow where the posterior is skewed (a confusion row learned from
    a dozen reference votes). On PandaLM with 99 human votes and GPT-3.5's verdicts on all
    999 battles, 8 of 30 fits failed the plain grid (k 0.7 - 0.9) and fell back to the
    flagged Gaussian at the MAP (tau's 90% interval [0.25, 1.39] against NUTS's
    [0.02, 0.65]); widened by 1.2 they pass (k ~0.4) and agree with NUTS.

    Where no proposal passes, the result (``resampled=False``) holds the first ``n``
    unweighted draws of the proposal whose k was smallest.
    """
    best = None
    for scale in (1.0, *WIDEN):
        proposal = grid if scale == 1.0 else dataclasses.replace(
            grid, chols=[c / scale for c in grid.chols])
        res = dataclasses.replace(_resample(logp, proposal, rng, n), widened=scale)
        if res.resampled:
            return res
        if best is None or closer(res, best):
            best = res
    return best  # none passed: the unweighted draws of the proposal with the smallest k


def closer(a: ImportanceResult, b: ImportanceResult) -> bool:
    """Whether the failed proposal ``a``'s draws are closer to the posterior than ``b``'s,
    by Pareto k (an infinite or NaN k is the farthest): which of the grid's widened
    proposals :func:`grid_resample` keeps, and whether a failed grid's draws replace the
    failed Gaussian's (:func:`bayesjudge.engine.laplace.laplace_draws`).

    Measured on simulated data of 100 items, 30,000 battles, the reference on 3,000 and
    two judges with their own preferences on all (AnchoredBT, ``models/anchored.md``,
    Limits): the grid's k 0.86 - 1.01 against the Gaussian's 6.1, whose tau sits at the
    non-centred mode (95%: 1.18 - 2.27; the grid's 0.115 - 0.212, NUTS's 0.125 - 0.200).
    """
    return bool(np.isfinite(a.pareto_k) and (not np.isfinite(b.pareto_k)
                                            or a.pareto_k < b.pareto_k))


def _resample(logp, grid: ScaleGrid, rng: np.random.Generator, n: int) -> ImportanceResult:
    """:func:`grid_resample` from one proposal (``n`` draws, ``2 n`` where they fail)."""
    xs = grid.draw(rng, n)
    lr = np.array([logp(x) for x in xs]) - grid.logpdf(xs)
    for more in (True, False):
        w, k = pareto_weights(lr)
        ess = float(1.0 / np.sum(w**2))
        ok = bool(np.isfinite(k) and k <= k_threshold(len(xs)) and ess >= MIN_ESS)
        if ok or not more:
            break
        extra = grid.draw(rng, n)
        xs = np.vstack([xs, extra])
        lr = np.concatenate([lr, np.array([logp(x) for x in extra]) - grid.logpdf(extra)])
    if not ok:
        return ImportanceResult(xs[:n], k, ess, False, True, len(grid.t))
    pos = (rng.random() + np.arange(n)) / n  # systematic resampling
    idx = np.minimum(np.searchsorted(np.cumsum(w), pos), len(xs) - 1)
    return ImportanceResult(xs[rng.permutation(idx)], k, ess, True, True, len(grid.t))


def integrate_scale(
    logp_dlogp: Callable, centre: np.ndarray, cov: np.ndarray, reparam: tuple[slice, int],
    blocks: np.ndarray | None, rng: np.random.Generator, n: int,
    logp: Callable | None = None,
) -> tuple[ImportanceResult, Callable] | None:
    """Grid-integrated, importance-resampled draws of a non-centred scale's model.

    ``logp_dlogp``: ``x -> (log density with Jacobian, gradient)`` in the model's own
    (non-centred) coordinates (``logp``: the same density without the gradient, for the
    importance weights; None: from ``logp_dlogp``); ``centre``, ``cov``: its Laplace
    approximation;
    ``reparam``: (offsets, log scale) as in :class:`bayesjudge.engine.laplace_check.ScaledOffsets`.
    Returns None where the grid cannot be built, else (result, map of the draws to the
    model's coordinates, the grid); ``result.resampled`` is False where its draws fail the
    Pareto k test (the caller's fallback: they are still far closer to the posterior than
    a Gaussian at the non-centred mode, whose scale sits ~sqrt(n) times too high).
    """
    tr = ScaledOffsets(*reparam)
    fy = lambda y: tr.logp_grad(logp_dlogp, y)  # noqa: E731
    tau = reparam[1]
    grid = scale_grid(fy, tr.from_x(centre), tau, float(np.sqrt(cov[tau, tau])), blocks)
    if grid is None:
        return None
    value = (lambda y: float(fy(y)[0])) if logp is None else (lambda y: tr.logp(logp, y))
    return grid_resample(value, grid, rng, n), tr.to_x, grid
