"""Shared machinery of the Bradley-Terry family: data preparation and graph pieces.

The models of Qian, Sun, Gales & Knill (2026), "Who can we trust? LLM-as-a-jury
for Comparative Assessment", arXiv:2602.16610 (soft / hard BT, eqs. 1-2; BT-sigma,
eq. 13) and Davidson's tie model differ only in how a skill difference becomes
the probability of an outcome. :class:`PairwiseModel` holds what they share: it
validates and collapses the comparisons table (:mod:`bayesjudge.data.comparisons`;
eq. 3 by :mod:`bayesjudge.data.symmetrization`, every row staying an observation),
lays the cells out for a cheap likelihood, and builds the zero-sum skills per
ranking group and the judges' discriminators; ``predict``, ``ranking`` and
``judges`` come from :class:`~bayesjudge.models.bradley_terry.report.PairwiseReports`.

Likelihood layout. Cells are grouped into *pairs* (distinct ordered group, left,
right): the skill difference is computed once per pair, and the likelihood's cells
(pair x judge-parameter column) index the pairs. Without per-judge parameters the
judges are summed per pair (eq. 12). The graph has no static size (the engine's
generic shapes): one compilation serves any number of items, contexts, judges and
aspects.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from bayesjudge.base import BayesianModel, ExampleData, FitData
from bayesjudge.data import DataValidationError, show_values
from bayesjudge.data.comparisons import (
    Comparisons,
    all_tie_judges,
    separated_items,
    validate_comparisons,
)
from bayesjudge.data.identification import position_bias_state
from bayesjudge.data.symmetrization import symmetrized_cells
from bayesjudge.engine.messages import warn_user
from bayesjudge.models.bradley_terry.centring import centred_for_nuts
from bayesjudge.models.bradley_terry.core import (
    MAX_LL_UNITS,
    SkillLayout,
    bt_loglik_np,
    cell_labels,
    layout_state,
    pool_units,
    skill_layout,
    zero_sum,
)
from bayesjudge.models.bradley_terry.report import CHUNK, PairwiseReports
from bayesjudge.priors import zero_sum_rows


class PairwiseModel(PairwiseReports, BayesianModel):
    """Abstract base of ``BradleyTerry``, ``BTSigma`` and ``DavidsonBT``.

    Subclasses set ``symmetrize``, ``priors``, ``random_seed`` (and their own
    options) in ``__init__`` and implement ``_build`` from :meth:`_cell_graph`.
    """

    _ties = False  # Davidson likelihood (outcome counts) instead of BT's win mass
    #: One compiled graph for every number of items, contexts, judges and aspects: the
    #: zero-sum maps read their sizes from the index arrays and dims (FitData.shape_key).
    _generic_shapes = True

    # -- options --------------------------------------------------------------------
    def _check_options(self) -> None:
        kind = getattr(self, "kind", "soft")
        if kind not in ("soft", "hard"):
            raise ValueError(f"kind must be 'soft' or 'hard', got {kind!r}")
        if not isinstance(self.symmetrize, bool):
            raise ValueError(f"symmetrize must be True or False, got {self.symmetrize!r}")

    def _has_discriminators(self) -> bool:
        return False

    def _per_judge_tie(self) -> bool:
        return False

    def _judge_columns(self) -> bool:
        """Whether the likelihood has per-judge parameters (else judges are summed per pair)."""
        return self._has_discriminators() or self._per_judge_tie() or bool(
            getattr(self, "position_bias", False))

    def _sigma_aspects(self, comps: Comparisons) -> int:
        return comps.n_aspects if getattr(self, "per_aspect", False) else 1

    def _centred(self) -> bool:
        """Centred discriminator hierarchy (NUTS fits with a spread prior; see _discriminator)."""
        return self._nuts_hierarchy() and getattr(self, "_nuts_centred", True)

    def _nuts_hierarchy(self) -> bool:
        return (self._has_discriminators() and self._fitting_method == "nuts"
                and not self._is_flat("discriminator_spread"))

    @property
    def _sampler_defaults(self) -> dict[str, Any]:
        """Non-centred discriminators: target_accept 0.9 (PandaLM: 5-7 divergences at 0.8, 0)."""
        return {"target_accept": 0.9} if self._nuts_hierarchy() and not self._centred() else {}

    def _structure_key(self, fd: FitData) -> tuple:
        return (*super()._structure_key(fd), self._centred())

    # -- data -----------------------------------------------------------------------
    def _prepare(self, comparisons: pd.DataFrame | Comparisons) -> FitData:
        self._check_options()
        self.resolved_priors()  # fail on bad priors before validation or compilation
        comps = (symmetrized_cells(comparisons) if self.symmetrize
                 else validate_comparisons(comparisons))
        self._check_data(comps)
        layout = skill_layout(comps)
        cl = layout.cells(comps.group, comps.left)
        cr = layout.cells(comps.group, comps.right)
        n_sc = len(layout.nodes)
        bias_state = position_bias_state(self, comps, cl, cr, n_sc)
        values = ({"n_left": comps.outcomes[:, 0], "n_tie": comps.outcomes[:, 1],
                   "n_right": comps.outcomes[:, 2]} if self._ties
                  else {"win": self._win(comps), "n": comps.n})
        # Without a position bias, (a, b) and (b, a) are the same pair seen from the other
        # side: orient every cell with the lower skill cell on the left (halves the pairs
        # of an unsymmetrised table such as an arena log).
        swap = (cl > cr) & (not getattr(self, "position_bias", False))
        if swap.any():
            cl, cr = np.where(swap, cr, cl), np.where(swap, cl, cr)
            if self._ties:
                values["n_left"], values["n_right"] = (
                    np.where(swap, values["n_right"], values["n_left"]),
                    np.where(swap, values["n_left"], values["n_right"]))
            else:
                values["win"] = np.where(swap, values["n"] - values["win"], values["win"])
        pair, keys = pd.factorize(cl * n_sc + cr)
        n_a = self._sigma_aspects(comps)
        # One likelihood cell per (pair, judge-level parameter column): judges are summed
        # per pair without per-judge parameters (eq. 12); columns are judge * n_a + aspect.
        n_cols = len(comps.judges) * n_a if self._judge_columns() else 1
        col = comps.judge * n_a + comps.aspect % n_a if self._judge_columns() else 0
        key, cell = np.unique(pair * n_cols + col, return_inverse=True)
        data = {"pair_left": keys // n_sc, "pair_right": keys % n_sc, **layout.zero_sum_data(),
                "cell_pair": key // n_cols, "cell_col": key % n_cols,
                **{k: np.bincount(cell, v, len(key)) for k, v in values.items()}}
        coords = {"judge": comps.judges.to_numpy(), "cell": cell_labels(comps, layout),
                  "item": comps.items.to_numpy(),
                  "skill_free": np.arange(n_sc - len(data["group_size"])),
                  "discriminator_free": np.arange(n_a * (len(comps.judges) - 1))}
        if comps.contexts is not None:
            coords["context"] = comps.contexts.to_numpy()
        if comps.aspects is not None:
            coords["aspect"] = comps.aspects.to_numpy()
        self._layout_state = {**layout_state(comps, layout), **bias_state}
        # NUTS: centred or non-centred discriminators by a pilot MAP fit (centring.py)
        self._nuts_centred = (self._nuts_hierarchy() and len(comps.judges) > 1
                              and centred_for_nuts(self, comparisons))
        return FitData(
            data=data, coords=coords,
            observed={"comparison": (("obs",), pool_units(self._observed(comps))),
                      "outcomes": (("obs", "outcome"), pool_units(comps.outcomes.T).T)},
            observation=self._observation(comps),
            # One graph for every number of items, contexts, judges and aspects (the
            # engine's generic shapes): only the skills' dims and whether there is more
            # than one judge change its structure.
            shape_key=(layout.dims, len(comps.judges) > 1),
            extra={"comps": comps, "layout": layout,
                   "cell_left": layout.cells(comps.group, comps.left),
                   "cell_right": layout.cells(comps.group, comps.right),
                   "cell_values": values, "lik_cell": cell},
        )

    def _observation(self, comps: Comparisons) -> dict[str, str]:
        """What the log-likelihood of a unit scores (compare() refuses different ones)."""
        if getattr(self, "kind", "soft") == "soft" and comps.kind == "soft" and not self._ties:
            space = ("soft P(left beats right) of each comparison, scored by cross-entropy "
                     "(not the probability of an observed outcome)")
        elif comps.outcomes[:, 1].any() and not self._ties:
            space = ("hard outcomes with each tie scored as half a left win and half a right "
                     "win (Bradley-Terry's convention: not a probability over {left, tie, "
                     "right}; DavidsonBT models ties)")
        else:  # Davidson, or BT on tie-free outcomes: P(tie) = 0 is a distribution too
            space = "outcome in {left, tie, right} of each comparison (categorical)"
        return {"outcome_space": space, "symmetrized": f"symmetrize={self.symmetrize!r}" + (
            ": a pair judged in both orders is one debiased row (eq. 3)" if self.symmetrize
            else ": comparisons as given")}

    def _loo_data(self, fd: FitData, var: str, index) -> FitData:
        """``fd`` without log-likelihood unit(s) ``index`` (their cells; LOO / K-fold refits)."""
        cell = fd.extra["lik_cell"]
        unit = np.arange(len(cell))
        if len(cell) > MAX_LL_UNITS:  # pool_units: cell c is in unit c % MAX_LL_UNITS
            unit %= MAX_LL_UNITS
        keep = (~np.isin(unit, index)).astype(float)
        n_lik = len(fd.data["cell_pair"])
        data = {**fd.data, **{k: np.bincount(cell, v * keep, n_lik)
                              for k, v in fd.extra["cell_values"].items()}}
        return replace(fd, data=data)

    def _win(self, comps: Comparisons) -> np.ndarray:
        if getattr(self, "kind", "soft") == "soft":
            return comps.prob_sum
        return comps.outcomes[:, 0] + 0.5 * comps.outcomes[:, 1]  # a tie is half a win each

    def _observed(self, comps: Comparisons) -> np.ndarray:
        return comps.outcomes @ np.array([1.0, 0.5, 0.0]) if self._ties else self._win(comps)

    def _check_data(self, comps: Comparisons) -> None:
        # An all-tie judge's likelihood increases all the way to sigma_k = inf (or a
        # tie logit of +inf): no finite maximum, but the prior makes the posterior proper.
        params = []
        if self._has_discriminators() and len(comps.judges) > 1:
            params.append(("discriminator", "discriminator_offset"))
        if self._per_judge_tie():
            params.append(("tie parameter", "tie_logit"))
        bad = all_tie_judges(comps) if params else []
        if len(bad):
            what = " / ".join(p for p, _ in params)
            flat = [prior for _, prior in params if self._is_flat(prior)]
            if flat:
                raise DataValidationError(
                    f"comparisons.judge: judge(s) {show_values(list(bad))} called every "
                    f"comparison a tie (or gave p = 0.5 throughout): under the flat prior of "
                    f"{' and '.join(flat)} (priors='flat') their {what} has no finite value. "
                    f"Fix: use the default priors (their {what} then comes from the prior), "
                    f"drop their rows, or use a model without per-judge parameters.")
            warn_user(
                f"comparisons.judge: judge(s) {show_values(list(bad))} called every comparison "
                f"a tie (or gave p = 0.5 throughout): the data alone give their {what} no "
                f"finite value, so it comes from the prior (judges() shows it with a wide "
                f"interval); they carry no ranking information.")
        if self._ties:
            # no tie at all (per judge with tie="per_judge"): the tie logit's MLE is -inf
            ties = np.bincount(comps.judge, comps.outcomes[:, 1], len(comps.judges))
            if self._per_judge_tie():
                none = comps.judges[ties == 0]
                who = f"comparisons.judge: judge(s) {show_values(list(none))} never said 'tie'"
            else:
                none, who = [0] * int(ties.sum() == 0), "comparisons holds no tie"
                if ties.sum() == comps.outcomes.sum() and self._is_flat("tie_logit"):
                    raise DataValidationError("comparisons: every comparison is a tie (or p = "
                                              "0.5): under priors='flat' the tie logit's MLE is "
                                              "+inf. Fix: use the default priors.")
            if len(none) and self._is_flat("tie_logit"):
                raise DataValidationError(
                    f"{who}: under the flat prior of tie_logit (priors='flat') its maximum-"
                    f"likelihood value is -inf. Fix: use the default priors (the tie logit then "
                    f"comes from the prior and the data), or a model without ties "
                    f"(BradleyTerry(kind='hard')).")
            if len(none):
                warn_user(
                    f"{who}: the data bound the tie logit from above only, so its lower end "
                    f"(how rarely a tie occurs) comes from its prior. Ties do not move the "
                    f"ranking here; for outcomes that cannot tie, BradleyTerry(kind='hard') "
                    f"has no tie parameter.")
        if getattr(self, "per_aspect", False) and comps.aspects is None:
            raise DataValidationError(
                "comparisons has no aspect column, but per_aspect=True asks for one "
                "discriminator per judge and aspect. Fix: add the aspect column or use "
                "per_aspect=False.")
        if getattr(self, "per_aspect", False):
            seen = np.zeros((len(comps.judges), comps.n_aspects), dtype=bool)
            seen[comps.judge, comps.aspect] = True
            missing = [f"{comps.judges[j]}/{comps.aspects[a]}" for j, a in zip(*np.nonzero(~seen))]
            if missing and self._is_flat("discriminator_spread"):
                raise DataValidationError(
                    f"comparisons: judge/aspect {show_values(missing)} has no comparisons, so "
                    f"under priors='flat' its discriminator (per_aspect=True) has no estimate. "
                    f"Fix: use the default priors (it is then pooled with the other judges), "
                    f"or per_aspect=False.")
            if missing:
                warn_user(
                    f"comparisons: judge/aspect {show_values(missing)} has no comparisons; its "
                    f"discriminator is the pooled prior's (judges() shows its wide interval).")
        sep = separated_items(comps, self._observed(comps))  # as the likelihood scores
        if len(sep) and self.priors == "flat":
            warn_user(
                f"{len(sep)} item(s) won or lost every comparison "
                f"{show_values(list(sep['item']))}: under priors='flat' their skill has no "
                f"finite maximum-likelihood value (the MAP runs off to a large number). Use "
                f"the default priors for a finite estimate.")
        elif len(sep):
            said = [f"{'won' if w else 'lost'} all: {show_values(list(part['item']))}"
                    for w, part in sep.groupby("won_all", sort=False)]
            warn_user(
                f"{len(sep)} item(s) won or lost every comparison ({'; '.join(said)}): the "
                f"data bound their skill on one side only, so its far end (the upper end of "
                f"a winner's interval, the lower of a loser's) and its distance to the others "
                f"come from the skill prior, not the comparisons. Their rank is informative; "
                f"read the skill gap as 'at least'.")

    def _laplace_blocks(self, fd: FitData, engine) -> np.ndarray:
        """Ranking group of each free skill coordinate (``skill_z``), -1 for the rest.

        Skills of different groups (context x aspect) enter no common term of the
        log density (zero-sum per group, eq. 13 compares items of one group); they
        share only the judges' parameters, which are global.
        """
        value = engine.model.rvs_to_values[engine.model["skill_z"]].name
        blocks = np.full(engine.x0.size, -1, dtype=np.int64)
        blocks[engine.value_slices()[value]] = fd.data["free_group"]  # skill_z[k]: free_cell[k]
        return blocks

    def _laplace_reparam(self, engine) -> tuple[slice, int] | None:
        """The judges' offsets z and log spread: log sigma = tau z (MAP's non-centred form)."""
        where = engine.value_slices()
        z, tau = where.get("discriminator_offset"), where.get("discriminator_spread_log__")
        return None if self._centred() or z is None or tau is None else (z, tau.start)

    # -- graph pieces ----------------------------------------------------------------
    def _cell_graph(self, fd: FitData, priors, model: pm.Model):
        """Skill differences per pair and the judges' scale 1 / sigma (ones without them).

        Creates every ``pm.Data`` container of ``fd`` first. Returns ``(diff, scale)``
        for the fused kernels of :mod:`bayesjudge.models.bradley_terry.kernel`, indexed by
        ``cell_pair`` and ``cell_col``.
        """
        for name, value in fd.data.items():
            pm.Data(name, value)
        skill = self._skill(fd, priors, model)
        diff = skill[model["pair_left"]] - skill[model["pair_right"]]
        scale = (1.0 / self._discriminator(fd, priors) if self._has_discriminators()
                 else pt.ones((1,)))
        return diff, scale

    def _skill(self, fd: FitData, priors, model: pm.Model) -> Any:
        """Zero-sum skills per ranking group (flat vector over skill cells) and ``skill``.

        No static size: the zero-sum map reads the number of cells from its index
        arrays and ``skill``'s shape is its dims' lengths (the engine's generic shapes).
        """
        layout: SkillLayout = fd.extra["layout"]
        idx = {k: model[k] for k in ("free_cell", "free_group", "last_cell", "group_size")}
        z = priors["skill"].create("skill_z", dims="skill_free")
        flat = zero_sum(z, idx["free_cell"], idx["free_group"], idx["last_cell"],
                        idx["group_size"])
        shape = [model.dim_lengths[d] for d in layout.dims]
        pm.Deterministic("skill", flat.reshape(shape, ndim=len(shape)), dims=layout.dims)
        return flat

    def _sigma_estimated(self) -> bool:
        """More than one judge: with one, sum_k log sigma_k = 0 fixes sigma_k = 1.

        A fixed sigma is a constant of the model (the skills carry the scale), not an
        estimate: :meth:`summarize` and :meth:`judges` leave it out rather than show
        a zero-width interval [1, 1] (and, under NUTS, an R-hat of NaN).
        """
        state = getattr(self, "_layout_state", None)
        return state is None or len(state["judges"]) > 1

    def _discriminator(self, fd: FitData, priors) -> Any:
        """sigma per judge (or judge x aspect), sum of log sigma = 0 (per aspect); a flat vector.

        The flat vector is judge-major (index judge * n_aspects + aspect). The numbers
        of judges and aspects are the dims' lengths (no static size).
        """
        model = pm.modelcontext(None)
        comps: Comparisons = fd.extra["comps"]
        per_aspect = getattr(self, "per_aspect", False)
        n_j = model.dim_lengths["judge"]
        n_a = model.dim_lengths["aspect"] if per_aspect and "aspect" in model.dim_lengths else 1
        dims = ("judge", "aspect") if per_aspect else ("judge",)
        if len(comps.judges) == 1:  # one judge: sigma is absorbed in the skills' scale
            sigma = pt.ones((n_a,))  # (paper, section 4)
            pm.Deterministic("discriminator", sigma[None, :] if per_aspect else sigma,
                             dims=dims)
            return sigma
        # MAP: non-centred, log sigma = tau z (z = discriminator_offset). NUTS: centred,
        # log sigma ~ ZeroSumNormal(tau) (discriminator_offset = tau z, the same prior),
        # unless the judges agree within their noise (centring.py: PandaLM's funnel).
        # The centred form's joint mode collapses to tau = 0, sigma = 1 on small juries
        # (useless for MAP and its Laplace approximation), while with data as strong as
        # SummEval's (8 judges, 96,000 cells) the non-centred posterior is a curved ridge
        # z ~ 1/tau: measured 4 x (1000 + 1000), 23 divergences, all at tau in its upper
        # 1%, against 0 centred; 1 chain 300 + 300, tau's bulk ESS 9 against 603.
        offset = priors["discriminator_offset"]
        spread = None if self._is_flat("discriminator_spread") else priors["discriminator_spread"]
        if self._centred() and offset.dist == "Normal" and offset.params.get("mu", 0) == 0:
            tau = spread.create("discriminator_spread")
            z = pm.Normal("discriminator_offset", 0.0, tau * offset.params.get("sigma", 1.0),
                          dims="discriminator_free")
            spread = None
        else:
            z = offset.create("discriminator_offset", dims="discriminator_free")
        # zero-sum over the judges within each aspect: z holds n_j - 1 free coordinates per
        # aspect, aspect-major; rows (aspect) x judges, then judge-major as the likelihood
        # indexes it (judge * n_a + aspect)
        log_sigma = zero_sum_rows(z.reshape((n_a, n_j - 1)))
        if spread is not None:
            log_sigma = spread.create("discriminator_spread") * log_sigma
        log_sigma = log_sigma.T.reshape((-1,))
        # The clip only guards the optimiser's line search (a trial step to
        # sigma = 0 or inf gave 0/0 = NaN); sigma_k outside e^+-30 is no judge.
        sigma = pt.exp(pt.clip(log_sigma, -30.0, 30.0))
        pm.Deterministic("discriminator", sigma.reshape((n_j, n_a)) if per_aspect else sigma,
                         dims=dims)
        return sigma

    def _pointwise_loglik(self, params, fd):
        comps: Comparisons = fd.extra["comps"]
        lead = np.shape(params["skill"])[:2]
        draws = {k: np.asarray(v).reshape(-1, *np.shape(v)[2:]) for k, v in params.items()}
        cl, cr = fd.extra["cell_left"], fd.extra["cell_right"]
        n_a = comps.n_aspects if getattr(self, "per_aspect", False) else 1
        aspect = comps.aspect % n_a
        n_draws = len(draws["skill"])
        out = []
        step = max(1, CHUNK // max(1, 3 * len(cl)))
        for start in range(0, n_draws, step):
            part = {k: v[start:start + step] for k, v in draws.items()}
            lp = self._log_probs(part, cl, cr, comps.judge, aspect)
            if self._ties:
                ll = (lp * comps.outcomes).sum(-1)
            else:
                d = lp[..., 0] - lp[..., 2]  # the logit of P(left)
                ll = bt_loglik_np(d, self._win(comps), comps.n)
            out.append(pool_units(ll))
        return {"comparison": np.concatenate(out).reshape(*lead, -1)}

    def _state(self) -> dict[str, Any]:
        return self._layout_state

    def _set_state(self, state: dict[str, Any]) -> None:
        self._layout_state = state

    @classmethod
    def example_data(cls, random_seed: int = 0) -> ExampleData:
        """Two contexts x 5 items, 3 judges of different reliability, every ordered pair.

        Soft probabilities p = sigma((s_i - s_j) / sigma_k + e), e ~ N(0, 0.3^2)
        pair-level noise, sigma = (0.5, 1, 2) (sum of log sigma = 0).
        """
        rng = np.random.default_rng(random_seed)
        skills = rng.normal(0.0, 1.0, size=(2, 5))
        skills -= skills.mean(axis=1, keepdims=True)
        sigma = np.array([0.5, 1.0, 2.0])
        rows = [(c, i, j, k) for c in range(2) for i in range(5) for j in range(5) if i != j
                for k in range(3)]
        c, i, j, k = (np.array(v) for v in zip(*rows))
        logit = (skills[c, i] - skills[c, j]) / sigma[k] + rng.normal(0, 0.3, len(c))
        table = pd.DataFrame({"context": np.array(["doc-1", "doc-2"])[c],
                              "judge": np.array(["judge-a", "judge-b", "judge-c"])[k],
                              "left": np.array([f"sys-{x}" for x in range(5)])[i],
                              "right": np.array([f"sys-{x}" for x in range(5)])[j],
                              "prob": 1.0 / (1.0 + np.exp(-logit))})
        pairs = pd.DataFrame({"pair": ["p1", "p2", "p3", "p4"],
                              "context": ["doc-1", "doc-1", "doc-2", "doc-2"],
                              "left": ["sys-0", "sys-3", "sys-1", "sys-4"],
                              "right": ["sys-1", "sys-2", "sys-4", "sys-0"],
                              "judge": ["judge-a", "judge-c", "judge-b", "judge-a"]})
        return ExampleData(fit_args=(table,), predict_args=(pairs,), id_column="pair",
                           truth={"skill": skills, "discriminator": sigma})
