"""The contract every registered model obeys, checked on each model's ``example_data``.

Parametrised over :func:`bayesjudge.base.registered_models`, so a model class added
later is checked without touching this file: implementing the abstract pieces of
:class:`~bayesjudge.BayesianModel` (including ``example_data``) is all it takes to
be covered. Each class compiles one MAP and one NUTS graph for the whole session.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayesjudge
from bayesjudge import CI_PROB, BayesianModel, NotFittedError, Prior
from bayesjudge.base import ExampleData, ModelFileError, registered_models
from bayesjudge.engine import ConvergenceWarning

MODELS = registered_models()
NAMES = sorted(MODELS)
NUTS = {"method": "nuts", "chains": 2, "draws": 200, "tune": 200}


def fit_quietly(model, *args, **kwargs):
    """Fit with ConvergenceWarning silenced: 2 x 200 draws can fall short of ESS 400."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(*args, **kwargs)


def test_registry_holds_every_public_model():
    public = {name for name in bayesjudge.__all__
              if inspect.isclass(getattr(bayesjudge, name))
              and issubclass(getattr(bayesjudge, name), BayesianModel)
              and not inspect.isabstract(getattr(bayesjudge, name))}
    assert public <= set(MODELS)
    assert {"DavidsonAggregator", "MisclassificationModel",
            "HierarchicalMisclassificationModel"} <= set(MODELS)


def test_base_is_abstract():
    with pytest.raises(TypeError, match="abstract"):
        BayesianModel()

    class Incomplete(BayesianModel):  # no predict, no example_data, ...
        def __init__(self, random_seed=0):
            self.random_seed = random_seed

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()
    assert "Incomplete" not in registered_models()


# ------------------------------------------------------------------ fitted fixtures
@pytest.fixture(scope="session")
def examples() -> dict[str, ExampleData]:
    return {name: MODELS[name].example_data(random_seed=0) for name in NAMES}


@pytest.fixture(scope="session")
def map_fits(examples):
    return {name: fit_quietly(MODELS[name](random_seed=3), *examples[name].fit_args)
            for name in NAMES}


@pytest.fixture(scope="session")
def nuts_fits(examples):
    return {name: fit_quietly(MODELS[name](random_seed=3), *examples[name].fit_args, **NUTS)
            for name in NAMES}


def _predict(model, example: ExampleData, **kwargs) -> pd.DataFrame:
    return model.predict(*example.predict_args, **kwargs)


# ------------------------------------------------------------------ construction
@pytest.mark.parametrize("name", NAMES)
def test_init_stores_arguments_only(name):
    cls = MODELS[name]
    params = inspect.signature(cls.__init__).parameters
    assert "random_seed" in params and "priors" in params
    model = cls()
    clone = cls(**model.get_params())
    assert clone.get_params() == model.get_params()
    assert not [k for k in vars(model) if k.endswith("_") and not k.startswith("_")]


@pytest.mark.parametrize("name", NAMES)
def test_default_priors_are_public_documented_and_overridable(name):
    cls = MODELS[name]
    defaults = cls.default_priors
    assert isinstance(defaults, Mapping) and defaults
    assert all(isinstance(p, Prior) for p in defaults.values())
    with pytest.raises(TypeError):
        defaults["new"] = Prior("Normal", mu=0, sigma=1)  # read-only view
    doc = inspect.getdoc(cls).replace('"', "'")
    for key, prior in defaults.items():
        assert key in doc, f"{name} docstring does not list the default prior of {key!r}"
        assert f"Prior('{prior.dist}'" in doc
    model = cls()
    resolved = model.resolved_priors()
    assert set(resolved) <= set(defaults)
    assert all(resolved[k] == defaults[k] for k in resolved)
    key = next(iter(resolved))
    override = Prior("Normal", mu=0, sigma=1)
    assert cls(priors={key: override}).resolved_priors()[key] == override
    assert cls(priors={key: override.to_dict()}).resolved_priors()[key] == override
    with pytest.raises(ValueError, match="unknown prior name"):
        cls(priors={"no_such_parameter": override}).resolved_priors()


@pytest.mark.parametrize("name", NAMES)
def test_predict_convention(name):
    sig = inspect.signature(MODELS[name].predict)
    ci = sig.parameters["ci_prob"]
    assert ci.kind is inspect.Parameter.KEYWORD_ONLY
    assert ci.default == CI_PROB
    positional = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"]
    example = MODELS[name].example_data()
    assert len(positional) == len(example.predict_args)
    assert (example.id_column is None) == (not example.predict_args)


def _public_callables():
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(bayesjudge.__path__, "bayesjudge."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for attr, obj in vars(module).items():
            if attr.startswith("_") or getattr(obj, "__module__", None) != info.name:
                continue
            if inspect.isfunction(obj):
                yield f"{info.name}.{attr}", obj
            elif inspect.isclass(obj):
                for meth_name, meth in vars(obj).items():
                    if not meth_name.startswith("_") and inspect.isfunction(meth):
                        yield f"{info.name}.{attr}.{meth_name}", meth


def test_every_public_interval_default_is_ci_prob():
    wrong = []
    for where, fn in _public_callables():
        for p in inspect.signature(fn).parameters.values():
            if p.name in ("ci_prob", "level") and p.default is not p.empty and p.default != CI_PROB:
                wrong.append(f"{where}({p.name}={p.default!r})")
    assert not wrong, f"interval defaults that bypass CI_PROB: {wrong}"


# ------------------------------------------------------------------ unfitted use
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("call", ["predict", "summarize", "idata_", "save", "param_draws"])
def test_unfitted_use_raises_not_fitted(name, call, tmp_path):
    model = MODELS[name]()
    example = MODELS[name].example_data()
    actions = {
        "predict": lambda: _predict(model, example),
        "summarize": model.summarize,
        "idata_": lambda: model.idata_,
        "save": lambda: model.save(tmp_path / "never.nc"),
        "param_draws": model.param_draws,
    }
    with pytest.raises(NotFittedError, match=r"call \.fit\(\.\.\.\) first"):
        actions[call]()


# ------------------------------------------------------------------ fitting
@pytest.mark.parametrize("name", NAMES)
def test_fit_returns_self(name, examples):
    model = MODELS[name]()
    assert fit_quietly(model, *examples[name].fit_args) is model
    assert model.method_ == "map"


@pytest.mark.parametrize("name", NAMES)
def test_fit_names_its_tables_and_the_models_own_options(name, examples):
    """fit(table, random_seed=1) is a TypeError naming fit's tables and that random_seed is
    the model's option (it was Python's complaint about the private _prepare)."""
    example = examples[name]
    with pytest.raises(TypeError, match=rf"{name}\.fit\(\) takes the table\(s\) .*"
                       rf"random_seed is an option of the model: {name}\(random_seed=\.\.\.\)"):
        MODELS[name]().fit(*example.fit_args, random_seed=1)
    with pytest.raises(TypeError, match=rf"{name}\.fit\(\) takes the table\(s\)"):
        MODELS[name]().fit(*example.fit_args, nonsense=2)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("method", ["map", "nuts"])
def test_predict_keeps_every_row_in_input_order(name, method, examples, map_fits, nuts_fits):
    model = (map_fits if method == "map" else nuts_fits)[name]
    example = examples[name]
    pred = _predict(model, example)
    assert isinstance(pred, pd.DataFrame) and len(pred)
    numeric = pred.select_dtypes("number")
    assert np.isfinite(numeric.to_numpy(float)).all(), "predict returned NaN or inf"
    if example.id_column is None:
        return
    data = example.predict_args[0]
    ids = pd.unique(data[example.id_column])
    assert pred[example.id_column].tolist() == list(ids)
    # reversed input: reversed output, same values per id, ids never re-typed
    flipped = data.iloc[::-1].reset_index(drop=True)
    pred_flipped = model.predict(flipped, *example.predict_args[1:])
    assert pred_flipped[example.id_column].tolist() == list(pd.unique(flipped[example.id_column]))
    pd.testing.assert_frame_equal(
        pred_flipped.set_index(example.id_column).loc[ids].reset_index(), pred)


@pytest.mark.parametrize("name", NAMES)
def test_predict_lines_up_with_the_callers_index(name, examples, map_fits):
    """A per-row predict keeps the caller's index (``df.join(predict(df)[added])`` on a filtered,
    string-indexed table gives every row its own prediction); a per-id one gives one row
    per id, whatever the index."""
    model, example = map_fits[name], examples[name]
    if example.id_column is None:
        return
    data = example.predict_args[0]
    labelled = data.set_axis([f"row{i}" for i in range(len(data))])
    pred = model.predict(labelled, *example.predict_args[1:])
    if len(pred) != len(data):  # per id (item, battle)
        assert len(pred) == len(pd.unique(data[example.id_column]))
        return
    assert pred.index.equals(labelled.index)
    every_other = labelled.iloc[1::2]
    added = [c for c in pred.columns if c not in data.columns]
    joined = every_other.join(model.predict(every_other, *example.predict_args[1:])[added])
    pd.testing.assert_frame_equal(joined[added], pred.loc[every_other.index, added])


@pytest.mark.parametrize("name", NAMES)
def test_ci_prob_is_validated(name, examples, nuts_fits):
    model = nuts_fits[name]
    for bad in (0.0, 1.0, 95):
        with pytest.raises(ValueError, match="ci_prob"):
            _predict(model, examples[name], ci_prob=bad)
        with pytest.raises(ValueError, match="ci_prob"):
            model.summarize(ci_prob=bad)


@pytest.mark.parametrize("name", NAMES)
def test_narrower_ci_prob_gives_narrower_intervals(name, examples, nuts_fits):
    model = nuts_fits[name]
    wide, narrow = model.summarize(ci_prob=0.95), model.summarize(ci_prob=0.5)
    assert {"eti95_lb", "eti95_ub"} <= set(wide.columns)
    assert {"eti50_lb", "eti50_ub"} <= set(narrow.columns)
    assert (narrow["eti50_ub"] - narrow["eti50_lb"]
            <= wide["eti95_ub"] - wide["eti95_lb"] + 1e-12).all()


# ------------------------------------------------------------------ persistence
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("method", ["map", "nuts"])
def test_save_load_round_trip(name, method, examples, map_fits, nuts_fits, tmp_path):
    model = (map_fits if method == "map" else nuts_fits)[name]
    path = tmp_path / f"{name}.nc"
    model.save(path)
    loaded = MODELS[name].load(path)
    assert type(loaded) is type(model)
    assert loaded.get_params() == model.get_params()
    pd.testing.assert_frame_equal(_predict(loaded, examples[name]), _predict(model, examples[name]))
    pd.testing.assert_frame_equal(loaded.summarize(), model.summarize())
    for group in ("posterior", "log_likelihood", "observed_data"):
        xr.testing.assert_equal(loaded.idata_[group].to_dataset(),
                                model.idata_[group].to_dataset())
    # saving over the file the model was loaded from (a re-run notebook cell)
    loaded.save(path)
    again = bayesjudge.load(path)
    pd.testing.assert_frame_equal(again.summarize(), model.summarize())


@pytest.mark.parametrize("name", NAMES[:1])
def test_load_refuses_foreign_and_damaged_files(name, map_fits, tmp_path):
    damaged = tmp_path / "damaged.nc"
    map_fits[name].save(damaged)
    damaged.write_bytes(damaged.read_bytes()[:200])
    text = tmp_path / "notes.nc"
    text.write_text("not a netCDF file")
    foreign = tmp_path / "foreign.nc"
    xr.DataTree.from_dict({"posterior": xr.Dataset({"x": ("draw", np.arange(3.0))})}).to_netcdf(
        foreign, engine="h5netcdf")
    for path in (damaged, text, foreign):
        with pytest.raises(ModelFileError, match="not a bayesjudge model file"):
            bayesjudge.load(path)
    with pytest.raises(FileNotFoundError):
        bayesjudge.load(tmp_path / "missing.nc")


@pytest.mark.parametrize("name", NAMES[:1])
def test_save_checks_the_path(name, map_fits, tmp_path):
    with pytest.raises(IsADirectoryError):
        map_fits[name].save(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        map_fits[name].save(tmp_path / "missing" / "fit.nc")
    assert not list(tmp_path.iterdir())  # nothing half-written


# ------------------------------------------------------------------ reproducibility
@pytest.mark.parametrize("name", NAMES)
def test_same_seed_gives_bit_identical_fits(name, examples, map_fits, nuts_fits):
    args = examples[name].fit_args
    again_map = fit_quietly(MODELS[name](random_seed=3), *args)
    for key, value in map_fits[name].map_.items():
        np.testing.assert_array_equal(again_map.map_[key], value)
    pd.testing.assert_frame_equal(again_map.summarize(), map_fits[name].summarize())
    again_nuts = fit_quietly(MODELS[name](random_seed=3), *args, **NUTS)
    # values, dims and coords bit for bit (attrs hold a creation time stamp)
    xr.testing.assert_equal(again_nuts.idata_["posterior"].to_dataset(),
                            nuts_fits[name].idata_["posterior"].to_dataset())
    other = fit_quietly(MODELS[name](random_seed=4), *args, **NUTS)
    assert not other.idata_["posterior"].to_dataset().equals(
        nuts_fits[name].idata_["posterior"].to_dataset())


# ------------------------------------------------------------------ what compare needs
@pytest.mark.parametrize("name", NAMES)
def test_idata_has_what_compare_needs(name, map_fits, nuts_fits):
    for model in (map_fits[name], nuts_fits[name]):
        tree = model.idata_
        for group in ("posterior", "log_likelihood", "observed_data"):
            assert group in tree.children, f"{name}.idata_ lacks {group}"
        ll = tree["log_likelihood"].to_dataset()
        obs = tree["observed_data"].to_dataset()
        assert ll.data_vars
        for var in ll.data_vars:
            assert var in obs, f"log_likelihood[{var!r}] has no observed_data counterpart"
            assert ll[var].dims[:2] == ("chain", "draw")
            assert ll[var].dims[2:] == obs[var].dims
            assert np.isfinite(ll[var].values).all()
    with warnings.catch_warnings():  # tiny example data: Pareto k warnings are expected
        warnings.simplefilter("ignore", UserWarning)
        table = bayesjudge.compare({"map": map_fits[name], "nuts": nuts_fits[name]})
    assert set(table.index) == {"map", "nuts"} and np.isfinite(table["elpd"]).all()


#: MAP predictions whose intervals are not Laplace intervals: the preference models
#: report the empirical-Bayes Beta interval at the MAP hyperparameters.
_NOT_LAPLACE_PREDICT = {"PreferenceDistribution"}


@pytest.mark.parametrize("name", NAMES)
def test_map_tables_say_where_laplace_holds(name, examples, map_fits, nuts_fits):
    # bayesjudge.engine.laplace_check: every MAP table with Laplace intervals has a boolean
    # laplace_ok column; NUTS tables do not
    model = map_fits[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tables = {"summarize": model.summarize(), "predict": _predict(model, examples[name])}
        for report in ("ranking", "judges"):
            if hasattr(model, report):
                tables[report] = getattr(model, report)()
        assert "laplace_ok" not in nuts_fits[name].summarize()
    for report, table in tables.items():
        intervals = any(c == "lower" or c.endswith("_lower") for c in table.columns)
        if report == "predict" and (not intervals or name in _NOT_LAPLACE_PREDICT):
            continue
        assert table["laplace_ok"].dtype == bool, report


@pytest.mark.parametrize("name", NAMES)
def test_map_summary_reports_the_monte_carlo_error_of_its_mean(name, map_fits):
    # A MAP fit's mean and interval come from 1,000 Laplace draws, importance-resampled
    # when the weights pass: their MC error is sd / sqrt(effective number), the weights'
    # ESS (Kish's, as laplace_check stores it) or the independent draws' count.
    model = map_fits[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = model.summarize()
    post = model.idata_.posterior
    n = post.sizes["chain"] * post.sizes["draw"]
    resampled = "importance-resampled" in str(post.attrs.get("inference", ""))
    n_eff = min(float(post.attrs["importance_ess"]), n) if resampled else n
    want = np.concatenate([post[v].values.reshape(n, -1).std(axis=0, ddof=1)
                           for v in model._summary_vars]) / np.sqrt(n_eff)
    np.testing.assert_allclose(table["mcse_mean"].to_numpy(), want, rtol=1e-6, atol=1e-15)
    assert 1 <= n_eff <= n


def _element_rows(post, names):
    """(label, draws) of every element of ``names``, labelled as ArviZ labels rows."""
    for name in names:
        var = post[name].transpose("chain", "draw", ...)
        dims = var.dims[2:]
        for idx in np.ndindex(*var.shape[2:]):
            labels = [str(var.coords[d].values[i]) if d in var.coords else str(i)
                      for d, i in zip(dims, idx, strict=True)]
            yield (f"{name}[{', '.join(labels)}]" if dims else name), var.values[(..., *idx)]


@pytest.mark.parametrize("method", ["map", "nuts"])
@pytest.mark.parametrize("name", NAMES)
def test_every_summary_row_holds_its_own_elements_numbers(name, method, map_fits, nuts_fits):
    # Each row's mean and sd against the draws of the element its label names, by hand:
    # ArviZ 1.3's summary of several variables at once mislabelled AnchoredBT's
    # judge_item_bias and judge_shift rows (dims (judge, item) after skill's (item)).
    model = (map_fits if method == "map" else nuts_fits)[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = model.summarize()
    rows = dict(_element_rows(model.idata_.posterior, model._summary_vars))
    assert list(table.index) == list(rows)
    draws = np.stack([d.ravel() for d in rows.values()], axis=1)
    np.testing.assert_allclose(table["mean"].to_numpy(), draws.mean(axis=0), rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(table["sd"].to_numpy(), draws.std(axis=0, ddof=1), rtol=1e-9,
                               atol=1e-12)
