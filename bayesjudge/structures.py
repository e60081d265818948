"""Data structures of the model contract: what ``_prepare`` and ``example_data`` return."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

__all__ = ["ExampleData", "FitData", "check_fit_tables", "label_dims", "posterior_tree"]


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


def label_dims(ds: xr.Dataset, fd: FitData) -> xr.Dataset:
    """Label every dim of ``ds`` that ``fd`` has coordinates for (system names, obs
    labels, ...), so summaries and saved files describe themselves."""
    labels = {d: _coord_values(fd.coords[d]) for d in ds.dims
              if d in fd.coords and len(fd.coords[d]) == ds.sizes[d]}
    return ds.assign_coords(labels)


def _coord_values(values) -> np.ndarray:
    """``values`` as a coordinate; ids of mixed types (``7`` and ``"7"``, which the models
    keep apart) stay objects, where ``np.asarray`` would make both the text ``'7'``."""
    arr = np.asarray(values)
    if arr.dtype.kind == "U" and not all(isinstance(v, str) for v in values):
        return np.asarray(list(values), dtype=object)
    return arr


def posterior_tree(post: xr.Dataset, loglik: dict[str, np.ndarray], fd: FitData,
                   stats: xr.Dataset | None = None) -> xr.DataTree:
    """The ArviZ ``DataTree`` of a fit: posterior, pointwise log-likelihood (``loglik``,
    name -> (chain, draw, *observed dims)), observed data and optional sample stats."""
    coords = {"chain": post["chain"].values, "draw": post["draw"].values}
    log_lik = xr.Dataset(
        {k: (("chain", "draw", *fd.observed[k][0]), v) for k, v in loglik.items()}, coords=coords)
    obs = xr.Dataset({k: (dims, np.asarray(v)) for k, (dims, v) in fd.observed.items()})
    obs.attrs.update(fd.observation)  # what the log-likelihood scores: compare() checks it
    groups = {"posterior": post, "log_likelihood": log_lik, "observed_data": obs}
    if stats is not None:
        groups["sample_stats"] = stats
    return xr.DataTree.from_dict({k: label_dims(v, fd) for k, v in groups.items()})


FIT_OPTIONS = ("method", "draws", "tune", "chains", "sampler", "progressbar", "sampler_kwargs",
               "cores")


def check_fit_tables(model, args: tuple, kwargs: dict) -> None:
    """A ``TypeError`` naming ``fit``'s tables and options where a call passes others (an
    option of the model itself, such as ``random_seed``, says so) instead of Python's about
    the model's private ``_prepare``."""
    tables = inspect.signature(model._prepare)
    try:
        tables.bind(*args, **kwargs)
    except TypeError as exc:
        name = type(model).__name__
        own = inspect.signature(type(model)).parameters
        hint = "".join(f" {k} is an option of the model: {name}({k}=...).fit(...)."
                       for k in kwargs if k in own and k not in tables.parameters)
        raise TypeError(f"{name}.fit() takes the table(s) {list(tables.parameters)} and the "
                        f"options {list(FIT_OPTIONS)}: {exc}.{hint}") from None
