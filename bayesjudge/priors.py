"""Prior specifications: small, hashable, JSON-serialisable.

A :class:`Prior` names a PyMC distribution and its parameters; a model holds a
dict ``parameter name -> Prior`` with documented defaults. ``priors="flat"``
asks for improper flat priors (maximum-likelihood parity under MAP).
:func:`zero_sum_rows` is the zero-sum map the models put their skills' priors on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pymc as pm
import pytensor.tensor as pt


class Prior:
    """A PyMC distribution by name, with fixed parameters and the dims it spans.

    The one prior type of the package: every model's ``default_priors`` is a
    mapping ``parameter name -> Prior`` and its ``priors`` argument overrides
    entries by name.

    Parameters
    ----------
    dist : str
        Name of a PyMC distribution (``"Normal"``, ``"Beta"``, ``"Flat"``, ...).
    dims : str or tuple of str, optional
        Dims of the parameter (e.g. ``("judge",)``); ``None`` for a scalar. A
        model always creates a parameter with its own structural dims, so an
        override may leave ``dims`` out.
    **params : float
        Parameters of the distribution.

    Examples
    --------
    >>> Prior("Normal", mu=0, sigma=2.5)
    Prior('Normal', mu=0, sigma=2.5)
    >>> Prior("Beta", alpha=1, beta=1, dims="system").dims
    ('system',)
    """

    def __init__(self, dist: str, dims: str | tuple[str, ...] | None = None, **params: float):
        if not isinstance(dist, str) or not hasattr(pm, dist):
            raise ValueError(f"unknown PyMC distribution {dist!r} in Prior; use a name from "
                             f"pymc such as 'Normal', 'HalfNormal', 'Beta' or 'Flat'.")
        self.dist = dist
        self.dims = (dims,) if isinstance(dims, str) else (tuple(dims) if dims else None)
        self.params = dict(sorted(params.items()))

    def create(self, name: str, dims=None):
        """Create the random variable inside the current model context.

        ``dims`` (the model's structural dims) take precedence over ``self.dims``.
        """
        return getattr(pm, self.dist)(name, **self.params,
                                      dims=dims if dims is not None else self.dims)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; ``Prior(**d)`` rebuilds it."""
        out: dict[str, Any] = {"dist": self.dist, **self.params}
        if self.dims:
            out["dims"] = list(self.dims)
        return out

    def __eq__(self, other) -> bool:
        return isinstance(other, Prior) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.dist, self.dims, tuple(self.params.items())))

    def __repr__(self) -> str:
        args = "".join(f", {k}={v!r}" for k, v in self.params.items())
        dims = f", dims={self.dims!r}" if self.dims else ""
        return f"Prior({self.dist!r}{args}{dims})"


def resolve_priors(
    priors: None | str | Mapping[str, Prior | Mapping[str, Any]],
    defaults: Mapping[str, Prior],
    flat: Mapping[str, Prior] | None = None,
) -> dict[str, Prior]:
    """Merge user priors with the model's defaults.

    Parameters
    ----------
    priors : None, "flat" or dict
        None keeps the defaults; "flat" uses ``flat`` (default: ``pm.Flat`` for
        every parameter); a dict overrides some parameters, by name, with a
        :class:`Prior` or its ``to_dict()`` form.
    """
    if priors is None:
        return dict(defaults)
    if isinstance(priors, str):
        if priors != "flat":
            raise ValueError(f"priors must be None, 'flat' or a dict, got {priors!r}")
        if flat is not None:
            return dict(flat)
        return {k: Prior("Flat", dims=v.dims) for k, v in defaults.items()}
    unknown = set(priors) - set(defaults)
    if unknown:
        raise ValueError(
            f"unknown prior name(s) {sorted(unknown)}; this model's parameters are "
            f"{sorted(defaults)}."
        )
    out = dict(defaults)
    for name, spec in priors.items():
        if isinstance(spec, Prior):
            out[name] = spec
        else:
            spec = dict(spec)
            if "dist" not in spec:
                raise ValueError(f"prior {name!r} must be a Prior or a dict with a 'dist' key, "
                                 f"got {spec!r}.")
            out[name] = Prior(**spec)
    return out


def zero_sum_rows(y):
    """n - 1 free coordinates -> n values summing to zero, along the last axis (pytensor).

    The free-coordinate map of a ``ZeroSumNormal`` prior (PyMC's ``ZeroSumTransform``;
    the Bradley-Terry family's ragged-group ``zero_sum`` for groups of one size), row
    by row: ``x_i = y_i - S / (sqrt(n) + n)``, ``x_n = -S / sqrt(n)``, ``S = sum(y)``,
    so iid ``Normal(0, s)`` on ``y`` is ``ZeroSumNormal(s)``. n is read from ``y``'s
    shape, so the graph, and the numba code compiled from it, serve every number of items.
    """
    n = pt.cast(y.shape[-1] + 1, "float64")
    root = pt.sqrt(n)
    total = pt.sum(y, axis=-1, keepdims=True)
    return pt.concatenate([y - total / (root + n), -total / root], axis=-1)
