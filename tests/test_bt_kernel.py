"""The fused BT kernel: its polynomial exp / log1p against numpy, its Op against pytensor."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import special

from bayesjudge.models.bradley_terry.kernel import bt_loglik, davidson_loglik, log1p_exp_kernel

EDGES = [-800.0, -708.5, -40.0, -37.0, -1e-300, -0.0, 0.0, 1e-300, 1e-9, -1e-9,
         np.log(np.sqrt(2) - 1), -np.log(np.sqrt(2) - 1), 17.99, 18.0, 33.3, 40.0, 800.0]


def test_softplus_and_sigmoid_match_numpy_to_a_few_ulps():
    x = np.concatenate([np.linspace(-60, 60, 1_200_001), EDGES])
    softplus, sigmoid = np.empty_like(x), np.empty_like(x)
    log1p_exp_kernel(x, softplus, sigmoid)
    ref_sp, ref_sg = np.logaddexp(0.0, x), special.expit(x)
    ok = ref_sp > 1e-300  # below, both are ~0 (e^-708 vs an underflow to 0)
    assert np.max(np.abs(softplus - ref_sp)[ok] / ref_sp[ok]) < 2e-15
    assert np.max(np.abs(sigmoid - ref_sg)[ok] / ref_sg[ok]) < 2e-15
    assert np.all(softplus[~ok] < 1e-300) and np.all(sigmoid[~ok] < 1e-300)


@pytest.fixture(scope="module")
def cells():
    """A ragged jury: 300 pairs, 5 judges x 2 aspects of scale, random cells, n up to 3."""
    rng = np.random.default_rng(0)
    n_cells = 2000
    pair = np.sort(rng.integers(0, 300, n_cells))
    col = rng.integers(0, 10, n_cells)
    n = rng.integers(1, 4, n_cells).astype(float)
    win = rng.random(n_cells) * n
    return {"d": rng.normal(0, 4, 300), "scale": np.exp(rng.normal(0, 1, 10)),
            "pair": pair, "col": col, "win": win, "n": n}


def reference(c):
    x = c["d"][c["pair"]] * c["scale"][c["col"]]
    return np.sum(c["win"] * x - c["n"] * np.logaddexp(0.0, x))


@pytest.mark.parametrize("mode", ["FAST_RUN", "NUMBA"])
def test_op_value_and_gradient_match_pytensor_elementwise(cells, mode):
    d, scale = pt.dvector("d"), pt.dvector("scale")
    args = (cells["pair"], cells["col"], cells["win"], cells["n"])
    ll = bt_loglik(d, scale, *args)
    x = d[cells["pair"]] * scale[cells["col"]]
    ref = pt.sum(cells["win"] * x - cells["n"] * pt.softplus(x))
    ours = pytensor.function([d, scale], [ll, *pt.grad(ll, [d, scale])], mode=mode)
    theirs = pytensor.function([d, scale], [ref, *pt.grad(ref, [d, scale])], mode=mode)
    got, want = ours(cells["d"], cells["scale"]), theirs(cells["d"], cells["scale"])
    assert float(got[0]) == pytest.approx(reference(cells), rel=1e-13)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-10)


def test_op_gradient_matches_finite_differences(cells):
    d, scale = pt.dvector("d"), pt.dvector("scale")
    ll = bt_loglik(d, scale, cells["pair"], cells["col"], cells["win"], cells["n"])
    f = pytensor.function([d, scale], [ll, *pt.grad(ll, [d, scale])])
    _, g_d, g_scale = f(cells["d"], cells["scale"])
    h = 1e-6
    for k in (0, 5, 10):
        step = np.zeros(10)
        step[k % 10] = h
        fd = (float(f(cells["d"], cells["scale"] + step)[0])
              - float(f(cells["d"], cells["scale"] - step)[0])) / (2 * h)
        assert g_scale[k % 10] == pytest.approx(fd, rel=1e-6, abs=1e-6)
    for p in (3, 150):
        step = np.zeros(300)
        step[p] = h
        fd = (float(f(cells["d"] + step, cells["scale"])[0])
              - float(f(cells["d"] - step, cells["scale"])[0])) / (2 * h)
        assert g_d[p] == pytest.approx(fd, rel=1e-6, abs=1e-6)


def test_op_refuses_second_derivatives(cells):
    d, scale = pt.dvector("d"), pt.dvector("scale")
    ll = bt_loglik(d, scale, cells["pair"], cells["col"], cells["win"], cells["n"])
    g = pt.grad(ll, d)
    with pytest.raises(NotImplementedError, match="second derivatives"):
        pt.grad(g.sum(), d)


def test_log_positive_matches_numpy():
    import numba

    from bayesjudge.models.bradley_terry.vecmath import jit, log_positive

    @jit
    def logs(y, out):
        for i in range(y.size):
            out[i] = log_positive(y[i])

    y = np.concatenate([1 + np.geomspace(1e-16, 1e3, 200_000), np.geomspace(1.0, 1e300, 5_000),
                        [1.0, np.sqrt(2), np.nextafter(np.sqrt(2), 3), 2.0, 1e308]])
    out = np.empty_like(y)
    logs(y, out)
    assert isinstance(logs, numba.core.registry.CPUDispatcher)
    np.testing.assert_allclose(out, np.log(y), rtol=2e-15, atol=3e-16)


@pytest.mark.parametrize("mode", ["FAST_RUN", "NUMBA"])
def test_davidson_op_matches_pytensor_elementwise(mode):
    rng = np.random.default_rng(3)
    n_pairs, n_cells, n_judges = 300, 2000, 5
    pair = np.sort(rng.integers(0, n_pairs, n_cells))
    col = rng.integers(0, n_judges, n_cells)
    counts = [rng.integers(0, 4, n_cells).astype(float) for _ in range(3)]
    values = [rng.normal(0, 4, n_pairs), np.exp(rng.normal(0, 0.5, n_judges)),
              rng.normal(0, 0.5, n_judges), rng.normal(0, 1, n_judges)]
    d, scale, bias, tie = (pt.dvector(n) for n in ("d", "scale", "bias", "tie"))
    ll = davidson_loglik(d, scale, bias, tie, pair, col, col, col, *counts)
    x = d[pair] * scale[col] + bias[col]
    log_z = pt.log(pt.exp(x / 2) + pt.exp(-x / 2) + pt.exp(tie[col]))
    ref = pt.sum(0.5 * x * (counts[0] - counts[2]) + counts[1] * tie[col]
                 - (counts[0] + counts[1] + counts[2]) * log_z)
    params = [d, scale, bias, tie]
    ours = pytensor.function(params, [ll, *pt.grad(ll, params)], mode=mode)
    theirs = pytensor.function(params, [ref, *pt.grad(ref, params)], mode=mode)
    for a, b in zip(ours(*values), theirs(*values)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-10)


def test_non_finite_inputs_propagate():
    # NaN must reach the log density (NUTS flags the divergence), never turn into a number
    x = np.array([np.nan, np.inf, -np.inf, 1.0])
    softplus, sigmoid = np.empty(4), np.empty(4)
    log1p_exp_kernel(x, softplus, sigmoid)
    assert np.isnan(softplus[0]) and np.isnan(sigmoid[0])
    assert softplus[1] == np.inf and sigmoid[1] == 1.0
    assert softplus[2] < 1e-300 and sigmoid[2] < 1e-300
    d, scale = pt.dvector("d"), pt.dvector("scale")
    idx = np.array([0, 1])
    f = pytensor.function([d, scale], [bt_loglik(d, scale, idx, idx * 0, np.ones(2), np.ones(2)),
                                       davidson_loglik(d, scale, np.zeros(1), np.zeros(1), idx,
                                                       idx * 0, idx * 0, idx * 0, np.ones(2),
                                                       np.ones(2), np.ones(2))], mode="NUMBA")
    assert all(np.isnan(v) for v in f(np.array([np.nan, 1.0]), np.ones(1)))
