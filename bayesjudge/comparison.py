"""PSIS-LOO comparison of fitted models (``arviz.compare``) on their log-likelihoods."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from bayesjudge.base import BayesianModel

__all__ = ["compare"]


def compare(models: dict[str, BayesianModel], **kwargs) -> pd.DataFrame:
    """PSIS-LOO comparison (``arviz.compare``) of fits of the same data.

    Parameters
    ----------
    models : dict
        Name -> fitted model. All must have been fitted to the same observed data.
    """
    import arviz as az

    if len(models) < 2:
        raise ValueError("compare needs at least two fitted models.")
    trees = {}
    ref = None
    for name, m in models.items():
        tree = m.idata_
        obs = tree["observed_data"].to_dataset()
        if ref is None:
            ref = (name, obs)
        elif not obs.equals(ref[1]):
            raise ValueError(
                f"model {name!r} was fitted to different observed data than {ref[0]!r}; "
                f"PSIS-LOO comparison needs the same data."
            )
        trees[name] = _jitter_constant_loglik(tree, seed=len(trees))
    kwargs.setdefault("round_to", "none")
    return az.compare(trees, **kwargs)


def _jitter_constant_loglik(tree: xr.DataTree, seed: int) -> xr.DataTree:
    # An observation whose log-likelihood is identical in every draw (e.g. an
    # all-tie item under the local Davidson model: u = 0 and t = 0 pin
    # p = 1/3) makes ArviZ's Pareto tail fit raise "All tail values are the
    # same", although its LOO value is exactly that constant. A 1e-9 absolute
    # perturbation keeps every ELPD exact to ~1e-9 and lets PSIS run.
    ll = tree["log_likelihood"].to_dataset()
    changed = False
    rng = np.random.default_rng(seed)
    for name in ll.data_vars:
        v = ll[name].values
        const = np.ptp(v.reshape(-1, *v.shape[2:]), axis=0) == 0
        if const.any():
            v = v.copy()
            v[..., const] += 1e-9 * rng.standard_normal(v[..., const].shape)
            ll[name] = (ll[name].dims, v)
            changed = True
    if not changed:
        return tree
    tree = tree.copy()
    tree["log_likelihood"] = xr.DataTree(ll)
    return tree


