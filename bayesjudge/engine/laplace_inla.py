"""Laplace approximation with the latent blocks integrated out at each hyperparameter vector (INLA).

The joint mode of a hierarchical model can sit far from where the posterior of its
few global ("hyper") parameters has its mass. BT-sigma on a simulated SummEval jury
(150 skills in 10 articles, four judges of 2,400 comparisons each): at the joint
mode the discriminators are sharp 0.26, fair 0.53, random-ish 4.8, while NUTS puts
them at 0.36, 0.69, 2.6 (95% intervals [0.33, 0.39], [0.62, 0.76], [2.2, 3.1]); the
skills' spread scales with the discriminators, and the joint mode ignores the volume
the 150 skills have at each discriminator vector. Neither importance resampling of
the joint Gaussian (Pareto k 2.2) nor a grid over the spread alone
(:mod:`bayesjudge.engine.laplace_grid`) recovers that. As in INLA (Rue, Martino & Chopin
(2009), JRSS-B 71:319-392, eq. 3), the latent coordinates ``x`` are integrated out
by a Laplace approximation at each value of the hyperparameters ``theta``:

    ``log p(theta | y) ~ log p(y, x*(theta), theta) - 1/2 log det Q(theta)``

with ``x*(theta)`` the conditional mode and ``Q(theta)`` the negative Hessian of the
log density in ``x`` there. The hyperparameters are the coordinates a model labels
global in its Hessian blocks (:meth:`bayesjudge.base.BayesianModel._laplace_blocks`:
the judges' parameters); given them ``Q`` is block-diagonal, one block per ranking
group, so each evaluation costs an L-BFGS solve and (largest block) gradient calls
(forward differences) (:func:`bayesjudge.engine.hessian.compressed_hessian`). A model
with a dense Hessian names its hyperparameters instead
(:meth:`bayesjudge.base.BayesianModel._laplace_hyper`; AnchoredBT's judge discriminations
and log spread: the rest is then one latent block). Then:

1. the mode ``theta_m`` and curvature ``S^-1`` of this marginal, by Newton steps on
   finite differences (``1 + 2k + k(k-1)/2`` evaluations each, ``k`` hyperparameters);
   the same evaluations at the mode give quadratic models (in ``theta``) of the
   conditional mode ``x*(theta)`` and of ``log det Q(theta)``;
2. the proposal: ``theta`` from a split t (:data:`DF` degrees of freedom) along the
   principal axes of ``S``, each side scaled to the marginal's drop two and four
   standard deviations out (a skewed marginal: the long side of a funnel); ``x | theta ~
   N(mu(theta), (c(theta) Q(theta_m))^-1)`` with ``mu`` the quadratic model of ``x*`` and
   ``c`` the one of ``det Q(theta) / det Q(theta_m)`` to the power ``1 / n_x`` (the
   latent coordinates' location and spread follow the hyperparameters: a skill's spread
   scales with the discriminators). Its density is exact (:class:`LatentProposal`);
3. :data:`PROPOSALS` ``x n`` of its draws importance-resampled (PSIS) to ``n`` against
   the exact joint density, trusted only where the Pareto k and the ESS pass
   (:func:`bayesjudge.engine.laplace_check.k_threshold`,
   :data:`~bayesjudge.engine.laplace_check.MIN_ESS`);
   where they do not, once more with the mean of ``x | theta`` moved by the weighted mean
   of the first draws' residuals (shrunk by their ESS): the conditional of a skill
   whose item wins or loses nearly every comparison is skewed, its mean off its mode.
4. Where both rounds fail, the caller keeps the joint Gaussian and its line check
   (:func:`bayesjudge.engine.laplace_check.line_flags`), told (``off_mode``) to flag every scalar
   when the joint mode's Gaussian misplaces a hyperparameter by more than :data:`OFF_SD`
   marginal sds (or its sd by a factor :data:`OFF_SCALE`): a shift no line through the
   joint mode shows.

On the SummEval jury (4 hyperparameters, 150 latent coordinates; ~1 s, ~3,000 gradient
calls and 4,000 density evaluations) the discriminators' intervals match NUTS's to the
second digit (Pareto k 0.53-0.58). Limitation: PSIS cannot see mass its proposal never
reaches. On a funnel (150 normal means of a weakly identified spread, whose marginal
of ``log tau`` has a prior-like left tail) the draws can pass the Pareto k with the 2.5%
quantile of ``log tau`` at -1.7 against the exact -1.95; funnels of the judges' spread
are integrated on the grid of :mod:`bayesjudge.engine.laplace_grid` first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import linalg, stats

from bayesjudge.engine import hessian, optim
from bayesjudge.engine.laplace_check import MIN_ESS, ImportanceResult, k_threshold, pareto_weights

__all__ = ["DF", "MAX_HYPER", "MAX_NEWTON", "PROPOSALS", "LaplaceMarginal", "LatentProposal",
           "MarginalFit", "integrate_latent", "marginal_mode"]

#: Most hyperparameters (global coordinates) integrated over: each Newton step costs
#: ``1 + 2k + k(k-1)/2`` conditional fits.
MAX_HYPER = 8
#: Most Newton steps on the Laplace marginal (from a joint mode deep in a funnel, log tau
#: ~ -20, steps of at most MAX_STEP sds take ~7).
MAX_NEWTON = 20
#: Proposal draws per returned draw (more draws: a steadier Pareto k and ESS).
PROPOSALS = 4
#: Longest Newton step, in standard deviations of the current Hessian.
MAX_STEP = 3.0
#: Finite-difference step of the marginal's derivatives, in standard deviations.
FD_STEP = 0.2
#: Degrees of freedom of the hyperparameters' proposal (heavier tails than the marginal's).
DF = 5
#: Where each side's scale is measured (sds of the Gaussian fit) and its widest widening.
SIDE_AT = (2.0, 4.0)
MAX_WIDEN = 3.0
#: Largest change of the latent coordinates' log precision scale the proposal follows.
MAX_LOG_C = 3.0
#: Where the integration fails, the joint mode's Gaussian is declared off the posterior when
#: a hyperparameter's centre is this many marginal sds from the marginal's mode (95%
#: intervals at IoU < 0.6) or its sd is off by more than this factor.
OFF_SD = 1.0
OFF_SCALE = 1.5


class LaplaceMarginal:
    """``theta -> log p(theta | y)`` up to a constant, integrating the latent coordinates
    out by a Laplace approximation (module doc).

    Parameters
    ----------
    fy : callable
        ``y -> (log density, gradient)`` of the full vector.
    hyper : ndarray of int
        Indices of the hyperparameters.
    start : ndarray
        A full vector; its latent part warm-starts the first conditional fit.
    blocks : ndarray or None
        Hessian block labels of the latent coordinates (``-1`` nowhere: given ``theta``
        they interact within their block only).
    """

    def __init__(self, fy: Callable, hyper: np.ndarray, start: np.ndarray,
                 blocks: np.ndarray | None):
        self.fy, self.hyper, self.d = fy, np.asarray(hyper), start.size
        self.rest = np.setdiff1d(np.arange(self.d), self.hyper)
        self.blocks = blocks
        self._init = np.array(start, dtype=float)[self.rest]
        self.calls = 0

    def full(self, r: np.ndarray, t: np.ndarray) -> np.ndarray:
        y = np.empty(self.d)
        y[self.rest], y[self.hyper] = r, t
        return y

    def __call__(self, t: np.ndarray) -> tuple[float, np.ndarray | None]:
        """(log marginal at ``t``, full vector at the conditional mode); ``-inf`` where the
        conditional mode has no negative definite Hessian."""
        t = np.asarray(t, dtype=float)

        def f(r):
            self.calls += 1
            lp, g = self.fy(self.full(r, t))
            return lp, g[self.rest]

        res = optim.lbfgs_maximise(f, self._init)
        if not np.isfinite(res.fun):
            return -np.inf, None
        # forward differences from the gradient L-BFGS-B ended at (one call per colour, as
        # the grid's conditional points): the precision of a proposal the weights correct
        chol = hessian.laplace_cholesky(hessian.compressed_hessian(
            lambda r: f(r)[1], res.x, self.blocks, grad_x=-res.jac), self.blocks)
        if chol is None:
            return -np.inf, None
        # one Newton step from L-BFGS's stopping point: the log density it would reach
        # (quadratic model), so that optimiser noise does not leak into the curvature fit
        g = -res.jac
        step = linalg.cho_solve((chol, True), g)
        x = res.x + step
        self._init, self.chol = x, chol
        self.logdet = 2 * np.sum(np.log(np.diag(chol)))
        return -res.fun + 0.5 * g @ step - 0.5 * self.logdet, self.full(x, t)

    def values(self, t: np.ndarray) -> np.ndarray:
        """``[log marginal, log det Q, x*]`` at ``t`` (NaN where the fit fails)."""
        f, y = self(t)
        if y is None:
            return np.full(2 + self.rest.size, np.nan)
        return np.r_[f, self.logdet, y[self.rest]]


def _quadratic(lm: LaplaceMarginal, t0: np.ndarray, c: np.ndarray, v0: np.ndarray):
    """Gradients (k, m) and Hessians (k, k, m), in ``u`` (``t = t0 + c u``) at ``u = 0``, of the
    values ``v`` of :meth:`LaplaceMarginal.values` (``v0`` at ``t0``) by finite differences of
    step :data:`FD_STEP` (values at ``+-h e_i``, ``h (e_i + e_j)``); None where a fit fails."""
    k, h = t0.size, FD_STEP
    vp = np.stack([lm.values(t0 + h * c[:, i]) for i in range(k)])
    vm = np.stack([lm.values(t0 - h * c[:, i]) for i in range(k)])
    g = (vp - vm) / (2 * h)
    hess = np.zeros((k, k, v0.size))
    for i in range(k):
        hess[i, i] = vp[i] + vm[i] - 2 * v0
        for j in range(i + 1, k):
            hess[i, j] = hess[j, i] = lm.values(t0 + h * (c[:, i] + c[:, j])) - vp[i] - vp[j] + v0
    hess /= h * h
    if not (np.isfinite(g).all() and np.isfinite(hess).all()):
        return None
    return g, hess


@dataclass
class MarginalFit:
    """The Laplace marginal's mode ``t`` and covariance ``cov``; the values ``v`` of
    :meth:`LaplaceMarginal.values` there with their gradients ``g`` (k, m) and Hessians
    ``h`` (k, k, m) in ``u``, ``theta = t + c u``: quadratic models of the conditional mode
    ``x*(theta)`` and of ``log det Q(theta)``."""

    t: np.ndarray
    cov: np.ndarray
    v: np.ndarray
    c: np.ndarray
    g: np.ndarray
    h: np.ndarray


def marginal_mode(lm: LaplaceMarginal, t0: np.ndarray, cov0: np.ndarray):
    """Mode and covariance (inverse negative Hessian) of the Laplace marginal ``lm``.

    Newton steps on finite-difference derivatives taken in units of the current
    standard deviations (first: ``cov0``; where the Hessian is not negative definite,
    its eigenvalues by their absolute values), capped at :data:`MAX_STEP` of them and
    halved until the marginal rises. Returns a :class:`MarginalFit`, or None where the
    marginal is not concave at its mode or :data:`MAX_NEWTON` steps do not converge.
    """
    t = np.asarray(t0, dtype=float)
    v0 = lm.values(t)
    try:
        c = np.linalg.cholesky(cov0)
    except np.linalg.LinAlgError:
        return None
    if not np.isfinite(v0[0]):
        return None
    for _ in range(MAX_NEWTON):
        q = _quadratic(lm, t, c, v0)
        if q is None:
            return None
        g, hess = q[0][:, 0], q[1][:, :, 0]
        w, v = np.linalg.eigh(-hess)
        concave = w.min() > 0
        w = np.maximum(np.abs(w), 1e-3 * max(1.0, w.max()))
        u = v @ ((v.T @ g) / w)
        size = np.sqrt(u @ (v * w) @ v.T @ u)  # Newton decrement: the step in sds
        found = MarginalFit(t, c @ np.linalg.inv(-hess) @ c.T, v0, c, *q) if concave else None
        if concave and size < 0.05:  # within 1/20 of a posterior sd of the mode
            return found
        c = c @ (v / np.sqrt(w)) @ v.T  # the next derivatives in the new sds
        u = (v * np.sqrt(w)) @ v.T @ u * min(1.0, MAX_STEP / size)  # the same step, new units
        for _ in range(10):
            v1 = lm.values(t + c @ u)
            if v1[0] > v0[0]:
                break
            u /= 2
        else:  # no rise along the Newton direction: at the mode up to the inner fits' noise
            return found
        t, v0 = t + c @ u, v1
    return None


@dataclass
class LatentProposal:
    """``theta`` from a split t along the principal axes of the marginal's Gaussian fit,
    ``x | theta ~ N(mu(theta), (c(theta) Q)^-1)``: draws and exact log density.

    Along axis ``i`` (unit vector ``v_i``) the offset ``theta - t_m`` has the density
    ``2 t_nu(delta / s) / (s_plus + s_minus)``, ``s`` the scale of the side ``delta``
    is on (a split t: continuous at 0, one scale per side for a skewed marginal).
    ``mu`` and ``log c`` are the quadratic models of the conditional mode and of
    ``log det Q(theta) / n_x`` (:class:`MarginalFit`): the latent coordinates' location
    and spread follow the hyperparameters (a skill's spread scales with the
    discriminators), ``Q`` is the conditional precision at ``t_m``.
    """

    hyper: np.ndarray
    rest: np.ndarray
    fit: MarginalFit
    axes: np.ndarray
    s_plus: np.ndarray
    s_minus: np.ndarray
    chol: np.ndarray
    shift: np.ndarray | None = None

    def _conditional(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(mu, log c) at the rows ``t``."""
        u = np.linalg.solve(self.fit.c, (t - self.fit.t).T).T
        quad = u @ self.fit.g + 0.5 * np.einsum("ni,ijm,nj->nm", u, self.fit.h, u)
        mu = self.fit.v[2:] + quad[:, 2:]
        if self.shift is not None:
            mu = mu + self.shift
        # bounded: far out in the t tails the quadratic model is no guide
        log_c = np.clip(quad[:, 1] / self.rest.size, -MAX_LOG_C, MAX_LOG_C)
        return mu, log_c

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        k = self.fit.t.size
        z = np.abs(rng.standard_t(DF, size=(n, k)))
        plus = rng.random((n, k)) < self.s_plus / (self.s_plus + self.s_minus)
        delta = np.where(plus, z * self.s_plus, -z * self.s_minus)
        t = self.fit.t + delta @ self.axes.T
        mu, log_c = self._conditional(t)
        eps = linalg.solve_triangular(self.chol, rng.standard_normal((self.rest.size, n)),
                                      lower=True, trans="T").T
        out = np.empty((n, self.hyper.size + self.rest.size))
        out[:, self.hyper] = t
        out[:, self.rest] = mu + eps * np.exp(-0.5 * log_c)[:, None]
        return out

    def logpdf(self, ys: np.ndarray) -> np.ndarray:
        t = ys[:, self.hyper]
        delta = (t - self.fit.t) @ self.axes
        scale = np.where(delta > 0, self.s_plus, self.s_minus)
        lt = np.sum(stats.t.logpdf(delta / scale, DF) + np.log(2 / (self.s_plus + self.s_minus)),
                    axis=1)
        mu, log_c = self._conditional(t)
        w = ((ys[:, self.rest] - mu) @ self.chol) * np.exp(0.5 * log_c)[:, None]
        n_x = self.rest.size
        lx = -0.5 * np.sum(w * w, axis=1) + np.sum(np.log(np.diag(self.chol))) \
            + 0.5 * n_x * log_c - 0.5 * n_x * np.log(2 * np.pi)
        return lt + lx

    def residuals(self, ys: np.ndarray) -> np.ndarray:
        """``x - mu(theta)`` of the rows ``ys``."""
        return ys[:, self.rest] - self._conditional(ys[:, self.hyper])[0]


def _side_scales(lm: LaplaceMarginal, t_m: np.ndarray, f_m: float, axes: np.ndarray,
                 sd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale of each side of each axis from the marginal's drop at each of :data:`SIDE_AT`
    sds: the Gaussian's drop at ``a`` sds is ``a^2 / 2``; a smaller one (a heavier side, the
    long tail of a funnel) widens that side to the largest scale the drops imply, as INLA's
    skewness corrections do (Rue, Martino & Chopin 2009, sec. 3.2.3)."""
    out = []
    for sign in (1, -1):
        widen = np.full(sd.size, 0.5)
        for at in SIDE_AT:
            drop = np.array([f_m - lm(t_m + sign * at * sd[i] * axes[:, i])[0]
                             for i in range(sd.size)])
            ratio = np.sqrt(0.5 * at**2 / np.where(drop > 0, drop, 1e-12))
            widen = np.maximum(widen, np.nan_to_num(ratio, nan=1.0))
        out.append(sd * np.clip(widen, 0.5, MAX_WIDEN))
    return out[0], out[1]


def integrate_latent(
    fy: Callable, centre: np.ndarray, cov: np.ndarray, blocks: np.ndarray | None,
    rng: np.random.Generator, n: int,
) -> ImportanceResult | None:
    """Importance-resampled draws with the latent coordinates integrated out (module doc).

    Parameters
    ----------
    fy : callable
        ``y -> (log density with Jacobian, gradient)`` in the working coordinates.
    centre, cov : ndarray
        The Laplace approximation in those coordinates (its hyperparameter block sets
        the first Newton step's scale).
    blocks : ndarray or None
        Hessian block labels of ``y``; the global ones (``-1``) are the hyperparameters.
    rng : numpy.random.Generator
    n : int
        Draws returned.

    Returns
    -------
    ImportanceResult or None
        None where there are no (or more than :data:`MAX_HYPER`) hyperparameters, no
        latent block or the marginal has no Gaussian fit. Where the draws fail the Pareto
        k: ``resampled`` False and ``off_mode`` all True if the joint Laplace
        approximation (``centre``, ``cov``) is off the marginal of the hyperparameters
        (:data:`OFF_SD`, :data:`OFF_SCALE`), else all False.
    """
    if blocks is None:
        return None
    blocks = np.asarray(blocks)
    hyper = np.flatnonzero(blocks < 0)
    if not 0 < hyper.size <= MAX_HYPER or hyper.size == blocks.size:
        return None
    lm = LaplaceMarginal(fy, hyper, centre, blocks[blocks >= 0])
    fit = marginal_mode(lm, centre[hyper], cov[np.ix_(hyper, hyper)])
    if fit is None:
        return None
    var, axes = np.linalg.eigh(fit.cov)
    s_plus, s_minus = _side_scales(lm, fit.t, fit.v[0], axes, np.sqrt(var))
    lm.values(fit.t)  # the conditional precision's factor at the mode
    prop = LatentProposal(hyper, lm.rest, fit, axes, s_plus, s_minus, lm.chol)
    m = PROPOSALS * n
    # the Gaussian at the joint mode misplaces a hyperparameter by more than OFF_SD marginal
    # sds, or misjudges its sd by more than a factor OFF_SCALE: every scalar is then suspect
    # (the latent coordinates' Gaussian is conditional on those values), also where no line
    # through the joint mode shows it (bayesjudge.engine.laplace_check.line_flags)
    sd_m, sd_j = np.sqrt(np.diag(fit.cov)), np.sqrt(np.diag(cov)[hyper])
    shifted = np.any(np.abs(centre[hyper] - fit.t) > OFF_SD * sd_m) \
        or np.any(np.abs(np.log(sd_j / sd_m)) > np.log(OFF_SCALE))
    off = np.full(centre.size, bool(shifted))
    for _ in range(2):
        ys = prop.draw(rng, m)
        w, k = pareto_weights(np.array([fy(y)[0] for y in ys]) - prop.logpdf(ys))
        ess = float(1.0 / np.sum(w**2))
        if np.isfinite(k) and k <= k_threshold(m) and ess >= MIN_ESS:
            pos = (rng.random() + np.arange(n)) / n  # systematic resampling of n draws
            idx = np.minimum(np.searchsorted(np.cumsum(w), pos), m - 1)
            return ImportanceResult(ys[rng.permutation(idx)], k, ess, True, _ > 0, 0, lm.calls)
        if not np.isfinite(w).all():
            break
        # Skewed conditionals (skills of items that win or lose nearly every comparison):
        # their mean is off their mode. Shift x | theta by the weighted mean residual,
        # shrunk towards 0 by the weights' ESS as the covariance is in
        # laplace_check.importance_resample (the weighted mean of few draws is noisy).
        prop.shift = ess / (ess + lm.rest.size) * (w @ prop.residuals(ys))
    return ImportanceResult(ys[:n], k, ess, False, True, 0, lm.calls, off)
