"""Graded verdicts (``B>>A, B>A, A=B, A>B, A>>B``): the ordered-logistic Bradley-Terry model.

The Bradley-Terry family of Qian, Sun, Gales & Knill (2026), "Who can we trust?
LLM-as-a-jury for Comparative Assessment", arXiv:2602.16610 (eq. 13, the judges'
discriminators), with McCullagh's (1980) cumulative-logit likelihood over ordered
levels in place of win / loss (Agresti (1992), "Analysis of ordinal paired comparison
data", JRSS C 41:287-297); Arena-Hard-Auto's five-level verdicts (Li et al. 2024,
arXiv:2406.11939) are its default levels. Pieces: :mod:`~bayesjudge.data.graded`
(validation, level counts per cell), :mod:`~bayesjudge.models.bradley_terry.ordinal_core`
(cut points and level probabilities).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from bayesjudge.base import FitData
from bayesjudge.data import DataValidationError, show_values
from bayesjudge.data.comparisons import Comparisons, all_tie_judges
from bayesjudge.data.graded import check_levels, validate_graded
from bayesjudge.data.identification import position_bias_state
from bayesjudge.engine.messages import warn_user
from bayesjudge.models.bradley_terry.base import PairwiseModel
from bayesjudge.models.bradley_terry.core import (
    MAX_LL_UNITS,
    cell_labels,
    layout_state,
    pool_units,
    skill_layout,
)
from bayesjudge.models.bradley_terry.ordinal_core import cutpoints_pt, n_gaps, ordinal_log_probs_pt
from bayesjudge.models.bradley_terry.ordinal_report import OrdinalReports
from bayesjudge.priors import Prior

__all__ = ["OrdinalBT"]


class OrdinalBT(OrdinalReports, PairwiseModel):
    r"""Bradley-Terry for graded verdicts: a cumulative-logit model on the skill margin.

    Levels ``levels[0] < ... < levels[K-1]`` run from the strongest preference for
    ``right`` to the strongest for ``left``. With margin
    :math:`x = (s_i - s_j)/\sigma_k + b_k` (left item i, right item j, judge k) and
    ordered cut points :math:`\theta_1 < \dots < \theta_{K-1}`:

    .. math::

        P(Y \ge m) = \sigma(x - \theta_m), \qquad
        P(Y = m) = \sigma(x - \theta_m) - \sigma(x - \theta_{m+1})

    (:math:`\theta_0 = -\infty`, :math:`\theta_K = +\infty`; McCullagh 1980). A larger
    skill difference moves the verdict towards ``left``'s levels; the cut points say
    how far apart the levels are on the logit scale of the margin.

    ``cutpoints="symmetric"`` (default): :math:`\theta = (-c_M, \dots, -c_1, [0,]\,
    c_1, \dots, c_M)`, mirror images about the tie, so "A>>B" for (a, b) is "B>>A" for
    (b, a); an even K has no tie level and the middle cut point 0; K = 3 is
    :math:`P(\text{left}) = \sigma(x - c)`, :math:`P(\text{tie}) = \sigma(x + c) -
    \sigma(x - c)` and K = 2 is Bradley-Terry. ``cutpoints="free"``: any ordered cut
    points; their mean is a bias towards the left slot (a negative mean favours
    ``left``), so with ``position_bias=True`` they are centred (mean 0) and b_k
    carries the bias. ``per_judge_cutpoints=True``: one set per judge (a judge who
    says "A>>B" readily has narrow inner levels).

    Identification as the family: skills sum to zero per ranking group (context x
    aspect); with ``discriminators=True``, :math:`\sum_k \log\sigma_k = 0` (the
    cut points are on the scale of the margin, so sigma_k does not trade with them).

    Every input row is one observation: the table is collapsed to level counts per
    cell (context, aspect, left, right, judge), so repeated rows cost nothing;
    ``judges()["n_comparisons"]`` counts input rows. Outcome labels are matched in any
    letter case, surrounding spaces ignored; an unknown label is refused naming it and
    listing ``levels``. Under NUTS the discriminators are sampled non-centred at
    target_accept 0.9.

    Parameters
    ----------
    levels : sequence of str, optional
        The ordered labels, strongest preference for ``right`` first. Default:
        Arena-Hard's ``["B>>A", "B>A", "A=B", "A>B", "A>>B"]`` with A = left.
    cutpoints : {"symmetric", "free"}
        Cut points mirrored about the tie, or free (ordered).
    per_judge_cutpoints : bool
        One set of cut points per judge.
    discriminators : bool
        One sigma_k per judge (BT-sigma's eq. 13).
    position_bias : bool
        Per-judge bias b_k towards the left slot.
    priors : None, "flat" or dict
        Overrides of :attr:`default_priors` by name; ``"flat"`` gives the
        maximum-likelihood fit under MAP (gaps flat on (0, inf)). Defaults::

            skill                 Prior('Normal', mu=0, sigma=3)   zero-sum coordinates of s
            cutpoint_gap          Prior('Gamma', alpha=2, beta=0.5)  gaps between cut points
            cutpoint_location     Prior('Normal', mu=0, sigma=2)   mean cut point (free only)
            discriminator_offset  Prior('Normal', mu=0, sigma=1)   z, log sigma_k = tau z_k
            discriminator_spread  Prior('HalfNormal', sigma=1)     tau, sd of log sigma_k
            position_bias         Prior('Normal', mu=0, sigma=1)   b_k, per judge

        ``cutpoint_gap``: symmetric, c_1 and c_{m+1} - c_m (c_1 is half the tie
        level's width for an odd K); free, theta_{m+1} - theta_m. Each set of cut
        points (global or per judge) has its own gaps, all with this prior.
        ``cutpoint_location`` is used by free cut points without position bias.

    random_seed : int
        Seeds NUTS and the Laplace draws.

    Attributes
    ----------
    idata_ : xarray.DataTree
        ``skill``, ``cutpoint`` (dims ``boundary`` or ``(judge, boundary)``, named
        "<level>|<next level>": cut point m separates ``levels[m-1]`` and
        ``levels[m]``) and with the options
        ``discriminator`` and ``position_bias`` (dims ``judge``).

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"judge": ["j1"] * 6, "left": ["a", "b", "c", "a", "b", "c"],
    ...                       "right": ["b", "c", "a", "c", "a", "b"],
    ...                       "outcome": ["A>>B", "A>B", "B>>A", "A>>B", "B>A", "A=B"]})
    >>> model = OrdinalBT().fit(table)
    >>> model.ranking()["item"].tolist()
    ['a', 'b', 'c']
    >>> list(model.predict(pd.DataFrame({"left": ["a"], "right": ["c"]})).columns[2:7])
    ['p_B>>A', 'p_B>A', 'p_A=B', 'p_A>B', 'p_A>>B']
    """

    default_priors = {
        "skill": Prior("Normal", mu=0, sigma=3),
        "cutpoint_gap": Prior("Gamma", alpha=2, beta=0.5),
        "cutpoint_location": Prior("Normal", mu=0, sigma=2),
        "discriminator_offset": Prior("Normal", mu=0, sigma=1),
        "discriminator_spread": Prior("HalfNormal", sigma=1),
        "position_bias": Prior("Normal", mu=0, sigma=1),
    }

    def __init__(
        self,
        levels=None,
        cutpoints: Literal["symmetric", "free"] = "symmetric",
        per_judge_cutpoints: bool = False,
        discriminators: bool = False,
        position_bias: bool = False,
        priors: None | str | dict = None,
        random_seed: int | None = 0,
    ):
        self.levels = levels
        self.cutpoints = cutpoints
        self.per_judge_cutpoints = per_judge_cutpoints
        self.discriminators = discriminators
        self.position_bias = position_bias
        self.priors = priors
        self.random_seed = random_seed

    # -- options ------------------------------------------------------------------------
    @property
    def _levels(self) -> tuple[str, ...]:
        return check_levels(self.levels)

    def _check_options(self) -> None:
        self._levels  # noqa: B018  (raises on bad levels)
        if self.cutpoints not in ("symmetric", "free"):
            raise ValueError(f"cutpoints must be 'symmetric' or 'free', got {self.cutpoints!r}")
        for name in ("per_judge_cutpoints", "discriminators", "position_bias"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")

    def _symmetric(self) -> bool:
        return self.cutpoints == "symmetric"

    def _has_location(self) -> bool:
        return not self._symmetric() and not self.position_bias

    def _prior_names(self) -> tuple[str, ...]:
        self._check_options()
        names = ["skill"]
        if n_gaps(len(self._levels), self._symmetric()):
            names.append("cutpoint_gap")
        if self._has_location():
            names.append("cutpoint_location")
        if self.discriminators:
            names += ["discriminator_offset", "discriminator_spread"]
        if self.position_bias:
            names.append("position_bias")
        return tuple(names)

    def _flat_priors(self) -> dict[str, Prior]:
        flat = {k: Prior("Flat") for k in self.default_priors}
        flat["cutpoint_gap"] = Prior("HalfFlat")
        return flat

    def _structure_key(self, fd: FitData) -> tuple:
        # the graph depends on the number of levels, not on their labels (coords)
        name, params, *rest = super()._structure_key(fd)
        params = tuple((k, len(self._levels) if k == "levels" else v) for k, v in params)
        return (name, params, *rest)

    def _has_discriminators(self) -> bool:
        return self.discriminators

    def _judge_columns(self) -> bool:
        return self.discriminators or self.per_judge_cutpoints or self.position_bias

    @property
    def _summary_vars(self) -> tuple[str, ...]:
        names = ["skill", "cutpoint"]
        if self.discriminators and self._sigma_estimated():
            names.append("discriminator")
        if self.position_bias:
            names.append("position_bias")
        return tuple(names)

    # -- data ---------------------------------------------------------------------------
    def _prepare(self, comparisons: pd.DataFrame) -> FitData:
        self._check_options()
        self.resolved_priors()  # fail on bad priors before validation or compilation
        levels = self._levels
        comps, counts = validate_graded(comparisons, levels)
        self._check_graded(comps, counts)
        layout = skill_layout(comps)
        cl = layout.cells(comps.group, comps.left)
        cr = layout.cells(comps.group, comps.right)
        n_sc = len(layout.nodes)
        bias_state = position_bias_state(self, comps, cl, cr, n_sc)
        pair, keys = pd.factorize(cl * n_sc + cr)
        n_cols = len(comps.judges) if self._judge_columns() else 1
        col = comps.judge if self._judge_columns() else np.zeros(len(comps), np.int64)
        key, cell = np.unique(pair * n_cols + col, return_inverse=True)
        k = len(levels)
        lik_counts = np.zeros((len(key), k))
        np.add.at(lik_counts, cell, counts)
        data = {"pair_left": keys // n_sc, "pair_right": keys % n_sc, **layout.zero_sum_data(),
                "cell_pair": key // n_cols, "cell_col": key % n_cols, "counts": lik_counts}
        n_j = len(comps.judges)
        coords = {"judge": comps.judges.to_numpy(), "cell": cell_labels(comps, layout),
                  "item": comps.items.to_numpy(), "level": np.asarray(levels, dtype=object),
                  "boundary": np.asarray([f"{a}|{b}" for a, b in zip(levels, levels[1:])],
                                         dtype=object),
                  "gap": np.arange(n_gaps(k, self._symmetric())),
                  "skill_free": np.arange(n_sc - len(data["group_size"])),
                  "discriminator_free": np.arange(n_j - 1)}
        if comps.contexts is not None:
            coords["context"] = comps.contexts.to_numpy()
        if comps.aspects is not None:
            coords["aspect"] = comps.aspects.to_numpy()
        self._layout_state = {**layout_state(comps, layout), **bias_state,
                              "levels": list(levels)}
        # NUTS samples the discriminators non-centred (target_accept 0.9, _sampler_defaults):
        # the pilot-MAP choice of the other models reads their three-way information.
        self._nuts_centred = False
        return FitData(
            data=data, coords=coords,
            observed={"comparison": (("obs",), pool_units(counts @ np.arange(k, dtype=float))),
                      "outcomes": (("obs", "level"), pool_units(counts.T).T)},
            observation=self._observation(comps),
            shape_key=(layout.dims, n_j > 1, k),  # as PairwiseModel's: no static size
            extra={"comps": comps, "layout": layout, "cell_left": cl, "cell_right": cr,
                   "counts": counts, "lik_cell": cell},
        )

    def _observation(self, comps: Comparisons) -> dict[str, str]:
        return {"outcome_space": f"graded level of each comparison, categorical over "
                                 f"{list(self._levels)}",
                "symmetrized": "symmetrize=False: comparisons as given"}

    def _loo_data(self, fd: FitData, var: str, index) -> FitData:
        cell = fd.extra["lik_cell"]
        unit = np.arange(len(cell))
        if len(cell) > MAX_LL_UNITS:
            unit %= MAX_LL_UNITS
        keep = (~np.isin(unit, index)).astype(float)
        counts = np.zeros_like(fd.data["counts"])
        np.add.at(counts, cell, fd.extra["counts"] * keep[:, None])
        return replace(fd, data={**fd.data, "counts": counts})

    def _check_graded(self, comps: Comparisons, counts: np.ndarray) -> None:
        levels = self._levels
        if self.discriminators and len(comps.judges) > 1:
            bad = all_tie_judges(comps)
            if len(bad):
                text = (f"comparisons.judge: judge(s) {show_values(list(bad))} gave the middle "
                        f"level {levels[len(levels) // 2]!r} to every comparison: the data "
                        f"alone give their discriminator no finite value")
                if self._is_flat("discriminator_offset"):
                    raise DataValidationError(
                        f"{text} (priors='flat'). Fix: use the default priors, drop their "
                        f"rows, or discriminators=False.")
                warn_user(f"{text}, so it comes from the prior (judges() shows it with a "
                          f"wide interval).")
        used = np.zeros((len(comps.judges), len(levels)), dtype=bool)
        np.logical_or.at(used, comps.judge, counts > 0)
        if self._symmetric():  # a level and its mirror image share their cut points
            used = used | used[:, ::-1]
        per_judge = self.per_judge_cutpoints and len(comps.judges) > 1
        unused = [f"{comps.judges[j]}: {levels[m]}" for j, m in zip(*np.nonzero(~used))] \
            if per_judge else [levels[m] for m in np.flatnonzero(~used.any(axis=0))]
        if unused:
            warn_user(
                f"comparisons.outcome: level(s) {show_values(unused)} never observed"
                f"{' (per judge)' if per_judge else ''}: the cut points beside them have no "
                f"finite maximum-likelihood value (an unused outer level pushes its cut point "
                f"to infinity, an unused inner level its gap to 0), so they come from the "
                f"prior (under priors='flat' the MAP runs off). Fix: fewer levels, or "
                f"per_judge_cutpoints=False.")
        if self.priors == "flat":
            top = counts[:, -1] == comps.n
            bottom = counts[:, 0] == comps.n
            g, n_items = comps.group, len(comps.items)
            size = comps.n_contexts * comps.n_aspects * n_items
            nl, nr = g * n_items + comps.left, g * n_items + comps.right
            seen = np.bincount(nl, minlength=size) + np.bincount(nr, minlength=size)
            best = np.bincount(nl, top, size) + np.bincount(nr, bottom, size)
            worst = np.bincount(nl, bottom, size) + np.bincount(nr, top, size)
            sep = np.flatnonzero((seen > 0) & ((best == seen) | (worst == seen)))
            if len(sep):
                warn_user(
                    f"{len(sep)} item(s) got the most extreme level in every comparison "
                    f"{show_values(list(comps.items[sep % n_items]))}: under priors='flat' "
                    f"their skill has no finite maximum-likelihood value (the MAP runs off "
                    f"to a large number). Use the default priors for a finite estimate.")

    # -- graph --------------------------------------------------------------------------
    def _build(self, fd: FitData) -> pm.Model:
        priors = self.resolved_priors()
        k = len(self._levels)
        with pm.Model(coords=fd.coords) as model:
            diff, scale = self._cell_graph(fd, priors, model)
            col = model["cell_col"]
            x = diff[model["cell_pair"]] * (scale[col] if self.discriminators else scale[0])
            if self.position_bias:
                x = x + priors["position_bias"].create("position_bias", dims="judge")[col]
            judge_dims = ("judge",) if self.per_judge_cutpoints else ()
            gaps = (priors["cutpoint_gap"].create("cutpoint_gap", dims=(*judge_dims, "gap"))
                    if n_gaps(k, self._symmetric()) else None)
            loc = (priors["cutpoint_location"].create("cutpoint_location",
                                                      dims=judge_dims or None)
                   if self._has_location() else None)
            theta = cutpoints_pt(gaps, loc, k, self._symmetric())
            if self.per_judge_cutpoints and gaps is None and loc is None:  # K = 2 symmetric
                theta = pt.repeat(theta[None], model.dim_lengths["judge"], axis=0)
            theta = pm.Deterministic("cutpoint", theta, dims=(*judge_dims, "boundary"))
            theta_cell = theta[col] if self.per_judge_cutpoints else theta[None, :]
            logp = ordinal_log_probs_pt(x, theta_cell, k)
            counts = model["counts"]
            pm.Potential("loglik", (counts * logp).sum())
        return model

    @classmethod
    def example_data(cls, random_seed: int = 0):
        """The soft example of the family graded on Arena-Hard's five levels.

        The noisy logit of each comparison is cut at +-0.3 and +-1.5: |logit| < 0.3 is
        "A=B", beyond 1.5 a strong verdict.
        """
        example = super().example_data(random_seed)
        table = example.fit_args[0].copy()
        p = table.pop("prob").to_numpy()
        logit = np.log(p) - np.log1p(-p)
        code = np.searchsorted([-1.5, -0.3, 0.3, 1.5], logit)
        table["outcome"] = np.asarray(check_levels(None), dtype=object)[code]
        return type(example)(fit_args=(table,), predict_args=example.predict_args,
                             id_column=example.id_column, truth=example.truth)
