"""The joint log density compiled by numba with the GIL released, cached on disk.

nutpie's own numba route (``sampler="nutpie"``) wraps PyTensor's numba function in a
C callback that numba compiles anew in every process: 8-25 s for most models, 35-45 s
for ``AnchoredBT`` with judge effects, before the first draw. Here the same PyTensor
graph (log density with the Jacobian, and its gradient) is compiled by numba as a
plain ``nogil`` function and stored in a disk cache beside PyTensor's own numba cache,
so a new process loads it in well under a second once any process of this machine has
compiled the structure. nutpie calls it back from Python (``nutpie.compiled_pyfunc``);
the GIL is released while numba runs, so chains sample in parallel threads and only
the few microseconds of Python around each call take turns.

The cache key is PyTensor's hash of the function graph, in a directory of its own
(``<pytensor compiledir>/numba/bayesjudge-nogil``), so the entries never mix with
PyTensor's, which numba indexes by signature only (not by the ``nogil`` flag).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from weakref import WeakKeyDictionary

import numba
import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
from numba.core.caching import CacheImpl
from pymc.pytensorf import join_nonshared_inputs
from pytensor.configdefaults import config
from pytensor.link.numba.cache import (
    CACHED_SRC_FUNCTIONS,
    NUMBA_CACHE_PATH,
    NumbaPyTensorCacheLocator,
)

CACHE_PATH = NUMBA_CACHE_PATH / "bayesjudge-nogil"
#: Copies of PyTensor's generated functions compiled here, with their cache keys.
_KEYS: WeakKeyDictionary[Callable, str] = WeakKeyDictionary()


class _NogilLocator(NumbaPyTensorCacheLocator):
    """PyTensor's locator, for this module's copies only, in a directory of their own."""

    def get_cache_path(self):
        return CACHE_PATH  # read at every use: tests point it elsewhere

    @classmethod
    def from_function(cls, py_func, py_file):
        key = _KEYS.get(py_func)
        if key is None or not config.numba__cache:
            return None
        try:
            CACHE_PATH.mkdir(parents=True, exist_ok=True)
        except OSError:  # e.g. a read-only home: compile in every process, as nutpie does
            return None
        return cls(py_func, py_file, key)


if _NogilLocator not in CacheImpl._locator_classes:
    CacheImpl._locator_classes.insert(0, _NogilLocator)


class NogilLogp:
    """``x -> (logp, grad)`` of a PyMC model (with the Jacobian), numba, GIL released.

    Parameters
    ----------
    model : pymc.Model
        The model; its ``pm.Data`` containers and dim lengths are read at every
        :meth:`bind`, so refits that swap data reuse the compiled function.

    Notes
    -----
    Nothing is compiled here: numba compiles (or loads from the disk cache) on the
    first call of a bound function.
    """

    def __init__(self, model: pm.Model):
        ip = model.initial_point()
        logp = model.logp(jacobian=True)
        grad = pt.concatenate([g.ravel() for g in pt.grad(logp, model.value_vars)])
        outs, x = join_nonshared_inputs(ip, [logp, grad], model.value_vars)
        fn = pytensor.function([x], outs, mode="NUMBA")
        self._shared = fn.get_shared()  # the jitted function's inputs after x, in order
        jit_fn = fn.vm.jit_fn
        source = jit_fn.py_func
        copy = types.FunctionType(source.__code__, source.__globals__, source.__name__,
                                  source.__defaults__, source.__closure__)
        copy.__dict__.update(source.__dict__)
        key = CACHED_SRC_FUNCTIONS.get(source)
        if key is not None:
            _KEYS[copy] = key
        #: Whether the compiled function is stored in (and loaded from) the disk cache
        #: (PyTensor gives its graphs a cache key unless ``numba__cache`` is off).
        self.cached = key is not None and bool(config.numba__cache)
        self._jit = numba.njit(copy, nogil=True, cache=key is not None,
                               fastmath=jit_fn.targetoptions.get("fastmath", False))

    def bind(self) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
        """The log density on the model's current data (thread-safe: no shared state)."""
        jit, data = self._jit, tuple(_c_order(v.get_value(borrow=True)) for v in self._shared)

        def logp(x: np.ndarray) -> tuple[float, np.ndarray]:
            lp, grad = jit(x, *data)
            return float(lp), grad

        return logp


def _c_order(value) -> np.ndarray:
    """``value`` as a C-ordered array of the same dimension (0-d stays 0-d)."""
    value = np.asarray(value)
    return value if value.flags.c_contiguous else value.copy(order="C")
