"""Block-compressed finite-difference Hessian (bayesjudge.engine.hessian) and Laplace fits.

Checked against an analytic Hessian of a block-structured quadratic + softplus
function, against the dense central differences (every coordinate perturbed alone),
by counting gradient calls, and on a BTSigma MAP fit (block vs dense Laplace covariance).
"""

from __future__ import annotations

import numpy as np
import pytest

from bayesjudge.engine import hessian
from bayesjudge.engine.hessian import (
    check_blocks,
    compressed_hessian,
    cov_from_cholesky,
    gaussian_draws,
    laplace_cholesky,
)


def _block_problem(seed=0):
    """f(x) = -x'Qx/2 - sum_r softplus(a_r'x), each Q entry / row a_r on one block + globals.

    Gradient -Qx - A' sigma(Ax); Hessian -Q - A' diag(s(1-s)) A (closed form).
    Blocks are ragged (sizes 1..5) and their coordinates interleaved with globals.
    """
    rng = np.random.default_rng(seed)
    sizes = [3, 5, 1, 4, 2, 5]
    n_glob = 3
    labels = np.concatenate([np.full(s, b) for b, s in enumerate(sizes)] + [np.full(n_glob, -1)])
    labels = labels[rng.permutation(labels.size)]
    d = labels.size
    allowed = ((labels[:, None] == labels[None, :]) | (labels[:, None] < 0)
               | (labels[None, :] < 0))
    m = rng.normal(size=(d, d)) * allowed
    q = 0.3 * (m + m.T)  # symmetric, zero between different blocks
    q += np.eye(d) * (np.abs(np.linalg.eigvalsh(q)).max() + 1.0)
    rows = []
    for b in range(len(sizes)):
        for _ in range(4):
            a = np.zeros(d)
            mask = (labels == b) | (labels < 0)
            a[mask] = rng.normal(size=mask.sum())
            rows.append(a)
    a_mat = np.array(rows)

    def grad(x):
        s = 1.0 / (1.0 + np.exp(-(a_mat @ x)))
        return -q @ x - a_mat.T @ s

    def hess(x):
        s = 1.0 / (1.0 + np.exp(-(a_mat @ x)))
        return -q - a_mat.T @ ((s * (1 - s))[:, None] * a_mat)

    x = rng.normal(size=d) * 2.0
    return grad, hess, x, labels, sizes, n_glob


def test_compressed_hessian_matches_analytic_and_dense():
    grad, hess, x, labels, _, _ = _block_problem()
    exact = hess(x)
    block = compressed_hessian(grad, x, labels)
    dense = compressed_hessian(grad, x, None)
    scale = np.abs(exact).max()
    assert np.max(np.abs(block - exact)) < 1e-6 * scale
    assert np.max(np.abs(dense - exact)) < 1e-6 * scale
    # entries between different blocks are exactly zero, as the analytic Hessian's
    other = (labels[:, None] != labels[None, :]) & (labels[:, None] >= 0) & (labels[None, :] >= 0)
    assert np.all(block[other] == 0.0) and np.all(exact[other] == 0.0)
    # block path vs dense path: same finite differences up to rounding
    assert np.max(np.abs(block - dense)) < 1e-7 * scale


def test_gradient_call_count():
    grad, _, x, labels, sizes, n_glob = _block_problem()
    calls = []

    def counted(v):
        calls.append(1)
        return grad(v)

    compressed_hessian(counted, x, labels)
    assert len(calls) == 2 * (max(sizes) + n_glob)
    calls.clear()
    compressed_hessian(counted, x, None)
    assert len(calls) == 2 * x.size


def test_forward_differences_from_a_known_gradient():
    """grad_x given: one call per column / colour, error O(h) against the closed form."""
    grad, hess, x, labels, sizes, n_glob = _block_problem(seed=1)
    exact = hess(x)
    scale = np.abs(exact).max()
    calls = []

    def counted(v):
        calls.append(1)
        return grad(v)

    for blocks, n_calls in ((labels, max(sizes) + n_glob), (None, x.size)):
        calls.clear()
        fwd = compressed_hessian(counted, x, blocks, grad_x=grad(x))
        assert len(calls) == n_calls
        err = np.max(np.abs(fwd - exact))
        assert err < 1e-3 * scale  # O(h) with h = 1e-5 max(1, |x|)
        assert err > np.max(np.abs(compressed_hessian(grad, x, blocks) - exact))  # vs O(h^2)


def test_dense_path_is_the_engines_original_loop():
    """blocks=None reproduces the loop Engine.laplace_cov used before, bit for bit."""
    grad, _, x, _, _, _ = _block_problem(seed=3)
    d = x.size
    ref = np.empty((d, d))
    for j in range(d):
        h = 1e-5 * max(1.0, abs(x[j]))
        e = np.zeros(d)
        e[j] = h
        ref[:, j] = (grad(x + e) - grad(x - e)) / (2 * h)
    np.testing.assert_array_equal(compressed_hessian(grad, x), ref)
    ref = 0.5 * (ref + ref.T)
    inv = np.linalg.inv(np.linalg.cholesky(-ref))
    cov = cov_from_cholesky(laplace_cholesky(compressed_hessian(grad, x)))
    np.testing.assert_array_equal(cov, inv.T @ inv)


def test_laplace_factors_potri_and_draws():
    grad, hess, x, _, _, _ = _block_problem(seed=1)
    h = hess(x)
    chol = laplace_cholesky(h)
    cov = cov_from_cholesky(chol, potri=True)
    np.testing.assert_allclose(cov, np.linalg.inv(-h), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(chol @ chol.T, -h, rtol=1e-12, atol=1e-12)
    assert laplace_cholesky(-h) is None and cov_from_cholesky(None) is None  # not neg. definite
    np.testing.assert_allclose(cov_from_cholesky(chol), cov, rtol=1e-9, atol=1e-12)
    draws = gaussian_draws(np.random.default_rng(0), x, cov, chol, 200_000)
    assert draws.shape == (200_000, x.size)
    sd = np.sqrt(np.diag(cov))
    np.testing.assert_allclose(draws.mean(0), x, atol=5 * sd.max() / np.sqrt(200_000))
    corr_emp = np.corrcoef(draws.T)
    corr = cov / np.outer(sd, sd)
    assert np.max(np.abs(corr_emp - corr)) < 0.015
    np.testing.assert_allclose(draws.std(0), sd, rtol=0.01)


def test_check_blocks_rejects_bad_labels():
    with pytest.raises(ValueError, match="one label per coordinate"):
        check_blocks(np.zeros(3, int), 4)
    with pytest.raises(ValueError, match="-1"):
        check_blocks(np.array([0, -2, 1]), 3)
    with pytest.raises(ValueError, match="integers"):
        check_blocks(np.array([0.0, 1.0]), 2)


def _four_context_table(seed=0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    n_ctx, n_items, sigma = 4, 6, np.array([0.5, 1.0, 2.0])
    skills = rng.normal(size=(n_ctx, n_items))
    rows = [(c, i, j, k) for c in range(n_ctx) for i in range(n_items) for j in range(n_items)
            if i != j for k in range(3)]
    c, i, j, k = (np.array(v) for v in zip(*rows))
    logit = (skills[c, i] - skills[c, j]) / sigma[k] + rng.normal(0, 0.3, len(c))
    return pd.DataFrame({"context": [f"doc-{v}" for v in c], "judge": [f"j{v}" for v in k],
                         "left": [f"s{v}" for v in i], "right": [f"s{v}" for v in j],
                         "prob": 1 / (1 + np.exp(-logit))})


@pytest.fixture(scope="module")
def btsigma_map():
    from bayesjudge import BTSigma

    return BTSigma(random_seed=0).fit(_four_context_table())


def test_btsigma_blocks_label_skill_groups(btsigma_map):
    model = btsigma_map
    engine, fd = model._engine, model._fit_data
    blocks = model._laplace_blocks(fd, engine)
    where = engine.value_slices()
    assert blocks.shape == engine.x0.shape
    # 4 contexts x 6 items: 4 groups of 5 free coordinates, in skill_z's order
    np.testing.assert_array_equal(blocks[where["skill_z"]], np.repeat(np.arange(4), 5))
    others = np.ones(blocks.size, bool)
    others[where["skill_z"]] = False
    assert np.all(blocks[others] == -1) and others.sum() == 3  # 2 offsets + tau


def test_btsigma_block_laplace_equals_dense(btsigma_map):
    model = btsigma_map
    engine, fd = model._engine, model._fit_data
    engine.set_data(fd.data, fd.coords)
    blocks = model._laplace_blocks(fd, engine)
    fit_dense = type(model._map_result)(point=model._map_result.point, x=model._map_result.x,
                                        cov=None, logp=model._map_result.logp)
    fit_block = type(model._map_result)(point=model._map_result.point, x=model._map_result.x,
                                        cov=None, logp=model._map_result.logp)
    engine.laplace(fit_dense)
    engine.laplace(fit_block, blocks)
    np.testing.assert_allclose(fit_block.laplace_x, fit_dense.laplace_x, atol=1e-10)
    scale = np.abs(fit_dense.cov).max()
    assert np.max(np.abs(fit_block.cov - fit_dense.cov)) < 1e-5 * scale
    assert fit_dense.chol is None and fit_block.chol is not None
    # the fitted model's own idata_ goes through the block path: its Gaussian draws of
    # the free skill coordinates (before importance resampling, bayesjudge.engine.laplace_check)
    # have the dense covariance's standard deviations
    # (1000 draws: sd relative error ~ 2.2 %, 0.1 is > 4 standard errors)
    table = model.ranking()
    assert np.all(table["skill_lower"] <= table["skill"])
    assert np.all(table["skill"] <= table["skill_upper"])
    fit = model._map_result
    assert fit.chol is not None
    xs = hessian.gaussian_draws(np.random.default_rng(0), fit.laplace_x, fit.cov, fit.chol, 1000)
    z = xs[:, engine.value_slices()["skill_z"]]
    sd = np.sqrt(np.diag(fit_dense.cov))[engine.value_slices()["skill_z"]]
    np.testing.assert_allclose(z.std(0), sd, rtol=0.1)


def test_dense_draws_of_an_ill_conditioned_cholesky_covariance_do_not_warn():
    """Dense draws (no ``chol``) of a covariance (L L^T)^-1 with variances 1e10 apart:
    no warning, the same numbers as numpy's checked draws, the asked covariance. (The
    case that made numpy warn, the README's AnchoredBT on arena_ppr, is test_readme's;
    random matrices like this one pass numpy's check, so this test guards the draws, not
    the warning.)"""
    import warnings

    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    prec = q @ np.diag([1e-5, 1e-2, 1.0, 3.0, 1e2, 1e5]) @ q.T
    cov = cov_from_cholesky(np.linalg.cholesky(prec))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        draws = gaussian_draws(np.random.default_rng(0), np.zeros(6), cov, None, 200_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same = np.random.default_rng(0).multivariate_normal(np.zeros(6), cov, size=200_000)
    np.testing.assert_array_equal(draws, same)
    z = draws @ np.linalg.cholesky(prec)  # whitened: identity covariance
    np.testing.assert_allclose(np.cov(z.T), np.eye(6), atol=0.02)


@pytest.mark.parametrize("layout", ["blocks", "blocks_then_globals", "interleaved",
                                    "globals_first"])
def test_block_cholesky_equals_the_dense_factor(layout):
    """laplace_cholesky(h, blocks) builds L block by block (no fill-in between blocks; the
    globals' rows from their Schur complement) and equals the dense factor to rounding;
    globals before a block coordinate take the dense path."""
    rng = np.random.default_rng(7)
    sizes, n_glob = [5, 1, 8, 3], 0 if layout in ("blocks", "interleaved") else 3
    labels = np.concatenate([np.full(s, b) for b, s in enumerate(sizes)] + [np.full(n_glob, -1)])
    if layout == "interleaved":
        labels = labels[rng.permutation(labels.size)]
    if layout == "globals_first":
        labels = np.roll(labels, n_glob)
    d = labels.size
    a = np.zeros((d, d))
    for b in np.unique(labels):
        idx = np.flatnonzero((labels == b) | (labels < 0)) if b >= 0 else np.flatnonzero(labels < 0)
        m = rng.standard_normal((idx.size, idx.size))
        a[np.ix_(idx, idx)] += m @ m.T + idx.size * np.eye(idx.size)
    dense = laplace_cholesky(-a)
    blocked = laplace_cholesky(-a, labels)
    np.testing.assert_allclose(blocked, dense, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(blocked @ blocked.T, a, rtol=1e-12, atol=1e-12)
    assert laplace_cholesky(a, labels) is None  # not negative definite, either path
