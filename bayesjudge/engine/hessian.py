"""Finite-difference Hessians of a compiled gradient, dense or block-compressed, for Laplace fits.

The Laplace approximation of a MAP fit (:func:`bayesjudge.engine.laplace.laplace`)
needs the Hessian of the log density at the mode. Central differences of the
compiled gradient cost two gradient calls per coordinate; with thousands of skills
(one zero-sum block per ranking group of Qian, Sun, Gales & Knill (2026), "Who can we
trust? LLM-as-a-jury for Comparative Assessment", arXiv:2602.16610, eq. 13) that is
minutes. Skills of different groups never interact directly: they only share a few
*global* coordinates (discriminators, their spread, tie logits, position biases). The
Hessian is then block-sparse, and the compressed finite differences of Curtis, Powell
& Reid (1974), "On the estimation of sparse Jacobian matrices", J. Inst. Maths
Applics 13:117-119, recover it from ``2 * (largest block + number of globals)``
gradient calls: coordinates of different blocks are perturbed together ("one colour
per position inside a block"), global coordinates alone.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import linalg

__all__ = ["check_blocks", "compressed_hessian", "cov_from_cholesky", "gaussian_draws",
           "laplace_cholesky"]


def check_blocks(blocks, d: int) -> np.ndarray:
    """Validate a block label per coordinate (int >= 0, or -1 for a global coordinate).

    Raises
    ------
    ValueError
        Wrong length, non-integer labels or labels below -1.
    """
    arr = np.asarray(blocks)
    if arr.shape != (d,):
        raise ValueError(f"blocks must hold one label per coordinate: shape ({d},) expected, "
                         f"got {arr.shape}.")
    if arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < -1):
        raise ValueError("blocks must be integers >= 0 (block id) or -1 (global coordinate); "
                         f"got dtype {arr.dtype}, min {arr.min()!r}.")
    return arr.astype(np.int64)


def compressed_hessian(
    grad: Callable[[np.ndarray], np.ndarray],
    x: np.ndarray,
    blocks: np.ndarray | None = None,
    h_scale: float = 1e-5,
    grad_x: np.ndarray | None = None,
) -> np.ndarray:
    r"""Hessian of a function from central differences of its gradient (block-compressed).

    Column j of the Hessian is
    :math:`H_{\cdot j} \approx (g(x + h_j e_j) - g(x - h_j e_j)) / (2 h_j)`,
    :math:`h_j = h_{scale} \max(1, |x_j|)`. With ``blocks``, coordinate i with label
    :math:`b_i \ge 0` may interact (:math:`H_{ij} \ne 0`) only with coordinates of its
    own block and global ones (label -1); the caller vouches for it. Then one pair of
    calls perturbs the k-th coordinate of every block at once (a colour, Curtis, Powell
    & Reid 1974): for i in the block of the perturbed j,
    :math:`(g(x + \sum e) - g(x - \sum e))_i / 2 = \sum_{j'} H_{ij'} h_{j'} = H_{ij} h_j`
    because the other perturbed j' belong to other blocks. Global columns are taken
    whole (one coordinate per call pair); global-versus-block entries of the block
    columns come from them by symmetry; entries between different blocks are zero.

    Parameters
    ----------
    grad : callable
        ``grad(x) -> ndarray`` of shape (d,).
    x : ndarray
        Point, shape (d,).
    blocks : ndarray of int or None
        Block label per coordinate (-1: global). None: every coordinate global, the
        dense ``2 d``-call Hessian.
    h_scale : float
        Relative step.
    grad_x : ndarray or None
        The gradient at ``x``, when known: then forward differences
        :math:`(g(x + h_j e_j) - g(x)) / h_j` (one call per column or colour instead of
        two; error O(h) instead of O(h^2): for a proposal that importance sampling
        corrects, not for a reported covariance).

    Returns
    -------
    ndarray
        (d, d) Hessian, not symmetrised (:func:`laplace_cholesky` does that).
    """
    x = np.asarray(x, dtype=float)
    d = x.size
    labels = np.full(d, -1, dtype=np.int64) if blocks is None else check_blocks(blocks, d)
    steps = h_scale * np.maximum(1.0, np.abs(x))
    if grad_x is None:
        def delta(e):  # g(x + e) - g(x - e), halved: O(h^2)
            return (grad(x + e) - grad(x - e)) / 2
    else:
        g0 = np.asarray(grad_x, dtype=float)

        def delta(e):
            return grad(x + e) - g0
    hess = np.zeros((d, d))
    is_global = labels < 0
    for j in np.flatnonzero(is_global):  # the dense path: one column per call pair
        e = np.zeros(d)
        e[j] = steps[j]
        hess[:, j] = delta(e) / steps[j]
    local = np.flatnonzero(~is_global)
    if local.size:
        order = local[np.argsort(labels[local], kind="stable")]
        ids, start, size = np.unique(labels[order], return_index=True, return_counts=True)
        colour = np.arange(order.size) - np.repeat(start, size)  # position inside the block
        for k in range(int(size.max())):
            cols = order[colour == k]
            e = np.zeros(d)
            e[cols] = steps[cols]
            diff = delta(e)
            for j, b in zip(cols, np.searchsorted(ids, labels[cols])):
                rows = order[start[b]:start[b] + size[b]]
                hess[rows, j] = diff[rows] / steps[j]
        glob = np.flatnonzero(is_global)
        hess[np.ix_(glob, local)] = hess[np.ix_(local, glob)].T
    return hess


def laplace_cholesky(hess: np.ndarray, blocks: np.ndarray | None = None) -> np.ndarray | None:
    """Lower Cholesky factor L of the symmetrised negative Hessian (L L^T = -H), or None.

    None when -H is not positive definite (no Laplace approximation exists).

    With ``blocks`` (labels as in :func:`compressed_hessian`) whose global coordinates
    (-1) all come after the block coordinates, L is built block by block: elimination
    creates no entry between coordinates that share no term (no fill-in between blocks),
    so ``L[b, b] = chol(A[b, b])`` for each block b, and the globals' rows follow from
    their Schur complement, ``L[g, b] = A[g, b] L[b, b]^-T``,
    ``L[g, g] = chol(A[g, g] - sum_b L[g, b] L[g, b]^T)``. The same factor as the dense
    one to rounding, at the cost of the blocks: 36 ms against 114 ms for 1,505 coordinates
    in 100 blocks (``benchmarks/bench_laplace.py``), a factor taken at every point of the
    latent integration (:mod:`bayesjudge.engine.laplace_inla`) and of the spread's grid.
    """
    a = -0.5 * (hess + hess.T)
    labels = None if blocks is None else np.asarray(blocks)
    glob = np.array([], dtype=np.int64) if labels is None else np.flatnonzero(labels < 0)
    if labels is None or glob.size == labels.size or (
            glob.size and glob.min() < np.flatnonzero(labels >= 0).max()):
        try:
            return np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            return None
    out = np.zeros_like(a)
    order = np.flatnonzero(labels >= 0)
    order = order[np.argsort(labels[order], kind="stable")]
    _, start = np.unique(labels[order], return_index=True)
    for idx in np.split(order, start[1:]):
        idx = np.sort(idx)
        try:
            chol_b = np.linalg.cholesky(a[np.ix_(idx, idx)])
        except np.linalg.LinAlgError:
            return None
        out[np.ix_(idx, idx)] = chol_b
        if glob.size:
            # L_bb X = A[b, g] by BLAS dtrsm: ~5 us a block, where scipy's solve_triangular
            # took 0.6 - 15 ms in its wrapper (100 blocks: 1.4 s of a 1.6 s factor)
            out[np.ix_(glob, idx)] = linalg.blas.dtrsm(1.0, chol_b, a[np.ix_(idx, glob)],
                                                       lower=1).T
    if glob.size:
        lg = out[glob][:, :glob.min()]
        try:
            out[np.ix_(glob, glob)] = np.linalg.cholesky(a[np.ix_(glob, glob)] - lg @ lg.T)
        except np.linalg.LinAlgError:
            return None
    return out


def cov_from_cholesky(chol: np.ndarray | None, potri: bool = False) -> np.ndarray | None:
    """Covariance ``(L L^T)^{-1}`` from the Cholesky factor (None for None).

    ``potri=False`` inverts as the engine always did (``inv(L)``, then
    ``inv.T @ inv``: identical numbers for the dense path); ``potri=True`` uses
    LAPACK ``dpotri`` (about half the time at d ~ 6,000).
    """
    if chol is None:
        return None
    if not potri:
        inv = np.linalg.inv(chol)
        return inv.T @ inv
    inv, info = linalg.lapack.dpotri(chol, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"dpotri failed (info={info}): singular factor")
    return np.tril(inv) + np.tril(inv, -1).T


def gaussian_draws(rng: np.random.Generator, mean: np.ndarray, cov: np.ndarray,
                   chol: np.ndarray | None, n_draws: int) -> np.ndarray:
    """``n_draws`` rows from N(mean, cov); with ``chol`` (L L^T = cov^-1) as ``mean + L^-T z``.

    ``x = mean + L^{-T} z``, z ~ N(0, I), has covariance
    :math:`L^{-T} L^{-1} = (L L^T)^{-1}` = cov: no SVD of a large ``cov``. Without
    ``chol``, numpy's ``multivariate_normal`` (the engine's original draws), without its
    positive-semidefiniteness check: every ``cov`` here is ``(L L^T)^{-1}`` of a Cholesky
    factor (:func:`cov_from_cholesky`), PSD by construction, and the check (an SVD
    reconstruction to 1e-8 absolute) warns on an ill-conditioned one (a scale near 0,
    variances ~1e8 apart: the README's AnchoredBT on arena_ppr) while the draws it
    makes are the same either way.
    """
    if chol is None:
        return rng.multivariate_normal(mean, cov, size=n_draws, check_valid="ignore")
    z = rng.standard_normal((mean.size, n_draws))
    return mean + linalg.solve_triangular(chol, z, lower=True, trans="T").T
