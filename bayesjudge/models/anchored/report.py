"""Reports of :class:`~bayesjudge.models.anchored.model.AnchoredBT`: ranking, judges, predict,
and the posterior predictive check of the judges' conditional independence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from bayesjudge.constants import CI_PROB
from bayesjudge.data import DataValidationError, check_ci_prob, require_frame, show_values
from bayesjudge.engine.diagnostics import share_mcse
from bayesjudge.engine.laplace_check import warn_flagged, warn_point_outside
from bayesjudge.engine.messages import warn_user
from bayesjudge.models.anchored.data import MISSING, Cells, outcome_codes
from bayesjudge.models.anchored.likelihood import (
    BLOCK,
    OUTCOMES,
    SHIFT,
    distinct_pairs,
    draw_chunks,
    joint_log_terms,
    judge_confusion,
    ref_log_probs,
    softmax,
)
from bayesjudge.rank_sets import differences_table, rank_columns, rank_draws

_OUTCOMES = np.array(OUTCOMES, dtype=object)


def reference_information(diff: np.ndarray, tie_logit, confusion=None, slope=None,
                          consensus=None) -> np.ndarray:
    """Fisher information about d of one reference outcome, or of one verdict through
    ``confusion`` ((draws, 3, 3), or per row (draws, rows, 3, 3)); ``diff`` is (draws, rows).

    Davidson: dP_left/dd = P_left (1/2 - m), dP_tie/dd = -P_tie m, dP_right/dd =
    P_right (-1/2 - m), m = (P_left - P_right) / 2; a verdict has P(v) = sum_r P(r) C[r, v].
    ``slope`` (draws,): the judge's discrimination a, whose verdict logits also move
    with d, dC[r, v]/dd = a C[r, v] (SHIFT_v - sum_w C[r, w] SHIFT_w). ``consensus``
    (draws, 3, 3): M, the reference's outcome first goes through it (P(c) = sum_r P(r)
    M[r, c], and so its derivative), and ``confusion`` is over c.
    """
    p = np.exp(ref_log_probs(diff, np.reshape(tie_logit, (-1, 1))))
    m = 0.5 * (p[..., 0] - p[..., 2])
    dp = p * np.stack([0.5 - m, -m, -0.5 - m], axis=-1)
    if consensus is not None:
        p, dp = _through(consensus[:, None], p), _through(consensus[:, None], dp)
    if confusion is not None:
        c = confusion if confusion.ndim == 4 else confusion[:, None]
        p_ref, p, dp = p, _through(c, p), _through(c, dp)
        if slope is not None:
            dc = c * (SHIFT - (c * SHIFT).sum(-1, keepdims=True))
            dp = dp + np.reshape(slope, (-1, 1, 1)) * _through(dc, p_ref)
    return (dp**2 / np.maximum(p, 1e-300)).sum(-1)


def _warn_items(table: pd.DataFrame, which, what: str) -> None:
    """Warn naming the items of ``table`` where ``which`` holds."""
    items = table.loc[np.asarray(which, bool), "item"].tolist()
    if items:
        warn_user(f"AnchoredBT.ranking: {len(items)} item(s) {show_values(items, k=10)} "
                  f"{what}.")


def _through(c: np.ndarray, p: np.ndarray) -> np.ndarray:
    """sum_r p[..., r] c[..., r, :]: a vector over r through a 3 x 3 matrix, per draw and
    row (three broadcast products; einsum's generic loop is ~10 x slower on these shapes)."""
    return p[..., 0, None] * c[..., 0, :] + p[..., 1, None] * c[..., 1, :] \
        + p[..., 2, None] * c[..., 2, :]


class AnchoredReports:
    """Mixin: the numpy side of the anchored model (reads ``_state_`` and the posterior)."""

    _state_: dict[str, Any]

    def _cells(self) -> Cells:
        c = self._state_["cells"]
        verdicts = np.asarray(c["verdicts"], dtype=np.int64).reshape(len(c["count"]), -1)
        if "ref_counts" in c:
            ref_counts = np.asarray(c["ref_counts"], dtype=np.int64).reshape(-1, 3)
        else:  # saved before crowds: one label per cell, 3 = none
            ref_counts = np.vstack([np.eye(3, dtype=np.int64), np.zeros((1, 3), np.int64)])[
                np.asarray(c["ref"], dtype=np.int64)]
        return Cells(left=np.asarray(c["left"], dtype=np.int64),
                     right=np.asarray(c["right"], dtype=np.int64),
                     ref_counts=ref_counts, verdicts=verdicts,
                     count=np.asarray(c["count"], float), battle_cell=np.zeros(0, np.int64))

    def _draws(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(point, draws): the MAP (or posterior mean) and the posterior / Laplace draws."""
        post = self._posterior()[name].values
        draws = post.reshape(-1, *post.shape[2:])
        point = np.asarray(self.map_[name]) if self.method_ == "map" else draws.mean(axis=0)
        return point, draws

    def _all_draws(self) -> dict[str, np.ndarray]:
        post = self._posterior()
        return {k: post[k].values.reshape(-1, *post[k].shape[2:]) for k in self._summary_vars}

    # -- ranking -----------------------------------------------------------------------
    def ranking(self, *, ci_prob: float = CI_PROB, joint: bool = False) -> pd.DataFrame:
        """Skills and ranks of the reference's preference, with credible intervals.

        Parameters
        ----------
        ci_prob : float
            Mass of the intervals.
        joint : bool
            False: ``rank_lower``/``rank_upper`` are each item's marginal equal-tailed
            rank interval. True: simultaneous rank sets -- with posterior probability
            >= ``ci_prob`` every item's rank lies in its set at once
            (:func:`bayesjudge.rank_sets.simultaneous_rank_sets`).

        Returns
        -------
        pandas.DataFrame
            One row per item sorted by ``rank``: ``item``, ``skill`` (MAP or posterior
            mean) with ``skill_lower``/``skill_upper``, ``rank`` (1 = best),
            ``rank_lower``/``rank_upper``, ``p_best`` with its Monte Carlo standard error
            ``p_best_mcse`` (as the Bradley-Terry family's), ``n_battles`` (battles of the
            item, any judge), ``n_reference_votes`` (the reference's votes on them);
            MAP fits add ``laplace_ok``.

        Warns (``UserWarning``) naming the items in no battle the reference judged
        (their skills rest on the other judges' verdicts alone), and, for MAP fits, the
        items whose MAP skill or rank lies outside its own interval (the intervals come
        from draws that integrate the spread of the judges' preferences; the MAP is the
        joint mode: models/anchored.md, Limits).
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        point, draws = self._draws("skill")
        q = [(1 - ci_prob) / 2, (1 + ci_prob) / 2]
        out = pd.DataFrame({"item": np.asarray(self._state_["items"], dtype=object)})
        out["skill"] = point
        out["skill_lower"], out["skill_upper"] = np.quantile(draws, q, axis=0)
        post, laplace = self._posterior(), self.method_ == "map"
        out = out.assign(**rank_columns(point, draws, ci_prob, joint,
                                        lambda hits: share_mcse(hits, post, laplace)))
        out["n_battles"], out["n_reference_votes"] = self._item_counts()
        _warn_items(out, out["n_reference_votes"] == 0,
                    "are in no battle the reference judged: their skills rest on the other "
                    "judges' verdicts alone (through each judge's channel and, with "
                    "item_bias, its own preferences, which the reference never checks on "
                    "them). Add reference votes on them, or read their ranks as the judges'")
        if self.method_ == "map":
            out["laplace_ok"] = self.laplace_ok("skill").reshape(-1)
            warn_flagged(out, ["item"])
            # the intervals integrate the spread of the judges' preferences, the MAP is the
            # joint mode (models/anchored.md, Limits)
            warn_point_outside(out, ["item"], ["skill", "rank"], "AnchoredBT.ranking")
        return out.sort_values("rank", kind="stable").reset_index(drop=True)

    def differences(self, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """Posterior of s_a - s_b of the reference's preference for every pair of items.

        As the Bradley-Terry family's
        (:meth:`bayesjudge.models.bradley_terry.report.PairwiseReports.differences`):
        one row per pair, ``item_a`` ranked above ``item_b``, ``mean``, ``sd``,
        ``lower``, ``upper``, ``prob_a_better`` = P(s_a > s_b | data),
        ``prob_a_better_mcse``; MAP fits add ``laplace_ok``.
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        point, draws = self._draws("skill")
        laplace, post = self.method_ == "map", self._posterior()
        items = pd.DataFrame({"item": np.asarray(self._state_["items"], dtype=object)})
        out = differences_table(items, draws, rank_draws(point[None])[0],
                                np.zeros(len(items), dtype=np.int64), ci_prob,
                                lambda hits: share_mcse(hits, post, laplace),
                                self.laplace_ok("skill") if laplace else None)
        return warn_flagged(out, ["item_a", "item_b"]) if laplace else out

    def _item_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Per item: its battles (any judge) and the reference's votes on them."""
        cells = self._cells()
        n = len(self._state_["items"])
        votes = cells.count * cells.ref_counts.sum(axis=1)
        return tuple(np.rint(np.bincount(cells.left, w, n) + np.bincount(cells.right, w, n))
                     .astype(np.int64) for w in (cells.count, votes))

    # -- judges ------------------------------------------------------------------------
    def judges(self, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """Each judge's confusion matrix with intervals, agreement and worth in reference votes.

        Returns
        -------
        pandas.DataFrame
            Tidy, one row per (judge, reference_outcome, verdict): ``estimate`` of
            C_k[r, v] = P(judge says v | reference outcome r) (with ``consensus``,
            (M C_k)[r, v]; MAP, or posterior mean)
            with ``lower``/``upper``; then per judge (repeated on its 9 rows):
            ``n_battles`` (battles it judged), ``n_with_reference`` (of those, judged by
            the reference too), ``agreement`` (observed share of those where its verdict
            equals the reference's; with a crowd, the mean share of the battle's
            reference votes on its verdict), ``reference_votes`` with ``_lower``/``_upper``: what
            one verdict of the judge is worth in reference outcomes, I_k / I_ref, where I
            is the Fisher information about a skill difference d of one outcome (for
            judge k, of its verdict with the reference's outcome summed out through C_k;
            with ``discrimination`` / ``item_bias`` the confusion of each battle's pair and
            the verdict's own dependence on d),
            averaged over the d of the battles the judge judged. m verdicts of judge k
            alone give a skill difference the posterior variance of m I_k / I_ref
            reference votes (asymptotically) -- with ``item_bias`` only while the
            judge's own preferences on the pair count for little: they are the same in
            every verdict on a pair, so the worth of many verdicts saturates (a rate per
            verdict, for comparing judges; with ``discrimination`` it can exceed 1).
            MAP fits add ``laplace_ok``.
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        st = self._state_
        judges = np.asarray(st["judges"], dtype=object)
        cols = ["judge", "reference_outcome", "verdict", "estimate", "lower", "upper"]
        if not len(judges):
            return pd.DataFrame(columns=cols)
        q = [(1 - ci_prob) / 2, (1 + ci_prob) / 2]
        point, draws = self._draws("confusion")
        shown_point, shown = point, draws
        if self.consensus:  # the judge's channel from the reference's outcome: M C_k
            m_point, m_draws = self._draws("consensus")
            shown = np.einsum("src,skcv->skrv", m_draws, draws)
            shown_point = (np.einsum("rc,kcv->krv", m_point, point) if self.method_ == "map"
                           else shown.mean(axis=0))
        n_j = len(judges)
        out = pd.DataFrame({"judge": np.repeat(judges, 9),
                            "reference_outcome": np.tile(np.repeat(_OUTCOMES, 3), n_j),
                            "verdict": np.tile(_OUTCOMES, 3 * n_j)})
        out["estimate"] = shown_point.reshape(-1)
        lo, hi = np.quantile(shown.reshape(len(shown), -1), q, axis=0)
        out["lower"], out["upper"] = lo, hi
        per = lambda v: np.repeat(np.asarray(v), 9)  # noqa: E731  (per judge -> its 9 rows)
        out["n_battles"] = per(st["judge_battles"])
        out["n_with_reference"] = per(st["judge_with_reference"])
        with np.errstate(invalid="ignore", divide="ignore"):
            out["agreement"] = per(np.asarray(st["judge_agreement"], float)
                                   / np.asarray(st["judge_with_reference"], float))
        worth = self._reference_votes(draws)
        worth_point = self._reference_votes(point[None],
                                            {k: v[None] for k, v in self._point().items()})
        out["reference_votes"] = per(worth_point[0])
        lo, hi = np.quantile(worth, q, axis=0)
        out["reference_votes_lower"], out["reference_votes_upper"] = per(lo), per(hi)
        if self.method_ == "map":
            ok = self.laplace_ok("confusion").reshape(n_j, 9).all(axis=1)
            if self.consensus:  # M C_k: trusted only where M is too
                ok = ok & bool(np.all(self.laplace_ok("consensus")))
            out["laplace_ok"] = per(ok)
            warn_flagged(out, ["judge", "reference_outcome", "verdict"])
        alone = judges[np.asarray(st["judge_with_reference"]) == 0].tolist()
        if alone:  # agreement NaN: nothing to compare with
            warn_user(f"AnchoredBT.judges: {len(alone)} judge(s) {show_values(alone, k=10)} "
                      f"share no battle with the reference: their confusion rows rest on the "
                      f"prior and on the skills alone (agreement NaN). Add reference votes on "
                      f"some of their battles.")
        return out

    def _point(self) -> dict[str, np.ndarray]:
        if self.method_ == "map":
            return {k: np.asarray(self.map_[k]) for k in self._summary_vars}
        return {k: v.mean(axis=0) for k, v in self._all_draws().items()}

    def _reference_votes(self, confusion: np.ndarray, params=None) -> np.ndarray:
        """I_k / I_ref per draw and judge: (draws, judges), in chunks of draws
        (:func:`~bayesjudge.models.anchored.likelihood.draw_chunks`).

        The information of an outcome depends on its battle's ordered pair only (d, and
        the pair's confusion with judge effects), so it is computed once per distinct
        pair, weighted by the battles of the pair each judge judged."""
        params = dict(params or self._all_draws(), confusion=confusion)
        cells = self._cells()
        left, right, pair_of = distinct_pairs(cells.left, cells.right)
        weight = np.column_stack([  # (pairs, judges): battles of the pair the judge judged
            np.bincount(pair_of, cells.count * (cells.verdicts[:, k] < MISSING), len(left))
            for k in range(confusion.shape[1])])
        out = np.empty((len(confusion), confusion.shape[1]))
        for sl in draw_chunks(len(confusion), 9 * len(left)):  # (draws, pairs, 3, 3) arrays
            part = {n: v[sl] for n, v in params.items()}
            d = part["skill"][:, left] - part["skill"][:, right]
            if "position_bias" in part:
                d = d + np.reshape(part["position_bias"], (-1, 1))
            ref_info = reference_information(d, part["tie_logit"])
            for k in range(confusion.shape[1]):
                slope = part["judge_discrimination"][:, k] \
                    if "judge_discrimination" in part else None
                info = reference_information(
                    d, part["tie_logit"], judge_confusion(part, k, left, right), slope,
                    part.get("consensus"))
                out[sl, k] = (info @ weight[:, k]) / (ref_info @ weight[:, k])
        return out

    # -- predict -------------------------------------------------------------------------
    def predict(self, battles: pd.DataFrame, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """P(the reference says left / tie / right) per battle, given its judges' verdicts.

        Parameters
        ----------
        battles : pandas.DataFrame
            ``battle``, ``left``, ``right``, optionally ``judge`` and ``outcome``: the
            verdicts of fitted judges on the battle. The prediction conditions on them
            by Bayes' rule through the confusion matrices,
            P(r | verdicts) proportional to P(r | d) prod_k C_k[r, v_k]; a battle without
            verdicts gets P(r | d). Rows of the reference judge itself are not used
            (the question is what it would say), so held-out reference battles can be
            scored against its real label. With a crowd reference this is the outcome
            the verdicts channel: a further vote of a crowd of m follows it with weight
            1/m and P(r | d) otherwise.
        ci_prob : float
            Mass of the intervals (NUTS fits).

        Returns
        -------
        pandas.DataFrame
            One row per battle in first-appearance order: ``battle``, ``left``,
            ``right``, ``n_verdicts`` (verdicts used), ``p_left``, ``p_tie``,
            ``p_right`` (MAP plug-in, or posterior mean with ``p_*_lower``/``p_*_upper``
            under NUTS).
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        battle, out, left, right, onehot = self._index_battles(battles)
        nuts = self.method_ == "nuts"
        draws = self._all_draws() if nuts else {k: v[None] for k, v in self._point().items()}
        # once per distinct (left, right, verdicts) pattern, in blocks of patterns: never
        # a draws x battles x judges x 9 array (200,000 battles under NUTS: 170 GB)
        patterns, row_of = np.unique(np.column_stack([left, right, onehot]).astype(np.int64),
                                     axis=0, return_inverse=True)
        p_left, p_right, p_onehot = patterns[:, 0], patterns[:, 1], patterns[:, 2:].astype(float)
        q = [(1 - ci_prob) / 2, (1 + ci_prob) / 2]
        stats = np.empty((3 if nuts else 1, len(patterns), 3))  # mean (lower, upper)
        n_draws = len(draws["skill"])
        step = max(1, BLOCK // (n_draws * 9 * max(1, p_onehot.shape[1] // 3)))
        for lo in range(0, len(patterns), step):
            sl = slice(lo, lo + step)
            probs = softmax(joint_log_terms(draws, p_left[sl], p_right[sl], p_onehot[sl]))
            stats[0, sl] = probs.mean(axis=0)
            if nuts:
                stats[1:, sl] = np.quantile(probs, q, axis=0)
        stats = stats[:, row_of.reshape(-1)]
        out["n_verdicts"] = onehot.sum(1).astype(np.int64)
        for j, name in enumerate(("left", "tie", "right")):
            out[f"p_{name}"] = stats[0, :, j]
            if nuts:
                out[f"p_{name}_lower"], out[f"p_{name}_upper"] = stats[1, :, j], stats[2, :, j]
        return out

    def _index_battles(self, battles: pd.DataFrame):
        battles = require_frame(battles, "battles", ["battle", "left", "right"])  # polars too
        st = self._state_
        code, ids = pd.factorize(battles["battle"].astype(object), sort=False)
        first = pd.Series(np.arange(len(code))).groupby(code).first().to_numpy()
        items = pd.Index(np.asarray(st["items"], dtype=object), dtype=object)
        pos = {}
        for col in ("left", "right"):
            p = items.get_indexer(battles[col].astype(object))
            if (p < 0).any():
                raise DataValidationError(
                    f"battles.{col} has items the model was not fitted on: "
                    f"{show_values(pd.unique(battles[col][p < 0]))} (ids are compared "
                    f"exactly). Fix: drop those battles or refit with them.")
            pos[col] = p
        if ((pos["left"] != pos["left"][first][code])
                | (pos["right"] != pos["right"][first][code])).any():
            raise DataValidationError(
                "battles: a battle has different left/right items in different rows. Fix: "
                "write every row of a battle in the same order.")
        same = pos["left"] == pos["right"]
        if same.any():
            raise DataValidationError(
                f"battles: battle(s) {show_values(pd.unique(battles['battle'][same]))} "
                f"compare an item with itself. Fix: drop those rows.")
        if ("judge" in battles.columns) != ("outcome" in battles.columns):
            has, lacks = (("judge", "outcome") if "judge" in battles.columns
                          else ("outcome", "judge"))
            raise DataValidationError(
                f"battles has a {has!r} column but no {lacks!r} column: a verdict needs "
                f"both. Fix: add {lacks!r}, or drop {has!r} to predict from the skills "
                f"alone.")
        n_j = len(st["judges"])
        onehot = np.zeros((len(ids), 3 * n_j))
        if "judge" in battles.columns and n_j:
            judge = battles["judge"].astype(object)
            ref = np.array([type(j) is type(self.reference) and j == self.reference
                            for j in judge], dtype=bool)
            k = pd.Index(np.asarray(st["judges"], dtype=object), dtype=object).get_indexer(judge)
            unknown = (k < 0) & ~ref
            if unknown.any():
                raise DataValidationError(
                    f"battles.judge has judges the model was not fitted on: "
                    f"{show_values(pd.unique(judge[unknown]))}; fitted: "
                    f"{show_values(st['judges'], k=20)}. Fix: drop their rows.")
            use = ~ref
            v = outcome_codes(battles["outcome"][use], "battles")
            # one verdict per (battle, judge), as in the fit: count every row (np.add.at;
            # fancy-indexed += would count a repeat once)
            per_judge = np.zeros((len(ids), n_j), dtype=np.int64)
            np.add.at(per_judge, (code[use], k[use]), 1)
            if (per_judge > 1).any():
                pairs = [f"{ids[b]!r}/{st['judges'][j]!r} ({per_judge[b, j]} verdicts)"
                         for b, j in zip(*np.nonzero(per_judge > 1))]
                raise DataValidationError(
                    f"battles: a judge other than the reference gave more than one verdict "
                    f"on a battle (battle/judge {show_values(pairs, fmt=str)}); the fit "
                    f"allows one. Fix: give repeated judgments their own battle "
                    f"ids, or drop the repeats.")
            onehot[code[use], 3 * k[use] + v] = 1.0
        out = pd.DataFrame({"battle": np.asarray(ids, dtype=object),
                            "left": battles["left"].to_numpy()[first],
                            "right": battles["right"].to_numpy()[first]})
        return code, out, pos["left"][first], pos["right"][first], onehot
