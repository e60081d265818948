"""Compile-once engine: one PyMC model structure, its compiled functions and its data.

A PyMC graph is built once per *model structure* (class, options, priors and
any sizes that change parameter shapes), its log density and gradient are
compiled once, and refits on new data only swap the ``pm.Data`` containers.
A model whose graph has no static size (``generic_shapes``) gets one engine for
every number of items: its functions take the free variables one by one, so
neither the graph nor the numba code compiled from it depends on their sizes, and
a new data set's sizes only reset the dim lengths and the layout of ``x``.
Engines are cached at module level (:func:`get_engine`), their compiled functions
also on disk (:mod:`~bayesjudge.engine.disk_cache`), so the user's loop
``for split in splits: Model(...).fit(split)`` never rebuilds or recompiles.

The engine hands its compiled functions (:class:`~bayesjudge.engine.density.Density`)
to the routes that turn them into numbers, which never call back into it:

* MAP: :func:`bayesjudge.engine.optim.find_mode` (L-BFGS-B, damped Newton for tiny
  models), then the Laplace approximation (:mod:`~bayesjudge.engine.laplace`), so MAP
  fits also carry approximate posterior draws for summaries and PSIS-LOO;
* NUTS: :func:`bayesjudge.engine.samplers.run_nuts` (nutpie on numba or on the
  compiled C functions, PyMC's sampler, JAX), given the model, its data and coords.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Mapping

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import xarray as xr
from pymc.pytensorf import join_nonshared_inputs

from bayesjudge.engine import disk_cache, laplace, optim, samplers
from bayesjudge.engine.density import Density
from bayesjudge.engine.laplace import MAPResult
from bayesjudge.engine.nuts_settings import Sampler

_log = logging.getLogger(__name__)

_ENGINES: dict[Hashable, "Engine"] = {}
_N_COMPILED = 0  # engines built by this process (compilations, not cache hits)


def get_engine(key: Hashable, build: Callable[[], pm.Model],
               generic_shapes: bool = False) -> "Engine":
    """Return the cached engine for ``key``, building and compiling it on first use.

    ``generic_shapes``: the graph ``build`` returns has no static size (dims from
    shared dim lengths, no size-dependent constant), so ``key`` need not hold the
    sizes (:class:`Engine`).
    """
    engine = _ENGINES.get(key)
    if engine is None:
        _log.info("compiling model structure %r", key)
        with samplers.collector_paused():
            engine = Engine(build(), key, generic_shapes)
        _ENGINES[key] = engine
        global _N_COMPILED
        _N_COMPILED += 1
    return engine


def compilations() -> int:
    """How many model structures this process has compiled (cache hits do not count)."""
    return _N_COMPILED


def clear_cache() -> None:
    """Forget every compiled engine (tests use it to count compilations)."""
    _ENGINES.clear()


class Engine:
    """Compiled functions of one PyMC model structure.

    Parameters
    ----------
    model : pymc.Model
        Model whose data live in ``pm.Data`` containers.
    key : hashable, optional
        The structure's key (the disk cache's entry names).
    generic_shapes : bool
        The graph has no static size: the compiled functions take the free
        variables one by one (split from ``x`` in Python by the current layout), so
        one compilation serves data of any size; :meth:`set_data` applies the
        coords' lengths to the model's dims and recomputes the layout and the initial
        point. nutpie's own model and the numba log density of the ``"nutpie-cached"``
        route are compiled per layout, as they flatten ``x`` in the graph; Newton's
        exact Hessian (``fgh``) is not offered.
    """

    def __init__(self, model: pm.Model, key: Hashable | None = None,
                 generic_shapes: bool = False):
        self.model = model
        self._key = key
        self.generic_shapes = generic_shapes
        self.data_names = [name for name in model.named_vars if _is_data(model, name)]
        self.value_names = [v.name for v in model.value_vars]
        self._set_layout(model.initial_point())
        self._nuts_models: dict[tuple, tuple] = {}  # layout -> (nutpie model, numba logp)
        self.param_names = [v.name for v in model.unobserved_value_vars]
        # Compiled on first use (a NUTS fit never needs the MAP objective), from the
        # disk cache when a previous process stored them (bayesjudge.engine.disk_cache).
        self._fns: dict[str, pytensor.compile.Function] = {}
        self._cached_shared: dict[str, list] = {}  # data containers of unpickled functions
        self._nutpie = None
        self._nogil = None  # the numba log density of the "nutpie-cached" route
        self._data: dict[str, np.ndarray] = {}
        self._coords: dict[str, np.ndarray] = {}
        transformed = any(model.rvs_to_transforms.get(rv) is not None for rv in model.free_RVs)
        #: The compiled functions, as the MAP, Laplace and NUTS routes receive them.
        self.density = Density(self._function, self.x0, self.param_names, transformed)

    def _set_layout(self, ip: Mapping[str, np.ndarray]) -> None:
        """Shapes of the free variables, where each sits in ``x``, and the initial point."""
        self._ip = ip
        self._shapes = [np.shape(ip[n]) for n in self.value_names]
        self.x0 = np.concatenate([np.ravel(ip[n]) for n in self.value_names]).astype(float)
        self._pieces = list(zip(self.value_slices().values(), self._shapes))
        if hasattr(self, "density"):
            self.density.x0 = self.x0

    def _resize(self, coords: Mapping) -> None:
        """Apply the coords' lengths to the model's dims (``generic_shapes``); when one
        changes, recompute the layout and swap in the NUTS models of the new layout."""
        changed = False
        for name, values in coords.items():
            length = self.model.dim_lengths.get(name)
            if hasattr(length, "set_value") and int(length.get_value()) != len(values):
                self.model.set_dim(name, len(values), coord_values=list(values))
                changed = True
        if changed:
            self._nuts_models[tuple(self._shapes)] = (self._nutpie, self._nogil)
            self._set_layout(self.model.initial_point())
            self._nutpie, self._nogil = self._nuts_models.pop(tuple(self._shapes), (None, None))

    # MAP is the mode of the posterior of the *constrained* parameters (no Jacobian,
    # as pm.find_MAP): with flat priors it is the MLE whatever the transform. The
    # Laplace approximation and NUTS live in the unconstrained space, so they use the
    # density with the Jacobian.
    @property
    def _logp_dlogp(self):
        return self._function("logp")

    @property
    def _logp_dlogp_jac(self):
        return self._function("logp_jacobian")

    @property
    def _constrain(self):
        return self._function("constrain")

    def _function(self, role: str):
        fn = self._fns.get(role)
        if fn is not None:
            return fn
        name = disk_cache.entry_name(self._key, role) if self._key is not None else None
        fn = disk_cache.load(name)
        if fn is None or not self._adopt(fn):
            if fn is not None:
                _log.info("engine cache entry for %s does not fit this model; recompiling", role)
            fn = self._compile(role)
            values = {v.name: v.get_value(borrow=True) for v in fn.get_shared()}
            disk_cache.store(name, fn, values)
        # a generic-shape function is wrapped once: called on x, split by the current layout
        self._fns[role] = _FlatArgs(fn, self) if self.generic_shapes else fn
        return self._fns[role]

    def _compile(self, role: str):
        if self.generic_shapes:
            return self._compile_generic(role)
        if role == "constrain":
            outs_x, x = join_nonshared_inputs(self._ip, self.model.unobserved_value_vars,
                                              self.model.value_vars)
            fn = pytensor.function([x], outs_x)
            fn.trust_input = True
            return fn
        if role == "logp_jacobian_value":
            outs, x = join_nonshared_inputs(self._ip, [self.model.logp(jacobian=True)],
                                            self.model.value_vars)
            fn = pytensor.function([x], outs[0])
            fn.trust_input = True
            return fn
        return self._compile_logp_dlogp(self._ip, jacobian=role == "logp_jacobian",
                                        hessian=role == "fgh")

    def _compile_generic(self, role: str):
        """The function of ``role`` on the free variables one by one (``generic_shapes``)."""
        model, inputs = self.model, self.model.value_vars
        if role == "constrain":
            outs = model.unobserved_value_vars
        elif role == "logp_jacobian_value":
            outs = model.logp(jacobian=True)
        elif role in ("logp", "logp_jacobian"):
            logp = model.logp(jacobian=role == "logp_jacobian")
            outs = [logp, pt.concatenate([g.ravel() for g in pt.grad(logp, inputs)])]
        else:
            raise NotImplementedError(f"{role!r} is not compiled for a generic-shape engine")
        fn = pytensor.function(inputs, outs)
        fn.trust_input = True
        return fn

    def _adopt(self, fn) -> bool:
        """Tie an unpickled function's shared containers to this model's (data, dim lengths)."""
        sources = {**{n: self.model[n] for n in self.data_names}, **self.model.dim_lengths}
        shared = fn.get_shared()
        if any(v.name not in sources or not hasattr(sources[v.name], "get_value")
               for v in shared):
            return False
        for var in shared:
            self._cached_shared.setdefault(var.name, []).append((sources[var.name], var))
        self._sync_cached()
        return True

    def _sync_cached(self) -> None:
        """Copy the current data and dim lengths into the unpickled functions' containers."""
        for pairs in self._cached_shared.values():
            for source, copy in pairs:
                copy.set_value(source.get_value(borrow=True), borrow=True)

    def _compile_logp_dlogp(self, ip, jacobian: bool, hessian: bool = False):
        logp = self.model.logp(jacobian=jacobian)
        grad = pt.concatenate([g.ravel() for g in pt.grad(logp, self.model.value_vars)])
        outs, x = join_nonshared_inputs(ip, [logp, grad], self.model.value_vars)
        if hessian:  # one row per parameter: for models with a handful of them
            outs.append(pt.stack([pt.grad(outs[1][i], x) for i in range(self.x0.size)]))
        fn = pytensor.function([x], outs)
        fn.trust_input = True
        return fn

    # -- data -----------------------------------------------------------------
    def set_data(self, data: Mapping[str, np.ndarray], coords: Mapping | None = None) -> None:
        """Swap the ``pm.Data`` values (no recompilation).

        Writes the shared variables directly: ``pm.set_data``'s coordinate
        bookkeeping costs more than a whole MAP fit of a small calibration
        set. Coordinates are kept here and applied where they matter (posterior
        labels, PyMC's own sampler).
        """
        for name, value in data.items():
            shared = self.model[name]
            value = np.asarray(value, dtype=shared.type.dtype)  # pm.Data may store int32
            shared.set_value(value)
            self._data[name] = value
        if self.generic_shapes:
            self._resize(coords or {})
        self._sync_cached()
        self._coords = {k: np.asarray(v) for k, v in (coords or {}).items()}

    # -- MAP ------------------------------------------------------------------
    def logp_dlogp(self, x: np.ndarray, jacobian: bool = False) -> tuple[float, np.ndarray]:
        """Joint log density and gradient at the unconstrained vector ``x``."""
        fn = self._logp_dlogp_jac if jacobian else self._logp_dlogp
        lp, g = fn(np.asarray(x, dtype=float))
        return float(lp), g

    def constrain(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Map an unconstrained vector to named constrained values."""
        return dict(zip(self.param_names, self._constrain(np.asarray(x, dtype=float))))

    def value_slices(self) -> dict[str, slice]:
        """Where each free variable (unconstrained value name) sits in the vector ``x``."""
        out, start = {}, 0
        for name, shape in zip(self.value_names, self._shapes):
            size = int(np.prod(shape, dtype=int))
            out[name] = slice(start, start + size)
            start += size
        return out

    def find_map(
        self,
        x0: np.ndarray | None = None,
        n_starts: int = 1,
        random_seed: int | None = 0,
        laplace: bool = True,
        newton: bool = False,
    ) -> MAPResult:
        """Maximise the joint log density on the current data (:func:`optim.find_mode`).

        ``newton=True``: damped Newton on the exact Hessian first, for models with at
        most :data:`bayesjudge.engine.optim.NEWTON_MAX_PARAMS` parameters; L-BFGS-B
        otherwise and wherever Newton fails. ``laplace``: also the Laplace
        approximation (:func:`bayesjudge.engine.laplace.laplace`).
        """
        start = self.x0 if x0 is None else np.asarray(x0, dtype=float)
        newton = newton and not self.generic_shapes and self.x0.size <= optim.NEWTON_MAX_PARAMS
        best = optim.find_mode(self.density, start, n_starts, random_seed, newton)
        fit = MAPResult(point=self.constrain(best.x), x=best.x, cov=None, logp=-float(best.fun),
                        converged=optim.converged(best))
        if laplace:
            self.laplace(fit)
        return fit

    def laplace(self, fit: MAPResult, blocks: np.ndarray | None = None) -> None:
        """:func:`bayesjudge.engine.laplace.laplace` on the current data."""
        laplace.laplace(fit, self.density, blocks)

    def laplace_cov(self, x: np.ndarray, blocks: np.ndarray | None = None) -> np.ndarray | None:
        """:func:`bayesjudge.engine.laplace.laplace_cov` on the current data."""
        return laplace.laplace_cov(self.density, x, blocks)

    def laplace_draws(
        self, fit: MAPResult, n_draws: int, random_seed: int | None,
        blocks: np.ndarray | None = None, reparam: tuple[slice, int] | None = None,
        hyper: np.ndarray | None = None,
    ) -> dict[str, np.ndarray]:
        """:func:`bayesjudge.engine.laplace.laplace_draws` on the current data."""
        return laplace.laplace_draws(fit, self.density, n_draws, random_seed, blocks, reparam,
                                     hyper)

    # -- NUTS -----------------------------------------------------------------
    def sample(self, draws: int, tune: int, chains: int, random_seed: int | None,
               sampler: Sampler = "auto", progressbar: bool = False,
               sampler_kwargs: Mapping | None = None, cores: int | None = None) -> xr.DataTree:
        """NUTS on the current data: :func:`bayesjudge.engine.samplers.run_nuts`.

        The route taken is left in ``last_sampler``; nutpie's numba model or the numba
        log density of this structure is kept for the next call.
        """
        target = samplers.NutsTarget(self.density, self.model, self._data, self._coords,
                                     self._nutpie, self._nogil)
        try:
            run = samplers.run_nuts(target, draws, tune, chains, random_seed, sampler,
                                    progressbar, sampler_kwargs, cores)
        finally:  # nutpie's numba model is kept even when sampling was interrupted
            self._nutpie, self._nogil = target.nutpie_model, target.nogil_logp
            self._sync_cached()  # PyMC's routes applied the data through pm.set_data
        self.last_sampler = run.route
        return run.tree


class _FlatArgs:
    """``x -> fn(*free variables)``: a generic-shape function called on the flat ``x``,
    split by the engine's current layout (views, no copies)."""

    __slots__ = ("fn", "_engine")

    def __init__(self, fn, engine: Engine):
        self.fn, self._engine = fn, engine

    def __call__(self, x):
        x = np.asarray(x, dtype=np.float64)
        return self.fn(*[x[sl].reshape(shape) for sl, shape in self._engine._pieces])


def _is_data(model: pm.Model, name: str) -> bool:
    var = model.named_vars[name]
    return isinstance(var, pytensor.compile.SharedVariable)
