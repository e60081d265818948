"""Likelihood core of the Bradley-Terry family: skill layout, zero-sum maps, cell log-likelihoods.

Shared by :mod:`bayesjudge.models.bradley_terry.bt_sigma` and
:mod:`bayesjudge.models.bradley_terry.davidson_bt` (Qian, Sun, Gales & Knill (2026), "Who can we
trust? LLM-as-a-jury for Comparative Assessment", arXiv:2602.16610, eqs. 1-2, 11
and 13; Davidson (1970), "On extending the Bradley-Terry model to accommodate ties
in paired comparison experiments", JASA 65:317-328). Everything works on the cells
of a :class:`~bayesjudge.data.comparisons.Comparisons` (one per distinct context,
aspect, left, right, judge), never on rows. The same formulas exist twice: in
pytensor for the PyMC graph and in numpy for the pointwise log-likelihood and
predictions; ``tests/test_bradley_terry.py`` checks both against an independent
scipy implementation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytensor.tensor as pt

from bayesjudge import rank_sets
from bayesjudge.data.comparisons import Comparisons

#: log-likelihood units stored in ``idata_`` at most (cells are pooled beyond it).
MAX_LL_UNITS = 4096


@dataclass(frozen=True)
class SkillLayout:
    """Where each skill lives: one *skill cell* per (aspect, context, item) seen in the data.

    Skill cells are sorted by ranking group (``aspect * n_contexts + context``),
    then item code. ``dims`` is ``([aspect,] [context,] item)`` when every
    combination occurs (a dense grid: the skill array has that shape), else
    ``("cell",)``.
    """

    nodes: np.ndarray  # group * n_items + item, sorted
    n_items: int
    dims: tuple[str, ...]
    shape: tuple[int, ...]

    @property
    def group(self) -> np.ndarray:
        return self.nodes // self.n_items

    @property
    def item(self) -> np.ndarray:
        return self.nodes % self.n_items

    def cells(self, group: np.ndarray, item: np.ndarray) -> np.ndarray:
        """Skill cell of (group, item) pairs; -1 where the item was never seen there."""
        key = np.asarray(group) * self.n_items + np.asarray(item)
        pos = np.searchsorted(self.nodes, key).clip(0, len(self.nodes) - 1)
        return np.where(self.nodes[pos] == key, pos, -1)

    def zero_sum_data(self) -> dict[str, np.ndarray]:
        """Index arrays of the per-group zero-sum map (:func:`zero_sum`)."""
        _, group, size = np.unique(self.group, return_inverse=True, return_counts=True)
        last = np.r_[group[1:] != group[:-1], True]
        return {"free_cell": np.flatnonzero(~last), "free_group": group[~last],
                "last_cell": np.flatnonzero(last), "group_size": size.astype(float)}


def skill_layout(comps: Comparisons) -> SkillLayout:
    """The :class:`SkillLayout` of a data set."""
    n_items = len(comps.items)
    g = comps.group
    nodes = np.unique(np.concatenate([g * n_items + comps.left, g * n_items + comps.right]))
    full = comps.n_aspects * comps.n_contexts * n_items
    if len(nodes) == full:
        dims, shape = [], []
        if comps.aspects is not None:
            dims.append("aspect")
            shape.append(comps.n_aspects)
        if comps.contexts is not None:
            dims.append("context")
            shape.append(comps.n_contexts)
        return SkillLayout(nodes, n_items, (*dims, "item"), (*shape, n_items))
    return SkillLayout(nodes, n_items, ("cell",), (len(nodes),))


def cell_labels(comps: Comparisons, layout: SkillLayout) -> np.ndarray:
    """Coordinates of the ``cell`` dim: ``"[aspect, ]context, item"`` per skill cell.

    A ragged layout (items that differ between contexts) flattens the skills to one
    ``cell`` dim; these labels make ``summarize()`` name ``skill[k8s, gpt-4]`` as a dense
    grid's (context, item) dims do. Labels that ``, `` inside ids would make equal (never
    seen) fall back to the cell numbers, as does a dense grid (its skills have their own dims).
    """
    if layout.dims != ("cell",):
        return np.arange(len(layout.nodes))
    parts = []
    if comps.aspects is not None:
        parts.append(np.asarray(comps.aspects, dtype=object)[layout.group // comps.n_contexts])
    if comps.contexts is not None:
        parts.append(np.asarray(comps.contexts, dtype=object)[layout.group % comps.n_contexts])
    parts.append(np.asarray(comps.items, dtype=object)[layout.item])
    labels = np.array([", ".join(map(str, ids)) for ids in zip(*parts)], dtype=object)
    return labels if len(set(labels)) == len(labels) else np.arange(len(labels))


def zero_sum(y, free_cell, free_group, last_cell, group_size):
    """Map free coordinates to values that sum to zero within each group (pytensor).

    Per group of size n with free coordinates y (n - 1 of them) this is PyMC's
    ``ZeroSumTransform`` (an orthonormal basis of the zero-sum subspace):
    ``x_i = y_i - c`` for the free cells and ``x_last = -S / sqrt(n)``
    with ``S = sum(y)``, ``c = S / (sqrt(n) + n)``. iid ``Normal(0, s)`` on y is
    therefore ``ZeroSumNormal(s)`` per group, for groups of any (ragged) size. The
    number of cells is read from the index arrays, so the graph has no static size.
    """
    sums = pt.inc_subtensor(pt.zeros(group_size.shape)[free_group], y)
    root = pt.sqrt(group_size)
    norm = sums / (root + group_size)
    fill = norm - sums / root
    out = pt.zeros((free_cell.shape[0] + last_cell.shape[0],))
    out = pt.set_subtensor(out[free_cell], y - norm[free_group])
    return pt.set_subtensor(out[last_cell], fill - norm)


def zero_sum_numpy(y: np.ndarray, n: int) -> np.ndarray:
    """Numpy :func:`zero_sum` of one group on the last axis (y has n - 1 entries)."""
    s = y.sum(-1, keepdims=True)
    norm = s / (np.sqrt(n) + n)
    return np.concatenate([y, norm - s / np.sqrt(n)], axis=-1) - norm


def bt_loglik_np(d: np.ndarray, win: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per-cell BT log-likelihood (numpy, broadcasting over leading axes)."""
    return win * d - n * np.logaddexp(0.0, d)


def davidson_log_probs(d: np.ndarray, tie_logit: np.ndarray) -> np.ndarray:
    r"""log P(left), log P(tie), log P(right) on a new last axis (numpy).

    Davidson's model with :math:`\pi = e^s`:
    :math:`P(i \succ j) = \pi_i / (\pi_i + \pi_j + \nu\sqrt{\pi_i\pi_j})`, which is
    :math:`e^{d/2} / (e^{d/2} + e^{-d/2} + \nu)` with d = s_i - s_j.
    """
    d, t = np.broadcast_arrays(np.asarray(d, float), np.asarray(tie_logit, float))
    a = np.abs(d)
    log_z = np.logaddexp(0.5 * a + np.log1p(np.exp(-a)), t)
    return np.stack([0.5 * d - log_z, t - log_z, -0.5 * d - log_z], axis=-1)


def bt_log_probs(d: np.ndarray) -> np.ndarray:
    """log P(left), log P(tie) = -inf, log P(right) of the BT model (numpy)."""
    d = np.asarray(d, float)
    return np.stack([-np.logaddexp(0.0, -d), np.full_like(d, -np.inf),
                     -np.logaddexp(0.0, d)], axis=-1)


def pool_units(values: np.ndarray) -> np.ndarray:
    """Sum the last axis (cells) into at most :data:`MAX_LL_UNITS` units (cell % units)."""
    m = values.shape[-1]
    if m <= MAX_LL_UNITS:
        return values
    pad = (-m) % MAX_LL_UNITS
    widths = [(0, 0)] * (values.ndim - 1) + [(0, pad)]
    padded = np.pad(values, widths)
    return padded.reshape(*values.shape[:-1], -1, MAX_LL_UNITS).sum(-2)


def rank_draws(skill: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Rank (1 = best) of every cell within its group, per draw; skill is (draws, cells)."""
    ranks = np.empty(skill.shape, dtype=np.int64)
    for idx in pd.Series(np.arange(len(group))).groupby(group).indices.values():
        ranks[:, idx] = rank_sets.rank_draws(skill[:, idx])
    return ranks


def point_rank(skill: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Rank (1 = best) of every cell's point estimate within its group (cells,); equal
    skills share a rank (:func:`bayesjudge.rank_sets.point_ranks`)."""
    ranks = np.empty(skill.shape, dtype=np.int64)
    for idx in pd.Series(np.arange(len(group))).groupby(group).indices.values():
        ranks[idx] = rank_sets.point_ranks(skill[idx])
    return ranks


def layout_state(comps: Comparisons, layout: SkillLayout) -> dict[str, Any]:
    """JSON-able ids and skill layout of a fit (saved with the model, used by predict)."""

    def ids(index):
        return None if index is None else index.tolist()

    return {"items": ids(comps.items), "judges": ids(comps.judges),
            "contexts": ids(comps.contexts), "aspects": ids(comps.aspects),
            "nodes": layout.nodes.tolist(), "dims": list(layout.dims),
            "shape": list(layout.shape),
            "judge_rows": np.bincount(comps.judge, weights=comps.n,
                                      minlength=len(comps.judges)).tolist(),
            "judge_aspect_rows": np.bincount(
                comps.judge * comps.n_aspects + comps.aspect, weights=comps.n,
                minlength=len(comps.judges) * comps.n_aspects).tolist()}


def layout_from_state(state: dict[str, Any]) -> SkillLayout:
    """The :class:`SkillLayout` saved by :func:`layout_state`."""
    return SkillLayout(np.asarray(state["nodes"], dtype=np.int64), len(state["items"]),
                       tuple(state["dims"]), tuple(state["shape"]))
