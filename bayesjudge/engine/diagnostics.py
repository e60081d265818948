"""NUTS diagnostics (R-hat, bulk ESS, divergences) after every sampler run, and the
``summarize()`` table (``az.summary``'s, its diagnostic columns computed in blocks)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import xarray as xr

from bayesjudge.engine.batch_diagnostics import (
    mcse_mean,
    rank_rhat_ess_bulk,
    summary_diagnostics,
)
from bayesjudge.engine.laplace_check import laplace_draws_ess
from bayesjudge.engine.messages import ConvergenceWarning, warn_user

#: Largest R-hat and smallest bulk ESS accepted without a ConvergenceWarning.
RHAT_MAX = 1.01
ESS_MIN = 400


def check_convergence(tree: xr.DataTree, var_names: list[str]) -> dict[str, float]:
    """Warn (ConvergenceWarning) when R-hat, ESS or divergences look bad.

    Values constant by construction (equal in every draw of every chain) are left
    out: their R-hat and ESS are undefined but nothing is wrong; a chain stuck on
    its own starting point still warns.

    Returns
    -------
    dict
        ``max_rhat``, ``min_ess_bulk`` and ``divergences``.
    """
    post = tree["posterior"].to_dataset()[var_names]
    rhats, esses = [], []
    for name in var_names:
        draws = post[name].transpose("chain", "draw", ...)
        block = _block(draws)
        rhat, ess = _rhat_ess(block, draws)
        # A value equal in every draw of every chain is constant by construction (one
        # judge's discriminator fixed at 1, a zero-sum vector of length 1): its R-hat
        # and ESS are NaN but nothing is wrong. A stuck chain still counts: chains start
        # from different (jittered) points, so a stuck chain differs from the others.
        moving = ~np.all(block == block[:, :1, :1], axis=(1, 2))
        rhats.append(rhat[moving])
        esses.append(ess[moving])
    rhats, esses = np.concatenate(rhats), np.concatenate(esses)
    # NaN means undiagnosable (a constant chain, too few draws): a failure, never a pass.
    max_rhat = float(np.max(rhats)) if rhats.size else float("nan")
    min_ess = float(np.min(esses)) if esses.size else float("nan")
    stats = tree["sample_stats"]
    div = int(stats["diverging"].values.sum()) if "diverging" in stats else 0
    problems = []
    if not (np.isfinite(max_rhat) and np.isfinite(min_ess)):
        problems.append("R-hat/ESS are undefined (NaN) for some parameter: a chain did not "
                        "move or the run is too short to diagnose (run more chains/draws)")
    if div:
        problems.append(f"{div} divergent transitions (raise tune, or use stronger priors)")
    if max_rhat > RHAT_MAX:
        problems.append(f"max R-hat {max_rhat:.3f} > {RHAT_MAX} (run more chains/draws)")
    if min_ess < ESS_MIN:
        problems.append(f"min bulk ESS {min_ess:.0f} < {ESS_MIN} (increase draws)")
    if problems:
        warn_user(
            "NUTS diagnostics: " + "; ".join(problems) + ". Intervals may be unreliable.",
            ConvergenceWarning,
        )
    return {"max_rhat": max_rhat, "min_ess_bulk": min_ess, "divergences": div}


def _rhat_ess(block: np.ndarray, draws: xr.DataArray) -> tuple[np.ndarray, np.ndarray]:
    """Rank R-hat and bulk ESS of (P, C, D) draws (``draws``: chain, draw, ... order).

    :mod:`~bayesjudge.engine.batch_diagnostics` (ArviZ's estimators on a block of
    parameters, equal to them to rounding) when every draw is finite, with at least 2
    chains and 4 draws; ``az.rhat`` / ``az.ess`` otherwise (their NaN conventions).
    """
    if _batchable(block):
        return rank_rhat_ess_bulk(block)
    import arviz_stats as az  # = arviz's functions, without matplotlib

    data = xr.Dataset({"v": draws})
    with np.errstate(divide="ignore", invalid="ignore"):  # 0/0 of a constant: NaN, handled
        rhat = np.ravel(az.rhat(data)["v"].values)
        ess = np.ravel(az.ess(data, method="bulk")["v"].values)
    return rhat, ess


def share_mcse(hits: np.ndarray, post: xr.Dataset, laplace: bool) -> np.ndarray:
    """Monte Carlo standard error of each column's share of True over the posterior draws.

    ``hits``: (draws, k) booleans over the draws of ``post`` in chain-major order (as
    ``post[name].values.reshape(-1, ...)`` flattens them). NUTS: ArviZ's ``mcse_mean``
    of the indicator (split-chain ESS). MAP (``laplace``): sqrt(p (1 - p) / n_eff), n_eff
    the Laplace draws' effective number (:func:`~bayesjudge.engine.laplace_check.
    laplace_draws_ess`). 0 where every draw agrees.
    """
    hits = np.asarray(hits, dtype=float)
    if laplace:
        p = hits.mean(axis=0)
        return np.sqrt(p * (1 - p) / laplace_draws_ess(post.attrs, len(hits)))
    return mcse_mean(hits.T.reshape(hits.shape[1], post.sizes["chain"], -1))


def summary_table(post: xr.Dataset, var_names: list[str], ci_prob: float,
                  diagnostics: bool) -> pd.DataFrame:
    """``az.summary`` of ``var_names`` (equal-tailed intervals, unrounded).

    ``diagnostics``: with ArviZ's columns ess_bulk, ess_tail, r_hat, mcse_mean,
    mcse_sd, computed on blocks of parameters
    (:func:`~bayesjudge.engine.batch_diagnostics.summary_diagnostics`: 4.9 s instead of
    11.8 s for 1,600 parameters x 4 x 1000 draws) where every variable passes ArviZ's
    checks, by ``az.summary`` itself otherwise. Same rows, columns and numbers (to rounding) as
    ``az.summary(kind="all")``. Without them (a MAP fit's Laplace draws, one chain of
    independent or importance-resampled draws): ``mcse_mean`` = sd / sqrt(n_eff), n_eff
    from :func:`~bayesjudge.engine.laplace_check.laplace_draws_ess`.
    """
    import arviz_stats as az  # = arviz's functions, without matplotlib
    from arviz_base import rcParams

    blocks = ([_block(post[name].transpose("chain", "draw", ...)) for name in var_names]
              if diagnostics else [])
    batch = diagnostics and all(_batchable(b) for b in blocks)
    kind = "all" if diagnostics and not batch else "stats"
    with np.errstate(divide="ignore", invalid="ignore"):  # a constant's R-hat: NaN in the table
        # One variable at a time: ArviZ 1.3's (arviz-stats 1.3.3) summary of several
        # variables flattens a variable in the order of the dimensions as they first
        # appear in the dataset, but labels its rows in the variable's own order: with
        # skill (item) before judge_item_bias (judge, item), every judge_item_bias row got
        # another element's numbers (tests/test_contract.py checks each row against its
        # element's draws).
        table = pd.concat([az.summary(post, var_names=[name], ci_prob=ci_prob, ci_kind="eti",
                                      kind=kind, round_to="none") for name in var_names])
        if batch:
            cols = [summary_diagnostics(b, rcParams["stats.ci_prob"]) for b in blocks]
            for col in cols[0]:
                table[col] = np.concatenate([c[col] for c in cols])
    if not diagnostics:
        n_draws = post.sizes["chain"] * post.sizes["draw"]
        table["mcse_mean"] = table["sd"] / np.sqrt(laplace_draws_ess(post.attrs, n_draws))
    if table.index.duplicated().any():
        table.index = _distinct_labels(post, var_names, table.index)
    return table


def _distinct_labels(post: xr.Dataset, var_names: list[str], labels: pd.Index) -> pd.Index:
    """Row labels with ids written as ``repr`` in the variables whose labels collide.

    ArviZ writes coordinates as text, so ids that differ only in type (``7`` and
    ``"7"``, which the models keep apart) would both label a row ``accuracy[7]``; those
    variables' rows become ``accuracy[7]`` and ``accuracy['7']`` (row order unchanged).
    """
    out, start = [], 0
    for name in var_names:
        var = post[name]
        dims = [d for d in var.dims if d not in ("chain", "draw")]
        size = int(np.prod([var.sizes[d] for d in dims], dtype=int))
        own = list(labels[start:start + size])
        if len(set(own)) < len(own):
            values = itertools.product(*(var[d].values.tolist() for d in dims))
            own = [f"{name}[{', '.join(map(repr, v))}]" for v in values]
        out += own
        start += size
    return pd.Index(out)


def _block(draws: xr.DataArray) -> np.ndarray:
    """(P, C, D) draws of a (chain, draw, ...) variable, its elements in C order."""
    values = draws.values
    return np.moveaxis(values.reshape(*values.shape[:2], -1), 2, 0)


def _batchable(block: np.ndarray) -> bool:
    """ArviZ's own checks pass (2 chains, 4 draws, every draw finite): batch estimators."""
    return block.shape[1] >= 2 and block.shape[2] >= 4 and bool(np.isfinite(block).all())
