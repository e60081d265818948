"""A jury simulator on real human scores: judges of stated reliability, bias and sparsity.

Generates the comparisons table of Qian, Sun, Gales & Knill (2026), "Who can we
trust? LLM-as-a-jury for Comparative Assessment", arXiv:2602.16610 (Sections 3-4)
from real human scores (e.g. SummEval, Topical-Chat), which stay the ground truth:
each simulated judge has a stated discriminator sigma_k (eq. 13), pair-level noise
that breaks transitivity (the cycle inconsistency of eqs. 8-10), an optional
positional bias for the left slot (what eq. 3's symmetrisation removes), and the
sparse designs of real data (a fraction of pairs, one order or both). No LLM judge's
pairwise probabilities on these data sets are public; this makes juries whose
reliabilities are known. Seeded by ``random_seed`` only; never touches global RNG.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy.special import expit

from bayesjudge.data import DataValidationError, check_no_missing, require_frame, show_values
from bayesjudge.data.frames import as_pandas
from bayesjudge.datasets.files import SeedLike

__all__ = ["simulate_jury"]


def _judge_table(judges, position_bias) -> pd.DataFrame:
    if isinstance(judges, pd.DataFrame):
        require_frame(judges, "judges", ["judge", "sigma"])
        tab = judges[["judge", "sigma"]].copy()
        tab["bias"] = judges["position_bias"] if "position_bias" in judges.columns else 0.0
    elif isinstance(judges, Mapping):
        tab = pd.DataFrame({"judge": list(judges), "sigma": list(judges.values())})
        tab["bias"] = 0.0
    else:
        raise DataValidationError(
            f"judges must be a mapping judge -> sigma or a DataFrame with columns judge, sigma "
            f"[, position_bias]; got {type(judges).__name__}."
        )
    if position_bias is not None:
        unknown = [j for j in position_bias if j not in set(tab["judge"])]
        if unknown:
            raise DataValidationError(
                f"position_bias names unknown judges {show_values(unknown)}; use ids of `judges`."
            )
        tab["bias"] = [float(position_bias.get(j, b)) for j, b in zip(tab["judge"], tab["bias"])]
    sig = pd.to_numeric(tab["sigma"], errors="coerce").to_numpy(float)
    if len(tab) == 0 or not (np.isfinite(sig) & (sig > 0)).all():
        raise DataValidationError(
            f"judges: every sigma must be a finite number > 0; got {show_values(list(sig))}."
        )
    if tab["judge"].duplicated().any():
        raise DataValidationError(
            f"judges: duplicated ids {show_values(tab.loc[tab.judge.duplicated(), 'judge'])}."
        )
    b = pd.to_numeric(tab["bias"], errors="coerce").to_numpy(float)
    if not np.isfinite(b).all():
        raise DataValidationError("position_bias values must be finite numbers.")
    tab["sigma"], tab["bias"] = sig, b
    return tab.reset_index(drop=True)


def simulate_jury(
    scores: pd.DataFrame,
    judges: Mapping[str, float] | pd.DataFrame,
    *,
    score: str = "score",
    pair_noise: float = 1.0,
    shared_noise: float = 0.0,
    position_bias: Mapping[str, float] | None = None,
    pair_fraction: float = 1.0,
    orders: Literal["both", "one"] = "both",
    kind: Literal["soft", "hard"] = "soft",
    group: Sequence[str] | None = None,
    random_seed: SeedLike = 0,
) -> tuple[pd.DataFrame, dict]:
    """Simulate a jury's pairwise judgments on top of real human scores.

    Generator, for each group g (a ``context`` x ``aspect``) of items with human
    scores :math:`x_{gi}`:

    1. True skills are the human scores standardised per aspect over all its rows,
       :math:`s_{gi} = (x_{gi} - \\bar x_a) / \\operatorname{sd}_a`.
    2. A shared perception error, one per item and common to every judge (what the
       whole jury gets wrong together, which no aggregation can remove):
       :math:`\\tilde s_{gi} = s_{gi} + \\eta_{gi}`,
       :math:`\\eta_{gi} \\sim N(0, \\text{shared\\_noise}^2)`.
    3. Design: each judge k sees each unordered pair {i, j} of a group independently
       with probability ``pair_fraction``; it judges it in both orders
       (``orders="both"``, the paper's N(N-1) design) or in one order drawn uniformly
       (``"one"``).
    4. For every judged ordered pair (l = left slot, r = right slot):

       .. math:: \\operatorname{logit} p^{(k)}_{lr} = \\frac{\\tilde s_l - \\tilde s_r}{\\sigma_k}
                 + b_k + \\varepsilon_{lrk},
                 \\qquad \\varepsilon_{lrk} \\sim N(0, \\text{pair\\_noise}^2)

       i.e. eq. 13 of Qian et al. (2026) with judge discriminator :math:`\\sigma_k`,
       positional bias :math:`b_k` toward the left slot (so
       :math:`p_{lr} + p_{rl} \\ne 1`, undone on average by eq. 3), and independent
       pair-level noise per ordered pair. The noise does not factor through any skill
       vector: it creates intransitive triples, more often for judges whose signal
       :math:`|\\tilde s_l - \\tilde s_r|/\\sigma_k` is small against it -- so a larger
       stated :math:`\\sigma_k` gives a noisier judge with a higher cycle rate, and a
       BT-sigma fit recovers the *order* of the :math:`\\sigma_k` (its estimates are
       inflated by the noise, roughly by :math:`\\sqrt{1 + \\pi\\,\\text{pair\\_noise}^2/8}`
       under the probit approximation).
    5. Output ``prob`` = :math:`p^{(k)}_{lr}` (``kind="soft"``), or a sampled verdict
       ``outcome`` = ``left`` with probability :math:`p^{(k)}_{lr}`, else ``right``
       (``kind="hard"``; no ties).

    Random draws, in this order from ``numpy.random.default_rng(random_seed)``:
    :math:`\\eta`, the pair inclusion, the order, :math:`\\varepsilon`, the verdicts.

    Parameters
    ----------
    scores : pandas.DataFrame
        ``item`` and ``score`` (name set by ``score``); optional ``context`` and
        ``aspect`` (e.g. :func:`~bayesjudge.datasets.load_summeval`). Unique per
        (context, aspect, item).
    judges : mapping judge -> sigma_k, or DataFrame
        Judge ids and their discriminators :math:`\\sigma_k > 0` (a DataFrame has
        columns ``judge``, ``sigma`` and optionally ``position_bias``).
    score : str
        Column of the human score.
    pair_noise : float, default 1.0
        SD of :math:`\\varepsilon` (logit scale); 0 makes every judge transitive.
    shared_noise : float, default 0.0
        SD of :math:`\\eta` (skill scale).
    position_bias : mapping judge -> b_k, optional
        Bias toward the left slot on the logit scale (default 0).
    pair_fraction : float in (0, 1], default 1.0
        Share of unordered pairs each judge sees.
    orders : {"both", "one"}
        Both orders of each seen pair, or one drawn at random.
    kind : {"soft", "hard"}
        Probabilities or sampled binary verdicts.
    group : sequence of str, optional
        Columns defining a set of comparable items; default ``context`` and
        ``aspect``, whichever exist. Standardisation is per ``aspect`` if present.
    random_seed : int, numpy Generator or None, default 0
        The only source of randomness.

    Returns
    -------
    comparisons : pandas.DataFrame
        ``judge``, the group columns, ``left``, ``right``, ``prob`` or ``outcome``;
        judge-major, then pairs in the items' first-appearance order.
    truth : dict
        ``sigma`` and ``position_bias`` (Series by judge), ``skill`` (the scores'
        group columns and ``item`` with ``skill`` :math:`s` and ``perceived``
        :math:`\\tilde s`, in input order), ``pair_noise``, ``shared_noise``,
        ``pair_fraction``, ``orders``, ``kind``.
    """
    scores, judges = as_pandas(scores), as_pandas(judges)
    if orders not in ("both", "one"):
        raise DataValidationError(f"orders={orders!r}; choose 'both' or 'one'.")
    if kind not in ("soft", "hard"):
        raise DataValidationError(f"kind={kind!r}; choose 'soft' or 'hard'.")
    for name, v in (("pair_noise", pair_noise), ("shared_noise", shared_noise)):
        if not (np.isfinite(v) and v >= 0):
            raise DataValidationError(f"{name}={v!r}; pass a finite number >= 0.")
    if not (0 < pair_fraction <= 1):
        raise DataValidationError(f"pair_fraction={pair_fraction!r}; pass a number in (0, 1].")
    tab = _judge_table(judges, position_bias)
    if group is None:
        group = [c for c in ("context", "aspect") if c in scores.columns]
    group = list(group)
    require_frame(scores, "scores", group + ["item", score])
    check_no_missing(scores, "scores", group + ["item", score])
    x = pd.to_numeric(scores[score], errors="coerce").to_numpy(float)
    if not np.isfinite(x).all():
        raise DataValidationError(
            f"scores.{score} must be finite numbers; got "
            f"{show_values(scores[score][~np.isfinite(x)])}."
        )
    if scores.duplicated(group + ["item"]).any():
        raise DataValidationError(
            f"scores: (group {group}, item) must be unique; average repeated ratings first."
        )
    rng = np.random.default_rng(random_seed)

    df = scores[group + ["item"]].reset_index(drop=True)
    by_aspect = df["aspect"] if "aspect" in df.columns else pd.Series(0, index=df.index)
    xs = pd.Series(x)
    mu = xs.groupby(by_aspect.to_numpy()).transform("mean").to_numpy()
    sd = xs.groupby(by_aspect.to_numpy()).transform(lambda v: v.std(ddof=0)).to_numpy()
    if (sd <= 0).any():
        raise DataValidationError(
            "scores: an aspect has constant scores, so skills cannot be standardised; drop it."
        )
    skill = (x - mu) / sd
    perceived = skill + shared_noise * rng.standard_normal(len(skill))
    truth_skill = df.copy()
    truth_skill["skill"], truth_skill["perceived"] = skill, perceived

    df["_pos"] = np.arange(len(df))
    key = group if group else ["_g"]
    if not group:
        df["_g"] = 0
    pairs = df.merge(df, on=key, suffixes=("_l", "_r"))
    pairs = pairs[pairs["_pos_l"] < pairs["_pos_r"]].sort_values(["_pos_l", "_pos_r"])
    i, j = pairs["_pos_l"].to_numpy(), pairs["_pos_r"].to_numpy()
    n_pairs, n_judges = len(i), len(tab)

    k = np.repeat(np.arange(n_judges), n_pairs)
    pi, pj = np.tile(i, n_judges), np.tile(j, n_judges)
    pr = np.tile(np.arange(n_pairs), n_judges)
    seen = rng.uniform(size=len(k)) < pair_fraction
    k, pi, pj, pr = k[seen], pi[seen], pj[seen], pr[seen]
    if orders == "one":
        flip = rng.uniform(size=len(k)) < 0.5
        left, right = np.where(flip, pj, pi), np.where(flip, pi, pj)
    else:  # both orders, (i, j) then (j, i)
        k, pr = np.repeat(k, 2), np.repeat(pr, 2)
        left = np.column_stack([pi, pj]).ravel()
        right = np.column_stack([pj, pi]).ravel()
    sig, bias = tab["sigma"].to_numpy()[k], tab["bias"].to_numpy()[k]
    eta = (perceived[left] - perceived[right]) / sig + bias
    eta = eta + pair_noise * rng.standard_normal(len(k))
    p = expit(eta)

    out = pd.DataFrame({"judge": tab["judge"].to_numpy(object)[k]})
    for c in group:
        out[c] = pairs[c].to_numpy()[pr]
    item = df["item"].to_numpy(object)
    out["left"], out["right"] = item[left], item[right]
    if kind == "soft":
        out["prob"] = p
    else:
        out["outcome"] = np.where(rng.uniform(size=len(p)) < p, "left", "right").astype(object)
    truth = {
        "sigma": pd.Series(tab["sigma"].to_numpy(), index=tab["judge"], name="sigma"),
        "position_bias": pd.Series(tab["bias"].to_numpy(), index=tab["judge"],
                                   name="position_bias"),
        "skill": truth_skill,
        "pair_noise": float(pair_noise),
        "shared_noise": float(shared_noise),
        "pair_fraction": float(pair_fraction),
        "orders": orders,
        "kind": kind,
    }
    return out, truth
