"""Latent coordinates integrated out per hyperparameter vector (bayesjudge.engine.laplace_inla)
on a hierarchical normal model whose posterior of the hyperparameters is known by quadrature.

``G`` groups of ``M`` latent means ``x_gi ~ N(0, tau^2)``, each observed ``R`` times,
``y_gir ~ N(x_gi, s^2)``; hyperparameters ``(log tau, log s)`` with N(0, 1) priors
(on the unconstrained coordinates themselves: no Jacobian). Many latent coordinates
that absorb part of the noise put the joint mode of ``(x, log tau, log s)`` well
below the marginal mode of ``log s`` (the volume of ``x`` at each ``(tau, s)`` is
ignored there): the failure of the MAP Laplace intervals on the simulated SummEval
jury, where the skills' volume moves with the judges' discriminators. Integrating ``x``
out in closed form, ``mean_r y_gir | tau, s ~ N(0, tau^2 + s^2 / R)`` and the
within-mean residuals carry ``s`` alone, so the marginal of the hyperparameters is a
two-dimensional quadrature: the reference. Given the hyperparameters ``x`` is exactly
Gaussian, so INLA's marginal is exact here and only Monte Carlo error remains.
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from stochastic import FALSE_ALARM

from bayesjudge.engine import hessian, optim
from bayesjudge.engine.laplace_check import importance_resample, line_flags
from bayesjudge.engine.laplace_inla import integrate_latent

G, M, R = 20, 15, 4
N = G * M
_rng = np.random.default_rng(7)
Y = 1.0 * _rng.standard_normal(N)[:, None] + 1.0 * _rng.standard_normal((N, R))
YBAR = Y.mean(axis=1)
SS = ((Y - YBAR[:, None]) ** 2).sum()  # within-mean sum of squares: (R - 1) N dof for s
BLOCKS = np.r_[np.repeat(np.arange(G), M), -1, -1]


def _logp_dlogp(v):
    """Joint log density of (x, log tau, log s) and its gradient."""
    x, a, b = v[:N], v[N], v[N + 1]
    tau2, s2 = np.exp(2 * a), np.exp(2 * b)
    r = Y - x[:, None]
    lp = (-0.5 * x @ x / tau2 - N * a - 0.5 * (r * r).sum() / s2 - N * R * b
          - 0.5 * a * a - 0.5 * b * b)
    gx = -x / tau2 + r.sum(axis=1) / s2
    ga = x @ x / tau2 - N - a
    gb = (r * r).sum() / s2 - N * R - b
    return lp, np.r_[gx, ga, gb]


def _reference():
    """Marginal densities and cdfs of log tau and log s on a grid (quadrature)."""
    a = np.linspace(-0.6, 0.5, 1101)[:, None]  # +-10 posterior sds around the modes
    b = np.linspace(-0.4, 0.3, 1401)[None, :]
    v = np.exp(2 * a) + np.exp(2 * b) / R
    lp = (-0.5 * a * a - 0.5 * b * b - 0.5 * N * np.log(v) - 0.5 * (YBAR @ YBAR) / v
          - N * (R - 1) * b - 0.5 * SS / np.exp(2 * b))
    p = np.exp(lp - lp.max())
    out = []
    for axis, grid in ((1, a.ravel()), (0, b.ravel())):
        dens = p.sum(axis=axis)
        dens /= np.trapezoid(dens, grid)
        cdf = np.cumsum(dens)
        out.append((grid, dens, cdf / cdf[-1]))
    return out


def test_inla_draws_match_the_quadrature_where_the_joint_gaussian_fails():
    res = optim.lbfgs_maximise(_logp_dlogp, np.r_[YBAR, 0.0, 0.0])
    centre = res.x
    chol = hessian.laplace_cholesky(hessian.compressed_hessian(lambda v: _logp_dlogp(v)[1],
                                                                centre, BLOCKS))
    cov = hessian.cov_from_cholesky(chol, potri=True)
    (ta, da, ca), (tb, db, cb) = _reference()
    # the joint mode of log s lies far below its marginal posterior (the latent means
    # absorb part of the noise): the case INLA is for
    assert centre[N + 1] < np.interp(0.001, cb, tb)
    rng = np.random.default_rng(0)
    logp = lambda v: _logp_dlogp(v)[0]  # noqa: E731
    gauss = hessian.gaussian_draws(rng, centre, cov, chol, 1000)
    assert not importance_resample(logp, centre, cov, chol, gauss, rng).resampled
    imp = integrate_latent(_logp_dlogp, centre, cov, BLOCKS, rng, 1000)
    assert imp is not None and imp.resampled and imp.inla > 0 and imp.draws.shape == (1000, N + 2)
    # quantiles within the Monte Carlo error of `ess` weighted draws resampled to 1000
    # (sd of a p-quantile sqrt(p (1 - p) (1 / ess + 1 / 1000)) / f(q)); FALSE_ALARM shared
    # over the 6 quantiles, the quadrature's grid step (0.001) as slack
    z = stats.norm.isf(FALSE_ALARM / 12)
    n_eff = 1 / (1 / imp.ess + 1 / 1000)
    for j, (t, dens, cdf) in ((N, (ta, da, ca)), (N + 1, (tb, db, cb))):
        for p in (0.025, 0.5, 0.975):
            q = np.interp(p, cdf, t)
            se = np.sqrt(p * (1 - p) / n_eff) / np.interp(q, t, dens)
            assert abs(np.quantile(imp.draws[:, j], p) - q) < z * se + 0.001, (j, p, q)
    # a latent mean: x | tau, s is normal with mean k ybar, variance k s^2 / R,
    # k = tau^2 / (tau^2 + s^2 / R); its posterior mean is E[k] ybar (within MC error)
    a, b = imp.draws[:, N], imp.draws[:, N + 1]
    k = np.exp(2 * a) / (np.exp(2 * a) + np.exp(2 * b) / R)
    i = int(np.argmax(np.abs(YBAR)))
    sd = np.std(imp.draws[:, i])
    assert abs(imp.draws[:, i].mean() - k.mean() * YBAR[i]) < z * 2 * sd / np.sqrt(n_eff)


def test_no_hyperparameters_or_no_latent_blocks_gives_none():
    centre = np.r_[YBAR, 0.0, 0.0]
    cov = np.eye(N + 2)
    rng = np.random.default_rng(0)
    assert integrate_latent(_logp_dlogp, centre, cov, None, rng, 100) is None
    assert integrate_latent(_logp_dlogp, centre, cov, np.full(N + 2, -1), rng, 100) is None
    assert integrate_latent(_logp_dlogp, centre, cov, np.zeros(N + 2, dtype=int), rng,
                            100) is None


def test_line_flags_flag_every_scalar_computed_from_an_off_coordinate():
    # a standard normal in 3 coordinates passes the line check everywhere; a coordinate
    # the INLA stage found off the posterior (off mask) flags what is computed from it
    logp = lambda v: -0.5 * v @ v  # noqa: E731
    constrain = lambda v: [v[:2].copy(), np.array([v[1] + v[2]])]  # noqa: E731
    names = ["a", "b"]
    plain = line_flags(logp, constrain, np.zeros(3), np.eye(3), names)
    assert plain["a"].all() and plain["b"].all()
    off = np.array([False, False, True])
    flags = line_flags(logp, constrain, np.zeros(3), np.eye(3), names, off)
    assert flags["a"].tolist() == [True, True] and flags["b"].tolist() == [False]
