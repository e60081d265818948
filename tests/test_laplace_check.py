"""MAP intervals are importance-resampled towards the posterior, or flagged ``laplace_ok=False``.

Unit checks of :mod:`bayesjudge.engine.laplace_check` against closed forms (Pareto tails of
known shape, the exact quantiles of log Exp(1)), the ``laplace_ok`` column of every
MAP report, and (slow) MAP against NUTS on the Chatbot Arena battles.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from bayesjudge import DavidsonBT
from bayesjudge.datasets.files import SHARED_DATA
from bayesjudge.engine.laplace_check import (
    importance_resample,
    k_threshold,
    line_flags,
    pareto_weights,
    warn_flagged,
)


@pytest.mark.parametrize("shape, heavy", [(0.2, False), (1.5, True)])
def test_pareto_k_of_known_tails(shape, heavy):
    # Weights U^-shape are Pareto with tail shape `shape`. The k-hat of 4000 draws has a
    # standard error about (1 + k) / sqrt(M), M = 3 sqrt(S) = 190 tail draws: 0.09 at k = 0.2,
    # 0.18 at k = 1.5; both sit more than 4 SE from the 0.7 threshold.
    u = np.random.default_rng(0).random(4000)
    w, k = pareto_weights(-shape * np.log(u))
    assert (k > k_threshold(4000)) == heavy
    assert abs(k - shape) < 4 * (1 + shape) / np.sqrt(190)
    np.testing.assert_allclose(w.sum(), 1.0)


def test_a_hopeless_tail_gives_finite_weights_without_a_numpy_warning():
    # log ratios falling by 10 nats a rank (a Gaussian proposal hopeless for its target, as
    # for LLMFAO's 1,133 per-prompt skills: k ~ 140): the smoothed top quantiles overflow
    # float64 and are capped at the largest ratio
    lr = -10.0 * np.arange(2000.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w, k = pareto_weights(lr)
    assert k > 1 and np.isfinite(w).all() and abs(w.sum() - 1) < 1e-12


def test_non_finite_ratios_get_no_weight():
    lr = np.r_[np.zeros(999), -np.inf]
    w, _ = pareto_weights(lr)
    assert w[-1] == 0 and np.isfinite(w).all()


def _log_exp1(x):
    """log density of x = log(theta), theta ~ Exp(1): x - e^x (mode 0, curvature 1)."""
    x = np.ravel(x)[0]
    return x - np.exp(x)


def test_importance_resampling_recovers_a_skewed_marginal():
    # Laplace of x = log(theta), theta ~ Exp(1): N(0, 1); the truth is left-skewed with
    # quantiles log(-log(1 - q)). Resampled quantiles must match within 4.5 Monte Carlo
    # standard errors sqrt(q (1 - q) / ESS) / f(x_q), the Gaussian's must not.
    rng = np.random.default_rng(1)
    mean, cov = np.zeros(1), np.eye(1)
    gauss = rng.standard_normal((1000, 1))
    res = importance_resample(_log_exp1, mean, cov, None, gauss, rng)
    assert res.resampled and res.pareto_k <= 0.7
    for q in (0.025, 0.975):
        exact = np.log(-np.log1p(-q))
        dens = np.exp(exact - np.exp(exact))
        se = np.sqrt(q * (1 - q) / res.ess) / dens
        assert abs(np.quantile(res.draws, q) - exact) < 4.5 * se
        assert abs(np.quantile(gauss, q) - exact) > 4.5 * se


def test_line_check_flags_the_skewed_coordinate_and_what_depends_on_it():
    # coordinate 0 Gaussian, coordinate 1 log Exp(1) (Laplace N(0, 1)); outputs: both
    # coordinates, their sum (depends on the skewed one) and 2 x0 (does not).
    def logp(x):
        return -0.5 * x[0] ** 2 + x[1] - np.exp(x[1])

    def constrain(x):
        return [x[:1], x[1:], np.array(x[0] + x[1]), np.array(2 * x[0])]

    flags = line_flags(logp, constrain, np.zeros(2), np.eye(2), ["a", "b", "s", "t"])
    assert flags["a"].tolist() == [True] and flags["b"].tolist() == [False]
    assert not flags["s"] and flags["t"]


def test_line_check_passes_a_gaussian():
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    prec = np.linalg.inv(cov)
    flags = line_flags(lambda x: -0.5 * x @ prec @ x, lambda x: [x, np.exp(x)], np.zeros(2),
                       cov, ["x", "y"])
    assert flags["x"].all() and flags["y"].all()


def test_warning_names_the_flagged_rows():
    table = pd.DataFrame({"judge": ["a", "b"], "laplace_ok": [True, False]})
    with pytest.warns(UserWarning, match=r"1 row\(s\).*'b'.*method='nuts'"):
        warn_flagged(table, ["judge"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_flagged(table.iloc[:1], ["judge"])


@pytest.fixture(scope="module")
def davidson_judges_map():
    example = DavidsonBT.example_data()
    model = DavidsonBT(discriminators=True, tie="per_judge", position_bias=True)
    return model.fit(*example.fit_args)


def test_every_map_report_has_laplace_ok(davidson_judges_map, tmp_path):
    model = davidson_judges_map
    for table in (model.summarize(), model.ranking(), model.judges()):
        assert table["laplace_ok"].dtype == bool
    assert "pareto_k" in model.idata_["posterior"].attrs
    path = tmp_path / "m.nc"
    model.save(path)
    loaded = DavidsonBT.load(path)
    np.testing.assert_array_equal(loaded.laplace_ok("discriminator"),
                                  model.laplace_ok("discriminator"))
    # P(best)'s Monte Carlo error reads the draws' effective number from the saved file too
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pd.testing.assert_series_equal(loaded.ranking()["p_best_mcse"],
                                       model.ranking()["p_best_mcse"])


def test_laplace_draws_are_worth_their_importance_ess_only_when_resampled():
    from bayesjudge.engine.laplace_check import laplace_draws_ess

    resampled = {"inference": "laplace approximation (unconstrained space), "
                              "importance-resampled (PSIS), not NUTS", "importance_ess": 240.5}
    assert laplace_draws_ess(resampled, 1000) == 240.5
    assert laplace_draws_ess({**resampled, "importance_ess": 3100.0}, 1000) == 1000
    kept = {"inference": "laplace approximation (unconstrained space), not NUTS",
            "importance_ess": 3.2}  # the weights failed: the Gaussian's own draws, flagged
    assert laplace_draws_ess(kept, 1000) == 1000


def _iou(lo1, hi1, lo2, hi2):
    inter = np.clip(np.minimum(hi1, hi2) - np.maximum(lo1, lo2), 0, None)
    return inter / (np.maximum(hi1, hi2) - np.minimum(lo1, lo2))


@pytest.mark.slow
def test_arena_map_intervals_overlap_nuts_or_are_flagged():
    # 3,000 battles of the Arena (x 4 judges): the Gaussian alone gave GPT-4's
    # discriminator [0.48, 0.77] against NUTS's [0.48, 0.57] (IoU 0.31). Measured after:
    # IoU 0.92-0.97 for the judges; NUTS 2 x 500 moves a 95% end by a few % of the width,
    # far from the 0.5 bound.
    df = pd.read_csv(SHARED_DATA / "arena_ppr" / "battles.csv")
    keep = df["item"].drop_duplicates().sample(3000, random_state=0)
    df = df[df["item"].isin(keep)][["left", "right", "outcome", "judge"]]
    kw = {"discriminators": True, "tie": "per_judge", "position_bias": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = {m: DavidsonBT(**kw).fit(df, **({"method": "nuts", "draws": 500, "tune": 500,
                                                "chains": 2} if m == "nuts" else {}))
                for m in ("map", "nuts")}
        tables = {m: (f.judges(), f.ranking()) for m, f in fits.items()}
    (jm, rm), (jn, rn) = tables["map"], tables["nuts"]
    assert jm["laplace_ok"][jm["n_comparisons"] >= 50].all()
    for name in ("discriminator", "tie_logit", "position_bias"):
        iou = _iou(jm[f"{name}_lower"], jm[f"{name}_upper"], jn[f"{name}_lower"],
                   jn[f"{name}_upper"])
        assert (iou[jm["laplace_ok"]] >= 0.5).all(), (name, iou)
    rn = rn.set_index("item").loc[rm["item"]]
    iou = _iou(rm["skill_lower"].to_numpy(), rm["skill_upper"].to_numpy(),
               rn["skill_lower"].to_numpy(), rn["skill_upper"].to_numpy())
    assert (iou[rm["laplace_ok"].to_numpy()] >= 0.5).all(), iou


def test_scaled_offsets_round_trip_and_gradient():
    # y[z] = exp(x[tau]) x[z]; log p_y(y) = log p_x(x(y)) - n_z y[tau]: its gradient
    # against central differences of the density itself
    from bayesjudge.engine.laplace_check import ScaledOffsets

    tr = ScaledOffsets(slice(0, 2), 2)
    prec = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]])

    def fn(x):
        return -0.5 * x @ prec @ x + np.sin(x[0]), -prec @ x + np.r_[np.cos(x[0]), 0, 0]

    x = np.array([0.4, -1.2, 0.7])
    y = tr.from_x(x)
    np.testing.assert_allclose(tr.to_x(y), x)
    lp, g = tr.logp_grad(fn, y)
    assert lp == pytest.approx(fn(x)[0] - 2 * y[2])
    eye = np.eye(3) * 1e-6
    num = [(tr.logp_grad(fn, y + e)[0] - tr.logp_grad(fn, y - e)[0]) / 2e-6 for e in eye]
    np.testing.assert_allclose(g, num, atol=1e-6)


def test_the_flag_warning_points_at_the_users_line():
    import pandas as pd

    from bayesjudge.engine.laplace_check import warn_flagged

    table = pd.DataFrame({"item": ["a", "b"], "laplace_ok": [False, True]})
    with pytest.warns(UserWarning, match=r"laplace_ok=False\): \['a'\]") as record:
        warn_flagged(table, ["item"])
    assert record[0].filename == __file__  # not a file of the package (engine/ moved it once)


def test_scaled_offsets_value_equals_the_gradients_value_on_both_paths():
    """``ScaledOffsets.logp`` (no gradient: the importance weights) gives the value
    ``logp_grad`` gives, ``fn(to_x(y)) - n_z log tau``, where ``exp(-log tau)`` is safe and
    where it may overflow (log tau = -150: the slow path with numpy's error state)."""
    from bayesjudge.engine.laplace_check import ScaledOffsets

    tr = ScaledOffsets(slice(1, 3), 3)
    fn = lambda x: (-0.5 * np.sum(np.tanh(x) ** 2) + x[0], 1 - np.tanh(x) ** 2)  # noqa: E731
    value = lambda x: fn(x)[0]  # noqa: E731
    for t in (0.3, -2.0, -150.0):
        y = np.array([0.2, 0.5, -0.7, t])
        by_hand = fn(y * np.r_[1, np.exp(-t), np.exp(-t), 1])[0] - 2 * t
        assert tr.logp(value, y) == by_hand
        assert tr.logp_grad(fn, y)[0] == by_hand


def test_laplace_draws_weight_by_the_value_function_and_constrain_each_distinct_draw():
    """Laplace draws of a skewed 2-d density through :class:`Density`: the importance
    weights use the value-only role (``logp_jacobian_value``; the gradient role only finds
    the mode and Hessian), each distinct resampled draw is constrained once, and every
    draw's constrained value is its own row's."""
    from bayesjudge.engine import laplace
    from bayesjudge.engine.density import Density

    calls = {"logp_jacobian": 0, "logp_jacobian_value": 0, "constrain": 0}

    def logp_grad(x):
        calls["logp_jacobian"] += 1
        return -0.5 * x @ x - np.exp(x[0]) + x[0], -x - np.exp(x[0]) * np.r_[1, 0] + np.r_[1, 0]

    def value(x):
        calls["logp_jacobian_value"] += 1
        return np.asarray(-0.5 * x @ x - np.exp(x[0]) + x[0])

    def constrain(x):
        calls["constrain"] += 1
        return [np.exp(x[0]), x[1]]

    roles = {"logp": logp_grad, "logp_jacobian": logp_grad,
             "logp_jacobian_value": value, "constrain": constrain}
    density = Density(roles.__getitem__, np.zeros(2), ["a", "b"], True)
    fit = laplace.MAPResult(point={}, x=np.zeros(2), cov=None, logp=0.0)
    before = dict(calls)
    draws = laplace.laplace_draws(fit, density, 1000, random_seed=0)
    imp = fit.importance
    assert imp.resampled
    assert calls["logp_jacobian_value"] - before["logp_jacobian_value"] >= 1000
    distinct = np.unique(imp.draws, axis=0)
    assert len(distinct) < 1000  # resampling repeats draws ...
    assert calls["constrain"] - before["constrain"] == len(distinct)  # ... constrained once
    np.testing.assert_array_equal(draws["a"][0], np.exp(imp.draws[:, 0]))
    np.testing.assert_array_equal(draws["b"][0], imp.draws[:, 1])


@pytest.mark.parametrize("converged, says", [
    (True, "The Hessian at the MAP is not negative definite"),
    (False, "stopped short of a mode"),
])
def test_no_laplace_approximation_says_whether_the_map_converged(converged, says):
    """A flat direction: the FitError says the optimiser stopped short where it did (the
    LLMFAO crowd's 124 workers with a discriminator each: L-BFGS-B at its iteration limit,
    |gradient| 250), and never advises the default priors as if they had been changed."""
    from bayesjudge.engine import laplace
    from bayesjudge.engine.density import Density
    from bayesjudge.engine.messages import FitError

    def logp_grad(x):
        return np.asarray(-0.5 * x[0] ** 2), np.array([-x[0], 0.0])

    roles = {"logp": logp_grad, "logp_jacobian": logp_grad,
             "logp_jacobian_value": lambda x: np.asarray(-0.5 * x[0] ** 2),
             "constrain": lambda x: [x[0], x[1]]}
    density = Density(roles.__getitem__, np.zeros(2), ["a", "b"], True)
    fit = laplace.MAPResult(point={}, x=np.zeros(2), cov=None, logp=0.0, converged=converged)
    with pytest.raises(FitError, match=says) as err:
        laplace.laplace_draws(fit, density, 100, random_seed=0)
    assert "method='nuts'" in str(err.value) and "priors=None or" not in str(err.value)
