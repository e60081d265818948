"""Posterior summaries of the Bradley-Terry family: predict, ranking with rank intervals, judges.

The reporting half of :class:`~bayesjudge.models.bradley_terry.base.PairwiseModel` (Qian, Sun,
Gales & Knill (2026), "Who can we trust? LLM-as-a-jury for Comparative
Assessment", arXiv:2602.16610, section 4: skills, ranks and the judges'
discriminators 1/sigma_k as reliability; Davidson (1970) tie probabilities). It
works from posterior draws (NUTS) or the MAP with its Laplace draws, in chunks of
rows so memory grows with draws x chunk, never draws x rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from bayesjudge.constants import CI_PROB
from bayesjudge.data import DataValidationError, check_ci_prob, require_frame, show_values
from bayesjudge.data.frames import as_pandas
from bayesjudge.data.messages import show_rows
from bayesjudge.engine.diagnostics import share_mcse
from bayesjudge.engine.laplace_check import warn_flagged, warn_point_outside
from bayesjudge.models.bradley_terry.core import (
    SkillLayout,
    bt_log_probs,
    davidson_log_probs,
    layout_from_state,
    point_rank,
    rank_draws,
)
from bayesjudge.rank_sets import differences_table, simultaneous_rank_sets

#: Elements of one (draws x rows x 3) block in predict and the pointwise log-likelihood.
CHUNK = 2**22


def judged_differences(draws, cl, cr, judge, aspect):
    """(d, has_judge, j): each row's skill difference as its judge sees it, per draw.

    d = (s_left - s_right) / sigma_j + b_j (the discriminator and position bias where
    fitted; rows with judge -1, the consensus, get neither); shape (draws, rows).
    """
    s = draws["skill"].reshape(len(draws["skill"]), -1)
    d = s[:, cl] - s[:, cr]
    has_judge = judge >= 0
    j = np.where(has_judge, judge, 0)
    if "discriminator" in draws:
        sig = draws["discriminator"]
        sig = sig[:, j, aspect] if sig.ndim == 3 else sig[:, j]
        d = d / np.where(has_judge, sig, 1.0)
    if "position_bias" in draws:
        d = d + np.where(has_judge, draws["position_bias"][:, j], 0.0)
    return d, has_judge, j


class PairwiseReports:
    """Mixin of :class:`~bayesjudge.models.bradley_terry.base.PairwiseModel`: the numpy side.

    Expects the fitted model's ``param_draws``, ``idata_``, ``map_``, ``method_``,
    ``_ties`` and ``_layout_state`` (ids and skill layout of the fit).
    """

    _ties = False
    _layout_state: dict[str, Any]

    def _log_probs(self, draws, cl, cr, judge, aspect) -> np.ndarray:
        """log P(left), log P(tie), log P(right): shape (draws, rows, 3); judge -1 = consensus."""
        d, has_judge, j = judged_differences(draws, cl, cr, judge, aspect)
        if not self._ties:
            return bt_log_probs(d)
        tie = np.asarray(draws["tie_logit"])
        if tie.ndim == 2:
            tie = np.where(has_judge, tie[:, j], tie.mean(axis=1, keepdims=True))
        else:
            tie = np.broadcast_to(tie.reshape(-1, 1), d.shape)
        return davidson_log_probs(d, tie)

    # -- public -------------------------------------------------------------------------
    def predict(self, pairs: pd.DataFrame, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """P(left wins), P(tie), P(right wins) for each row of ``pairs``.

        Parameters
        ----------
        pairs : pandas.DataFrame
            ``left``, ``right`` (and ``context`` / ``aspect`` when the fit had
            them); optional ``judge``: with it each row uses that judge's
            discriminator, position bias and tie parameter, without it the
            consensus (sigma = 1, no bias, the mean tie logit).
        ci_prob : float
            Mass of the equal-tailed credible intervals (NUTS fits).

        Returns
        -------
        pandas.DataFrame
            The input columns, one row per input row in input order with
            the input's index, plus
            ``p_left``, ``p_tie`` (0 for BT models), ``p_right`` (posterior
            means under NUTS, the MAP plug-in under MAP) and, for NUTS fits,
            ``p_*_lower`` / ``p_*_upper``. Computed in chunks of rows: memory
            grows with draws x chunk, never draws x rows.
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        pairs = as_pandas(pairs)
        cl, cr, judge, aspect = self._index_pairs(pairs)
        draws = self.param_draws()
        n_draws = len(draws["skill"])
        nuts = self.method_ == "nuts"
        mean = np.empty((len(cl), 3))
        lo, hi = np.empty_like(mean), np.empty_like(mean)
        step = max(1, CHUNK // (3 * n_draws))
        for start in range(0, len(cl), step):
            part = slice(start, start + step)
            probs = np.exp(self._log_probs(draws, cl[part], cr[part], judge[part], aspect[part]))
            mean[part] = probs.mean(axis=0)
            if nuts:
                lo[part], hi[part] = np.quantile(probs, [(1 - ci_prob) / 2, (1 + ci_prob) / 2],
                                                 axis=0)
        out = pairs.copy()  # the caller's index: df.join(predict(df)) lines up
        for j, name in enumerate(("left", "tie", "right")):
            out[f"p_{name}"] = mean[:, j]
            if nuts:
                out[f"p_{name}_lower"], out[f"p_{name}_upper"] = lo[:, j], hi[:, j]
        return out

    def _index_pairs(self, pairs: pd.DataFrame):
        st = self._layout_state
        require_frame(pairs, "pairs", ["left", "right"])
        codes = {}
        for col, ids in (("context", st["contexts"]), ("aspect", st["aspects"]),
                         ("judge", st["judges"])):
            if ids is None or col not in pairs.columns:
                if ids is not None and col != "judge" and len(ids) > 1:
                    raise DataValidationError(
                        f"pairs has no {col} column, but the model was fitted per {col}; add it.")
                codes[col] = np.full(len(pairs), -1 if col == "judge" else 0)
                continue
            codes[col] = lookup_ids(pairs, col, ids)
        group = codes["aspect"] * (1 if st["contexts"] is None else len(st["contexts"])) \
            + codes["context"]
        layout = layout_from_state(st)
        cells = []
        for col in ("left", "right"):
            cell = layout.cells(group, lookup_ids(pairs, col, st["items"]))
            if (cell < 0).any():
                raise DataValidationError(
                    f"pairs.{col} has items never compared in their context/aspect at "
                    f"{show_rows(pairs.index[cell < 0])}: the model has no skill for them. "
                    f"Fix: drop those rows.")
            cells.append(cell)
        n_a = len(st["aspects"]) if st["aspects"] is not None and getattr(
            self, "per_aspect", False) else 1
        return cells[0], cells[1], codes["judge"], codes["aspect"] % n_a

    def _draws(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(point, draws): MAP value (or posterior mean) and posterior / Laplace draws."""
        post = self._posterior()[name].values
        draws = post.reshape(-1, *post.shape[2:])
        point = np.asarray(self.map_[name]) if self.method_ == "map" else draws.mean(axis=0)
        return point, draws

    def ranking(self, *, ci_prob: float = CI_PROB, joint: bool = False) -> pd.DataFrame:
        """Skills and ranks per ranking group (context, aspect) with credible intervals.

        Parameters
        ----------
        ci_prob : float
            Mass of the credible intervals.
        joint : bool, default False
            False: ``rank_lower``/``rank_upper`` are each item's marginal
            equal-tailed interval. True: they are simultaneous rank sets of the
            group: with posterior probability >= ``ci_prob`` every item's rank lies
            in its set at once (:func:`bayesjudge.rank_sets.simultaneous_rank_sets`;
            never narrower than the marginal intervals). Skill intervals stay marginal.

        Returns
        -------
        pandas.DataFrame
            One row per (aspect, context, item) that was compared, grouped by
            context (first-appearance order) and sorted by ``rank``: ``skill``
            (MAP or posterior mean) and its ``skill_lower``/``skill_upper``,
            ``rank`` (1 = best, by ``skill``; equal skills share a rank),
            ``rank_lower``/``rank_upper``
            (equal-tailed interval of the rank over draws; with ``joint=True`` the
            group's simultaneous rank sets) and ``p_best`` (share
            of draws in which the item is best in its group; sums to 1 per
            group) with its Monte Carlo standard error ``p_best_mcse`` (NUTS:
            ArviZ's ``mcse_mean`` of the indicator; MAP: sqrt(p (1 - p) / n_eff),
            n_eff the effective number of the Laplace draws; 0 where every draw
            agrees, P(best) then within about 3 / n_eff of it). MAP fits use the
            Laplace approximation's draws and add ``laplace_ok`` (False, with a
            warning, where those intervals cannot be trusted:
            :mod:`bayesjudge.engine.laplace_check`).
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        layout = layout_from_state(self._layout_state)
        point, draws = self._draws("skill")
        point, draws = point.reshape(-1), draws.reshape(len(draws), -1)
        q = [(1 - ci_prob) / 2, (1 + ci_prob) / 2]
        ranks = rank_draws(draws, layout.group)
        out = self._group_columns(layout)
        out["skill"] = point
        out["skill_lower"], out["skill_upper"] = np.quantile(draws, q, axis=0)
        out["rank"] = point_rank(point, layout.group)
        out["rank_lower"] = np.quantile(ranks, q[0], axis=0, method="lower")
        out["rank_upper"] = np.quantile(ranks, q[1], axis=0, method="higher")
        if joint:  # one rectangle per ranking group: all its items' ranks at once
            for idx in pd.Series(np.arange(len(layout.group))).groupby(
                    layout.group).indices.values():
                lo, hi = simultaneous_rank_sets(ranks[:, idx], ci_prob)
                out.loc[idx, "rank_lower"], out.loc[idx, "rank_upper"] = lo, hi
        out["p_best"] = (ranks == 1).mean(axis=0)
        out["p_best_mcse"] = share_mcse(ranks == 1, self._posterior(), self.method_ == "map")
        if self.method_ == "map":
            out["laplace_ok"] = self.laplace_ok("skill").reshape(-1)
            label = list(out.columns[:list(out.columns).index("skill")])
            warn_flagged(out, label)
            warn_point_outside(out, label, ["skill", "rank"], f"{type(self).__name__}.ranking")
        return out.assign(_g=layout.group).sort_values(["_g", "rank"], kind="stable").drop(
            columns="_g").reset_index(drop=True)

    def differences(self, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """Posterior of s_a - s_b for every pair of items of a ranking group.

        Answers "is a better than b?" for each pair of a leaderboard, which rank
        intervals do not: two items whose intervals overlap may still differ with high
        probability (their skills move together).

        Parameters
        ----------
        ci_prob : float
            Mass of the equal-tailed interval of each difference.

        Returns
        -------
        pandas.DataFrame
            Per ranking group (``aspect``, ``context`` where the fit has them, in the
            order of :meth:`ranking`) one row per pair, ``item_a`` ranked above
            ``item_b`` (pairs listed in rank order): ``mean``, ``sd``, ``lower``,
            ``upper`` of s_a - s_b, ``prob_a_better`` = P(s_a > s_b | data) with its
            Monte Carlo standard error ``prob_a_better_mcse`` (as ``p_best_mcse``); MAP
            fits add ``laplace_ok`` (both items' skill intervals trusted). Items of
            different groups have no common scale and are not paired. Computed in
            blocks of pairs (:func:`bayesjudge.rank_sets.differences_table`).
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        layout = layout_from_state(self._layout_state)
        point, draws = self._draws("skill")
        point, draws = point.reshape(-1), draws.reshape(len(draws), -1)
        laplace = self.method_ == "map"
        post = self._posterior()
        out = differences_table(
            self._group_columns(layout), draws, rank_draws(point[None], layout.group)[0],
            layout.group, ci_prob, lambda hits: share_mcse(hits, post, laplace),
            self.laplace_ok("skill").reshape(-1) if laplace else None)
        if laplace:
            warn_flagged(out, list(out.columns[:list(out.columns).index("mean")]))
        return out

    def _group_columns(self, layout: SkillLayout) -> pd.DataFrame:
        st = self._layout_state
        n_ctx = 1 if st["contexts"] is None else len(st["contexts"])
        out = pd.DataFrame()
        if st["aspects"] is not None:
            out["aspect"] = np.asarray(st["aspects"], dtype=object)[layout.group // n_ctx]
        if st["contexts"] is not None:
            out["context"] = np.asarray(st["contexts"], dtype=object)[layout.group % n_ctx]
        out["item"] = np.asarray(st["items"], dtype=object)[layout.item]
        return out

    def judges(self, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """Per-judge parameters: discriminator sigma_k, reliability 1/sigma_k, ties, bias.

        Returns
        -------
        pandas.DataFrame
            One row per judge (per judge and aspect with ``per_aspect=True``; a table
            without a ``judge`` column is one judge, ``"(one judge)"``):
            ``n_comparisons`` (input rows of the judge, or judge and aspect) and, where the model
            has them, ``discriminator``, ``reliability`` (= 1/discriminator; not with one
            judge, whose sigma = 1 is fixed by construction),
            ``tie_logit`` and ``position_bias``, each with ``_lower``/``_upper``
            equal-tailed ``ci_prob`` intervals (MAP: from the Laplace draws, and
            ``laplace_ok``, False where any of the row's intervals cannot be trusted);
            with ``position_bias``, ``position_bias_identified``: False where the
            design does not identify the judge's bias (the fit warned: its estimate
            and interval are the prior's, e.g. a baseline always shown on the left).
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        st = self._layout_state
        q = [(1 - ci_prob) / 2, (1 + ci_prob) / 2]
        post = self._posterior()
        out = pd.DataFrame({"judge": np.asarray(st["judges"], dtype=object)})
        per_aspect = "discriminator" in post and post["discriminator"].ndim == 4
        if per_aspect:
            n_a = len(st["aspects"])
            out = out.loc[out.index.repeat(n_a)].reset_index(drop=True)
            out["aspect"] = np.tile(np.asarray(st["aspects"], dtype=object), len(st["judges"]))
        # input rows per judge (per judge and aspect; models saved before that: per judge)
        by_aspect = st.get("judge_aspect_rows") if per_aspect else None
        out["n_comparisons"] = np.rint(  # counts of rows: whole numbers (a saved fit: floats)
            np.asarray(by_aspect) if by_aspect is not None
            else np.repeat(st["judge_rows"], n_a if per_aspect else 1)).astype(np.int64)
        for name in ("discriminator", "tie_logit", "position_bias"):
            if name not in post or (name == "tie_logit" and post[name].ndim == 2):
                continue
            if name == "discriminator" and not self._sigma_estimated():
                continue  # one judge: sigma = 1 by construction, not an estimate
            point, draws = self._draws(name)
            point, draws = point.reshape(-1), draws.reshape(len(draws), -1)
            out[name] = point
            out[f"{name}_lower"], out[f"{name}_upper"] = np.quantile(draws, q, axis=0)
            if name == "discriminator":
                out["reliability"] = 1.0 / point
                out["reliability_lower"], out["reliability_upper"] = np.quantile(
                    1.0 / draws, q, axis=0)
            if name == "position_bias" and "position_bias_identified" in st:
                # False: the design leaves the bias (and the interval) to the prior
                out["position_bias_identified"] = np.asarray(
                    st["position_bias_identified"], dtype=bool)  # one row per judge
        if self.method_ == "map":  # a judge's row is as good as its worst parameter
            ok = np.ones(len(out), dtype=bool)
            for name in ("discriminator", "tie_logit", "position_bias"):
                if name in out:
                    ok &= self.laplace_ok(name).reshape(-1)
            out["laplace_ok"] = ok
            label = ["judge", "aspect"] if per_aspect else ["judge"]
            warn_flagged(out, label)
            warn_point_outside(out, label, [c for c in ("discriminator", "tie_logit",
                                                        "position_bias") if c in out],
                               f"{type(self).__name__}.judges")
        return out


def lookup_ids(pairs: pd.DataFrame, col: str, ids) -> np.ndarray:
    """Positions of ``pairs[col]`` in the fitted ids; raises naming unknown ids."""
    index = pd.Index(np.asarray(ids, dtype=object), dtype=object)
    pos = index.get_indexer(pairs[col].astype(object))
    if (pos < 0).any():
        fix = ("drop those rows, refit with them, or drop the judge column to get the "
               "consensus prediction (sigma = 1, no position bias, the mean tie logit)"
               if col == "judge" else "drop those rows or refit with them")
        raise DataValidationError(
            f"pairs.{col} has ids the model was not fitted on: "
            f"{show_values(pd.unique(pairs[col][pos < 0]))} at "
            f"{show_rows(pairs.index[pos < 0])} (ids are compared exactly, e.g. 1 != '1'). "
            f"Fix: {fix}.")
    return pos
