"""Data structures of the model contract: what ``_prepare`` and ``example_data`` return."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ExampleData", "FitData"]


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
    observation : dict
        What the pointwise log-likelihood is a density of, as short texts stored
        as attributes of ``observed_data``: ``"outcome_space"`` (the observed
        outcome of one unit and the probability scored) and any preparation step
        that changes the observations (e.g. ``"symmetrized"``). ``compare``
        refuses fits whose descriptions or observed data differ.
    """

    data: dict[str, np.ndarray]
    coords: dict[str, Any]
    observed: dict[str, tuple[tuple[str, ...], np.ndarray]]
    shape_key: tuple = ()
    extra: dict[str, Any] = field(default_factory=dict)
    observation: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ExampleData:
    """A small synthetic data set a model fits in a second (docs and contract tests).

    Attributes
    ----------
    fit_args : tuple
        Positional arguments of ``fit``.
    predict_args : tuple
        Positional arguments of ``predict`` (empty for models that predict no data).
    id_column : str or None
        Column of ``predict``'s output naming the input row (item) it belongs to;
        None when ``predict`` takes no data.
    truth : dict
        Generating parameter values, by variable name, where the data were simulated.
    """

    fit_args: tuple
    predict_args: tuple = ()
    id_column: str | None = None
    truth: dict[str, Any] = field(default_factory=dict)
