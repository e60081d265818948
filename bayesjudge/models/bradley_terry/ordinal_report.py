"""Reports of the graded-verdict model ``OrdinalBT``: level probabilities and cut points.

The numpy side of the ordered-logistic Bradley-Terry model (McCullagh (1980); the
margin of Qian, Sun, Gales & Knill (2026), arXiv:2602.16610, eq. 13): per-row log
probabilities of every level from posterior or Laplace draws, the pointwise
log-likelihood of the level counts, ``predict`` with every level's probability and
``judges`` with the cut points.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesjudge.constants import CI_PROB
from bayesjudge.data import check_ci_prob
from bayesjudge.data.comparisons import COMPARISON_OUTCOMES, Comparisons
from bayesjudge.data.frames import as_pandas
from bayesjudge.data.graded import three_way
from bayesjudge.engine.laplace_check import warn_flagged
from bayesjudge.models.bradley_terry.core import pool_units
from bayesjudge.models.bradley_terry.ordinal_core import ordinal_log_probs
from bayesjudge.models.bradley_terry.report import CHUNK, judged_differences

__all__ = ["OrdinalReports"]


class OrdinalReports:
    """Mixin of :class:`~bayesjudge.models.bradley_terry.ordinal.OrdinalBT` (before
    :class:`~bayesjudge.models.bradley_terry.base.PairwiseModel` in its bases)."""

    def _log_probs(self, draws, cl, cr, judge, aspect) -> np.ndarray:
        """log P(level) of each row: shape (draws, rows, K); judge -1 = consensus."""
        x, has_judge, j = judged_differences(draws, cl, cr, judge, aspect)
        theta = np.asarray(draws["cutpoint"], float)
        if theta.ndim == 3:  # per judge; the consensus uses the judges' mean cut points
            theta = np.where(has_judge[None, :, None], theta[:, j],
                             theta.mean(axis=1, keepdims=True))
        else:
            theta = theta[:, None, :]
        return ordinal_log_probs(x, theta)

    def _pointwise_loglik(self, params, fd):
        lead = np.shape(params["skill"])[:2]
        draws = {k: np.asarray(v).reshape(-1, *np.shape(v)[2:]) for k, v in params.items()}
        comps: Comparisons = fd.extra["comps"]
        cl, cr, counts = fd.extra["cell_left"], fd.extra["cell_right"], fd.extra["counts"]
        out = []
        n_draws = len(draws["skill"])
        step = max(1, CHUNK // max(1, counts.size))
        for start in range(0, n_draws, step):
            part = {k: v[start:start + step] for k, v in draws.items()}
            lp = self._log_probs(part, cl, cr, comps.judge, comps.aspect * 0)
            ll = np.where(counts > 0, lp * counts, 0.0).sum(-1)
            out.append(pool_units(ll))
        return {"comparison": np.concatenate(out).reshape(*lead, -1)}

    @property
    def levels_(self) -> tuple[str, ...]:
        """The levels of the fit (its ``predict`` columns are ``p_<level>``)."""
        self._check_fitted()
        return tuple(self._layout_state["levels"])

    def predict(self, pairs: pd.DataFrame, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """P(every level) for each row of ``pairs``, and P(left), P(tie), P(right).

        Parameters
        ----------
        pairs : pandas.DataFrame
            ``left``, ``right`` (and ``context`` / ``aspect`` when the fit had them);
            optional ``judge``: with it each row uses that judge's discriminator,
            position bias and cut points, without it the consensus (sigma = 1, no
            bias, the judges' mean cut points).
        ci_prob : float
            Mass of the equal-tailed credible intervals (NUTS fits).

        Returns
        -------
        pandas.DataFrame
            The input columns, one row per input row in input order with
            the input's index, plus ``p_<level>``
            for every level in ``levels`` order (summing to 1), then ``p_left``,
            ``p_tie``, ``p_right`` (the levels above, at and below the middle: 0 tie
            for an even number of levels; left out where a level's own column has that
            name, e.g. levels named ``right`` / ``left``); posterior means under NUTS (with
            ``_lower`` / ``_upper`` intervals), the MAP plug-in under MAP.
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        pairs = as_pandas(pairs)  # polars / pyarrow: read as pandas once
        cl, cr, judge, aspect = self._index_pairs(pairs)
        levels = self.levels_
        k = len(levels)
        names = [f"p_{lev}" for lev in levels] + [f"p_{o}" for o in COMPARISON_OUTCOMES]
        # levels -> left / tie / right as a (K, 3) 0/1 matrix
        three = np.eye(3)[three_way(k)]
        draws = self.param_draws()
        n_draws = len(draws["skill"])
        nuts = self.method_ == "nuts"
        mean = np.empty((len(cl), k + 3))
        lo, hi = np.empty_like(mean), np.empty_like(mean)
        step = max(1, CHUNK // ((k + 3) * n_draws))
        for start in range(0, len(cl), step):
            part = slice(start, start + step)
            p = np.exp(self._log_probs(draws, cl[part], cr[part], judge[part], aspect[part]))
            p = np.concatenate([p, p @ three], axis=-1)
            mean[part] = p.mean(axis=0)
            if nuts:
                lo[part], hi[part] = np.quantile(p, [(1 - ci_prob) / 2, (1 + ci_prob) / 2],
                                                 axis=0)
        out = pairs.copy()  # the caller's index: df.join(predict(df)) lines up
        for j, name in enumerate(names):
            if j >= k and name in names[:k]:  # a level's column: never overwritten
                continue
            out[name] = mean[:, j]
            if nuts:
                out[f"{name}_lower"], out[f"{name}_upper"] = lo[:, j], hi[:, j]
        return out

    def judges(self, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """Per-judge parameters, as the family's, plus the cut points with intervals.

        Columns ``cutpoint[<lower level>|<upper level>]`` (MAP or posterior mean) with
        ``_lower`` / ``_upper``: the judge's own with ``per_judge_cutpoints=True``, else
        the shared ones on every row. MAP: ``laplace_ok`` also covers the cut points.
        """
        out = super().judges(ci_prob=ci_prob)
        q = [(1 - ci_prob) / 2, (1 + ci_prob) / 2]
        point, draws = self._draws("cutpoint")
        n_j = len(out)
        if point.ndim == 1:
            point, draws = np.broadcast_to(point, (n_j, *point.shape)), draws[:, None]
        lower, upper = np.quantile(draws, q, axis=0)
        lower, upper = (np.broadcast_to(v, point.shape) for v in (lower, upper))
        levels = self.levels_
        for m, (a, b) in enumerate(zip(levels, levels[1:])):
            name = f"cutpoint[{a}|{b}]"
            out[name], out[f"{name}_lower"], out[f"{name}_upper"] = (
                point[:, m], lower[:, m], upper[:, m])
        if self.method_ == "map":
            ok = self.laplace_ok("cutpoint")
            ok = ok.all(axis=-1) if ok.ndim == 2 else np.full(n_j, bool(ok.all()))
            if not ok.all() and out["laplace_ok"].all():
                out["laplace_ok"] = ok
                warn_flagged(out, ["judge"])
            out["laplace_ok"] = out["laplace_ok"].to_numpy(bool) & ok
        return out

