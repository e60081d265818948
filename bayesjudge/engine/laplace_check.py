"""Importance-resampled Laplace draws and a per-quantity trust flag for MAP fits.

The Laplace approximation of a MAP fit (:func:`bayesjudge.engine.laplace.laplace`)
is a Gaussian in the unconstrained space. Where the posterior is far from Gaussian
there (the curved ridge ``log sigma_k = tau z_k`` of the judges' discriminators, a
judge with one vote whose reliability the prior alone bounds) its intervals are
wrong: on the Chatbot Arena battles GPT-3.5's discriminator came out as [1.26, 2.36]
against NUTS's [2.14, 2.39]. Two remedies, in order:

0. *Coordinates*: a model with a non-centred hierarchical scale names it
   (``BayesianModel._laplace_reparam``) and the Gaussian is taken in the centred
   coordinates of :class:`~bayesjudge.engine.offsets.ScaledOffsets` where they have a
   mode (Arena: Pareto k of the Laplace draws 0.6-0.9 -> 0.1-0.35).
1. *Importance resampling* (Vehtari, Simpson, Gelman, Yao & Gabry (2024), "Pareto
   smoothed importance sampling", JMLR 25(72), arXiv:1507.02646): the Gaussian draws
   are weighted by ``p(x) / q(x)`` (the Jacobian-adjusted density over the Gaussian
   one), the weights Pareto-smoothed, and the draws resampled by weight. The shape
   ``k`` of the fitted generalized Pareto tail says whether this can be trusted:
   ``k <= min(1 - 1 / log10(S), 0.7)`` (their section 3). When the plain Gaussian
   fails that test, an adaptive step adds a second Gaussian fitted to the weighted
   draws and samples from the even mixture of both ("defensive" importance sampling:
   the Laplace half keeps the weights bounded where the fitted half is too narrow).
2. Where importance sampling fails (``k`` too large: far from Gaussian, or too many
   coordinates for ``S`` draws), the Gaussian draws stay and each reported scalar
   ``g`` is checked along the line the Gaussian's marginal of ``g`` moves on,
   ``x(t) = x* + t Sigma a / sqrt(a' Sigma a)`` with ``a`` the gradient of ``g`` at the
   centre ``x*``: the Gaussian says ``log p(x(t)) - log p(x*) = -t^2 / 2``; a scalar
   whose log density departs from that by more than :data:`LINE_TOL` nats at
   ``t = +-2`` (the ends of a 95% interval) is flagged ``laplace_ok = False``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg, sparse

from bayesjudge.engine.messages import warn_user
from bayesjudge.engine.offsets import ScaledOffsets  # re-exported: its home until 2026-12-02

__all__ = ["LINE_T", "LINE_TOL", "MIN_ESS", "ImportanceResult", "ScaledOffsets",
           "importance_resample", "k_threshold", "laplace_attrs", "line_flags", "pareto_weights",
           "read_flags", "warn_flagged"]

#: Distance (in the Gaussian's sd) and tolerance (nats) of the line check.
LINE_T = 2.0
LINE_TOL = 1.0
#: Fewest effective draws an importance-resampled posterior may rest on.
MIN_ESS = 100
#: Most Gaussians added to the proposal mixture when the Laplace one alone fails.
ADAPT_ROUNDS = 3
#: Variance factor of the fitted components.
INFLATE = 1.0


def k_threshold(n_draws: int) -> float:
    """Largest Pareto k for which ``n_draws`` importance draws are reliable (PSIS, sec. 3)."""
    return min(1.0 - 1.0 / np.log10(n_draws), 0.7)


def pareto_weights(log_ratios: np.ndarray) -> tuple[np.ndarray, float]:
    """PSIS-smoothed normalised weights and the Pareto k of ``exp(log_ratios)``.

    Non-finite ratios (a draw outside the support) get weight 0.
    """
    lr = np.asarray(log_ratios, dtype=float)
    lr = np.where(np.isfinite(lr), lr, -np.inf)
    lr = lr - lr.max()
    lr = np.maximum(lr, -1e4)  # exp underflows to 0 anyway; keeps the tail fit finite
    finite = lr > -1e4
    if np.ptp(lr[finite]) < 1e-9:  # the Gaussian is the target (no tail to fit)
        return finite / finite.sum(), -np.inf
    smoothed, k = _psis_smooth(lr)
    w = np.exp(smoothed - np.max(smoothed))
    return w / w.sum(), float(k)


def _psis_smooth(lr: np.ndarray) -> tuple[np.ndarray, float]:
    """Pareto-smoothed log weights and k (Vehtari et al. 2024, algorithm 1; the tail is the
    largest min(S / 5, 3 sqrt(S)) ratios, fitted by Zhang & Stephens (2009)). In numpy:
    arviz_stats' version costs a 6 s numba compilation per process."""
    n = lr.size
    x = lr - lr.max()
    order = np.argsort(x)
    n_tail = int(np.ceil(min(0.2 * n, 3 * np.sqrt(n))))
    cut = max(x[order[-n_tail - 1]], np.log(np.finfo(float).tiny))
    tail = np.flatnonzero(x > cut)
    if tail.size <= 4:
        return x, np.inf
    tail = tail[np.argsort(x[tail])]
    k, sigma = _gpd_fit(np.exp(x[tail]) - np.exp(cut))
    if np.isfinite(k) and sigma > 0:
        p = np.arange(0.5, tail.size) / tail.size
        # a hopeless proposal (k ~ 140: LLMFAO's 1,133 per-prompt skills) overflows the top
        # quantiles to inf; they are capped at the largest ratio (0) below, so no warning
        with np.errstate(over="ignore"):
            q = -np.log1p(-p) if abs(k) < 1e-12 else np.expm1(-k * np.log1p(-p)) / k
            x[tail] = np.minimum(np.log(sigma * q + np.exp(cut)), 0.0)
    return x, k


def _gpd_fit(x: np.ndarray) -> tuple[float, float]:
    """Generalized Pareto (k, sigma) of sorted exceedances ``x`` (Zhang & Stephens (2009),
    Technometrics 51:316-325, with the weakly informative prior on k of PSIS)."""
    n = x.size
    m = 30 + int(np.sqrt(n))
    b = 1 - np.sqrt(m / (np.arange(1, m + 1) - 0.5))
    b = b / (3 * x[int(n / 4 + 0.5) - 1]) + 1 / x[-1]
    ks = np.log1p(-b[:, None] * x).mean(axis=1)
    loglik = n * (np.log(-b / ks) - ks - 1)
    w = 1 / np.exp(loglik - loglik[:, None]).sum(axis=1)
    keep = w >= 10 * np.finfo(float).eps
    w, b = w[keep] / w[keep].sum(), b[keep]
    b_post = float(np.sum(b * w))
    k = float(np.log1p(-b_post * x).mean())
    sigma = -k / b_post
    return (n * k + 10 * 0.5) / (n + 10), sigma


def _gauss_logpdf(xs: np.ndarray, mean: np.ndarray, prec_chol: np.ndarray) -> np.ndarray:
    """log N(x; mean, (L L')^-1) for rows x, from the precision's Cholesky factor L."""
    z = (xs - mean) @ prec_chol
    return -0.5 * np.sum(z * z, axis=1) + np.sum(np.log(np.diag(prec_chol))) \
        - 0.5 * mean.size * np.log(2 * np.pi)


def _prec_chol(cov: np.ndarray) -> np.ndarray:
    return np.linalg.cholesky(np.linalg.inv(cov))


@dataclass
class ImportanceResult:
    """Outcome of :func:`importance_resample`.

    Attributes
    ----------
    draws : ndarray
        (n_draws, d) unconstrained draws: resampled by weight when ``resampled``,
        else the Gaussian's own draws.
    pareto_k : float
        Pareto k of the final proposal's weights.
    ess : float
        Effective sample size of the weights.
    resampled : bool
        ``pareto_k`` passed :func:`k_threshold` and ``ess >= MIN_ESS``.
    adapted : bool
        The defensive-mixture step ran.
    grid : int
        Grid points of log scale integrated over (:mod:`bayesjudge.engine.laplace_grid`; 0: none).
    inla : int
        Gradient calls spent integrating the latent coordinates out at each hyperparameter
        vector (:mod:`bayesjudge.engine.laplace_inla`; 0: not used).
    off_mode : ndarray or None
        Coordinates whose Laplace approximation that integration found off the posterior
        (bool mask; :func:`line_flags` flags every scalar computed from them).
    widened : float
        The sd factor of the grid's conditional Gaussians in the last proposal tried, the
        accepted one where ``resampled``
        (:func:`bayesjudge.engine.laplace_grid.grid_resample`; 1: as built).
    """

    draws: np.ndarray = field(repr=False)
    pareto_k: float
    ess: float
    resampled: bool
    adapted: bool = False
    grid: int = 0
    inla: int = 0
    off_mode: np.ndarray | None = field(default=None, repr=False)
    widened: float = 1.0


def importance_resample(
    logp: Callable[[np.ndarray], float], mean: np.ndarray, cov: np.ndarray,
    prec_chol: np.ndarray | None, gaussian: np.ndarray, rng: np.random.Generator,
    adapt: bool = True,
) -> ImportanceResult:
    """Importance-resample the Gaussian draws ``gaussian`` towards the density ``logp``.

    Parameters
    ----------
    logp : callable
        Log density (up to a constant) of one unconstrained vector.
    mean, cov : ndarray
        The Gaussian the rows of ``gaussian`` were drawn from.
    prec_chol : ndarray or None
        Cholesky factor of its precision (computed from ``cov`` when None).
    gaussian : ndarray
        (S, d) draws from N(mean, cov).
    rng : numpy.random.Generator
        For the adaptive step and the resampling.
    adapt : bool
        Whether a failed Gaussian may be helped by the defensive mixture (False: the
        caller has a better remedy to try first, e.g. a grid over a funnel's scale).
    """
    n, d = gaussian.shape
    prec = _prec_chol(cov) if prec_chol is None else prec_chol
    xs = gaussian
    lp = np.array([logp(x) for x in xs])
    lq = _gauss_logpdf(xs, mean, prec)
    w, k = pareto_weights(lp - lq)
    adapted = False
    comps = [(mean, prec)]  # the mixture's Gaussians: (mean, precision Cholesky factor)
    lqs = [_gauss_logpdf(xs, mean, prec)]  # log density of every draw under each component
    for _ in range(ADAPT_ROUNDS if adapt else 0):
        ess = 1.0 / np.sum(w**2)
        if (k <= k_threshold(len(xs)) and ess >= MIN_ESS) or d >= n // 4:
            break  # good enough, or too many coordinates to fit a Gaussian to S draws
        mu2 = w @ xs
        c = xs - mu2
        # shrink the weighted covariance towards the Laplace one by the weights' ESS, and
        # widen it: a component wider than the target keeps the weights bounded
        cov2 = INFLATE * (ess * ((c.T * w) @ c) + d * cov) / (ess + d)
        try:
            prec2 = _prec_chol(cov2)
        except np.linalg.LinAlgError:
            break
        ys = mu2 + linalg.solve_triangular(prec2, rng.standard_normal((d, n)), lower=True,
                                           trans="T").T
        lqs = [np.concatenate([lq_, _gauss_logpdf(ys, m_, p_)]) for lq_, (m_, p_)
               in zip(lqs, comps)]
        comps.append((mu2, prec2))
        xs = np.vstack([xs, ys])
        lqs.append(_gauss_logpdf(xs, mu2, prec2))
        lp = np.concatenate([lp, [logp(y) for y in ys]])
        # every draw weighted against the even mixture of all components (deterministic
        # mixture weights: bounded wherever any component covers the target)
        lq = np.logaddexp.reduce(np.stack(lqs), axis=0) - np.log(len(comps))
        w, k = pareto_weights(lp - lq)
        adapted = True
    ess = float(1.0 / np.sum(w**2))
    ok = bool(np.isfinite(k) and k <= k_threshold(len(xs)) and ess >= MIN_ESS)
    if not ok:
        return ImportanceResult(gaussian, k, ess, False, adapted)
    # systematic resampling: n draws, each x_i about n w_i times
    pos = (rng.random() + np.arange(n)) / n
    idx = np.minimum(np.searchsorted(np.cumsum(w), pos), len(xs) - 1)
    return ImportanceResult(xs[rng.permutation(idx)], k, ess, True, adapted)


def line_flags(
    logp: Callable[[np.ndarray], float], constrain: Callable[[np.ndarray], list],
    centre: np.ndarray, cov: np.ndarray, names: list[str], off: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """``laplace_ok`` per scalar of every constrained quantity, by the line check (and False
    for every scalar computed from a coordinate of the bool mask ``off``).

    The gradient ``a`` of each scalar at ``centre`` comes from central differences of
    ``constrain`` (2 d calls, kept sparse); each scalar then costs two calls of ``logp``.

    Returns
    -------
    dict
        name -> bool array of the quantity's shape (True: the Gaussian holds along the line).
    """
    d = centre.size
    base = [np.asarray(v, dtype=float) for v in constrain(centre)]
    sizes = [v.size for v in base]
    steps = 1e-5 * np.maximum(1.0, np.abs(centre))
    rows, cols, vals = [], [], []
    for j in range(d):  # sparse: a skill depends on its own group's coordinates only
        e = np.zeros(d)
        e[j] = steps[j]
        hi = np.concatenate([np.ravel(v) for v in constrain(centre + e)])
        lo = np.concatenate([np.ravel(v) for v in constrain(centre - e)])
        diff = (hi - lo) / (2 * steps[j])
        nz = np.flatnonzero(diff)
        rows.append(nz)
        cols.append(np.full(nz.size, j))
        vals.append(diff[nz])
    jac = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                            shape=(sum(sizes), d))
    lp0 = logp(centre)
    ok = np.ones(jac.shape[0], dtype=bool)
    for first in range(0, jac.shape[0], 256):  # (Sigma a)' for 256 scalars at a time
        part = jac[first:first + 256]
        sa = np.asarray(part @ cov)
        var = np.asarray(part.multiply(sa).sum(axis=1)).ravel()
        for i in np.flatnonzero(var > 1e-300):
            v = sa[i] / np.sqrt(var[i])
            for t in (-LINE_T, LINE_T):
                gap = logp(centre + t * v) - lp0 + 0.5 * t * t
                if not np.isfinite(gap) or abs(gap) > LINE_TOL:
                    ok[first + i] = False
                    break
    # A scalar is as trustworthy as the coordinates it is computed from: discriminators
    # log sigma_k = tau z_k inherit a failed check of the spread tau, whose marginal (a
    # curved ridge with z) no line through the mode shows for them.
    absj = abs(jac).tocsr()
    scale = np.asarray(absj.max(axis=1).todense()).ravel()
    depends = (absj > sparse.diags(1e-8 * scale) @ (absj > 0)).astype(np.int8).tocsr()
    # the unconstrained coordinates themselves are outputs too (value variables): the
    # rows whose gradient is a unit vector
    counts = np.diff(depends.indptr)
    unit = np.flatnonzero((counts == 1) & np.isclose(scale, 1.0))
    coord_ok = np.ones(d, dtype=bool)
    coord_ok[depends.indices[depends.indptr[unit]]] = ok[unit]
    if off is not None:  # a shift no line through the centre shows (bayesjudge.engine.laplace_inla)
        coord_ok &= ~np.asarray(off, dtype=bool)
    ok &= np.asarray(depends[:, ~coord_ok].sum(axis=1)).ravel() == 0
    out, start = {}, 0
    for name, value, size in zip(names, base, sizes):
        out[name] = ok[start:start + size].reshape(value.shape)
        start += size
    return out


def laplace_attrs(fit) -> dict:
    """Posterior attributes of a MAP fit's draws (strings and numbers: they survive netCDF)."""
    imp = fit.importance
    how = ", importance-resampled (PSIS)" if imp.resampled else ""
    how += f", integrated over a {imp.grid}-point grid of the log scale" if imp.grid else ""
    how += ", latent coordinates integrated out at each hyperparameter vector (INLA)" \
        if imp.inla else ""
    flags = {k: np.asarray(v, dtype=bool).tolist() for k, v in (fit.laplace_ok or {}).items()}
    return {"inference": f"laplace approximation (unconstrained space){how}, not NUTS",
            "pareto_k": imp.pareto_k, "importance_ess": imp.ess,
            "laplace_ok": json.dumps(flags)}


def laplace_draws_ess(attrs: dict, n_draws: int) -> float:
    """Effective number of a MAP fit's Laplace draws, from their posterior attributes.

    Importance-resampled draws (:func:`laplace_attrs`' ``inference`` says so) are worth
    the weights' ESS (``importance_ess``; systematic resampling adds little to it); the
    Gaussian's own draws, kept where the weights failed (flagged), are independent:
    ``n_draws``.
    """
    if "importance-resampled" in str(attrs.get("inference", "")):
        return float(min(attrs["importance_ess"], n_draws))
    return float(n_draws)


def read_flags(text: str | None, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """The flags of ``name`` (all True when absent: NUTS fits, or a resampled posterior)."""
    if not text:
        return np.ones(shape, dtype=bool)
    value = json.loads(text).get(name)
    return np.ones(shape, dtype=bool) if value is None else np.asarray(value, dtype=bool)


#: What to do about a flagged row, unless the model knows better (``_laplace_fix``).
NUTS_FIX = "Refit with method='nuts' for their intervals."


def warn_flagged(table, label: list[str], fix: str = NUTS_FIX):
    """Warn naming the rows of ``table`` whose ``laplace_ok`` is False; returns ``table``."""
    bad = ~table["laplace_ok"].to_numpy(bool)
    if bad.any():
        warn_user(
            f"{bad.sum()} row(s) have Laplace intervals that the Gaussian approximation cannot "
            f"be trusted for (laplace_ok=False): {_row_names(table, bad, label)}. {fix}")
    return table


def _row_names(table, which: np.ndarray, label: list[str], k: int = 10) -> str:
    """The first ``k`` rows where ``which`` holds, named by their ``label`` columns."""
    rows = [" / ".join(map(str, r)) for r in table.loc[which, label].itertuples(index=False)]
    return f"{rows[:k]}{' ...' if len(rows) > k else ''}"


def warn_point_outside(table, label: list[str], columns: list[str], where: str):
    """Warn naming the rows of ``table`` whose MAP value of a column in ``columns`` lies
    outside its own interval (``<column>_lower`` .. ``<column>_upper``); returns ``table``.

    The intervals come from draws that integrate what the joint mode does not (a
    hierarchical scale on its grid, latent blocks by INLA); the MAP of a funnel can sit
    where almost none of that mass is (a spread collapsed to 0, every judge's
    discriminator at its mean), and its point values then contradict their intervals.
    """
    out = np.zeros(len(table), dtype=bool)
    for col in columns:
        value = table[col].to_numpy(float)
        out |= (value < table[f"{col}_lower"].to_numpy(float)) \
            | (value > table[f"{col}_upper"].to_numpy(float))
    if out.any():
        warn_user(
            f"{where}: {out.sum()} row(s) have a MAP {' or '.join(columns)} outside its own "
            f"interval: {_row_names(table, out, label)}. The intervals come "
            f"from draws that integrate the model's scales, the MAP is the joint mode, which "
            f"a hierarchical model can put where the posterior has almost no mass. Read "
            f"summarize()'s means for point values, or refit with method='nuts'.")
    return table
