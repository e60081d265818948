"""NUTS back ends (nutpie numba / nutpie on C callbacks / PyMC's JAX samplers) and the
on-disk engine cache.

Every route must sample the same posterior: each is checked against the numba-compiled
nutpie fit of the same model and data (posterior means within Monte Carlo error).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bayesjudge import BTSigma, MisclassificationModel
from bayesjudge.engine import ConvergenceWarning, compiled, nuts_settings, samplers
from bayesjudge.engine import disk_cache as engine_cache

COUNTS = (300, 500, 40, 50, 35, 50)
SMALL = {"method": "nuts", "draws": 500, "tune": 500, "chains": 2}
NUTS = {"method": "nuts"}  # the defaults: 4 chains x (1000 tune + 1000 draws)


def _agree(a, b, name="accuracy"):
    """Posterior means of two fits within 5 Monte Carlo standard errors."""
    da, db = (np.asarray(m.idata_.posterior[name]).ravel() for m in (a, b))
    se = da.std() * np.sqrt(1 / a.diagnostics_["min_ess_bulk"] + 1 / b.diagnostics_["min_ess_bulk"])
    assert abs(da.mean() - db.mean()) < 5 * se, (da.mean(), db.mean(), se)


@pytest.fixture(scope="module")
def auto_fit():
    compiled.clear_cache()
    return MisclassificationModel(random_seed=2).fit_counts(*COUNTS, **NUTS)


@pytest.fixture(scope="module")
def numba_fit(auto_fit):
    return MisclassificationModel(random_seed=1).fit_counts(*COUNTS, sampler="nutpie", **NUTS)


def test_unknown_sampler_names_the_choices():
    with pytest.raises(ValueError, match="sampler must be one of"):
        MisclassificationModel().fit_counts(*COUNTS, sampler="stan", **SMALL)


def test_auto_runs_nutpie_on_c_callbacks_for_a_small_model(auto_fit, numba_fit):
    fit = auto_fit
    assert fit.sampler_ == "nutpie-c" and numba_fit.sampler_ == "nutpie"
    assert fit.diagnostics_["max_rhat"] < 1.01 and fit.diagnostics_["divergences"] == 0
    for name in ("accuracy", "specificity", "sensitivity"):
        _agree(fit, numba_fit, name)
    # coords and dims come out as with the numba route
    post = fit.idata_.posterior
    assert set(numba_fit.idata_.posterior.data_vars) == set(post.data_vars)
    assert post["accuracy"].dims == ("chain", "draw")


def _data(elements):
    return {"a": np.zeros(elements // 2), "b": np.zeros(elements - elements // 2)}


def _target(elements, nutpie_model=None):
    """What Engine.sample hands run_nuts, with a stub in place of nutpie's compiled model."""
    return samplers.NutsTarget(density=None, model=None, data=_data(elements), coords={},
                               nutpie_model=nutpie_model)


def test_route_follows_the_size_of_the_data():
    # a handful of counts: ~64,000 callbacks (~3 s) beat numba's compilation
    assert samplers.choose_route(_data(6), 1000, 1000, 4, 2) == "nutpie-c"
    assert samplers.choose_route(_data(5_000), 1000, 1000, 4, 2) == "nutpie-c"
    # SummEval-scale cells (~2 ms a gradient): numba's parallel chains amortise the compile
    assert samplers.choose_route(_data(96_000), 1000, 1000, 4, 2) == "nutpie-cached"
    # more iterations make the compile cheaper relative to the callbacks
    assert samplers.choose_route(_data(5_000), 10_000, 10_000, 4, 2) == "nutpie-cached"
    # the route depends on the data and settings only (not on a numba model of the structure
    # compiled earlier in the process: choose_route is not even given one), so the same
    # data, settings and seed give the same draws in any process


@pytest.mark.parametrize("sampler", ["numpyro", "blackjax"])
def test_jax_samplers_on_cpu_sample_the_same_posterior(sampler, numba_fit):
    pytest.importorskip(sampler)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = MisclassificationModel(random_seed=3).fit_counts(*COUNTS, sampler=sampler, **SMALL)
    assert fit.sampler_ == sampler
    _agree(fit, numba_fit)
    assert fit.diagnostics_["max_rhat"] < 1.05
    assert fit.predict().shape[0] >= 1


def test_jax_bodies_of_the_fused_likelihoods_equal_the_numba_kernels():
    pytest.importorskip("jax")
    import pytensor
    import pytensor.tensor as pt

    from bayesjudge.models.bradley_terry import kernel as bt_kernel

    for register in samplers.JAX_REGISTRATIONS:  # as sample_jax does
        register()
    rng = np.random.default_rng(0)
    n_cells, n_pairs = 300, 40
    d, scale, bias, tie = rng.normal(size=n_pairs), rng.gamma(2, 0.5, 3), rng.normal(size=2), \
        rng.normal(size=3)
    pair, col = rng.integers(0, n_pairs, n_cells), rng.integers(0, 3, n_cells)
    bcol, tcol = rng.integers(0, 2, n_cells), rng.integers(0, 3, n_cells)
    n_left, n_tie, n_right = (rng.integers(0, 4, n_cells).astype(float) for _ in range(3))
    win = n_left + 0.5 * n_tie
    cases = [
        (bt_kernel.BTLoglik(), (d, scale, pair, col, win, n_left + n_tie + n_right)),
        (bt_kernel.DavidsonLoglik(),
         (d, scale, bias, tie, pair, col, bcol, tcol, n_left, n_tie, n_right)),
    ]
    for op, args in cases:
        inputs = [pt.as_tensor_variable(np.asarray(a)).type() for a in args]
        outs = op(*inputs)
        fn = pytensor.function(inputs, outs, mode="JAX")
        for got, want in zip(fn(*args), type(op).kernel(*args)):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10)


@pytest.mark.slow
def test_bt_sigma_on_numpyro_samples_the_nutpie_posterior():
    pytest.importorskip("numpyro")
    ex = BTSigma.example_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        jax_fit = BTSigma(random_seed=1).fit(*ex.fit_args, sampler="numpyro", **NUTS)
        ref = BTSigma(random_seed=2).fit(*ex.fit_args, **NUTS)
    assert jax_fit.sampler_ == "numpyro"
    a, b = jax_fit.ranking(), ref.ranking()
    width = (b["skill_upper"] - b["skill_lower"]).to_numpy()  # ~3.3 posterior sd
    # two posterior means of ~4,000 draws: differences are a few % of an sd
    assert np.max(np.abs(a["skill"].to_numpy() - b["skill"].to_numpy()) / width) < 0.1


# ------------------------------------------------------------------ engine disk cache


@pytest.fixture
def disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BAYESJUDGE_CACHE_DIR", str(tmp_path))
    compiled.clear_cache()
    yield tmp_path
    compiled.clear_cache()


def _count_compiles(monkeypatch):
    calls = []
    original = compiled.Engine._compile

    def counting(self, role):
        calls.append(role)
        return original(self, role)

    monkeypatch.setattr(compiled.Engine, "_compile", counting)
    return calls


def test_a_fresh_engine_loads_its_functions_from_disk(disk_cache, monkeypatch):
    calls = _count_compiles(monkeypatch)
    first = MisclassificationModel(priors="flat").fit_counts(*COUNTS)
    first.summarize()  # Laplace: the log density with the Jacobian too, and its value
    # alone for the importance weights of the draws
    assert sorted(calls) == ["constrain", "fgh", "logp_jacobian", "logp_jacobian_value"]
    assert len(list(disk_cache.glob("*.pkl"))) == 4  # MAP by Newton (fgh)
    compiled.clear_cache()  # as a new process: nothing compiled in memory
    calls.clear()
    other = (30, 50, 45, 50, 30, 50)  # different data: the loaded functions must see them
    loaded = MisclassificationModel(priors="flat").fit_counts(*other)
    loaded_summary = loaded.summarize()
    assert calls == []
    # the loaded value-only density sees the new counts as the loaded gradient one does
    density, x = loaded._engine.density, loaded._map_result.laplace_x
    assert float(density.logp_jac_value(x)) == pytest.approx(float(density.logp_jac(x)[0]),
                                                             rel=1e-12)
    monkeypatch.setenv("BAYESJUDGE_CACHE_DIR", "")  # off: compile from scratch
    compiled.clear_cache()
    fresh = MisclassificationModel(priors="flat").fit_counts(*other)
    assert sorted(calls) == ["constrain", "fgh"]
    for name in ("accuracy", "specificity", "sensitivity"):
        np.testing.assert_allclose(loaded.map_[name], fresh.map_[name], rtol=1e-10)
    np.testing.assert_allclose(loaded_summary["mean"], fresh.summarize()["mean"], atol=0.02)
    # flat-prior MAP = the closed form (Rogan-Gladen) on the *new* counts
    q0, q1, p = 30 / 50, 45 / 50, 30 / 50
    np.testing.assert_allclose(loaded.map_["accuracy"], (p + q0 - 1) / (q0 + q1 - 1), rtol=1e-6)


def test_unreadable_entry_is_recompiled_and_replaced(disk_cache, monkeypatch):
    MisclassificationModel(priors="flat").fit_counts(*COUNTS)
    for entry in disk_cache.glob("*.pkl"):
        entry.write_bytes(b"not a pickle")
    compiled.clear_cache()
    calls = _count_compiles(monkeypatch)
    fit = MisclassificationModel(priors="flat").fit_counts(*COUNTS)
    assert sorted(calls) == ["constrain", "fgh"]
    assert np.isfinite(fit.map_["accuracy"])


def test_entries_hold_no_user_data_and_only_private_ones_are_loaded(disk_cache, monkeypatch):
    import os
    import pickle

    counts = (123_457, 234_567, 45, 50, 35, 50)
    fit = MisclassificationModel(priors="flat").fit_counts(*counts)
    entries = sorted(disk_cache.glob("*.pkl"))
    assert entries and all(e.stat().st_mode & 0o077 == 0 for e in entries)  # 0600
    values = [np.asarray(v.get_value()) for entry in entries
              for v in pickle.loads(entry.read_bytes())["function"].get_shared()]
    assert values and all(not v.any() for v in values)  # zeroed: no counts on disk
    # storing left the fitted engine's data alone: its MAP is Rogan-Gladen on the counts
    p, q0, q1 = 123_457 / 234_567, 35 / 50, 45 / 50
    np.testing.assert_allclose(fit.map_["accuracy"], (p + q0 - 1) / (q0 + q1 - 1), rtol=1e-6)
    # an entry others can write to is never unpickled (compiled afresh instead)
    os.chmod(entries[0], 0o666)
    compiled.clear_cache()
    calls = _count_compiles(monkeypatch)
    MisclassificationModel(priors="flat").fit_counts(*counts)
    assert len(calls) == 1


def test_keys_that_print_an_address_are_never_cached():
    assert engine_cache.entry_name(("M", object()), "logp") is None
    assert engine_cache.entry_name(("M", (("priors", "None"),)), "logp").endswith(".pkl")
    a = engine_cache.entry_name(("M", 1), "logp")
    assert a != engine_cache.entry_name(("M", 2), "logp")
    assert a != engine_cache.entry_name(("M", 1), "constrain")


def test_cache_dir_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("BAYESJUDGE_CACHE_DIR", "0")
    assert engine_cache.cache_dir() is None
    monkeypatch.delenv("BAYESJUDGE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    assert str(engine_cache.cache_dir()) == "/somewhere/bayesjudge"


# ------------------------------------------------------------------ cores


def test_cores_is_validated():
    assert samplers.check_cores(None) is None
    assert samplers.check_cores(np.int64(3)) == 3
    for bad in (0, -1, 1.5, True, "2", nuts_settings.MAX_CHAINS + 1):
        with pytest.raises(ValueError, match="cores must be a positive integer"):
            samplers.check_cores(bad)


class _NutpieStub:
    shared_var_keys: list = []


class _Captured(Exception):
    pass


@pytest.mark.parametrize("cores, kwargs, chains, expect", [
    (None, {"cores": 4}, 4, 4),  # used to be "got multiple values for keyword 'cores'"
    (3, {}, 4, 3),
    (8, {}, 4, 4),  # one thread per chain at most
    (None, {}, 4, "machine"),  # default: one per chain, up to the machine's CPUs
])
def test_cores_reach_nutpie(monkeypatch, cores, kwargs, chains, expect):
    seen = {}

    def capture(compiled, **kw):
        seen.update(kw)
        raise _Captured

    monkeypatch.setattr(samplers.interrupts, "nutpie_sample", capture)
    with pytest.raises(_Captured):
        samplers.run_nuts(_target(6, _NutpieStub()), 100, 100, chains, 0, sampler="nutpie",
                          sampler_kwargs=kwargs, cores=cores)
    want = min(chains, samplers.available_cores()) if expect == "machine" else expect
    assert seen["cores"] == want


def test_cores_given_twice_must_agree():
    with pytest.raises(ValueError, match="disagree"):
        samplers.run_nuts(_target(6), 100, 100, 4, 0, sampler="nutpie",
                          sampler_kwargs={"cores": 2}, cores=3)


@pytest.mark.filterwarnings("ignore::bayesjudge.engine.ConvergenceWarning")  # short runs
def test_fit_takes_cores_on_every_route():
    # the callback route runs one thread whatever cores says (it used to crash on
    # sampler_kwargs={"cores": ...} with a duplicate keyword)
    for extra in ({"cores": 4}, {"sampler_kwargs": {"cores": 4}}):
        fit = MisclassificationModel(random_seed=2).fit_counts(
            *COUNTS, method="nuts", draws=200, tune=200, chains=2, **extra)
        assert fit.sampler_ == "nutpie-c" and fit.idata_.posterior.sizes["draw"] == 200
    with pytest.raises(ValueError, match="cores must be a positive integer"):
        MisclassificationModel().fit_counts(*COUNTS, method="nuts", cores=0)
