"""The fit / predict / summarize / save / load contract every model follows.

A model class supplies four pieces: how to validate and collapse the user's
tables into ``pm.Data`` values (``_prepare``), how to build the PyMC graph once
(``_build``), the pointwise log-likelihood in numpy (``_pointwise_loglik``, the
unit PSIS-LOO leaves out), and ``predict``. Everything else -- compile-once
MAP and NUTS, the ArviZ ``DataTree``, summaries with explicit ``ci_prob``,
netCDF round trips checked on load, ``compare`` -- lives here.
"""

from __future__ import annotations

import inspect
import json
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
import pymc as pm
import xarray as xr

from bayesjudge.inference import (
    MAPResult,
    Sampler,
    check_convergence,
    get_engine,
)

CI_PROB = 0.95
"""Credible-interval mass used by every summary (equal-tailed)."""

LAPLACE_DRAWS = 1000

Method = Literal["map", "nuts"]

_REGISTRY: dict[str, type["BayesianModel"]] = {}


class NotFittedError(AttributeError):
    """A fitted attribute or method was used before ``fit``."""


@dataclass
class FitData:
    """A validated data set, ready for the PyMC graph.

    Attributes
    ----------
    data : dict
        Values for the model's ``pm.Data`` containers (sufficient statistics).
    coords : dict
        Coordinates of the dims those containers use.
    observed : dict
        ``name -> (dims, values)`` stored in the ``observed_data`` group; the
        pointwise log-likelihood uses the same names and dims.
    shape_key : tuple
        Sizes that change parameter shapes (part of the compile-cache key).
    extra : dict
        Anything else the model needs to compute its log-likelihood.
    """

    data: dict[str, np.ndarray]
    coords: dict[str, Any]
    observed: dict[str, tuple[tuple[str, ...], np.ndarray]]
    shape_key: tuple = ()
    extra: dict[str, Any] = field(default_factory=dict)


class BayesianModel:
    """Base class: subclasses store keyword arguments only in ``__init__``.

    Fitted attributes (set by :meth:`fit`): ``method_``, ``map_`` (MAP point,
    MAP fits only), ``diagnostics_`` (NUTS only) and ``idata_`` (ArviZ
    ``DataTree`` with ``posterior``, ``log_likelihood`` and ``observed_data``;
    for MAP fits the posterior holds Laplace-approximation draws and its
    ``inference`` attribute says so).
    """

    _summary_vars: ClassVar[tuple[str, ...]] = ()
    _sampler_defaults: ClassVar[dict[str, Any]] = {}
    """Sampler settings a model's geometry needs (e.g. a higher target_accept)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.__name__] = cls

    # -- scikit-learn style parameters -----------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        names = cls.__dict__.get("_init_param_names")
        if names is None:  # inspect once per class: fit is called in tight loops
            names = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
            cls._init_param_names = names
        return names

    def get_params(self) -> dict[str, Any]:
        """Constructor arguments (so ``type(m)(**m.get_params())`` clones ``m``)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def _structure_key(self, fd: FitData) -> tuple:
        params = tuple((k, repr(v)) for k, v in self.get_params().items() if k != "random_seed")
        return (type(self).__name__, params, fd.shape_key)

    # -- to implement ---------------------------------------------------------------
    def _prepare(self, *args, **kwargs) -> FitData:  # pragma: no cover - abstract
        raise NotImplementedError

    def _build(self, fd: FitData) -> pm.Model:  # pragma: no cover - abstract
        raise NotImplementedError

    def _pointwise_loglik(
        self, params: dict[str, np.ndarray], fd: FitData
    ) -> dict[str, np.ndarray]:  # pragma: no cover - abstract
        """Log-likelihood per observation; params carry leading (chain, draw) axes."""
        raise NotImplementedError

    # -- fitting --------------------------------------------------------------------
    def fit(
        self,
        *args,
        method: Method = "map",
        draws: int = 1000,
        tune: int = 1000,
        chains: int = 4,
        sampler: Sampler = "nutpie",
        progressbar: bool = False,
        sampler_kwargs: dict | None = None,
        **kwargs,
    ):
        """Fit by MAP (L-BFGS-B + Laplace) or NUTS; returns ``self``.

        Parameters
        ----------
        method : {"map", "nuts"}
            ``"map"`` with ``priors="flat"`` reproduces the papers' maximum
            likelihood fits; ``"nuts"`` samples the full posterior.
        draws, tune, chains : int
            NUTS settings (ignored by MAP).
        sampler : {"nutpie", "pymc"}
            NUTS implementation; nutpie is compiled once per model structure.
        sampler_kwargs : dict, optional
            Passed to the sampler (e.g. ``{"target_accept": 0.95}``).

        Notes
        -----
        The MAP is the mode of the posterior density of the constrained
        parameters (no Jacobian, as ``pm.find_MAP``), so ``priors="flat"`` (or
        Beta(1, 1) on a probability) gives the maximum-likelihood estimate.
        """
        if method not in ("map", "nuts"):
            raise ValueError(f"method must be 'map' or 'nuts', got {method!r}")
        fd = self._prepare(*args, **kwargs)
        engine = get_engine(self._structure_key(fd), lambda: self._build(fd))
        engine.set_data(fd.data, fd.coords)
        self._fit_data = fd
        self._engine = engine
        self._idata = None
        self.map_ = None
        self.diagnostics_ = None
        if method == "map":
            # The Laplace covariance is computed on first use of idata_: a loop
            # over calibration splits that only predicts never pays for it.
            self._map_result: MAPResult | None = engine.find_map(
                random_seed=self.random_seed, laplace=False
            )
            self.map_ = {k: np.asarray(v) for k, v in self._map_result.point.items()}
        else:
            self._map_result = None
            settings = {**self._sampler_defaults, **(sampler_kwargs or {})}
            tree = engine.sample(draws, tune, chains, self.random_seed, sampler, progressbar,
                                 settings)
            self.diagnostics_ = check_convergence(tree, list(self._summary_vars))
            self._idata = self._assemble(tree["posterior"].to_dataset(), fd, tree["sample_stats"].to_dataset())
        self.method_ = method
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "method_"):
            raise NotFittedError(
                f"This {type(self).__name__} is not fitted yet: call .fit(...) first "
                f"(or {type(self).__name__}.load(path) for a saved fit)."
            )

    @property
    def idata_(self) -> xr.DataTree:
        """ArviZ ``DataTree``: posterior, log_likelihood, observed_data."""
        self._check_fitted()
        if self._idata is None:  # MAP: built on first use, the refit loop never pays for it
            fd = self._fit_data
            self._engine.set_data(fd.data, fd.coords)  # another fit may have swapped it
            draws = self._engine.laplace_draws(self._map_result, LAPLACE_DRAWS, self.random_seed)
            post = xr.Dataset(
                {k: (("chain", "draw", *self._dims_of(k, v)), v) for k, v in draws.items()},
                coords={"chain": [0], "draw": np.arange(LAPLACE_DRAWS)},
            )
            post.attrs["inference"] = "laplace approximation (unconstrained space), not NUTS"
            self._idata = self._assemble(post, fd)
        return self._idata

    def _dims_of(self, name: str, draws: np.ndarray) -> tuple[str, ...]:
        rv = self._engine.model.named_vars.get(name)
        dims = self._engine.model.named_vars_to_dims.get(name, ()) if rv is not None else ()
        dims = tuple(dims or ())
        if len(dims) != draws.ndim - 2:
            dims = tuple(f"{name}_dim_{i}" for i in range(draws.ndim - 2))
        return dims

    def _assemble(self, post: xr.Dataset, fd: FitData, stats: xr.Dataset | None = None) -> xr.DataTree:
        keep = [v for v in post.data_vars if not v.endswith("__")]
        post = post[keep]
        params = {k: post[k].values for k in keep}
        ll = self._pointwise_loglik(params, fd)
        coords = {"chain": post["chain"].values, "draw": post["draw"].values}
        log_lik = xr.Dataset(
            {k: (("chain", "draw", *fd.observed[k][0]), v) for k, v in ll.items()}, coords=coords
        )
        obs = xr.Dataset({k: (dims, np.asarray(v)) for k, (dims, v) in fd.observed.items()})
        groups = {"posterior": post, "log_likelihood": log_lik, "observed_data": obs}
        if stats is not None:
            groups["sample_stats"] = stats
        # Label every dim that has coordinates (system names, obs labels, ...)
        # so summaries and saved files describe themselves.
        for name, ds in groups.items():
            labels = {
                d: np.asarray(fd.coords[d]) for d in ds.dims
                if d in fd.coords and len(fd.coords[d]) == ds.sizes[d]
            }
            groups[name] = ds.assign_coords(labels)
        return xr.DataTree.from_dict(groups)

    def param_draws(self) -> dict[str, np.ndarray]:
        """Parameters with a leading sample axis (1 sample for MAP fits)."""
        self._check_fitted()
        if self.method_ == "map":
            return {k: np.asarray(v)[None] for k, v in self.map_.items()}
        post = self.idata_["posterior"].to_dataset()
        return {
            k: post[k].values.reshape(-1, *post[k].shape[2:])
            for k in post.data_vars
        }

    # -- summaries ------------------------------------------------------------------
    def summarize(self, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """Posterior summary of the model parameters with equal-tailed intervals.

        For MAP fits the table adds the ``map`` column (the optimum) and the
        interval comes from the Laplace approximation.
        """
        import arviz as az

        self._check_fitted()
        kind = "stats" if self.method_ == "map" else "all"
        table = az.summary(
            self.idata_, var_names=list(self._summary_vars), ci_prob=ci_prob,
            ci_kind="eti", kind=kind, round_to="none",
        )
        if self.method_ == "map":
            flat = []
            for name in self._summary_vars:
                flat.extend(np.ravel(self.map_[name]).tolist())
            table.insert(0, "map", flat)
        return table

    # -- persistence ------------------------------------------------------------------
    def _state(self) -> dict[str, Any]:
        """Extra JSON-able fitted state a model needs for predict after load."""
        return {}

    def _set_state(self, state: dict[str, Any]) -> None:
        pass

    def save(self, path) -> None:
        """Write the fit to netCDF; class, version and arguments go in attrs."""
        from bayesjudge import __version__

        self._check_fitted()
        tree = self.idata_.copy()
        tree.attrs.update(
            {
                "bayesjudge_class": type(self).__name__,
                "bayesjudge_version": __version__,
                "bayesjudge_params": json.dumps(self.get_params(), default=_json_default),
                "bayesjudge_method": self.method_,
                "bayesjudge_map": json.dumps(
                    {k: np.asarray(v).tolist() for k, v in (self.map_ or {}).items()}
                ),
                "bayesjudge_state": json.dumps(self._state(), default=_json_default),
            }
        )
        tree.to_netcdf(path)

    @classmethod
    def load(cls, path):
        """Load a fit written by :meth:`save`, checking class and version."""
        from bayesjudge import __version__

        tree = xr.open_datatree(path).load()
        attrs = tree.attrs
        name = attrs.get("bayesjudge_class")
        if name is None:
            raise ValueError(f"{path} was not written by bayesjudge (no bayesjudge_class attr).")
        target = _REGISTRY.get(name)
        if target is None:
            raise ValueError(f"{path} holds an unknown model class {name!r}.")
        if cls is not BayesianModel and target is not cls:
            raise TypeError(f"{path} holds a {name}, not a {cls.__name__}; use {name}.load.")
        if attrs.get("bayesjudge_version") != __version__:
            warnings.warn(
                f"{path} was saved by bayesjudge {attrs.get('bayesjudge_version')}, this is "
                f"{__version__}; refit if predictions look different.",
                UserWarning,
                stacklevel=2,
            )
        model = target(**json.loads(attrs["bayesjudge_params"]))
        model.method_ = attrs["bayesjudge_method"]
        saved_map = json.loads(attrs["bayesjudge_map"])
        model.map_ = {k: np.asarray(v) for k, v in saved_map.items()} or None
        model.diagnostics_ = None
        model._set_state(json.loads(attrs["bayesjudge_state"]))
        for key in [k for k in tree.attrs if k.startswith("bayesjudge_")]:
            del tree.attrs[key]
        model._idata = tree
        return model


def load(path) -> BayesianModel:
    """Load any saved bayesjudge model (the class is read from the file)."""
    return BayesianModel.load(path)


def compare(models: dict[str, BayesianModel], **kwargs) -> pd.DataFrame:
    """PSIS-LOO comparison (``arviz.compare``) of fits of the same data.

    Parameters
    ----------
    models : dict
        Name -> fitted model. All must have been fitted to the same observed data.
    """
    import arviz as az

    if len(models) < 2:
        raise ValueError("compare needs at least two fitted models.")
    trees = {}
    ref = None
    for name, m in models.items():
        tree = m.idata_
        obs = tree["observed_data"].to_dataset()
        if ref is None:
            ref = (name, obs)
        elif not obs.equals(ref[1]):
            raise ValueError(
                f"model {name!r} was fitted to different observed data than {ref[0]!r}; "
                f"PSIS-LOO comparison needs the same data."
            )
        trees[name] = _jitter_constant_loglik(tree, seed=len(trees))
    kwargs.setdefault("round_to", "none")
    return az.compare(trees, **kwargs)


def _jitter_constant_loglik(tree: xr.DataTree, seed: int) -> xr.DataTree:
    # An observation whose log-likelihood is identical in every draw (e.g. an
    # all-tie item under the local Davidson model: u = 0 and t = 0 pin
    # p = 1/3) makes ArviZ's Pareto tail fit raise "All tail values are the
    # same", although its LOO value is exactly that constant. A 1e-9 absolute
    # perturbation keeps every ELPD exact to ~1e-9 and lets PSIS run.
    ll = tree["log_likelihood"].to_dataset()
    changed = False
    rng = np.random.default_rng(seed)
    for name in ll.data_vars:
        v = ll[name].values
        const = np.ptp(v.reshape(-1, *v.shape[2:]), axis=0) == 0
        if const.any():
            v = v.copy()
            v[..., const] += 1e-9 * rng.standard_normal(v[..., const].shape)
            ll[name] = (ll[name].dims, v)
            changed = True
    if not changed:
        return tree
    tree = tree.copy()
    tree["log_likelihood"] = xr.DataTree(ll)
    return tree


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    raise TypeError(f"cannot serialise {type(obj).__name__}")
