"""The Laplace approximation of a MAP fit: its centre and covariance, and its draws.

The MAP is the mode of the density of the *constrained* parameters (no Jacobian, as
``pm.find_MAP``): with flat priors it is the MLE whatever the transform. The Laplace
approximation lives in the unconstrained space, so it is taken on the density with
the Jacobian: centred at that density's mode (equal to the MAP for untransformed
parameters), with covariance the inverse negative Hessian there
(:mod:`~bayesjudge.engine.hessian`). Its draws are importance-resampled
(:mod:`~bayesjudge.engine.laplace_check`); a hierarchical scale that defeats the
Gaussian is integrated on a grid (:mod:`~bayesjudge.engine.laplace_grid`); where
neither is trusted, each reported scalar carries a flag.

Every function takes the compiled functions (:class:`~bayesjudge.engine.density.Density`)
and works on the data they currently hold.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from bayesjudge.engine import hessian, laplace_check, laplace_grid, optim
from bayesjudge.engine.density import Density
from bayesjudge.engine.laplace_inla import integrate_latent
from bayesjudge.engine.messages import FitError
from bayesjudge.engine.offsets import ScaledOffsets

__all__ = ["MAPResult", "laplace", "laplace_cov", "laplace_draws"]


@dataclass
class MAPResult:
    """Mode of the joint density and its Laplace approximation.

    Attributes
    ----------
    point : dict
        Constrained parameter values at the mode (free RVs and deterministics).
    x : ndarray
        The MAP (mode of the density of the constrained parameters, no
        Jacobian) written in the unconstrained space.
    laplace_x : ndarray or None
        Centre of the Laplace approximation (mode of the unconstrained density).
    cov : ndarray or None
        Laplace covariance in the unconstrained space (None if not computed
        yet, or if the Hessian is not negative definite).
    logp : float
        Joint log density at the mode.
    chol : ndarray or None
        Cholesky factor of the negative Hessian (block-sparse Laplace fits only).
    importance : ImportanceResult or None
        Importance resampling of the Laplace draws (:mod:`bayesjudge.engine.laplace_check`).
    laplace_ok : dict or None
        Per-scalar trust flags of the Gaussian draws (None: resampled, all trusted).
    converged : bool
        Whether the optimiser stopped at a mode (:func:`bayesjudge.engine.optim.converged`);
        False after its ConvergenceWarning.
    """

    point: dict[str, np.ndarray]
    x: np.ndarray
    cov: np.ndarray | None
    logp: float
    laplace_x: np.ndarray | None = None
    chol: np.ndarray | None = None
    importance: laplace_check.ImportanceResult | None = None
    laplace_ok: dict[str, np.ndarray] | None = None
    converged: bool = True


def laplace(fit: MAPResult, density: Density, blocks: np.ndarray | None = None) -> None:
    """Fill ``fit.laplace_x`` / ``fit.cov``: Gaussian approximation in the unconstrained space.

    Centred at the mode of the unconstrained density (with the Jacobian; equal to
    the MAP for untransformed parameters), covariance the inverse negative Hessian
    there (``blocks``: see :func:`bayesjudge.engine.hessian.compressed_hessian`).
    """
    if not density.has_transforms:
        centre, chol = fit.x, _laplace_chol(density, fit.x, blocks)
    else:
        # From the MAP, L-BFGS-B can stall when it lies far out on a logit (boundary
        # estimate, logit ~ 60) or deep in a funnel (log sd ~ -12): the Jacobian term's
        # gradient is huge there. Restarts from the MAP clipped to +-5 or from the
        # initial point converge in the cases found (tests/test_properties.py); keep the
        # best converged mode (gradient relative to |logp| as in optim.find_mode).
        best = (fit.x, None, -np.inf)  # (centre, Cholesky factor, log density)
        starts = (fit.x, np.clip(fit.x, -5.0, 5.0), density.x0)
        for k, start in enumerate(starts):
            if any(np.array_equal(start, s) for s in starts[:k]):
                continue  # the same start gives the same mode
            res = optim.lbfgs_maximise(density.logp_jac, start)
            chol = _laplace_chol(density, res.x, blocks) if np.isfinite(res.fun) else None
            if (chol is not None, -res.fun) > (best[1] is not None, best[2]):
                best = (res.x, chol, -res.fun)
            if chol is not None and np.max(np.abs(res.jac)) < optim.gradient_tol(res.fun):
                break
        centre, chol = best[0], best[1]
    fit.laplace_x, fit.chol = centre, None if blocks is None else chol
    fit.cov = hessian.cov_from_cholesky(chol, potri=blocks is not None)


def laplace_cov(density: Density, x: np.ndarray,
                blocks: np.ndarray | None = None) -> np.ndarray | None:
    """Inverse negative Hessian of the (Jacobian-adjusted) log density at ``x`` (``2 d``
    gradient calls; ``blocks``: see :func:`bayesjudge.engine.hessian.compressed_hessian`)."""
    return hessian.cov_from_cholesky(_laplace_chol(density, x, blocks), blocks is not None)


def _laplace_chol(density: Density, x, blocks):
    logp_jac = density.logp_jac
    return hessian.laplace_cholesky(
        hessian.compressed_hessian(lambda v: logp_jac(v)[1], x, blocks), blocks)


def laplace_draws(
    fit: MAPResult, density: Density, n_draws: int, random_seed: int | None,
    blocks: np.ndarray | None = None, reparam: tuple[slice, int] | None = None,
    hyper: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Draws of the constrained parameters from the Laplace approximation.

    ``density`` must hold the data ``fit`` was found on (``blocks``: :func:`laplace`).
    ``reparam``: (offsets, log scale) coordinates of a non-centred hierarchical scale;
    the Gaussian is then taken in :class:`bayesjudge.engine.offsets.ScaledOffsets`
    coordinates. Importance-resampled by
    :func:`bayesjudge.engine.laplace_check.importance_resample` when its Pareto k allows
    (``fit.importance``); with ``reparam``, where it does not, log scale integrated on a
    grid (:func:`bayesjudge.engine.laplace_grid.integrate_scale`); then, with ``blocks``,
    the latent blocks integrated out per value of the global coordinates (INLA:
    :mod:`bayesjudge.engine.laplace_inla`), or without ``blocks`` over the coordinates
    ``hyper`` (the rest one dense block); else the draws of whichever failed proposal
    has the smaller Pareto k (the grid's or the Gaussian's), with ``fit.laplace_ok``.
    """
    if fit.laplace_x is None:
        laplace(fit, density, blocks)
    if fit.cov is None and not fit.converged:
        raise FitError(
            "The MAP optimisation stopped short of a mode (see its ConvergenceWarning), and "
            "the Hessian where it stopped is not negative definite, so no Laplace "
            "approximation exists: the posterior is too flat or too curved for MAP (as with "
            "many parameters resting on a few observations each: judges of a few comparisons "
            "each with its own discriminator, items that won or lost every comparison of "
            "their context, per-judge ties of judges that never tie). Refit with "
            "method='nuts', or pool the data more (e.g. one ranking over all contexts).")
    if fit.cov is None:
        raise FitError(
            "The Hessian at the MAP is not negative definite, so no Laplace approximation "
            "exists (a flat direction in the likelihood); refit with method='nuts', or with "
            "the default priors (priors=None) if you set others."
        )
    logp_jac, constrain_x = density.logp_jac, density.constrain
    centre, cov, chol, to_x, off = fit.laplace_x, fit.cov, fit.chol, None, None
    # the importance weights' log densities: no gradient (compiled on first use)
    logp_value = lambda v: density.logp_jac_value(v)  # noqa: E731
    logp = lambda v: float(logp_value(v))  # noqa: E731
    rng = np.random.default_rng(random_seed)
    centred = (None if reparam is None
               else _centred_laplace(fit, logp_jac, logp_value, reparam, blocks))
    if centred is not None:
        xs = hessian.gaussian_draws(rng, *centred[:3], n_draws)
        # a scale that runs off to 0 in the centred Gaussian (two judges that agree: no
        # mode there) maps back to infinite offsets: keep the MAP's own coordinates
        if np.isfinite(centred[4](xs)).all():
            centre, cov, chol, logp, to_x = centred
        else:
            rng = np.random.default_rng(random_seed)
    if to_x is None:
        xs = hessian.gaussian_draws(rng, centre, cov, chol, n_draws)
    # Weighted towards the true density where the Gaussian is off (engine.laplace_check);
    # where that fails, a trust flag per scalar instead.
    # With a non-centred scale, whether the Gaussian covers the scale's marginal is checked
    # first (three conditional modes): where it does not, importance weights are blind to
    # the funnel's mass the Gaussian never proposes and the grid integrates the scale
    # whatever they say, so they are not computed (1,000 log densities, ~15% of an
    # AnchoredBT ranking()). A failed Gaussian is a funnel too: the grid (the defensive
    # mixture's 3,000 more log densities rarely fix a funnel, and are kept for when the
    # grid cannot be built or fails too).
    gaussian_scale = reparam is None or _scale_is_gaussian(
        fit, logp_jac, reparam, blocks, centre if to_x is not None else None, cov)
    grid = None
    if gaussian_scale:
        imp = laplace_check.importance_resample(logp, centre, cov, chol, xs, rng,
                                                adapt=reparam is None)
    if reparam is not None and (not gaussian_scale or not imp.resampled):
        # a funnel in the scale: integrate it
        grid = laplace_grid.integrate_scale(logp_jac, fit.laplace_x, fit.cov, reparam, blocks,
                                            rng, n_draws, logp_value)
    if grid is not None and grid[0].resampled:
        imp, to_x = grid[:2]
    else:
        if not gaussian_scale:  # no passing grid either: the Gaussian's draws, flagged
            imp = dataclasses.replace(laplace_check.importance_resample(
                logp, centre, cov, chol, xs, rng, adapt=False), draws=xs, resampled=False)
        elif reparam is not None and not imp.resampled:
            imp = laplace_check.importance_resample(logp, centre, cov, chol, xs, rng)
    inla_blocks = blocks
    if blocks is None and hyper is not None:  # a dense Hessian: the rest is one latent block
        inla_blocks = np.zeros(fit.laplace_x.size, dtype=np.int64)
        inla_blocks[np.asarray(hyper)] = -1
    if not imp.resampled and inla_blocks is not None:  # hyperparameters off the joint mode: INLA
        start, start_cov, inla_to_x = centre, cov, to_x
        if grid is not None:
            # the grid found the scale's mass, where the joint mode can sit deep in its
            # funnel (AnchoredBT, 100 items: log tau 0.50 there against -1.83 at the
            # marginal's mode; from there the marginal's Newton steps took 8 instead of 1)
            start, start_cov = grid[2].peak_gaussian()
            inla_to_x = grid[1]
        tr = ScaledOffsets(*reparam) if inla_to_x is not None else None
        fy = logp_jac if tr is None else (lambda y: tr.logp_grad(logp_jac, y))
        inla = integrate_latent(fy, start, start_cov, inla_blocks, rng, n_draws)
        if inla and inla.resampled:
            imp, off, to_x = inla, None, inla_to_x
        else:
            off = inla and inla.off_mode
    if grid is not None and not imp.resampled and laplace_grid.closer(grid[0], imp):
        # every route failed: the grid's draws (flagged) are closer than the Gaussian's, and
        # the line checks run on the Gaussian at the grid's heaviest point (same indices:
        # ScaledOffsets rescales the offsets in place, so INLA's ``off`` mask still applies)
        imp, to_x = grid[:2]
        centre, cov = grid[2].peak_gaussian()
        tr = ScaledOffsets(*reparam)
        logp = lambda y: tr.logp(logp_value, y)  # noqa: E731
    constrain = constrain_x if to_x is None else (lambda v: constrain_x(to_x(v)))
    fit.importance, fit.laplace_ok = imp, None
    if not imp.resampled:
        fit.laplace_ok = laplace_check.line_flags(logp, constrain, centre, cov,
                                                  density.param_names, off)
    # resampled draws repeat (1,000 of them from an ESS of a few hundred): constrain each
    # distinct one once
    distinct, where = np.unique(imp.draws, axis=0, return_inverse=True)
    where = where.reshape(-1)
    rows = [constrain(xi) for xi in distinct]
    out = {
        name: np.stack([r[i] for r in rows])[where][None]
        for i, name in enumerate(density.param_names)
    }
    _flag_nonfinite(fit, out)
    return out


def _flag_nonfinite(fit: MAPResult, draws: dict[str, np.ndarray]) -> None:
    """``laplace_ok = False`` for every scalar with a draw that overflowed (inf or NaN).

    A Gaussian draw far out on an improper or nearly flat target can constrain to inf
    (exp of a large log scale); its summary would be inf with a NaN sd, so it is flagged
    even when the importance weights passed.
    """
    for name, v in draws.items():
        bad = ~np.isfinite(np.asarray(v, dtype=float)).all(axis=(0, 1))
        if bad.any():
            flags = dict(fit.laplace_ok or {})
            ok = np.asarray(flags.get(name, True), dtype=bool)
            flags[name] = np.broadcast_to(ok, bad.shape) & ~bad
            fit.laplace_ok = flags


def _scale_is_gaussian(fit: MAPResult, logp_jac, reparam: tuple[slice, int], blocks,
                       centre_y, cov) -> bool:
    """:func:`bayesjudge.engine.laplace_grid.scale_is_gaussian` in the centred coordinates,
    from their Laplace centre ``centre_y`` (None: mapped from the MAP's own)."""
    tr = ScaledOffsets(*reparam)
    tau = reparam[1]
    start = tr.from_x(fit.laplace_x) if centre_y is None else centre_y
    return laplace_grid.scale_is_gaussian(lambda y: tr.logp_grad(logp_jac, y), start, tau,
                                          float(np.sqrt(cov[tau, tau])), blocks)


def _centred_laplace(fit: MAPResult, logp_jac, logp_value, reparam: tuple[slice, int], blocks):
    """(centre, cov, chol, logp, to_x) of the Laplace approximation in centred coordinates
    (:class:`bayesjudge.engine.offsets.ScaledOffsets`), or None where it does not exist;
    ``logp_value``: ``x -> logp`` without the gradient, for the returned ``logp``."""
    tr = ScaledOffsets(*reparam)
    fy = lambda y: tr.logp_grad(logp_jac, y)  # noqa: E731
    res = optim.lbfgs_maximise(fy, tr.from_x(fit.laplace_x))
    if not np.isfinite(res.fun):
        return None
    chol = hessian.laplace_cholesky(
        hessian.compressed_hessian(lambda y: fy(y)[1], res.x, blocks), blocks)
    if chol is None:
        return None
    cov = hessian.cov_from_cholesky(chol, potri=blocks is not None)
    return (res.x, cov, chol if blocks is not None else None,
            lambda y: tr.logp(logp_value, y), tr.to_x)
