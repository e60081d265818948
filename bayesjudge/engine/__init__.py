"""The engine: everything that turns a PyMC graph into numbers, and nothing model-specific.

Modules, from the bottom up (each imports only those above it):

* :mod:`~bayesjudge.engine.messages` -- ConvergenceWarning, FitError, ``warn_user``;
* :mod:`~bayesjudge.engine.interrupts` -- Ctrl-C during sampling (never a partial posterior);
* :mod:`~bayesjudge.engine.disk_cache` -- compiled functions stored on disk across processes;
* :mod:`~bayesjudge.engine.density` -- the compiled functions as the routes receive them;
* :mod:`~bayesjudge.engine.optim` -- MAP: L-BFGS-B, damped Newton for tiny models;
* :mod:`~bayesjudge.engine.hessian` -- (block-sparse) Hessians, Cholesky factors, draws;
* :mod:`~bayesjudge.engine.offsets` -- the centred coordinates of a non-centred scale;
* :mod:`~bayesjudge.engine.laplace_check`, :mod:`~bayesjudge.engine.laplace_grid` (its
  mixture: :mod:`~bayesjudge.engine.grid_mixture`), :mod:`~bayesjudge.engine.laplace_inla`,
  :mod:`~bayesjudge.engine.laplace` -- the Laplace
  approximation, its importance resampling and per-scalar trust flags, the grid over a
  hierarchical scale and the latent blocks integrated out per value of the globals (INLA);
* :mod:`~bayesjudge.engine.nuts_settings` -- what draws, tune, chains, cores, sampler may be;
* :mod:`~bayesjudge.engine.samplers` -- the NUTS routes (nutpie on numba or on the
  compiled C functions, PyMC, numpyro / blackjax);
* :mod:`~bayesjudge.engine.numba_nogil` -- the log density compiled by numba with the GIL
  released and cached on disk (the NUTS route "auto" takes for large models);
* :mod:`~bayesjudge.engine.batch_diagnostics`, :mod:`~bayesjudge.engine.diagnostics` -- R-hat,
  ESS and divergences after sampling, and the ``summarize()`` table (ArviZ's estimators
  on blocks of parameters at once);
* :mod:`~bayesjudge.engine.compiled` -- :class:`Engine`: one model structure, its data and
  its compiled functions (memory cache :func:`get_engine`); hands a
  :class:`~bayesjudge.engine.density.Density` to the MAP, Laplace and NUTS routes, which
  never call back into it.

A NUTS fit flows ``BayesianModel.fit`` -> :func:`get_engine` (built and compiled once per
structure) -> ``Engine.set_data`` -> ``Engine.sample`` -> :func:`samplers.run_nuts
<bayesjudge.engine.samplers.run_nuts>` (given a
:class:`~bayesjudge.engine.samplers.NutsTarget`: the compiled functions, the model, its
data and coords) -> one route -> back to ``fit``, which runs
:func:`~bayesjudge.engine.diagnostics.check_convergence`.
"""

from typing import TYPE_CHECKING

from bayesjudge.lazy import lazy_exports

#: Public names and their modules, imported on first use (:mod:`bayesjudge.lazy`):
#: ``from bayesjudge.engine.nuts_settings import MIN_DRAWS`` does not compile anything or
#: import PyMC (the command line checks its arguments before any of that).
_EXPORTS = {
    **dict.fromkeys(["Engine", "clear_cache", "compilations", "get_engine"],
                    "bayesjudge.engine.compiled"),
    "Density": "bayesjudge.engine.density",
    **dict.fromkeys(["ESS_MIN", "RHAT_MAX", "check_convergence"],
                    "bayesjudge.engine.diagnostics"),
    "MAPResult": "bayesjudge.engine.laplace",
    **dict.fromkeys(["ConvergenceWarning", "FitError", "warn_user"],
                    "bayesjudge.engine.messages"),
    **dict.fromkeys(["MIN_CHAINS", "MIN_DRAWS", "MIN_TUNE", "SAMPLERS", "Sampler", "check_cores",
                     "check_nuts_settings", "check_sampler"], "bayesjudge.engine.nuts_settings"),
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

if TYPE_CHECKING:  # the same names for type checkers (tests/test_lazy_imports.py)
    from bayesjudge.engine.compiled import Engine, clear_cache, compilations, get_engine
    from bayesjudge.engine.density import Density
    from bayesjudge.engine.diagnostics import ESS_MIN, RHAT_MAX, check_convergence
    from bayesjudge.engine.laplace import MAPResult
    from bayesjudge.engine.messages import ConvergenceWarning, FitError, warn_user
    from bayesjudge.engine.nuts_settings import (
        MIN_CHAINS,
        MIN_DRAWS,
        MIN_TUNE,
        SAMPLERS,
        Sampler,
        check_cores,
        check_nuts_settings,
        check_sampler,
    )

__all__ = [
    "ESS_MIN", "MIN_CHAINS", "MIN_DRAWS", "MIN_TUNE", "RHAT_MAX", "SAMPLERS",
    "ConvergenceWarning", "Density", "Engine", "FitError", "MAPResult", "Sampler",
    "check_convergence", "check_cores", "check_nuts_settings", "check_sampler",
    "clear_cache", "compilations", "get_engine", "warn_user",
]
