"""Prior specifications: small, hashable, JSON-serialisable.

A :class:`Prior` names a PyMC distribution and its parameters; a model holds a
dict ``parameter name -> Prior`` with documented defaults. ``priors="flat"``
asks for improper flat priors (maximum-likelihood parity under MAP).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pymc as pm


class Prior:
    """A PyMC distribution by name with fixed parameters.

    Examples
    --------
    >>> Prior("Normal", mu=0, sigma=2.5)
    Prior('Normal', mu=0, sigma=2.5)
    """

    def __init__(self, dist: str, **params: float):
        if not hasattr(pm, dist):
            raise ValueError(f"unknown PyMC distribution {dist!r} in Prior")
        self.dist = dist
        self.params = dict(sorted(params.items()))

    def create(self, name: str, dims=None):
        """Create the random variable inside the current model context."""
        return getattr(pm, self.dist)(name, **self.params, dims=dims)

    def to_dict(self) -> dict[str, Any]:
        return {"dist": self.dist, **self.params}

    def __eq__(self, other) -> bool:
        return isinstance(other, Prior) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.dist, tuple(self.params.items())))

    def __repr__(self) -> str:
        args = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"Prior({self.dist!r}{args})"


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
        return dict(flat) if flat is not None else {k: Prior("Flat") for k in defaults}
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
            out[name] = Prior(spec.pop("dist"), **spec)
    return out
