"""NUTS back ends behind ``fit(method="nuts", sampler=...)``, and the choice between them.

* ``"nutpie"`` -- nutpie on the model compiled by numba: the fastest per gradient and
  parallel over chains, but numba compiles it for 8-25 s in every new process
  (nutpie's wrappers cannot be cached on disk).
* nutpie on the engine's PyTensor C functions (``"auto"`` picks it for small models):
  nutpie calls back into Python for every gradient (~30 us of overhead per call, and
  chains take turns on the GIL) but nothing is compiled: the C functions come from
  the engine, itself loaded from the disk cache in a fresh process
  (:mod:`bayesjudge.engine_cache`).
* ``"pymc"`` -- PyMC's own NUTS (Python; slow but dependency-free).
* ``"numpyro"`` / ``"blackjax"`` -- PyMC's JAX samplers (the ``gpu`` extra: on a CUDA
  machine they run on the GPU; tested on CPU JAX).

``"auto"`` (the default) estimates both nutpie routes' wall time from one timed
gradient call and picks the faster: the callback route costs
``evaluations x (t_grad + overhead)``, the numba route ``compile + evaluations x
t_grad / parallel chains`` (once compiled in this process, numba always wins).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np
import xarray as xr

if TYPE_CHECKING:  # pragma: no cover
    from bayesjudge.inference import Engine

Sampler = Literal["auto", "nutpie", "pymc", "numpyro", "blackjax"]
SAMPLERS: tuple[str, ...] = get_args(Sampler)
#: nutpie's own cost per Python callback (measured 31-32 us on a 2-vCPU EPYC VM with a
#: trivial log density, 1 or 2 cores), rounded up.
CALLBACK_OVERHEAD_S = 35e-6
#: nutpie's numba compilation per structure and process: 8-25 s measured (small to
#: SummEval-size models); the lower end, so "auto" only avoids it when clearly cheaper.
NUMBA_COMPILE_S = 8.0
#: Gradient evaluations per NUTS draw assumed by the estimate (tree depth ~3).
EVALS_PER_DRAW = 8


def check_sampler(sampler: Any) -> str:
    """``sampler`` if known; ValueError naming the choices otherwise."""
    if sampler not in SAMPLERS:
        raise ValueError(
            f"sampler must be one of {list(SAMPLERS)}, got {sampler!r}. 'auto' picks nutpie's "
            f"fastest route; 'numpyro' / 'blackjax' need the gpu extra "
            f"(pip install 'bayesjudge[gpu]')."
        )
    return sampler


def choose_route(engine: Engine, draws: int, tune: int, chains: int, cores: int) -> str:
    """``"nutpie"`` (numba) or ``"nutpie-c"`` (C callbacks): the one estimated faster."""
    if engine._nutpie is not None:
        return "nutpie"
    fn, x = engine._logp_dlogp_jac, engine.x0
    fn(x)  # first call may load a compiled module
    reps, start = 5, time.perf_counter()
    for _ in range(reps):
        fn(x)
    t_grad = (time.perf_counter() - start) / reps
    evals = chains * (draws + tune) * EVALS_PER_DRAW
    callbacks = evals * (t_grad + CALLBACK_OVERHEAD_S)
    numba = NUMBA_COMPILE_S + evals * t_grad / max(1, min(chains, cores))
    return "nutpie-c" if callbacks < numba else "nutpie"


def sample_nutpie_callbacks(
    engine: Engine, draws: int, tune: int, chains: int, random_seed: int | None,
    progressbar: bool, extra: dict,
) -> xr.DataTree:
    """nutpie on the engine's compiled PyTensor functions (no numba compilation).

    Chains start, as nutpie's own default, at the model's initial point plus
    U(-1, 1) jitter on the unconstrained scale, seeded per chain by nutpie.
    """
    import nutpie
    from nutpie.compiled_pyfunc import from_pyfunc

    logp_fn, constrain = engine._logp_dlogp_jac, engine._constrain
    names = engine.param_names
    values = constrain(engine.x0)
    shapes = [np.shape(v) for v in values]
    lock = threading.Lock()  # a compiled function is not re-entrant; chains are threads

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

    x0 = engine.x0

    def initial_point(seed):
        return x0 + np.random.default_rng(seed).uniform(-1.0, 1.0, size=x0.shape)

    dims_of = engine.model.named_vars_to_dims
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
    # chains take turns on the GIL anyway: one sampler thread avoids the hand-offs
    return nutpie.sample(compiled, draws=draws, tune=tune, chains=chains, seed=random_seed,
                         progress_bar=progressbar, cores=1, **extra)


def sample_jax(
    engine: Engine, sampler: Literal["numpyro", "blackjax"], draws: int, tune: int,
    chains: int, random_seed: int | None, progressbar: bool, extra: dict,
) -> xr.DataTree:
    """PyMC's JAX NUTS (numpyro or blackjax) on the engine's model and current data."""
    import pymc as pm

    try:
        import jax  # noqa: F401
        __import__(sampler)
    except ImportError as err:
        raise ImportError(
            f"sampler={sampler!r} needs JAX and {sampler}: pip install 'bayesjudge[gpu]' "
            f"(on a CUDA machine also pip install 'jax[cuda12]')."
        ) from err
    engine.set_pymc_data()
    try:
        return pm.sample(
            draws=draws, tune=tune, chains=chains, random_seed=random_seed,
            progressbar=progressbar, model=engine.model, nuts_sampler=sampler,
            compute_convergence_checks=False, **({"nuts": extra} if extra else {}),
        )
    except NotImplementedError as err:
        raise NotImplementedError(
            f"sampler={sampler!r}: this model uses an operation PyTensor cannot translate "
            f"to JAX ({err}). Use sampler='auto' or 'nutpie'."
        ) from err
