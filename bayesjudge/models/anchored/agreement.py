"""The judges' conditional independence (Dawid-Skene) checked on the data:
:meth:`AgreementCheck.agreement_check`, and the screen every fit with two or more judges
runs (:class:`JudgeDependenceWarning`).

Given the reference's outcome r of a battle, two judges' verdicts are independent, so
they agree with probability sum_r P(r) sum_v C_a[r, v] C_b[r, v] (P(r): the reference's
vote shares where it voted, else P(r | d); each pair of items' own C_k with judge
effects; with a consensus layer sum_r P(r) sum_c M[r, c] sum_v C'_a[c, v] C'_b[c, v]).
Judges that share errors beyond the reference's outcome -- the same position bias, the
same taste -- agree more often, and a model that treats them as independent counts
their shared verdicts twice: its intervals are too narrow.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesjudge.constants import CI_PROB
from bayesjudge.data import check_ci_prob
from bayesjudge.engine.messages import warn_user
from bayesjudge.models.anchored.data import MISSING
from bayesjudge.models.anchored.likelihood import (
    distinct_pairs,
    draw_chunks,
    joint_log_terms,
    judge_confusion,
    softmax,
)

#: Columns of :meth:`AgreementCheck.agreement_check`.
AGREEMENT_COLUMNS = ["judge_a", "judge_b", "n_battles", "observed", "expected", "lower",
                     "upper", "p_value"]
#: The fit-time screen flags a pair of judges whose observed agreement exceeds the
#: model's plug-in prediction by more than SCREEN_Z binomial standard deviations and by
#: at least SCREEN_MIN_EXCESS in share (z 4: one false alarm in ~30,000 pairs of
#: judges that are conditionally independent; the excess keeps huge tables from
#: flagging a difference of no consequence).
SCREEN_Z = 4.0
SCREEN_MIN_EXCESS = 0.02


class JudgeDependenceWarning(UserWarning):
    """Two judges agree more often than the model's conditional independence allows."""


class AgreementCheck:
    """Mixin of :class:`~bayesjudge.models.anchored.model.AnchoredBT`: the judges'
    agreement, observed and predicted (reads ``_state_``, the cells and the posterior)."""

    def _agreement_moments(self, params: dict[str, np.ndarray]):
        """Per pair of judges (a < b): (battles both judged, observed agreeing battles,
        per draw of ``params`` the mean and variance of the predicted number)."""
        judges = list(self._state_["judges"])
        cells = self._cells()
        pairs = [(a, b) for a in range(len(judges)) for b in range(a + 1, len(judges))]
        both = {(a, b): (cells.verdicts[:, a] < MISSING) & (cells.verdicts[:, b] < MISSING)
                for a, b in pairs}
        n_draws = len(params["skill"])
        mean = {ab: np.empty(n_draws) for ab in pairs}
        var = {ab: np.empty(n_draws) for ab in pairs}
        empty = np.zeros((len(cells.count), 0))
        known = cells.ref_known  # the channelled outcome is one of its votes, uniformly
        # each judge's confusion rows depend on the ordered pair only: computed per pair
        pair_left, pair_right, cell_pair = distinct_pairs(cells.left, cells.right)
        # in chunks of draws (a NUTS posterior on arena_ppr's 8,344 cells would otherwise
        # hold 4,000 x 8,344 x 3 reference probabilities at once); per draw: P(r) and a
        # judge pair's agreement per cell, every judge's 3 x 3 rows per pair
        per_draw = 6 * len(cells.count) + 9 * len(pair_left) * (len(judges) + 1)
        for sl in draw_chunks(n_draws, per_draw):
            chunk = {name: v[sl] for name, v in params.items()}
            p_ref = softmax(joint_log_terms(chunk, cells.left, cells.right, empty))
            p_ref[:, known] = cells.ref_share[known][None]
            conf = [judge_confusion(chunk, k, pair_left, pair_right)  # the pair's own C_k
                    for k in range(len(judges))]
            for a, b in pairs:
                m = both[a, b]
                # sum_v C_a[r, v] C_b[r, v] per pair (over c with a consensus layer,
                # then sum_c M[r, c] of it), then sum_r P(r) of it per cell
                same = (conf[a] * conf[b]).sum(-1)
                if "consensus" in chunk:
                    same = np.einsum("src,spc->spr", chunk["consensus"], same)
                same = same[:, cell_pair[m]]
                p = (p_ref[:, m] * same).sum(-1)
                n = cells.count[m]
                mean[a, b][sl], var[a, b][sl] = p @ n, (p * (1 - p)) @ n
        out = {}
        for a, b in pairs:
            m, n = both[a, b], cells.count[both[a, b]]
            agree = float(n @ (cells.verdicts[m, a] == cells.verdicts[m, b]))
            out[a, b] = (float(n.sum()), agree, mean[a, b], var[a, b])
        return out

    def agreement_check(self, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """Posterior predictive check of the judges' conditional independence (Dawid-Skene).

        For every pair of non-reference judges, the share of the battles both judged
        where their verdicts agree, observed and as the model predicts it: a battle's
        reference outcome r has P(r | d) (where the reference voted, the shares of its
        votes: its label for one vote), and given r the two verdicts are independent, so P(agree) =
        sum_r P(r) sum_v C_k[r, v] C_l[r, v]. Judges that share errors beyond the
        reference's outcome (the same position bias, the same taste) agree more often
        than predicted. With ``discrimination`` / ``item_bias`` each pair's own C_k is
        used (:func:`~bayesjudge.models.anchored.likelihood.judge_confusion`).

        Returns
        -------
        pandas.DataFrame
            One row per judge pair: ``judge_a``, ``judge_b``, ``n_battles`` (0, and NaN
            in the other columns, for a pair that shares no battle),
            ``observed``, ``expected`` (posterior mean of the predicted share),
            ``lower``/``upper`` (``ci_prob`` interval of the replicated share: posterior
            draws plus the binomial noise of n_battles battles, normal approximation),
            ``p_value`` (two-sided posterior predictive p-value).
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        judges = list(self._state_["judges"])
        if len(judges) < 2:
            return pd.DataFrame(columns=AGREEMENT_COLUMNS)
        params = self._all_draws()
        n_draws = len(params["skill"])
        rng = np.random.default_rng(self.random_seed)
        rows = []
        for (a, b), (total, agree, mean, var) in self._agreement_moments(params).items():
            if total == 0:  # no battle judged by both: nothing to check, said so
                rows.append((judges[a], judges[b], 0, *[np.nan] * 5))
                continue
            rep = (mean + np.sqrt(var) * rng.standard_normal(n_draws)) / total
            obs = agree / total
            tail = min((rep >= obs).mean(), (rep <= obs).mean())
            lo, hi = np.quantile(rep, [(1 - ci_prob) / 2, (1 + ci_prob) / 2])
            rows.append((judges[a], judges[b], int(total), obs,
                         float(mean.mean() / total), lo, hi, min(1.0, 2 * tail)))
        return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)

    def _screen_judge_dependence(self) -> None:
        """Warn (:class:`JudgeDependenceWarning`) when two judges share errors.

        Run after every fit with two or more judges and no consensus layer: the observed
        agreement of each pair against its prediction at the MAP (posterior mean under
        NUTS), binomial noise only -- one pass over the cells, no posterior draws;
        :meth:`agreement_check` is the full check.
        """
        judges = list(self._state_["judges"])
        if len(judges) < 2 or self.consensus:
            return
        point = {k: np.asarray(v)[None] for k, v in self._point().items()}
        flagged = []
        for (a, b), (total, agree, mean, var) in self._agreement_moments(point).items():
            if total == 0:
                continue
            excess = (agree - mean[0]) / total
            z = (agree - mean[0]) / np.sqrt(max(var[0], 1e-12))
            if z > SCREEN_Z and excess >= SCREEN_MIN_EXCESS:
                flagged.append(f"{judges[a]!r} and {judges[b]!r} agree on "
                               f"{agree / total:.1%} of the {int(total):,} battles both "
                               f"judged, the model predicts {mean[0] / total:.1%} (z = {z:.0f})")
        if flagged:
            warn_user(
                "AnchoredBT: " + "; ".join(flagged) + ". These judges share errors the "
                "reference's outcome does not explain, and the model counts their shared "
                "verdicts as independent evidence: its intervals are too narrow. Fix: "
                "fit with consensus=True (command line: --consensus), or with one of "
                "them; agreement_check() gives the full posterior predictive check.",
                JudgeDependenceWarning)
