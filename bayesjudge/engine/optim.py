"""Maximisers of a compiled log density: L-BFGS-B, and damped Newton for tiny models.

:class:`~bayesjudge.engine.compiled.Engine` maximises the joint log density in the
unconstrained space. L-BFGS-B suits every size. A model with a handful of
parameters (a temperature and a bias) can do better with Newton's method on the
exact Hessian: it converges quadratically (about five evaluations from the
prior mean) and stops when the predicted gain is below what float64 resolves,
where L-BFGS-B's line search, asked for ``ftol=1e-14``, keeps evaluating at the
optimum until rounding makes the objective tick up (measured: 25 evaluations
against Newton's 5 on a 1,000-row temperature fit, both at the same optimum).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import optimize

from bayesjudge.engine.density import Density
from bayesjudge.engine.messages import (
    NOT_CONVERGED_ADVICE,
    ConvergenceWarning,
    FitError,
    warn_user,
)

#: Options of every L-BFGS-B fit (tight: MAP with flat priors must equal a reference MLE).
#: ``maxcor`` 30 (scipy's default is 10): a longer curvature memory for the ill-conditioned
#: ridges of hierarchical models (AnchoredBT with judge effects on all of arena_ppr: 459
#: evaluations with 10, 270 with 30, to the same optimum within 1e-7 nats).
LBFGS_OPTIONS = {"maxiter": 2000, "ftol": 1e-14, "gtol": 1e-9, "maxcor": 30}
#: Largest Newton step (max-norm, unconstrained scale): a flat region cannot throw x far.
MAX_STEP = 5.0
#: Newton only for models with at most this many parameters: the Hessian is compiled as one
#: gradient graph per parameter, and past a few dozen L-BFGS-B is the cheaper optimiser.
NEWTON_MAX_PARAMS = 16
#: Newton stops once the predicted gain g' (-H)^-1 g / 2 is below this times max(1, |logp|).
GAIN_TOL = 1e-12
#: L-BFGS-B restarts of a MAP fit that stopped with a gradient above :func:`gradient_tol`.
MAX_RESTARTS = 3


def gradient_tol(fun: float) -> float:
    """Largest |gradient| at which a mode counts as found, relative to the objective's size.

    L-BFGS-B stops 'ABNORMAL' when float64 cannot lower a large objective any further
    (|logp| ~ 1e6 at 1M comparisons: measured max |gradient| 9e-4 at an optimum
    matching evalica to 1e-6), hence the 1e-5 |logp| term.
    """
    return 1e-3 * max(1.0, 1e-5 * abs(fun))


#: A restart of L-BFGS-B that gains less than this times max(1, |logp|) shows the stop is a
#: mode to float64 precision, whatever the gradient says (:func:`lbfgs_restarted`).
STALL_GAIN = 1e-12


def converged(res: optimize.OptimizeResult) -> bool:
    """Whether ``res`` (minimisation terms) sits at a finite point with a small gradient, or
    where a fresh L-BFGS-B run could not gain (``res["stalled"]``, :func:`lbfgs_restarted`)."""
    return bool(np.isfinite(res.fun) and (np.max(np.abs(res.jac)) <= gradient_tol(res.fun)
                                          or res.get("stalled", False)))


def lbfgs_maximise(fn: Callable, init: np.ndarray,
                   options: dict | None = None) -> optimize.OptimizeResult:
    """Maximise ``fn(x) -> (logp, grad)`` with L-BFGS-B (result in minimisation terms);
    ``options`` update :data:`LBFGS_OPTIONS`."""

    def neg(x):
        lp, g = fn(x)
        return -lp, -g

    return optimize.minimize(neg, init, jac=True, method="L-BFGS-B",
                             options={**LBFGS_OPTIONS, **(options or {})})


def lbfgs_restarted(fn: Callable, init: np.ndarray) -> optimize.OptimizeResult:
    """:func:`lbfgs_maximise`, restarted from where it stopped while the gradient is large.

    L-BFGS-B can stop far from a mode with ``success=True``: a line search along a poor
    quasi-Newton direction gains less than ``ftol`` relative, and the run ends
    "RELATIVE REDUCTION OF F <= FACTR*EPSMCH". Measured on the simulated juries of
    ``tests/test_jury_study.py`` (DavidsonBT(discriminators=True, position_bias=True),
    160 items, 3 judges): in the test suite's worker processes two of three fits
    stopped at max |gradient| 108 and 134, 150 nats below their modes, and whether a
    fit stopped early depended on the last bits of the gradient (one BLAS thread or
    two, numba code for the host or a generic CPU). A restart forgets the curvature
    memory and reached the mode each time; up to :data:`MAX_RESTARTS` of them, each
    kept only if it does not lose.

    A restart that gains less than :data:`STALL_GAIN` x max(1, |logp|) marks the result
    ``stalled`` (:func:`converged`): a fresh run, whose first step follows the gradient,
    found nothing to gain, so the stop is a mode to float64 precision and the gradient
    left is rounding in a sum of many terms. Notebook 02's BT-sigma-asp fit on 768,000
    probabilities stopped at max |gradient| 0.0055 - 0.0080 against a tolerance of 0.0052,
    -logp 524,633.7518 after every restart.
    """
    res = lbfgs_maximise(fn, init)
    nfev = res.nfev
    for _ in range(MAX_RESTARTS):
        if converged(res) or not np.isfinite(res.fun):
            break
        again = lbfgs_maximise(fn, res.x)
        nfev += again.nfev
        stalled = not res.fun - again.fun > STALL_GAIN * max(1.0, abs(res.fun))
        if again.fun <= res.fun:
            res = again
        if stalled:
            res["stalled"] = True
            break
    res.nfev = nfev
    return res


def newton_direction(grad: np.ndarray, hess: np.ndarray) -> np.ndarray:
    """Ascent direction ``(-H)^-1 g``, with |eigenvalues| where -H is not positive definite.

    Replacing the eigenvalues of -H by their absolute values (floored at 1e-8 of
    the largest) keeps the direction uphill away from the mode, where the log
    density need not be concave; at a proper mode it is the Newton step.
    """
    a = -0.5 * (hess + hess.T)
    if len(a) == 1 and a[0, 0] > 0:  # the common tiny cases without LAPACK's call overhead
        return grad / a[0, 0]
    if len(a) == 2:
        det = a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
        if a[0, 0] > 0 and det > 0:
            return np.array([a[1, 1] * grad[0] - a[0, 1] * grad[1],
                             a[0, 0] * grad[1] - a[1, 0] * grad[0]]) / det
    w, v = np.linalg.eigh(a)
    w = np.maximum(np.abs(w), 1e-8 * max(1.0, float(np.max(np.abs(w)))))
    return v @ ((v.T @ grad) / w)


def newton_maximise(fgh: Callable, init: np.ndarray,
                    max_iter: int = 100) -> optimize.OptimizeResult:
    """Maximise ``fgh(x) -> (logp, grad, hess)`` by damped Newton (Armijo backtracking).

    Returns a scipy ``OptimizeResult`` in minimisation terms (``fun = -logp``,
    ``jac = -grad``), as :func:`lbfgs_maximise`; ``success`` is False when the
    iteration or a line search fails (the caller falls back to L-BFGS-B). On
    convergence ``x`` includes the last Newton step, whose predicted gain is below
    ``GAIN_TOL`` relative: ``fun`` and ``jac`` are those of the point before it.
    """
    x = np.asarray(init, dtype=float).copy()
    f, g, h = fgh(x)
    nfev = 1

    def result(success: bool, message: str) -> optimize.OptimizeResult:
        return optimize.OptimizeResult(x=x, fun=-f, jac=-g, success=success, message=message,
                                       nfev=nfev, nit=nfev)

    for _ in range(max_iter):
        f = float(f)
        if not math.isfinite(f + float(g.sum()) + float(h.sum())):  # NaN / inf anywhere
            return result(False, "non-finite log density, gradient or Hessian")
        step = newton_direction(g, h)
        gain = float(g @ step)
        largest = float(np.abs(step).max())
        if largest > MAX_STEP:
            step *= MAX_STEP / largest
        if gain / 2 <= GAIN_TOL * max(1.0, abs(f)):
            # Converged: one last full Newton step polishes x (quadratic convergence; its
            # gain is below what float64 resolves, so logp and grad are those before it).
            x = x + step
            return result(True, "converged: predicted gain below float64 resolution")
        t = 1.0
        while True:
            f1, g1, h1 = fgh(x + t * step)
            nfev += 1
            if f1 >= f + 1e-4 * t * float(g @ step):  # False for NaN
                break
            if _rounding_only(f, gain, f1, g1, h1):
                x = x + t * step
                f, g = f1, g1
                return result(True, "converged: a mode by its own gradient and Hessian, "
                                    "its log density lower only by rounding")
            t *= 0.5
            if t < 1e-12:
                return result(False, "line search found no increase")
        x, f, g, h = x + t * step, f1, g1, h1
    return result(False, f"no convergence in {max_iter} Newton steps")


def _rounding_only(f: float, gain: float, f1, g1: np.ndarray, h1: np.ndarray) -> bool:
    """Whether a trial point the Armijo test rejected is a mode the log density's rounding
    hides: its own predicted gain passes ``GAIN_TOL``, and it lies below the current point
    by at most ``10 x`` the current predicted ``gain`` (all an ascent step could win).

    The rounding of a log density of many counts scales with the counts, not with |logp|:
    on a million judged rows (HierarchicalMisclassificationModel, complete pooling) logp is
    -38.7 yet moves by ~2e-9 between points 1e-6 apart, so the Armijo test refused the
    mode (its predicted gain 7e-18) and Newton wandered in that noise for 16 evaluations
    (4 with this test), a count that depended on the CPU numba compiled for.
    """
    f1 = float(f1)
    if not (math.isfinite(f1) and f1 >= f - 10.0 * gain):
        return False
    if not math.isfinite(float(g1.sum()) + float(h1.sum())):
        return False
    return float(g1 @ newton_direction(g1, h1)) / 2 <= GAIN_TOL * max(1.0, abs(f1))


def find_mode(
    density: Density, start: np.ndarray, n_starts: int = 1, random_seed: int | None = 0,
    newton: bool = False,
) -> optimize.OptimizeResult:
    """Maximise ``density.logp`` (no Jacobian: the MAP) from ``start``, multi-start optional.

    ``newton``: damped Newton on the exact Hessian (``density.fgh``) first
    (:func:`newton_maximise`), L-BFGS-B wherever it fails; L-BFGS-B alone otherwise.
    Starts after the first are ``start`` plus N(0, 1) noise. A function is compiled
    only when it is used (Newton's success compiles no L-BFGS-B objective).
    Raises FitError when no start reaches a finite log density; warns
    (ConvergenceWarning) when the best one did not converge or sits at |x| > 30.
    """
    rng = np.random.default_rng(random_seed) if n_starts > 1 else None
    best = None
    for k in range(n_starts):
        init = start if k == 0 else start + rng.normal(scale=1.0, size=start.shape)
        res = newton_maximise(density.fgh, init) if newton else None
        if res is None or not res.success:  # L-BFGS-B: every model, or Newton's fallback
            res = lbfgs_restarted(density.logp, init)
        if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        raise FitError(
            "L-BFGS-B found no point with a finite log density; check the data "
            "and priors (a flat prior with separable data has no finite MAP)."
        )
    # scipy's own flag is not enough: L-BFGS-B also reports success when a step's relative
    # reduction falls below ftol, which a corrupted curvature memory can cause far from a mode
    if not converged(best):
        warn_user(
            f"MAP optimisation did not converge ({best.message}); the estimate may "
            f"be off.{NOT_CONVERGED_ADVICE}",
            ConvergenceWarning,
        )
    if np.max(np.abs(best.x)) > 30:
        warn_user(
            "MAP estimate is at |value| > 30 on the unconstrained scale: the data "
            "barely identify a parameter, or put it at the edge of its range (separable "
            "labels, a rate of exactly 0 or 1). Its interval says how well it is known "
            "where laplace_ok holds; under a flat prior such an edge may have no interval at "
            "all (an improper posterior): use the default weakly-informative priors; else "
            "add calibration data.",
            ConvergenceWarning,
        )
    return best
