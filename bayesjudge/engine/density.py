"""The compiled functions of one model structure, as the MAP, Laplace and NUTS routes see them.

:class:`~bayesjudge.engine.compiled.Engine` owns the PyMC model, its data and the
compiled-function cache; the routes that turn it into numbers
(:mod:`~bayesjudge.engine.optim`, :mod:`~bayesjudge.engine.laplace`,
:mod:`~bayesjudge.engine.samplers`) receive a :class:`Density` and never call back
into the engine. Each function is compiled (or loaded from the disk cache) on first
use, so a NUTS fit never compiles the MAP objective.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["Density"]


class Density:
    """Joint log density of one model structure on the unconstrained vector ``x``.

    Parameters
    ----------
    function : callable
        ``function(role)`` returns the compiled function of ``role``: ``"logp"``
        (``x -> (logp, grad)``, no Jacobian: the MAP's objective), ``"logp_jacobian"``
        (with the Jacobian of the transforms: Laplace, NUTS), ``"logp_jacobian_value"``
        (``x -> logp`` with the Jacobian and no gradient: the thousands of importance
        weights of a set of Laplace draws, at ~60% of the cost), ``"constrain"``
        (``x -> [values]`` of ``param_names``), ``"fgh"`` (``x -> (logp, grad, Hessian)``
        without the Jacobian, for Newton).
    x0 : ndarray
        The model's initial point, unconstrained.
    param_names : list of str
        Names of the constrained values (free variables and deterministics).
    has_transforms : bool
        Whether any free variable is transformed (the MAP and the Laplace centre differ).
    """

    def __init__(self, function: Callable[[str], Callable], x0: np.ndarray,
                 param_names: list[str], has_transforms: bool):
        self._function = function
        self.x0 = x0
        self.param_names = param_names
        self.has_transforms = has_transforms

    @property
    def logp(self) -> Callable:
        return self._function("logp")

    @property
    def logp_jac(self) -> Callable:
        return self._function("logp_jacobian")

    @property
    def logp_jac_value(self) -> Callable:
        """``x -> logp`` with the Jacobian (compiled on first use)."""
        return self._function("logp_jacobian_value")

    @property
    def constrain(self) -> Callable:
        return self._function("constrain")

    @property
    def fgh(self) -> Callable:
        return self._function("fgh")
