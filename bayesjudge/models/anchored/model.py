"""AnchoredBT: a Davidson-BT ranking of what a reference judge prefers, with the other
judges' verdicts as noisy channels of the reference's outcome (Dawid-Skene)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from bayesjudge.base import BayesianModel
from bayesjudge.data import DataValidationError
from bayesjudge.data.identification import check_position_biases
from bayesjudge.engine.messages import warn_user
from bayesjudge.models.anchored.agreement import AgreementCheck
from bayesjudge.models.anchored.data import Battles, Cells, validate_battles
from bayesjudge.models.anchored.likelihood import (
    OUTCOMES,
    TINY,
    cell_loglik_np,
    cell_loglik_pt,
)
from bayesjudge.models.anchored.report import AnchoredReports
from bayesjudge.models.anchored.simulate import simulate_battles
from bayesjudge.priors import Prior, zero_sum_rows
from bayesjudge.structures import ExampleData, FitData


class AnchoredBT(AgreementCheck, AnchoredReports, BayesianModel):
    r"""Davidson-BT skills of a reference judge, anchored through other judges' verdicts.

    Each battle b (left item i against right item j, one judged instance) has an
    outcome r_b in {left, tie, right} by the reference judge (e.g. human voters),
    Davidson-BT in the items' zero-sum skills s:

    .. math::

        P(r_b = \text{left}) = \frac{e^{d/2}}{e^{d/2} + e^{-d/2} + \nu},\quad
        P(\text{tie}) = \frac{\nu}{\cdot},\quad P(\text{right}) = \frac{e^{-d/2}}{\cdot},
        \qquad d = s_i - s_j\ (+\ b),\ \nu = e^{\text{tie\_logit}}

    (b: the reference's position bias, with ``position_bias=True``). Every other judge
    k's verdict v_bk is a noisy channel of r_b: a 3 x 3 confusion matrix
    C_k[r, v] = P(judge k says v | reference outcome r), rows on the simplex. Given r_b
    the judges' verdicts are independent (the Dawid-Skene assumption;
    :meth:`agreement_check` tests it on the data). A battle the reference judged
    contributes P(r_b | d) prod_k C_k[r_b, v_bk]; any other battle
    sum_r P(r | d) prod_k C_k[r, v_bk]. The confusion rows carry each judge's position
    bias (a judge that says "left" too often has a large left column).

    The reference may vote on a battle several times (a crowd): its m votes are
    independent Davidson outcomes given d, and the judges' verdicts are channels of
    one of them, which one unknown (uniform):
    prod_r P(r | d)^{n_r} sum_r (n_r / m) prod_k C_k[r, v_bk], n_r the battle's votes on
    r (one vote: the line above). Battles are collapsed to cells (ordered pair x the
    reference's vote counts x verdict pattern) with counts.

    Parameters
    ----------
    reference : hashable
        The reference judge's id in the ``judge`` column (exactly as written).
    position_bias : bool
        Add the reference's own position bias b to d.
    discrimination : bool, default True
        Let each judge separate the items more (or less) than the reference: judge k's
        verdict logits given r also move with the skill difference,
        softmax_v(log C_k[r, v] + a_k d_s (1/2, 0, -1/2)_v), d_s = s_i - s_j, so its own
        skills are (1 + a_k) s. On arena_ppr GPT-4's a is ~1.1: it sees the humans'
        order twice as sharply, which one confusion matrix for all pairs cannot hold.
    item_bias : bool, default True
        Let each judge prefer some items more (or less) than the reference does, beyond
        ``discrimination``: the shift above becomes (u_ki - u_kj) with
        u_k = a_k s + e_k, e_k zero-sum per judge with a spread tau learned from the
        data (hierarchical: e_k = tau B z_k, z_k iid Normal(0, 1)). Without it a judge
        that ranks two items in another order than the reference pulls the ranking
        toward its own (GPT-4 on palm-2 / vicuna-13b in arena_ppr). The MAP's Laplace
        draws integrate tau on a grid where its posterior is a funnel
        (:mod:`bayesjudge.engine.laplace_grid`).

        Both options are on by default: they are the setting whose rank intervals cover
        the human ranking on real data (arena_ppr, notebook 05: 0.975 per model against
        0.858 without; LLMFAO: 0.90 against 0.62). ``discrimination=False,
        item_bias=False`` is the plain Dawid-Skene channel, one confusion matrix per
        judge for every pair -- narrower sets that are over-confident when a judge has
        its own preferences among the items, as LLM judges have.
    consensus : bool, default False
        Several judges (at least two besides the reference) read one battle-level
        outcome c, a channel of the reference's: P(c | r) = M[r, c], and each judge's
        verdict is a channel of c, C_k[c, v] (its shift by ``discrimination`` /
        ``item_bias`` as above), so

            P(verdicts | r) = sum_c M[r, c] prod_k C_k[c, v_k]:

        the judges are independent given c, not given r, and the errors they share on
        a battle (the same response misjudged by all) count once. On arena_ppr the
        three LLM judges' verdicts together predict a held-out human label worse than
        none without it (log score -1.036 against -0.950), and as well as GPT-4's alone
        with it (-0.905 against -0.902). With one judge only the product M C_k is
        identified, so it needs two or more.
    priors : None, "flat" or dict
        Overrides of :attr:`default_priors` by name. Defaults::

            skill          Prior('Normal', mu=0, sigma=3)   zero-sum coordinates of s
            tie_logit      Prior('Normal', mu=0, sigma=2)   log nu
            position_bias  Prior('Normal', mu=0, sigma=1)   b (position_bias=True)
            confusion      Prior('Dirichlet', diagonal=3, off_diagonal=1.5)
            judge_discrimination    Prior('Normal', mu=0, sigma=1)   a_k
            judge_item_bias_spread  Prior('HalfNormal', sigma=0.5)   tau
            judge_item_bias_offset  Prior('Normal', mu=0, sigma=1)   z_k (e_k = tau B z_k)
            consensus      Prior('Dirichlet', diagonal=3, off_diagonal=1.5)   rows of M

        Each confusion row is Dirichlet with concentration 3 on the diagonal (the
        verdict that agrees with the reference) and 1.5 elsewhere: prior mean 0.5 for
        agreement (chance is 1/3), and a mode inside the simplex, so MAP never sits on
        an edge when a judge never gives some verdict. ``"flat"``: flat skill, tie,
        biases and discrimination, Dirichlet(1, 1, 1) rows, e_k flat without a spread
        -- MAP is then maximum likelihood.
    random_seed : int, optional
        Seeds NUTS and the Laplace draws.

    Notes
    -----
    Identification: the skills sum to zero; the scale of d is the reference's (its
    Davidson probabilities); the confusion matrices are identified by the battles
    the reference judged together with the judge, and by the skills elsewhere (the
    label-switching of plain Dawid-Skene cannot happen, since r is tied to d).
    """

    default_priors = {
        "skill": Prior("Normal", mu=0, sigma=3),
        "tie_logit": Prior("Normal", mu=0, sigma=2),
        "position_bias": Prior("Normal", mu=0, sigma=1),
        "confusion": Prior("Dirichlet", diagonal=3, off_diagonal=1.5),
        "judge_discrimination": Prior("Normal", mu=0, sigma=1),
        "judge_item_bias_spread": Prior("HalfNormal", sigma=0.5),
        "judge_item_bias_offset": Prior("Normal", mu=0, sigma=1),
        "consensus": Prior("Dirichlet", diagonal=3, off_diagonal=1.5),
    }

    def __init__(self, reference: Any = "human", *, position_bias: bool = False,
                 discrimination: bool = True, item_bias: bool = True, consensus: bool = False,
                 priors: None | str | Mapping = None, random_seed: int | None = None):
        self.reference = reference
        self.position_bias = position_bias
        self.discrimination = discrimination
        self.item_bias = item_bias
        self.consensus = consensus
        self.priors = priors
        self.random_seed = random_seed

    def _prior_names(self) -> tuple[str, ...]:
        return tuple(k for k in self.default_priors
                     if (k != "position_bias" or self.position_bias)
                     and (k != "judge_discrimination" or self.discrimination)
                     and (not k.startswith("judge_item_bias") or self.item_bias)
                     and (k != "consensus" or self.consensus))

    def _flat_priors(self) -> dict[str, Prior]:
        return {"skill": Prior("Flat"), "tie_logit": Prior("Flat"),
                "position_bias": Prior("Flat"),
                "confusion": Prior("Dirichlet", diagonal=1, off_diagonal=1),
                "judge_discrimination": Prior("Flat"), "judge_item_bias_spread": Prior("Flat"),
                "judge_item_bias_offset": Prior("Flat"),
                "consensus": Prior("Dirichlet", diagonal=1, off_diagonal=1)}

    @property
    def _summary_vars(self) -> tuple[str, ...]:
        names = ["skill", "tie_logit"]
        if self.position_bias:
            names.append("position_bias")
        if self._has_judges():
            names.append("confusion")
            if self.discrimination:
                names.append("judge_discrimination")
            if self.item_bias:
                names += ["judge_item_bias_spread", "judge_item_bias"]
            if self.discrimination or self.item_bias:
                names.append("judge_shift")
            if self.consensus:
                names.append("consensus")
        return tuple(names)

    _generic_shapes = True  # zero_sum_rows reads n from the graph; no static size

    def _has_judges(self) -> bool:
        st = getattr(self, "_state_", None)
        return bool(st and st["judges"])

    def fit(self, *args, **kwargs):  # noqa: D102 (BayesianModel.fit)
        super().fit(*args, **kwargs)
        self._screen_judge_dependence()  # shared errors: a JudgeDependenceWarning
        return self

    fit.__doc__ = BayesianModel.fit.__doc__

    # -- data ------------------------------------------------------------------------
    def _prepare(self, comparisons: pd.DataFrame) -> FitData:
        battles: Battles = validate_battles(comparisons, self.reference)
        if len(battles.items) < 2:
            raise DataValidationError("comparisons: fewer than two items; nothing to rank.")
        n_j = len(battles.judges)
        if battles.ref_counts[:, 1].sum() == 0 and self._is_flat("tie_logit"):
            raise DataValidationError(
                f"comparisons: the reference {self.reference!r} never said 'tie': under the "
                f"flat prior of tie_logit (priors='flat') its maximum-likelihood value is "
                f"-inf. Fix: use the default priors (the tie logit then comes from the prior "
                f"and the data).")
        if battles.ref_counts[:, 1].sum() == 0:
            warn_user(f"comparisons: the reference {self.reference!r} never said 'tie': the "
                      f"data bound its tie logit from above only, so its lower end (how "
                      f"rarely a tie occurs) comes from its prior.")
        if self.consensus and n_j < 2:
            raise DataValidationError(
                f"consensus=True needs two or more judges besides the reference "
                f"{self.reference!r}; the table has {n_j} ({battles.judges.tolist()}). With "
                "one, only the product of its consensus and confusion matrices is "
                "identified: fit with consensus=False (command line: drop --consensus).")
        cells: Cells = battles.cells()
        if self.position_bias:
            # b enters P(r | d) of every battle, judged by the reference or not (the
            # other judges' verdicts on the others inform d through their channels),
            # so the design is every battle's (left, right): one "judge", the reference.
            check_position_biases(
                cells.left, cells.right, np.zeros(len(cells.left), dtype=np.int64),
                len(battles.items), [self.reference], self._is_flat("position_bias"),
                who=f"comparisons: the position bias of the reference {self.reference!r}")
        data = cells.graph_data(n_j)
        self._state_ = state_of(battles, cells)
        coords = {"item": battles.items.tolist(), "judge": battles.judges.tolist(),
                  "reference_outcome": OUTCOMES, "verdict": OUTCOMES,
                  "consensus_outcome": OUTCOMES,
                  "item_free": np.arange(len(battles.items) - 1),
                  "cell": np.arange(len(cells.count))}
        return FitData(
            data=data, coords=coords,
            observed={"battles": (("cell",), cells.count)},
            observation={"outcome_space": (
                "the reference's votes and the other judges' verdicts in {left, tie, "
                "right} of each battle, battles pooled in cells (pair x reference vote "
                "counts x verdict pattern); one unit = one cell")},
            # One graph for every number of items and judges (the engine's
            # generic_shapes): only whether there are judges besides the reference
            # changes its structure.
            shape_key=(n_j > 0,),
            extra={"cells": cells},
        )

    # -- graph -----------------------------------------------------------------------
    def _build(self, fd: FitData) -> pm.Model:
        priors = self.resolved_priors()
        n_j = len(fd.coords["judge"])
        with pm.Model(coords=fd.coords) as model:
            data = {name: pm.Data(name, value) for name, value in fd.data.items()}
            z = priors["skill"].create("skill_z", dims="item_free")
            skill = pm.Deterministic("skill", zero_sum_rows(z), dims="item")
            tie = priors["tie_logit"].create("tie_logit")
            diff = skill[data["cell_left"]] - skill[data["cell_right"]]
            if self.position_bias:
                diff = diff + priors["position_bias"].create("position_bias")
            log_conf = None
            if n_j:
                conf = pm.Dirichlet("confusion", a=confusion_concentration(priors["confusion"]),
                                    dims=("judge", "reference_outcome", "verdict"))
                log_conf = pt.log(pt.maximum(conf, TINY))
            bias = None
            if n_j and (self.item_bias or self.discrimination):
                shift = self._judge_shift(priors, skill)
                bias = (shift[:, data["pair_left"]] - shift[:, data["pair_right"]]).T
            log_m = None
            if n_j and self.consensus:
                m = pm.Dirichlet("consensus", a=confusion_concentration(priors["consensus"]),
                                 dims=("reference_outcome", "consensus_outcome"))
                log_m = pt.log(pt.maximum(m, TINY))
            ll = cell_loglik_pt(diff, tie, log_conf, data, bias, log_m)
            pm.Potential("loglik", pt.sum(data["cell_count"] * ll))
        return model

    def _judge_shift(self, priors, skill):
        """u_k = a_k s + e_k per judge (``judge_shift``): the judge's skills are s + u_k.

        a_k (``judge_discrimination``, with ``discrimination=True``): how much more the
        judge separates the items than the reference. e_k (``judge_item_bias``, with
        ``item_bias=True``): zero-sum, e_k = tau B z_k with z_k iid Normal(0, 1) and
        one spread tau (``judge_item_bias_spread``) learned from the data -- the
        non-centred form, so MAP and the Laplace draws see a funnel-free geometry
        (``_laplace_reparam``); a flat spread prior leaves e_k flat (no pooling).
        """
        shift = 0.0
        if self.discrimination:
            a = priors["judge_discrimination"].create("judge_discrimination", dims="judge")
            shift = a[:, None] * skill[None, :]
        if self.item_bias:
            spread = priors["judge_item_bias_spread"]
            z = priors["judge_item_bias_offset"].create("judge_item_bias_offset",
                                                        dims=("judge", "item_free"))
            if spread.dist != "Flat":
                z = spread.create("judge_item_bias_spread") * z
            e = pm.Deterministic("judge_item_bias", zero_sum_rows(z), dims=("judge", "item"))
            shift = shift + e
        return pm.Deterministic("judge_shift", shift, dims=("judge", "item"))

    def _laplace_reparam(self, engine) -> tuple[slice, int] | None:
        """The item-bias offsets and log spread (the engine's non-centred Laplace)."""
        where = engine.value_slices()
        z, tau = where.get("judge_item_bias_offset"), where.get("judge_item_bias_spread_log__")
        return None if z is None or tau is None else (z, tau.start)

    def _laplace_hyper(self, engine) -> np.ndarray | None:
        """The judges' discriminations a_k and the log spread: INLA's hyperparameters.

        The judges' verdicts pin each judge's skills (1 + a_k) s + e_k, so with many items
        the product a_k s is a curved ridge no Gaussian over all coordinates covers, and a
        judge's a_k scales the precision of every skill: a grid over the spread alone,
        conditional on it, still fails (100 items, 30,000 battles: Pareto k 0.9 - 1.3).
        Given (a, log tau) the rest is close to Gaussian, and the Laplace draws integrate
        them out (:mod:`bayesjudge.engine.laplace_inla`) where the grid fails.
        """
        where = engine.value_slices()
        a, tau = where.get("judge_discrimination"), where.get("judge_item_bias_spread_log__")
        if a is None or tau is None:
            return None
        return np.r_[np.arange(a.start, a.stop), tau.start]

    def _pointwise_loglik(self, params, fd):
        lead = np.shape(params["skill"])[:2]
        draws = {k: np.asarray(v).reshape(-1, *np.shape(v)[2:]) for k, v in params.items()}
        return {"battles": cell_loglik_np(draws, fd.data).reshape(*lead, -1)}

    def _state(self) -> dict[str, Any]:
        return self._state_

    def _set_state(self, state: dict[str, Any]) -> None:
        self._state_ = state

    # -- example ---------------------------------------------------------------------
    @classmethod
    def example_data(cls, random_seed: int = 0) -> ExampleData:
        """6 items, 240 battles; the reference judged 40%, three LLM judges all of them.

        ``judge-good`` agrees with the reference 80% of the time, ``judge-left`` says
        "left" in 60% of battles whatever happened, ``judge-coin`` is uniform noise.
        """
        table, truth = simulate_battles(
            np.linspace(-1.2, 1.2, 6), 240, random_seed=random_seed, reference_share=0.4)
        new = pd.DataFrame({"battle": ["new-1", "new-1", "new-2", "new-3", "new-3"],
                            "judge": ["judge-good", "judge-left", "judge-good", "judge-coin",
                                      "human"],
                            "left": ["m0", "m0", "m3", "m5", "m5"],
                            "right": ["m1", "m1", "m2", "m4", "m4"],
                            "outcome": ["left", "left", "tie", "right", "left"]})
        return ExampleData(fit_args=(table,), predict_args=(new,), id_column="battle",
                           truth=truth)


def confusion_concentration(prior: Prior) -> np.ndarray:
    """The 3 x 3 Dirichlet concentration of a confusion prior (rows = reference outcome)."""
    params = prior.params
    if prior.dist != "Dirichlet" or set(params) != {"diagonal", "off_diagonal"}:
        raise ValueError(
            f"the confusion prior must be Prior('Dirichlet', diagonal=..., off_diagonal=...) "
            f"(the concentration of a row on its agreeing verdict and on the two others); "
            f"got {prior!r}.")
    diag, off = float(params["diagonal"]), float(params["off_diagonal"])
    if not (diag > 0 and off > 0):
        raise ValueError(f"the confusion prior's concentrations must be > 0; got {prior!r}.")
    return np.full((3, 3), off) + (diag - off) * np.eye(3)


def state_of(battles: Battles, cells: Cells) -> dict[str, Any]:
    """JSON-able fitted state: ids, the cells (for the checks after load), counts per judge."""
    ids = [x.item() if isinstance(x, np.generic) else x for x in battles.items]
    judges = [x.item() if isinstance(x, np.generic) else x for x in battles.judges]
    seen = battles.verdicts < 3
    votes = battles.ref_counts.sum(axis=1)
    with_ref = seen & (votes > 0)[:, None]
    # agreement with the reference: the share of its votes on the judge's verdict
    share = battles.ref_counts / np.maximum(votes, 1)[:, None]
    agree = np.where(seen, np.take_along_axis(share, np.minimum(battles.verdicts, 2), axis=1), 0.0)
    return {"items": ids, "judges": judges,
            "n_battles": int(len(battles.battles)), "n_reference": int((votes > 0).sum()),
            "n_reference_votes": int(votes.sum()),
            "judge_battles": seen.sum(0).tolist(), "judge_with_reference": with_ref.sum(0).tolist(),
            "judge_agreement": agree.sum(0).tolist(),
            "cells": {"left": cells.left.tolist(), "right": cells.right.tolist(),
                      "ref_counts": cells.ref_counts.tolist(), "verdicts": cells.verdicts.tolist(),
                      "count": cells.count.tolist()}}
