"""NUTS back ends behind ``fit(method="nuts", sampler=...)``, and the choice between them.

* nutpie on the log density compiled by numba with the GIL released
  (:mod:`bayesjudge.engine.numba_nogil`; route ``"nutpie-cached"``, which ``"auto"``
  picks for large models): nutpie calls it back from Python, chains run in parallel
  threads, and the compiled function is stored on disk, so only the first process on
  a machine compiles a structure (8-45 s); later ones load it in under a second.
* nutpie on the engine's compiled PyTensor functions (``"nutpie-c"``, named after the C
  backend PyTensor used before 3.x, whose default linker is numba; ``"auto"`` picks it
  for small models): nutpie calls back into Python for every gradient (~30 us of
  overhead per call, and chains take turns on the GIL) but nothing is compiled: the
  functions come from the engine, itself loaded from the disk cache in a fresh process
  (:mod:`bayesjudge.engine.disk_cache`).
* ``"nutpie"`` -- nutpie's own numba model: the fastest per gradient (no Python
  between gradients) but compiled anew in every process (nutpie's C wrappers cannot
  be cached on disk): for loops of many refits in one process.
* ``"pymc"`` -- PyMC's own NUTS (Python; slow but dependency-free).
* ``"numpyro"`` / ``"blackjax"`` -- PyMC's JAX samplers (the ``gpu`` extra: on a CUDA
  machine they run on the GPU; tested on CPU JAX).

``"auto"`` (the default) estimates both callback routes' wall time and picks the
faster: the C route costs ``evaluations x (t_grad + overhead)``, the numba route
``compile + evaluations x (t_grad + overhead) / parallel chains``, with ``t_grad``
from a cost model of the data size and the compilation counted as if the disk cache
were cold. The route depends on the data and the settings only, never on what ran
earlier (not on the disk cache either): the same data, settings and seed give the
same draws in any process. With the default 4 x 2,000 iterations on 2 cores the C
callbacks win below ~9,000 data elements.

``cores`` chains run in parallel (default one per chain, up to the machine's CPUs;
:func:`check_cores`). Ctrl-C raises KeyboardInterrupt on every route, never a partial
posterior (:mod:`bayesjudge.engine.interrupts`). Stages are logged to ``bayesjudge.progress``.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pymc as pm
import xarray as xr

from bayesjudge.engine import interrupts
from bayesjudge.engine.density import Density
from bayesjudge.engine.messages import progress_log
from bayesjudge.engine.nuts_settings import (
    Sampler,
    available_cores,
    check_cores,
    check_nuts_settings,
    check_sampler,
)

#: Cores assumed by sampler="auto"'s route choice when ``cores`` is not given, so the
#: route (and the draws) do not depend on the machine's CPU count.
ROUTE_CORES = 2

#: Callables teaching PyTensor's JAX backend the package's own Ops; the models append
#: theirs when imported, and they import JAX only when called (by :func:`sample_jax`).
JAX_REGISTRATIONS: list[Callable[[], None]] = []

#: nutpie's own cost per Python callback (measured 31-32 us on a 2-vCPU EPYC VM with a
#: trivial log density, 1 or 2 cores), rounded up.
CALLBACK_OVERHEAD_S = 35e-6
#: numba's compilation of a structure: 8-25 s measured (small to SummEval-size models;
#: 35-45 s AnchoredBT with judge effects); the lower end, so "auto" only avoids it when
#: clearly cheaper. Counted even though the disk cache usually spares it (see above).
NUMBA_COMPILE_S = 8.0
#: Gradient evaluations per NUTS draw assumed by the estimate (tree depth ~3).
EVALS_PER_DRAW = 8
#: Cost model of one log density + gradient: 5-8 us measured for the 3-parameter
#: models; 12 ns (BT kernel, SummEval's 96,000 cells: 1.1-1.3 ms) to 22 ns (Davidson,
#: arena's 19,900 cells: 0.45 ms) per data element; the upper end is used.
GRAD_BASE_S = 8e-6
GRAD_PER_ELEMENT_S = 2.2e-8


@dataclass
class NutsTarget:
    """What a NUTS route needs of a model structure; routes never call back into the engine.

    Attributes
    ----------
    density : Density
        Compiled log density (with the Jacobian), constrain function, initial point.
    model : pymc.Model
        The PyMC model (nutpie's numba compilation, PyMC's and JAX's samplers).
    data : mapping
        Current values of the model's ``pm.Data`` containers.
    coords : mapping
        Current coordinates (posterior labels).
    nutpie_model : object or None
        nutpie's numba-compiled model of this structure from an earlier run, if any.
    nogil_logp : NogilLogp or None
        The structure's numba log density (:mod:`bayesjudge.engine.numba_nogil`) from an
        earlier run, if any.
    """

    density: Density
    model: pm.Model
    data: Mapping[str, np.ndarray]
    coords: Mapping[str, np.ndarray]
    nutpie_model: Any = None
    nogil_logp: Any = None


@dataclass
class NutsRun:
    """Posterior and sample stats of one run, and the route taken.

    A route that compiled nutpie's numba model or the numba log density left it in
    ``NutsTarget.nutpie_model`` / ``NutsTarget.nogil_logp``.
    """

    tree: xr.DataTree
    route: str


def choose_route(data: Mapping[str, np.ndarray], draws: int, tune: int, chains: int,
                 cores: int) -> str:
    """``"nutpie-cached"`` (numba callbacks) or ``"nutpie-c"`` (C): the one estimated faster.

    The gradient's cost comes from a cost model of the data size, not from a timing,
    so the same data, settings and seed always take the same route (and give the same
    draws) however loaded the machine is, and whatever was fitted before in the process.
    """
    elements = sum(int(np.size(v)) for v in data.values())
    t_grad = GRAD_BASE_S + GRAD_PER_ELEMENT_S * elements
    evals = chains * (draws + tune) * EVALS_PER_DRAW
    callbacks = evals * (t_grad + CALLBACK_OVERHEAD_S)
    numba = NUMBA_COMPILE_S + evals * (t_grad + CALLBACK_OVERHEAD_S) / max(1, min(chains, cores))
    return "nutpie-c" if callbacks < numba else "nutpie-cached"


def sample_nutpie_callbacks(
    target: NutsTarget, draws: int, tune: int, chains: int, random_seed: int | None,
    progressbar: bool, extra: dict, parallel: int = 1, numba: bool = False,
) -> xr.DataTree:
    """nutpie calling back into Python for the log density and its gradient.

    With ``numba`` (route ``"nutpie-cached"``), the gradients come from ``target.nogil_logp``,
    numba with the GIL released, and ``parallel`` chains run at once; otherwise
    (``"nutpie-c"``) from the engine's PyTensor C functions, one call at a time (no
    compilation, and chains take turns on the GIL anyway: one sampler thread).
    Chains start, as nutpie's own default, at the model's initial point plus
    U(-1, 1) jitter on the unconstrained scale, seeded per chain by nutpie.
    """
    from bayesjudge.engine.nutpie_import import import_nutpie

    import_nutpie()  # the package first, without ArviZ's plotting (engine/nutpie_import.py)
    from nutpie.compiled_pyfunc import from_pyfunc

    constrain = target.density.constrain
    names = target.density.param_names
    values = constrain(target.density.x0)
    shapes = [np.shape(v) for v in values]
    lock = threading.Lock()  # a compiled C function is not re-entrant; chains are threads
    if numba:
        make_logp = target.nogil_logp.bind  # re-entrant: no lock, the GIL released
        cores = parallel
    else:
        logp_fn, cores = target.density.logp_jac, 1

        def make_logp():
            def logp(x):
                with lock:
                    lp, grad = logp_fn(x)
                return float(lp), np.asarray(grad, dtype=np.float64)

            return logp

    def make_expand(seed1, seed2, chain):
        def expand(x):
            with lock:
                out = constrain(x)
            return {n: np.asarray(v, dtype=np.float64).reshape(s)
                    for n, v, s in zip(names, out, shapes)}

        return expand

    x0 = target.density.x0

    def initial_point(seed):
        return x0 + np.random.default_rng(seed).uniform(-1.0, 1.0, size=x0.shape)

    dims_of = target.model.named_vars_to_dims
    dims, coords = {}, {}
    for name, shape in zip(names, shapes):
        var_dims = dims_of.get(name)
        if var_dims and len(var_dims) == len(shape):
            dims[name] = tuple(var_dims)
            for d, n in zip(var_dims, shape):
                coords.setdefault(d, np.arange(n))
    compiled = from_pyfunc(
        ndim=x0.size, make_logp_fn=make_logp, make_expand_fn=make_expand,
        expanded_dtypes=[np.dtype("float64")] * len(names), expanded_shapes=shapes,
        expanded_names=names, coords=coords, dims=dims, make_initial_point_fn=initial_point,
    )
    return interrupts.nutpie_sample(compiled, draws=draws, tune=tune, chains=chains,
                                    seed=random_seed, progress_bar=progressbar, cores=cores,
                                    **extra)


def sample_jax(
    target: NutsTarget, sampler: Literal["numpyro", "blackjax"], draws: int, tune: int,
    chains: int, random_seed: int | None, progressbar: bool, extra: dict,
) -> xr.DataTree:
    """PyMC's JAX NUTS (numpyro or blackjax) on the target's model and data."""
    import pymc as pm

    try:
        import jax  # noqa: F401
        __import__(sampler)
    except ImportError as err:
        raise ImportError(
            f"sampler={sampler!r} needs JAX and {sampler}: pip install 'bayesjudge[gpu]' "
            f"(on a CUDA machine also pip install 'jax[cuda12]')."
        ) from err
    for register in JAX_REGISTRATIONS:  # the package's own Ops (fused likelihoods), in JAX
        register()
    set_pymc_data(target)
    try:
        return pm.sample(
            draws=draws, tune=tune, chains=chains, random_seed=random_seed,
            progressbar=progressbar, model=target.model, nuts_sampler=sampler,
            compute_convergence_checks=False, **({"nuts": extra} if extra else {}),
        )
    except NotImplementedError as err:
        raise NotImplementedError(
            f"sampler={sampler!r}: this model uses an operation PyTensor cannot translate "
            f"to JAX ({err}). Use sampler='auto' or 'nutpie'."
        ) from err


def set_pymc_data(target: NutsTarget) -> None:
    """Apply the target's data and coords through ``pm.set_data`` (PyMC's own samplers)."""
    pm.set_data(target.data, coords=target.coords, model=target.model)


def _cores_of(cores: int | None, extra: dict) -> int | None:
    """``cores``, or ``sampler_kwargs["cores"]`` (removed from ``extra``); both must agree."""
    given = extra.pop("cores", None)
    if given is not None and cores is not None and given != cores:
        raise ValueError(f"cores={cores!r} and sampler_kwargs={{'cores': {given!r}}} disagree; "
                         f"give cores once. Fix: e.g. cores={cores!r} alone.")
    return check_cores(cores if cores is not None else given)


def run_nuts(
    target: NutsTarget,
    draws: int,
    tune: int,
    chains: int,
    random_seed: int | None,
    sampler: Sampler = "auto",
    progressbar: bool = False,
    sampler_kwargs: Mapping | None = None,
    cores: int | None = None,
) -> NutsRun:
    """Run NUTS on the target's data; returns posterior and sample_stats, and the route.

    ``sampler`` is one of :data:`bayesjudge.engine.samplers.SAMPLERS` ("auto" picks the
    faster nutpie route, :func:`bayesjudge.engine.samplers.choose_route`); the route taken
    is ``NutsRun.route``. ``sampler_kwargs`` go to ``nutpie.sample`` or
    ``pm.sample`` (e.g. ``target_accept``). ``cores``: chains sampled in parallel
    (:func:`check_cores`; None: one per chain up to the machine's CPUs); nutpie's C
    callback route always runs one thread (its chains take turns on the GIL). Settings
    too small to diagnose raise ValueError (:func:`check_nuts_settings`) before
    anything is compiled or sampled. Ctrl-C raises KeyboardInterrupt on every route
    (never a partial posterior).
    """
    check_nuts_settings(draws, tune, chains)
    check_sampler(sampler)
    extra = dict(sampler_kwargs or {})
    cores = _cores_of(cores, extra)
    parallel = min(chains, cores if cores is not None else available_cores())
    route = (choose_route(target.data, draws, tune, chains,
                          cores if cores is not None else ROUTE_CORES)
             if sampler == "auto" else sampler)
    with interrupts.remembered() as interrupted, collector_paused(route.startswith("nutpie")):
        try:
            tree = _sample_route(target, route, draws, tune, chains, random_seed, progressbar,
                                 extra, parallel, pymc_cores=1 if cores is None else parallel,
                                 interrupted=interrupted)
        except Exception as err:  # a Ctrl-C that surfaced as another error (PyMC's init)
            if interrupted.is_set():
                raise KeyboardInterrupt from err
            raise
        if interrupted.is_set():  # a sampler swallowed the KeyboardInterrupt
            raise KeyboardInterrupt
    post = tree["posterior"].to_dataset()
    # nutpie keeps the coords it saw at compile time: relabel with the current ones.
    coords = {k: v for k, v in target.coords.items() if k in post.dims}
    post = post.assign_coords(coords)
    stats = tree["sample_stats"].to_dataset()
    return NutsRun(xr.DataTree.from_dict({"posterior": post, "sample_stats": stats}), route)


@contextlib.contextmanager
def collector_paused(pause: bool = True):
    """Python's cyclic garbage collector off for a block (if ``pause``): nutpie's sampling,
    and building an engine (:func:`bayesjudge.engine.compiled.get_engine`).

    A fresh process holds a few hundred thousand objects from its imports, and every
    full collection walks all of them (0.13 - 0.28 s each; three in a first small NUTS
    fit, ~0.6 s of its 4 - 5 s); nutpie's callbacks make arrays, not reference cycles,
    and a model's graph is one structure, kept. Reference counting frees memory as
    before, and the collector runs again as soon as the block ends (or fails).
    """
    paused = pause and gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _sample_route(target, route, draws, tune, chains, random_seed, progressbar, extra,
                  parallel, pymc_cores, interrupted) -> xr.DataTree:
    """Run one route (see :func:`run_nuts`), logging its stages to :data:`progress_log`."""
    threads = {"nutpie": parallel, "nutpie-c": 1, "pymc": pymc_cores}.get(route, parallel)
    if route == "nutpie" and target.nutpie_model is None:
        from bayesjudge.engine.nutpie_import import import_nutpie

        progress_log.info("compiling the model for nutpie (numba, ~10 s once per process)")
        target.nutpie_model = import_nutpie().compile_pymc_model(target.model)
    elif route == "nutpie-cached":
        if target.nogil_logp is None:
            from bayesjudge.engine.numba_nogil import NogilLogp

            target.nogil_logp = NogilLogp(target.model)
        progress_log.info("loading the numba log density (compiled once per machine, "
                          "8-45 s the first time)")
        target.nogil_logp.bind()(target.density.x0)  # compiled or loaded now, not in a chain
        target.density.constrain  # noqa: B018
    elif route == "nutpie-c":
        target.density.logp_jac, target.density.constrain  # noqa: B018  (compiled or loaded now)
    progress_log.info("sampling %d chains x (%d tuning + %d draws) with %s on %d thread(s)",
                      chains, tune, draws, route, threads)
    start = time.perf_counter()
    if route == "nutpie":
        # nutpie only knows the shared variables the graph uses.
        # (shared_data is keyed by internal ids; shared_var_keys are the variables)
        known = {var.name for var in target.nutpie_model.shared_var_keys}
        data = {k: v for k, v in target.data.items() if k in known}
        compiled = target.nutpie_model.with_data(**data) if data else target.nutpie_model
        tree = interrupts.nutpie_sample(compiled, draws=draws, tune=tune, chains=chains,
                                        seed=random_seed, progress_bar=progressbar,
                                        cores=parallel, **extra)
    elif route in ("nutpie-c", "nutpie-cached"):
        tree = sample_nutpie_callbacks(target, draws, tune, chains, random_seed, progressbar,
                                       extra, parallel, numba=route == "nutpie-cached")
    elif route == "pymc":
        def stop_if_interrupted(trace, draw):  # PyMC would go on to the next chain
            if interrupted.is_set():
                raise KeyboardInterrupt

        set_pymc_data(target)
        tree = pm.sample(
            draws=draws, tune=tune, chains=chains, random_seed=random_seed,
            progressbar=progressbar, model=target.model, compute_convergence_checks=False,
            cores=pymc_cores, callback=stop_if_interrupted, **extra,
        )
    else:
        tree = sample_jax(target, route, draws, tune, chains, random_seed, progressbar, extra)
    progress_log.info("sampled in %.1f s", time.perf_counter() - start)
    return tree
