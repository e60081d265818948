"""The fit / predict / summarize / save / load contract every model follows.

A model class supplies five pieces: how to validate and collapse the user's
tables into ``pm.Data`` values (``_prepare``), how to build the PyMC graph once
(``_build``), the pointwise log-likelihood in numpy (``_pointwise_loglik``, the
unit PSIS-LOO leaves out), ``predict``, and a small synthetic data set
(``example_data``) on which the contract tests check it. Everything else --
compile-once MAP and NUTS, the ArviZ ``DataTree``, summaries with explicit
``ci_prob``, netCDF round trips checked on load, ``compare`` -- lives here.
``tests/test_contract.py`` runs every registered class through the same checks.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
import pymc as pm
import xarray as xr

from bayesjudge.constants import CI_PROB, __version__
from bayesjudge.data import check_ci_prob
from bayesjudge.data.frames import as_pandas
from bayesjudge.engine import MAPResult, Sampler, get_engine
from bayesjudge.engine.diagnostics import check_convergence, summary_table
from bayesjudge.engine.laplace_check import NUTS_FIX, laplace_attrs, read_flags, warn_flagged
from bayesjudge.lazy import import_subpackages
from bayesjudge.persistence import (
    ModelFileError,
    PicklesAsModelFile,
    read_model_file,
    warn_if_other_version,
    write_model_file,
)
from bayesjudge.priors import Prior, resolve_priors
from bayesjudge.structures import ExampleData, FitData, check_fit_tables, label_dims, posterior_tree

__all__ = ["CI_PROB", "BayesianModel", "ExampleData", "FitData", "ModelFileError",
           "NotFittedError", "load", "registered_models"]

LAPLACE_DRAWS = 1000

Method = Literal["map", "nuts"]

_REGISTRY: dict[str, type["BayesianModel"]] = {}


class NotFittedError(AttributeError):
    """A fitted attribute or method was used before ``fit``."""


def registered_models() -> dict[str, type["BayesianModel"]]:
    """Every concrete model class, by name (the contract tests iterate over it)."""
    import_subpackages("bayesjudge.models")  # every family registers its classes
    return dict(_REGISTRY)


class BayesianModel(PicklesAsModelFile, ABC):
    """Abstract base of every bayesjudge model.

    Subclasses store their keyword arguments, unchanged, in ``__init__`` (so
    ``type(m)(**m.get_params())`` clones ``m``) and implement the abstract
    pieces below; :meth:`fit`, :meth:`summarize`, :meth:`save`, :meth:`load`
    and :attr:`idata_` come from here.

    The ``predict`` convention
        ``predict(data, *, ci_prob=CI_PROB, ...)`` when the model predicts on
        new data (the data first and positional; one output row per input item,
        in input order), ``predict(*, ci_prob=CI_PROB, ...)`` when it reports
        fitted quantities. ``ci_prob`` is always keyword-only and defaults to
        :data:`bayesjudge.CI_PROB`; intervals are equal-tailed.

    Priors
        ``default_priors`` (class attribute) maps every parameter name a model
        can use to its :class:`~bayesjudge.Prior` (with its ``dims``); the
        ``priors`` argument overrides them by name, or ``"flat"`` asks for the
        flat priors under which MAP is the papers' maximum likelihood.
        :meth:`resolved_priors` shows what a configured instance will use.

    Attributes
    ----------
    random_seed : int or None
        Seeds NUTS and the Laplace draws of MAP fits (every subclass takes it).
    priors : None, "flat" or dict
        Overrides of ``default_priors`` by name (every subclass takes it).
    method_ : {"map", "nuts"}
        How the model was fitted.
    map_ : dict or None
        MAP point (MAP fits only).
    diagnostics_ : dict or None
        R-hat, ESS and divergences (NUTS fits only).
    sampler_ : str or None
        The NUTS route that ran (NUTS fits only; see ``fit``'s ``sampler``).
    idata_ : xarray.DataTree
        ``posterior``, ``log_likelihood``, ``observed_data`` (and
        ``sample_stats`` for NUTS). For MAP fits the posterior holds
        Laplace-approximation draws and its ``inference`` attribute says so.
    """

    random_seed: int | None
    priors: None | str | Mapping[str, Prior | Mapping[str, Any]]
    default_priors: ClassVar[Mapping[str, Prior]] = MappingProxyType({})

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not inspect.isabstract(cls):
            _REGISTRY[cls.__name__] = cls
        # A read-only view: a user editing cls.default_priors must not change
        # every later fit behind their back (pass priors={...} instead).
        if not isinstance(cls.__dict__.get("default_priors", MappingProxyType({})),
                          MappingProxyType):
            cls.default_priors = MappingProxyType(dict(cls.default_priors))

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

    #: MAP by damped Newton on the exact Hessian (models with a few parameters; see
    #: :mod:`bayesjudge.engine.optim`), else L-BFGS-B.
    _map_newton = False
    #: The graph has no static size (``FitData.shape_key`` then holds no sizes): one
    #: compiled engine serves data of any size (:class:`bayesjudge.engine.Engine`).
    _generic_shapes = False
    _fitting_method = "map"

    @property
    def _sampler_defaults(self) -> dict[str, Any]:
        """NUTS settings this geometry needs (measured; ``sampler_kwargs`` take precedence)."""
        return {}

    def _map_starts(self, fd: FitData, engine) -> list[np.ndarray | None]:
        """Starting points of the MAP search (None: the graph's initial point); the best
        optimum is kept (override where a barrier can hide the mode from the default)."""
        return [None]

    def _laplace_blocks(self, fd: FitData, engine) -> np.ndarray | None:
        """Block label per unconstrained coordinate for a sparse Laplace Hessian (None: dense):
        b >= 0 interacts only with its block and the globals (-1), as in
        :func:`bayesjudge.engine.hessian.compressed_hessian`."""
        return None

    def _laplace_reparam(self, engine) -> tuple[slice, int] | None:
        return None  # (offsets, log scale) of a non-centred scale: Engine.laplace_draws

    def _laplace_hyper(self, engine) -> np.ndarray | None:
        return None  # INLA's hyperparameters without Hessian blocks: Engine.laplace_draws

    def _prior_names(self) -> tuple[str, ...]:
        """Names of ``default_priors`` this configuration uses (all, unless overridden)."""
        return tuple(self.default_priors)

    def _flat_priors(self) -> dict[str, Prior] | None:
        """Priors ``priors="flat"`` stands for (None: ``Prior("Flat")`` for every name)."""
        return None

    def resolved_priors(self) -> dict[str, Prior]:
        """The priors this configured model uses: defaults merged with ``priors``.

        Raises
        ------
        ValueError
            ``priors`` names a parameter this configuration does not have.
        """
        names = self._prior_names()
        defaults = {k: self.default_priors[k] for k in names}
        flat = self._flat_priors()
        return resolve_priors(self.priors, defaults,
                              flat=None if flat is None else {k: flat[k] for k in names})

    def _is_flat(self, name: str) -> bool:
        """The resolved prior of parameter ``name`` is flat (False if it has none)."""
        prior = self.resolved_priors().get(name)
        return prior is not None and prior.dist == "Flat"

    # -- to implement ---------------------------------------------------------------
    @property
    @abstractmethod
    def _summary_vars(self) -> tuple[str, ...]:
        """Variables :meth:`summarize` lists (may depend on the options)."""

    @abstractmethod
    def _prepare(self, *args, **kwargs) -> FitData:
        """Validate the user's tables and collapse them to sufficient statistics."""

    @abstractmethod
    def _build(self, fd: FitData) -> pm.Model:
        """Build the PyMC graph once, its data in ``pm.Data`` containers."""

    @abstractmethod
    def _pointwise_loglik(
        self, params: dict[str, np.ndarray], fd: FitData
    ) -> dict[str, np.ndarray]:
        """Log-likelihood per observation; params carry leading (chain, draw) axes."""

    @abstractmethod
    def predict(self, *data, ci_prob: float = CI_PROB, **kwargs) -> pd.DataFrame:
        """Predictions with ``ci_prob`` intervals (see the class docstring's convention)."""

    @classmethod
    @abstractmethod
    def example_data(cls, random_seed: int = 0) -> ExampleData:
        """A small synthetic data set this model fits in about a second."""

    # -- fitting --------------------------------------------------------------------
    def fit(
        self,
        *args,
        method: Method = "map",
        draws: int = 1000,
        tune: int = 1000,
        chains: int = 4,
        sampler: Sampler = "auto",
        progressbar: bool = False,
        sampler_kwargs: dict | None = None, cores: int | None = None,
        **kwargs,
    ):
        """Fit by MAP (L-BFGS-B + Laplace) or NUTS; returns ``self``.

        Parameters
        ----------
        *args, **kwargs
            The model's tables: pandas DataFrames, or polars / pyarrow / any table
            :func:`bayesjudge.data.frames.as_pandas` reads (converted once, here).
        method : {"map", "nuts"}
            ``"map"`` with ``priors="flat"`` reproduces the papers' maximum
            likelihood fits; ``"nuts"`` samples the full posterior.
        draws, tune, chains : int
            NUTS settings (ignored by MAP).
        sampler : {"auto", "nutpie", "pymc", "numpyro", "blackjax"}
            NUTS implementation (:mod:`bayesjudge.engine.samplers`); ``sampler_`` says
            which ran. "auto": nutpie, on the C functions for small models and on
            numba's log density for large ones (compiled once per machine and cached
            on disk: route ``"nutpie-cached"``); "nutpie": nutpie's own numba model
            (compiled in every process, then ~25% faster per gradient: for loops of
            refits); JAX samplers need the ``gpu`` extra.
        sampler_kwargs : dict, optional
            Passed to the sampler (e.g. ``{"target_accept": 0.95}``).
        cores : int, optional
            Chains run in parallel (NUTS): :func:`bayesjudge.engine.samplers.check_cores`.

        Notes
        -----
        The MAP is the mode of the posterior density of the constrained
        parameters (no Jacobian, as ``pm.find_MAP``), so ``priors="flat"`` (or
        Beta(1, 1) on a probability) gives the maximum-likelihood estimate.
        """
        if method not in ("map", "nuts"):
            raise ValueError(f"method must be 'map' or 'nuts', got {method!r}")
        self._fitting_method = method  # a model may parametrise NUTS and MAP differently
        check_fit_tables(self, args, kwargs)
        # polars / pyarrow / ... tables read as pandas once, before any model looks at them
        fd = self._prepare(*map(as_pandas, args), **{k: as_pandas(v) for k, v in kwargs.items()})
        engine = get_engine(self._structure_key(fd), lambda: self._build(fd),
                            self._generic_shapes)
        engine.set_data(fd.data, fd.coords)
        self._fit_data = fd
        self._engine = engine
        self._idata = None
        self._post = self._stats = None  # posterior / sample_stats before idata_ is assembled
        self.map_ = self.diagnostics_ = self.sampler_ = None
        if method == "map":
            # The Laplace covariance is computed on first use of idata_: a loop
            # over calibration splits that only predicts never pays for it.
            fits = [engine.find_map(x0=x0, random_seed=self.random_seed, laplace=False,
                                    newton=self._map_newton)
                    for x0 in self._map_starts(fd, engine)]
            self._map_result: MAPResult | None = max(fits, key=lambda r: r.logp)
            self.map_ = {k: np.asarray(v) for k, v in self._map_result.point.items()}
        else:
            self._map_result = None
            settings = {**self._sampler_defaults, **(sampler_kwargs or {})}
            tree = engine.sample(draws, tune, chains, self.random_seed, sampler, progressbar,
                                 settings, cores=cores)
            self.diagnostics_ = check_convergence(tree, list(self._summary_vars))
            self.sampler_ = engine.last_sampler
            # The pointwise log-likelihood (draws x cells) waits for the first use of
            # idata_: ranking, predict and summaries read only the posterior.
            self._post = label_dims(tree["posterior"].to_dataset(), fd)
            self._stats = label_dims(tree["sample_stats"].to_dataset(), fd)
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
        if self._idata is None:  # built on first use: the refit loop never pays for it
            self._idata = self._assemble(self._posterior(), self._fit_data, self._stats)
        return self._idata

    def _posterior(self) -> xr.Dataset:
        """Posterior draws (NUTS, or Laplace for MAP fits) without the log-likelihood."""
        self._check_fitted()
        if self._idata is not None:
            return self._idata["posterior"].to_dataset()
        if self._post is None:  # MAP: Laplace draws, on first use
            fd = self._fit_data
            self._engine.set_data(fd.data, fd.coords)  # another fit may have swapped it
            draws = self._engine.laplace_draws(self._map_result, LAPLACE_DRAWS, self.random_seed,
                                               self._laplace_blocks(fd, self._engine),
                                               self._laplace_reparam(self._engine),
                                               self._laplace_hyper(self._engine))
            post = xr.Dataset(
                {k: (("chain", "draw", *self._dims_of(k, v)), v) for k, v in draws.items()},
                coords={"chain": [0], "draw": np.arange(LAPLACE_DRAWS)},
                attrs=laplace_attrs(self._map_result))
            self._post = label_dims(post, fd)
        return self._post

    def _laplace_fix(self) -> str:
        """The advice of the warning that names rows flagged ``laplace_ok=False``."""
        return NUTS_FIX

    def laplace_ok(self, name: str) -> np.ndarray:
        """Per element of ``name``: False where its MAP interval is untrustworthy."""
        post = self._posterior()
        return read_flags(post.attrs.get("laplace_ok"), name, post[name].shape[2:])

    def _dims_of(self, name: str, draws: np.ndarray) -> tuple[str, ...]:
        dims = tuple(self._engine.model.named_vars_to_dims.get(name, None) or ())
        return dims if len(dims) == draws.ndim - 2 else tuple(
            f"{name}_dim_{i}" for i in range(draws.ndim - 2))

    def _assemble(
        self, post: xr.Dataset, fd: FitData, stats: xr.Dataset | None = None
    ) -> xr.DataTree:
        post = post[[v for v in post.data_vars if not v.endswith("__")]]
        loglik = self._pointwise_loglik({k: post[k].values for k in post.data_vars}, fd)
        return posterior_tree(post, loglik, fd, stats)

    def param_draws(self) -> dict[str, np.ndarray]:
        """Parameters with a leading sample axis (1 sample for MAP fits)."""
        self._check_fitted()
        if self.method_ == "map":
            return {k: np.asarray(v)[None] for k, v in self.map_.items()}
        post = self._posterior()
        return {k: post[k].values.reshape(-1, *post[k].shape[2:]) for k in post.data_vars}

    def summarize(self, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """Posterior summary of the model parameters with equal-tailed intervals.

        For MAP fits the table adds the ``map`` column (the optimum), the interval
        and ``mcse_mean`` (sd / sqrt(n_eff), n_eff the importance weights' ESS) come
        from the (importance-resampled) Laplace draws, and ``laplace_ok`` is False,
        with a warning, where they cannot be trusted.
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        table = summary_table(self._posterior(), list(self._summary_vars), ci_prob,
                              diagnostics=self.method_ != "map")
        if self.method_ == "map":
            names = self._summary_vars
            table.insert(0, "map", np.concatenate([np.ravel(self.map_[n]) for n in names]))
            table["laplace_ok"] = np.concatenate([self.laplace_ok(n).ravel() for n in names])
            warn_flagged(table.rename_axis("_row").reset_index(), ["_row"], self._laplace_fix())
        return table

    # -- persistence ------------------------------------------------------------------
    def _state(self) -> dict[str, Any]:
        """Extra JSON-able fitted state a model needs for predict after load."""
        return {}

    def _set_state(self, state: dict[str, Any]) -> None:
        pass

    def save(self, path) -> None:
        """Write the fit to netCDF; class, version and arguments go in attrs.

        The file is written to a temporary file beside ``path`` and then renamed
        over it, so an interrupted save never leaves a half-written file and a
        model may be saved over the file it was loaded from.
        """
        self._check_fitted()
        write_model_file(self.idata_, path, {
            "class": type(self).__name__,
            "version": __version__,
            "params": self.get_params(),
            "method": self.method_,
            "map": {k: np.asarray(v).tolist() for k, v in (self.map_ or {}).items()},
            "state": self._state(),
        })

    @classmethod
    def load(cls, path):
        """Load a fit written by :meth:`save`, checking class and version.

        The whole file is read into memory and closed, so the same path can be
        saved over later.

        Raises
        ------
        ModelFileError
            The file is not a bayesjudge model file, or is damaged.
        TypeError
            The file holds another model class than ``cls``.
        """
        tree, meta = read_model_file(path)
        name = meta["class"]
        target = registered_models().get(name)
        if target is None:
            raise ModelFileError(f"{path} holds an unknown model class {name!r}; known: "
                                 f"{sorted(registered_models())}.")
        if cls is not BayesianModel and target is not cls:
            raise TypeError(f"{path} holds a {name}, not a {cls.__name__}; use {name}.load.")
        warn_if_other_version(path, meta["version"], __version__)
        model = target(**meta["params"])
        model.method_ = meta["method"]
        model.map_ = {k: np.asarray(v) for k, v in meta["map"].items()} or None
        model.diagnostics_ = model.sampler_ = None
        model._set_state(meta["state"])
        model._idata = tree
        return model


def load(path) -> BayesianModel:
    """Load any saved bayesjudge model (the class is read from the file)."""
    return BayesianModel.load(path)
