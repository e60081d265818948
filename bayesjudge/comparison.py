"""Leave-one-out comparison of fitted models (``arviz.compare``) on their log-likelihoods.

Two guarantees on top of ArviZ:

* Only comparable fits are compared. An ELPD is the log predictive density of the
  observed data, so two ELPDs (and the stacking weights built on them) compare
  only when both log-likelihoods are densities of the *same* observations: the
  same units, the same outcome space, the same prepared data. Every fit records
  this in ``idata_["observed_data"]``: the data themselves and, as attributes,
  what each unit's log-likelihood scores (``outcome_space``) and any preparation
  that changes the observations (``symmetrized``); see
  :attr:`bayesjudge.structures.FitData.observation`. :func:`compare` refuses fits
  whose outcome spaces or observed data differ, naming what differs (and the
  preparation step, such as symmetrisation, that made the data differ).
* ``reloo=True`` replaces the PSIS estimate of every observation whose Pareto k
  says it is unreliable by exact leave-one-out: the model is refitted without that
  observation (same method and settings, the compiled engine reused, only the
  ``pm.Data`` values swapped), as :func:`arviz_stats.reloo` does, and its ELPD term
  is ``log mean_s p(y_i | theta_s^(-i))`` over the refit's draws.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from bayesjudge.base import BayesianModel
from bayesjudge.engine import ConvergenceWarning
from bayesjudge.engine.messages import warn_user

__all__ = ["check_comparable", "compare", "loo"]

#: Default NUTS settings of an exact-LOO refit of a NUTS fit (``refit_kwargs`` overrides).
_REFIT_TUNE = 1000


def compare(
    models: dict[str, BayesianModel],
    *,
    reloo: bool = False,
    k_threshold: float | None = None,
    kfold: int | None = None,
    refit_kwargs: Mapping | None = None,
    **kwargs,
) -> pd.DataFrame:
    """Leave-one-out comparison (``arviz.compare``) of fits of the same observed data.

    Parameters
    ----------
    models : dict
        Name -> fitted model. All must score the same observed data: same
        observations (units), same outcome space, same data preparation (see
        Raises).
    reloo : bool
        Refit each model without every observation whose Pareto k exceeds
        ``k_threshold`` and use the exact leave-one-out term for it (see
        :func:`loo`); the table then has no unreliable row and no Pareto k
        warning is raised. Costs one refit per flagged observation, on the
        compiled engine (no recompilation).
    k_threshold : float, optional
        Pareto k above which an observation is refitted (default: ArviZ's
        ``min(1 - 1/log10(S), 0.7)`` for S draws).
    kfold : int, optional
        Instead of leave-one-out, exact K-fold cross-validation
        (:func:`arviz_stats.loo_kfold`): K refits per model on the compiled engine,
        each without one fold of the observations (the same folds for every model).
    refit_kwargs : dict, optional
        ``fit`` settings of the refits of NUTS fits (default: the fit's draws and
        chains, ``tune=1000``, ``sampler="auto"``).
    **kwargs
        Passed to ``arviz.compare`` (``method``, ``reference``, ...).

    Returns
    -------
    pandas.DataFrame
        ArviZ's comparison table (``elpd``, ``elpd_diff``, ``dse``, ``weight``,
        ``diag_elpd`` -- the count of unreliable Pareto k, empty after ``reloo``).

    Raises
    ------
    ValueError
        Fewer than two models; fits whose log-likelihoods score different outcome
        spaces (e.g. ``DavidsonBT``'s probability of {left, tie, right} against
        ``BradleyTerry(kind="hard")``'s tie counted as half a win each way), or
        different observed data (the message names a preparation step that
        differs, e.g. one fit symmetrised the comparisons and the other did not).
    """
    import arviz_stats as az  # = arviz's functions, without matplotlib

    if len(models) < 2:
        raise ValueError("compare needs at least two fitted models.")
    check_comparable(models)
    kwargs.setdefault("round_to", "none")
    if kfold is not None:
        elpds = {name: loo(m, kfold=kfold, refit_kwargs=refit_kwargs)
                 for name, m in models.items()}
        return az.compare(elpds, **kwargs)
    if reloo:
        elpds = {name: loo(m, reloo=True, k_threshold=k_threshold, refit_kwargs=refit_kwargs)
                 for name, m in models.items()}
        return az.compare(elpds, **kwargs)
    trees = {name: _jitter_constant_loglik(m.idata_, seed=i)
             for i, (name, m) in enumerate(models.items())}
    return az.compare(trees, **kwargs)


def check_comparable(models: Mapping[str, BayesianModel]) -> None:
    """Raise ValueError unless every fit's log-likelihood scores the same observed data."""
    ref = None
    for name, m in models.items():
        obs = m.idata_["observed_data"].to_dataset()
        label = f"{name!r} ({type(m).__name__})"
        if "outcome_space" not in obs.attrs:
            raise ValueError(
                f"model {label} does not record what its log-likelihood is a density of "
                f"(observed_data.attrs['outcome_space']; a fit saved by an older bayesjudge). "
                f"Refit it with this version before comparing.")
        if ref is None:
            ref = (label, obs)
            continue
        ref_label, ref_obs = ref

        def show(key):
            return (f"{key}: {ref_label} {ref_obs.attrs.get(key, '(not set)')!r}, "
                    f"{label} {obs.attrs.get(key, '(not set)')!r}")

        if obs.attrs["outcome_space"] != ref_obs.attrs["outcome_space"]:
            raise ValueError(
                f"cannot compare {label} with {ref_label}: their pointwise log-likelihoods are "
                f"not densities of the same outcome ({show('outcome_space')}). An ELPD and the "
                f"stacking weights compare only fits that score the same observations on the "
                f"same outcome space; compare models whose likelihoods are probabilities of "
                f"the same outcome.")
        if not obs.equals(ref_obs):
            bad = [v for v in sorted(set(obs.data_vars) | set(ref_obs.data_vars))
                   if v not in obs or v not in ref_obs or not obs[v].equals(ref_obs[v])]
            # a preparation step (symmetrisation) that differs explains the difference
            steps = [k for k in sorted(set(obs.attrs) | set(ref_obs.attrs))
                     if k != "outcome_space" and obs.attrs.get(k) != ref_obs.attrs.get(k)]
            why = (f"; the data were prepared differently ({'; '.join(map(show, steps))})"
                   if steps else "")
            raise ValueError(
                f"cannot compare {label} with {ref_label}: they were fitted to different "
                f"observed data (observed_data variables that differ: {bad}){why}. "
                f"Leave-one-out comparison needs the same observations: fit both to the same "
                f"data, prepared the same way.")


def loo(
    model: BayesianModel,
    *,
    reloo: bool = False,
    k_threshold: float | None = None,
    kfold: int | None = None,
    var_name: str | None = None,
    refit_kwargs: Mapping | None = None,
):
    """PSIS-LOO of one fit, optionally exact for the observations PSIS cannot handle.

    Parameters
    ----------
    model : BayesianModel
        A fitted model (fitted in this session when ``reloo=True``: the refits
        need its prepared data).
    reloo : bool
        Refit without each observation whose Pareto k exceeds ``k_threshold``:
        its ELPD term becomes ``log((1/S) sum_s p(y_i | theta_s))`` with
        ``theta_s`` the refit's S draws (NUTS, or Laplace draws for MAP fits:
        the refit uses the fit's method), its Pareto k 0 (as
        :func:`arviz_stats.reloo`), and no Pareto k warning is raised.
    k_threshold : float, optional
        Default ``min(1 - 1/log10(S), 0.7)``; ``-inf`` refits every observation
        (brute-force LOO).
    kfold : int, optional
        Exact K-fold cross-validation instead (:func:`arviz_stats.loo_kfold`, its
        fixed seed: the same folds for every model of the same observations).
    var_name : str, optional
        The log-likelihood variable (models with one need not name it).
    refit_kwargs : dict, optional
        ``fit`` settings of NUTS refits (default: the fit's draws and chains,
        ``tune=1000``, ``sampler="auto"``).

    Returns
    -------
    arviz_stats.utils.ELPDDataLOO or ELPDDataLOOKFold
        Pointwise (``elpd_i``; ``pareto_k`` for LOO) cross-validation result.
    """
    from arviz_stats import loo as az_loo
    from arviz_stats import loo_kfold
    from arviz_stats import reloo as az_reloo

    tree = _jitter_constant_loglik(model.idata_, seed=0)
    if not reloo and kfold is None:
        return az_loo(tree, pointwise=True, var_name=var_name)
    from arviz_stats.loo.wrapper import SamplingWrapper

    # arviz_stats is imported on first use only (import bayesjudge stays light).
    wrapper = type("RefitWrapper", (_Refits, SamplingWrapper), {})(
        model, tree, var_name, refit_kwargs)
    if kfold is not None:
        try:
            return loo_kfold(tree, wrapper, pointwise=True, var_name=wrapper.var_name, k=kfold)
        finally:  # the refits swapped the shared engine's data
            fd = model._fit_data
            model._engine.set_data(fd.data, fd.coords)
    with warnings.catch_warnings():  # the flagged observations are what reloo repairs
        warnings.filterwarnings("ignore", message="Estimated shape parameter of Pareto")
        first = az_loo(tree, pointwise=True, var_name=wrapper.var_name)
    try:
        out = az_reloo(wrapper, loo_orig=first, var_name=wrapper.var_name,
                       k_threshold=k_threshold, pointwise=True)
    finally:  # the refits swapped the shared engine's data
        fd = model._fit_data
        model._engine.set_data(fd.data, fd.coords)
    left = int(np.sum(out.pareto_k.values > out.good_k))
    if left:  # a k_threshold above ArviZ's good_k left some unreliable terms
        warn_user(f"{type(model).__name__}: {left} observation(s) keep a Pareto k above "
                  f"{out.good_k:.2f} (k_threshold={k_threshold}): their PSIS terms are "
                  f"unreliable; lower k_threshold to refit them.")
    return out


class _Refits:
    """Methods of an ArviZ ``SamplingWrapper`` refitting a model on its compiled engine."""

    def __init__(self, model: BayesianModel, tree: xr.DataTree, var_name: str | None,
                 refit_kwargs: Mapping | None):
        super().__init__(model, idata_orig=tree)  # SamplingWrapper's
        name = type(model).__name__
        if not hasattr(model, "_fit_data"):
            raise ValueError(
                f"{name} was loaded from a file: exact leave-one-out refits need the data it "
                f"was fitted to. Fit it in this session (Model(...).fit(data)) to use reloo.")
        if not hasattr(model, "_loo_data"):
            raise ValueError(
                f"reloo is not available for {name} (it cannot leave one observation out of its "
                f"prepared data yet); use reloo=False and read the diag_elpd column.")
        names = list(tree["log_likelihood"].data_vars)
        if var_name is None and len(names) > 1:
            raise ValueError(f"{name} has several log-likelihood variables {names}; pass "
                             f"var_name.")
        self.var_name = var_name or names[0]
        post = tree["posterior"]
        self.settings: dict = {"method": model.method_}
        if model.method_ == "nuts":
            self.settings.update(draws=post.sizes["draw"], chains=post.sizes["chain"],
                                 tune=_REFIT_TUNE)
            self.settings.update(refit_kwargs or {})

    def sel_observations(self, idx):
        if isinstance(idx, dict):
            raise ValueError(f"reloo needs one observation dim; {type(self.model).__name__} "
                             f"has {list(idx)}.")
        fd = self.model._fit_data
        left = np.atleast_1d(np.asarray(idx)).astype(np.int64)  # one (reloo) or a fold
        self.left_out = left.tolist() if left.size > 1 else int(left[0])
        return self.model._loo_data(fd, self.var_name, left), left

    def sample(self, modified_observed_data):
        # A shallow copy keeps the options and the state _prepare set (same structure
        # key, so the same compiled engine); fit rebinds every fitted attribute.
        refit = copy.copy(self.model)
        refit._prepare = lambda *args, **kwargs: modified_observed_data
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            refit.fit(**self.settings)
        for w in caught:  # data checks already warned on the full data; convergence did not
            if issubclass(w.category, ConvergenceWarning):
                warn_user(f"exact-LOO refit of {type(self.model).__name__} without "
                          f"observation {self.left_out}: {w.message}", ConvergenceWarning)
        return refit

    def get_inference_data(self, fitted_model):
        return fitted_model

    def log_likelihood__i(self, excluded_obs, idata__i):
        post = idata__i._posterior()
        params = {k: post[k].values for k in post.data_vars if not k.endswith("__")}
        ll = self.model._pointwise_loglik(params, self.model._fit_data)[self.var_name]
        ll = ll.reshape(*ll.shape[:2], -1)[:, :, excluded_obs]
        return xr.DataArray(ll, dims=("chain", "draw", "__left_out__"))


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
