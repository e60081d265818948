"""The damped Newton maximiser against closed forms and scipy, and its fallback in the engine."""

import warnings

import numpy as np
import pymc as pm
import pytest
from scipy import optimize, special

from bayesjudge.engine import Engine, optim


def quadratic(a, b):
    """logp = -(x - b)' A (x - b) / 2: the mode is b, reached by one Newton step."""

    def fgh(x):
        r = x - b
        return -0.5 * r @ a @ r, -a @ r, -a

    return fgh


def test_newton_reaches_a_quadratic_mode_in_one_step():
    a = np.array([[2.0, 0.5], [0.5, 1.0]])
    b = np.array([1.5, -2.0])
    res = optim.newton_maximise(quadratic(a, b), np.zeros(2))
    assert res.success
    np.testing.assert_allclose(res.x, b, atol=1e-12)
    assert res.nfev <= 2  # start, the step (then the polishing step, not evaluated)


def logistic_fgh(x_data, y):
    """Logistic-regression log-likelihood with its exact gradient and Hessian (numpy)."""

    def fgh(w):
        z = x_data @ w
        p = special.expit(z)
        f = np.sum(y * z - np.logaddexp(0.0, z))
        return f, x_data.T @ (y - p), -(x_data * (p * (1 - p))[:, None]).T @ x_data

    return fgh


def test_newton_matches_scipy_on_logistic_regression():
    rng = np.random.default_rng(0)
    x_data = np.column_stack([np.ones(500), rng.normal(size=(500, 2))])
    y = (rng.random(500) < special.expit(x_data @ [0.3, 1.5, -2.0])).astype(float)
    fgh = logistic_fgh(x_data, y)
    res = optim.newton_maximise(fgh, np.zeros(3))
    ref = optimize.minimize(lambda w: -fgh(w)[0], np.zeros(3), jac=lambda w: -fgh(w)[1],
                            method="BFGS", options={"gtol": 1e-10})
    assert res.success
    np.testing.assert_allclose(res.x, ref.x, atol=1e-7)
    assert np.max(np.abs(fgh(res.x)[1])) < 1e-9  # at the polished x
    assert res.nfev < 15


def test_newton_climbs_out_of_a_non_concave_start():
    # logp = -(x^2 - 1)^2: at x = 0.1 the curvature is positive (a minimum of -logp's
    # neighbourhood); the modified direction still goes uphill, to the mode x = 1.
    def fgh(x):
        v = x[0]
        return -((v * v - 1) ** 2), np.array([-4 * v * (v * v - 1)]), np.array(
            [[-(12 * v * v - 4)]])

    res = optim.newton_maximise(fgh, np.array([0.1]))
    assert res.success
    np.testing.assert_allclose(res.x, [1.0], atol=1e-10)


def test_newton_steps_are_capped_in_flat_regions():
    # logp = log sigmoid(x): increasing without a mode; each step moves at most MAX_STEP
    def fgh(x):
        p = special.expit(x[0])
        return -np.logaddexp(0.0, -x[0]), np.array([1 - p]), np.array([[-p * (1 - p)]])

    res = optim.newton_maximise(fgh, np.zeros(1), max_iter=5)
    assert not res.success
    assert res.x[0] <= 5 * optim.MAX_STEP + 1e-9


def test_newton_reports_failure_on_non_finite_start():
    res = optim.newton_maximise(lambda x: (np.nan, np.zeros(1), np.zeros((1, 1))), np.zeros(1))
    assert not res.success and "non-finite" in res.message


@pytest.fixture(scope="module")
def engine():
    rng = np.random.default_rng(1)
    with pm.Model() as model:
        y = pm.Data("y", rng.normal(2.0, 1.5, size=200))
        mu = pm.Flat("mu")
        log_sd = pm.Flat("log_sd")
        pm.Normal("obs", mu, pm.math.exp(log_sd), observed=y)
    return Engine(model)


def test_engine_newton_equals_lbfgs_and_the_closed_form(engine):
    data = engine.model["y"].get_value()
    newton = engine.find_map(laplace=False, newton=True)
    lbfgs = engine.find_map(laplace=False)
    assert newton.point["mu"] == pytest.approx(data.mean(), abs=1e-10)
    assert np.exp(newton.point["log_sd"]) == pytest.approx(data.std(), rel=1e-9)
    assert newton.logp == pytest.approx(lbfgs.logp, abs=1e-8)
    h = engine.density.fgh(newton.x)[2]
    assert np.all(np.linalg.eigvalsh(h) < 0)  # the Hessian rows are the exact second derivatives


def test_engine_falls_back_to_lbfgs_when_newton_fails(engine, monkeypatch):
    def broken(fgh, init, max_iter=100):
        return optimize.OptimizeResult(x=init, fun=np.inf, jac=init, success=False,
                                       message="broken")

    monkeypatch.setattr(optim, "newton_maximise", broken)
    fit = engine.find_map(laplace=False, newton=True)
    assert fit.point["mu"] == pytest.approx(engine.model["y"].get_value().mean(), abs=1e-6)


def test_engine_skips_newton_past_its_parameter_limit(engine, monkeypatch):
    def refuse(fgh, init, max_iter=100):
        raise AssertionError("Newton must not run past NEWTON_MAX_PARAMS")

    monkeypatch.setattr(optim, "newton_maximise", refuse)
    monkeypatch.setattr(optim, "NEWTON_MAX_PARAMS", 1)  # the engine has 2 parameters
    fit = engine.find_map(laplace=False, newton=True)
    assert fit.point["mu"] == pytest.approx(engine.model["y"].get_value().mean(), abs=1e-6)


def _newton_models():
    from bayesjudge import (
        DavidsonAggregator,
        HierarchicalMisclassificationModel,
        MisclassificationModel,
    )
    from bayesjudge.datasets import simulate_davidson_votes, simulate_misclassification

    votes, labels = simulate_davidson_votes(300, 8, beta=2.0, eta0=-0.5, random_seed=3)
    one = simulate_misclassification(0.6, 0.7, 0.9, 5_000, 80, 80, random_seed=3)
    five = simulate_misclassification([0.4, 0.5, 0.6, 0.7, 0.8], 0.7, 0.9, 5_000, 80, 80,
                                      random_seed=3)
    return [(DavidsonAggregator, (votes, labels)), (MisclassificationModel, one),
            (HierarchicalMisclassificationModel, five)]


@pytest.mark.parametrize("cls, tables", _newton_models(), ids=lambda v: getattr(v, "__name__", ""))
def test_models_fitted_by_newton_reach_the_lbfgs_mode(cls, tables, monkeypatch):
    """The small models' MAP by Newton (their default) is L-BFGS-B's, at least as high."""
    assert cls._map_newton
    newton = cls().fit(*tables)
    monkeypatch.setattr(cls, "_map_newton", False)
    lbfgs = cls().fit(*tables)
    assert newton._map_result.logp >= lbfgs._map_result.logp - 1e-9
    np.testing.assert_allclose(newton._map_result.x, lbfgs._map_result.x, atol=1e-4)


@pytest.mark.parametrize("pooling", [None, "complete", "none"])
def test_closed_form_start_keeps_newton_short_at_any_size(pooling, monkeypatch):
    """From the Rogan-Gladen start, Newton's evaluations do not grow with the test rows.

    From the default start a million test rows took ~30 evaluations (single model);
    the mode is the same (checked against L-BFGS-B above). Partial pooling is not
    here: its sds and offsets start at the default and a million rows still take
    ~100 evaluations along the curved ridge p_k = const (166 from the default start).
    """
    from bayesjudge import HierarchicalMisclassificationModel, MisclassificationModel
    from bayesjudge.data import validate_judgment_counts
    from bayesjudge.models.misclassification.starts import closed_form_start

    evals = []
    newton = optim.newton_maximise

    def counting(*a, **k):
        res = newton(*a, **k)
        evals.append(res.nfev)
        return res

    monkeypatch.setattr(optim, "newton_maximise", counting)
    for n in (1_000, 1_000_000):
        evals.clear()
        rate = np.array([0.45, 0.55, 0.62])
        kw = dict(judged_pos=np.round(rate * n).astype(int), n=[n] * 3, tp=[70, 72, 68],
                  m1=[80] * 3, tn=[60, 58, 61], m0=[80] * 3)
        if pooling is None:
            kw = {k: v[0] if np.ndim(v) else v for k, v in kw.items()}
            model = MisclassificationModel().fit_counts(**kw)
        else:
            counts = validate_judgment_counts(**kw)
            model = HierarchicalMisclassificationModel(pooling=pooling).fit(counts)
        assert len(evals) == 1 and evals[0] <= 8, (n, evals)
    # the start is the closed form on the logit scale: theta by eq. 5, q0, q1 smoothed
    x = closed_form_start(model._engine, model._fit_data.extra["counts"], pooled=False)
    q0, q1 = (60.5 / 81, 58.5 / 81, 61.5 / 81), (70.5 / 81, 72.5 / 81, 68.5 / 81)
    if pooling is None:
        q0, q1 = q0[:1], q1[:1]
    theta = (rate[: len(q0)] + np.array(q0) - 1) / (np.array(q0) + np.array(q1) - 1)
    np.testing.assert_allclose(1 / (1 + np.exp(-x[: len(q0)])), theta, rtol=1e-3)


def premature_first_stop(monkeypatch, stops=1):
    """L-BFGS-B's first ``stops`` runs end after two iterations with ``success=True`` and
    scipy's ftol message: what a poor quasi-Newton direction did on a simulated jury
    (optim.lbfgs_restarted's docstring), reproduced on any machine."""
    real, calls = optim.lbfgs_maximise, []

    def early(fn, init, options=None):
        calls.append(np.array(init))
        res = real(fn, init, {**(options or {}), "maxiter": 2} if len(calls) <= stops
                   else options)
        res.success, res.message = True, "CONVERGENCE: RELATIVE REDUCTION OF F <= FACTR*EPSMCH"
        return res

    monkeypatch.setattr(optim, "lbfgs_maximise", early)
    return calls


def test_a_premature_lbfgs_stop_is_restarted_from_where_it_stopped(engine, monkeypatch):
    calls = premature_first_stop(monkeypatch)
    fit = engine.find_map(laplace=False)
    data = engine.model["y"].get_value()
    assert len(calls) == 2 and not np.array_equal(calls[1], calls[0])  # restarted at the stop
    assert fit.point["mu"] == pytest.approx(data.mean(), abs=1e-6)
    assert np.exp(fit.point["log_sd"]) == pytest.approx(data.std(), rel=1e-6)


def test_a_large_gradient_warns_even_when_scipy_reports_success(engine, monkeypatch):
    calls = premature_first_stop(monkeypatch, stops=1 + optim.MAX_RESTARTS)
    with pytest.warns(optim.ConvergenceWarning, match="did not converge"):
        engine.find_map(laplace=False)
    assert len(calls) == 1 + optim.MAX_RESTARTS


def test_a_stop_at_the_mode_with_a_rounding_gradient_is_not_a_failure(engine, monkeypatch):
    """A stop whose gradient sits just above the tolerance (rounding in a sum of many terms)
    but that a fresh L-BFGS-B run cannot improve is a mode: restarted once, no warning."""
    real, calls = optim.lbfgs_maximise, []

    def noisy(fn, init, options=None):
        calls.append(np.array(init))
        res = real(fn, init, options)
        res.jac = np.full_like(res.jac, 2 * optim.gradient_tol(res.fun))  # as if rounding
        return res

    monkeypatch.setattr(optim, "lbfgs_maximise", noisy)
    with warnings.catch_warnings():
        warnings.simplefilter("error", optim.ConvergenceWarning)
        fit = engine.find_map(laplace=False)
    assert len(calls) == 2  # the one restart that gained nothing
    data = engine.model["y"].get_value()
    assert fit.point["mu"] == pytest.approx(data.mean(), abs=1e-6)


@pytest.mark.parametrize("dip, accepted", [(1e-6, True), (1e-3, False)])
def test_newton_accepts_a_mode_only_rounding_puts_lower(dip, accepted):
    """A trial point that is a mode by its own gradient and Hessian but whose log density
    reads lower (here by ``dip`` exactly at the mode, as the rounding of a sum of a million
    counts does) ends Newton there when the dip is within 10 x the current predicted gain
    (9.1e-7 x 10), and is refused as a real loss when it is not."""
    c = 1e6

    def fgh(x):
        d = x[0] - 1.0
        f = -0.5 * c * d * d - (dip if d == 0.0 else 0.0)
        return f, np.array([-c * d]), np.array([[-c]])

    res = optim.newton_maximise(fgh, np.array([1.0 - 2.0**-20]))
    assert res.success
    if accepted:
        assert res.x[0] == 1.0 and res.nfev == 2 and "rounding" in res.message
    else:
        assert "rounding" not in res.message and res.nfev > 2 and -res.fun > -dip
