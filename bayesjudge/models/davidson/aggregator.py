"""Distribution-calibrated aggregation of sampled judge votes (Davidson model).

Implements section 4 and Algorithm 1 of Dadkhahi, Trabelsi, Riley, Juraska,
Mirzazadeh et al. (2025), "Distribution-Calibrated Inference Time Compute for
Thinking LLM-as-a-Judge", arXiv:2512.03019: n
sampled votes per item are reduced to counts (c+, c0, c-), two smoothed
features (margin s, eq. 2; tie evidence t, eq. 3) feed a Bradley-Terry-Davidson
ternary likelihood (eq. 4) calibrated on a small labelled set, and each item is
decided by the MAE Bayes action (eqs. 5-6).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from bayesjudge.base import CI_PROB, BayesianModel, ExampleData, FitData
from bayesjudge.data import (
    DataValidationError,
    UnusedColumnWarning,
    align_calibration,
    check_ci_prob,
    validate_labels,
    validate_votes,
)
from bayesjudge.engine.messages import warn_user
from bayesjudge.priors import Prior

OUTCOMES = ("-1", "0", "+1")  # column order of every (..., 3) array below
# Distance |a - y| between action a (rows) and truth y (columns), both ordered -1, 0, +1.
MAE_LOSS = np.abs(np.subtract.outer([-1, 0, 1], [-1, 0, 1])).astype(float)


def vote_features(
    counts: np.ndarray, alpha: float = 1.0, kappa: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Margin and tie-evidence features of vote counts (eqs. 2-3).

    Parameters
    ----------
    counts : ndarray, shape (..., 3)
        Columns (c+, c0, c-).
    alpha, kappa : float
        Smoothing constants (paper: 1).

    Returns
    -------
    s : ndarray
        ``0.5 * log((c+ + alpha) / (c- + alpha))``  (eq. 2)
    t : ndarray
        ``log((c0 + kappa) / (n + kappa))``, n = c+ + c0 + c-  (eq. 3)
    """
    counts = np.asarray(counts, dtype=float)
    cpos, ctie, cneg = counts[..., 0], counts[..., 1], counts[..., 2]
    s = 0.5 * np.log((cpos + alpha) / (cneg + alpha))
    t = np.log((ctie + kappa) / (counts.sum(-1) + kappa))
    return s, t


def davidson_log_probs(u: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """Log p(-1), log p(0), log p(+1) of eq. 4 (last axis), numerically stable.

    ``p(+1) = e^u / Z``, ``p(-1) = e^-u / Z``, ``p(0) = e^eta / Z``,
    ``Z = e^u + e^-u + e^eta``.
    """
    u, eta = np.broadcast_arrays(np.asarray(u, float), np.asarray(eta, float))
    logits = np.stack([-u, eta, u], axis=-1)
    m = logits.max(axis=-1, keepdims=True)
    return logits - (m + np.log(np.exp(logits - m).sum(axis=-1, keepdims=True)))


def mae_risks(probs: np.ndarray) -> np.ndarray:
    """Expected MAE of each action (eq. 5): R(-1), R(0), R(+1) on the last axis.

    ``R(-1) = p(0) + 2 p(+1)``, ``R(0) = p(+1) + p(-1)``, ``R(+1) = 2 p(-1) + p(0)``.
    """
    return np.asarray(probs) @ MAE_LOSS.T


def bayes_action(risks: np.ndarray) -> np.ndarray:
    """Argmin of the risks (eq. 6), returned on the {-1, 0, +1} scale.

    Exact ties between risks are broken toward 0 (tie), then -1: a tie is the
    action with the smallest worst-case loss.
    """
    risks = np.asarray(risks)
    order = np.array([1, 0, 2])  # tie, -1, +1: first minimum wins
    return np.array([0, -1, 1])[np.argmin(risks[..., order], axis=-1)]


class DavidsonAggregator(BayesianModel):
    r"""Calibrated Davidson aggregator of sampled ternary votes.

    For an item with vote counts (c+, c0, c-):

    .. math::

        s = \tfrac12 \log\frac{c^+ + \alpha}{c^- + \alpha}, \qquad
        t = \log\frac{c^0 + \kappa}{n + \kappa}                \quad (2, 3)

        p(+1) = e^{u}/Z,\; p(-1) = e^{-u}/Z,\; p(0) = e^{\eta}/Z,\;
        Z = e^{u} + e^{-u} + e^{\eta}                          \quad (4)

    with ``u = beta * s`` and ``eta = eta0`` (``tie="global"``) or
    ``eta = gamma * t`` (``tie="local"``). Calibration labels y* in {-1, 0, +1}
    are categorical draws from eq. 4; MAP with ``priors="flat"`` is the paper's
    maximum-likelihood fit (eq. 8). The decision is the MAE Bayes action
    (eqs. 5-6); under NUTS the risks are averaged over the posterior, so the
    decision accounts for parameter uncertainty.

    Parameters
    ----------
    tie : {"global", "local"}
        Global tie logit ``tie_logit`` (eta0) or local ``tie_scale`` (gamma) * t.
    alpha, kappa : float
        Smoothing of the margin and tie features (paper: 1).
    priors : None, "flat" or dict
        Overrides of :attr:`default_priors` by name (a :class:`~bayesjudge.Prior`
        or its dict form); ``"flat"`` gives the MLE under MAP. The defaults are
        weakly informative on the logit scale of eq. 4 (a margin scale of 5
        already turns one net vote into odds of e^5)::

            margin_scale  Prior('Normal', mu=0, sigma=5)   beta, scalar
            tie_logit     Prior('Normal', mu=0, sigma=3)   eta0, scalar (tie="global")
            tie_scale     Prior('Normal', mu=0, sigma=5)   gamma, scalar (tie="local")

    random_seed : int
        Seeds NUTS and the Laplace draws.

    Attributes
    ----------
    map_ : dict
        MAP values of ``margin_scale`` (beta) and ``tie_logit`` / ``tie_scale``.
    idata_ : xarray.DataTree
        posterior, log_likelihood (``label``, per calibration item), observed_data
        (``label`` and the items' ``vote_counts``, outcome order -1, 0, +1).

    Examples
    --------
    >>> import pandas as pd
    >>> votes = pd.DataFrame({"item": [1, 2, 3, 4, 5, 6], "n_pos": [5, 0, 2, 4, 1, 3],
    ...                       "n_tie": [0, 1, 3, 1, 4, 1], "n_neg": [0, 4, 0, 0, 0, 1]})
    >>> labels = pd.DataFrame({"item": [1, 2, 3, 4, 5, 6], "label": [1, -1, 0, 1, 0, -1]})
    >>> model = DavidsonAggregator().fit(votes, labels)
    >>> model.predict(votes)["decision"].tolist()
    [1, -1, 1, 1, 0, 0]
    """

    _map_newton = True  # two or three parameters: see bayesjudge.engine.optim

    default_priors = {
        "margin_scale": Prior("Normal", mu=0, sigma=5),
        "tie_logit": Prior("Normal", mu=0, sigma=3),
        "tie_scale": Prior("Normal", mu=0, sigma=5),
    }

    @property
    def _summary_vars(self) -> tuple[str, ...]:
        # A property, not state set by fit: a loaded local-tie fit must
        # summarise tie_scale without being refitted first.
        return ("margin_scale", self._tie_param)

    def __init__(
        self,
        tie: Literal["global", "local"] = "global",
        alpha: float = 1.0,
        kappa: float = 1.0,
        priors: None | str | dict = None,
        random_seed: int | None = 0,
    ):
        self.tie = tie
        self.alpha = alpha
        self.kappa = kappa
        self.priors = priors
        self.random_seed = random_seed

    # -- pieces of the contract ---------------------------------------------------
    @property
    def _tie_param(self) -> str:
        return "tie_logit" if self.tie == "global" else "tie_scale"

    def _check_options(self) -> None:
        if self.tie not in ("global", "local"):
            raise ValueError(f"tie must be 'global' or 'local', got {self.tie!r}")
        if not (self.alpha > 0 and self.kappa > 0):
            raise ValueError(f"alpha and kappa must be > 0, got {self.alpha}, {self.kappa}")

    def _prior_names(self) -> tuple[str, ...]:
        self._check_options()
        return ("margin_scale", self._tie_param)

    def _prepare(self, votes: pd.DataFrame, labels: pd.DataFrame) -> FitData:
        self._check_options()
        self.resolved_priors()  # fail on bad priors before validation or compilation
        labels = validate_labels(labels)
        if isinstance(votes, pd.DataFrame) and "confidence" in votes.columns:
            warn_user(
                "votes.confidence is not used: the Davidson aggregator's likelihood (eqs. 2-4) "
                "counts each item's votes, whatever their confidence (the confidence-weighted "
                "baselines are bayesjudge.baselines.soft_self_consistency and "
                "ci_self_consistency). Fix: drop the column to fit quietly.",
                UnusedColumnWarning)
        counts = align_calibration(validate_votes(votes), labels)
        _check_calibration(labels.values)
        y_idx = labels.values + 1  # -1, 0, +1 -> 0, 1, 2
        # Sufficient statistics: the likelihood only sees distinct count vectors
        # and, for each, how many calibration items carry each label.
        patterns, inverse = _unique_rows(counts)
        label_counts = np.bincount(inverse * 3 + y_idx, minlength=3 * len(patterns))
        label_counts = label_counts.reshape(len(patterns), 3)
        s, t = vote_features(patterns, self.alpha, self.kappa)
        if not np.any(s):
            warn_user(
                "labels: every calibration item's votes have a vote margin of 0 (only ties, "
                "or as many +1 as -1 votes), so the labels say nothing about the margin "
                "scale beta: it comes from its prior (even its sign), and so do predict()'s "
                "probabilities for items whose votes lean one way. Fix: calibration items "
                "whose votes lean one way.")
        return FitData(
            data={"margin_feature": s, "tie_feature": t, "label_counts": label_counts},
            # item ids on the observed data and the pointwise log-likelihood (LOO's
            # Pareto k per item), as the other models name theirs
            coords={"pattern": np.arange(len(patterns)),
                    "item": np.asarray(labels.items, dtype=object), "outcome": list(OUTCOMES)},
            # The vote counts go into observed_data too: compare() checks that fits
            # saw the same data, and labels alone do not identify a data set.
            observed={
                "label": (("item",), labels.values),
                "vote_counts": (("item", "outcome"), counts[:, ::-1]),  # -1, 0, +1
            },
            extra={"s": s[inverse], "t": t[inverse], "y_idx": y_idx, "pattern": inverse},
            observation={"outcome_space": "calibration label in {-1, 0, +1} of each item "
                                          "given its votes (categorical)"},
        )

    def _loo_data(self, fd: FitData, var: str, index) -> FitData:
        """``fd`` without calibration item(s) ``index`` (exact LOO / K-fold refits; same shapes)."""
        counts = fd.data["label_counts"].copy()
        index = np.atleast_1d(index)
        np.subtract.at(counts, (fd.extra["pattern"][index], fd.extra["y_idx"][index]), 1)
        return replace(fd, data={**fd.data, "label_counts": counts})

    def _build(self, fd: FitData) -> pm.Model:
        priors = self.resolved_priors()
        coords = {"pattern": fd.coords["pattern"], "outcome": list(OUTCOMES)}
        with pm.Model(coords=coords) as model:
            s = pm.Data("margin_feature", fd.data["margin_feature"], dims="pattern")
            t = pm.Data("tie_feature", fd.data["tie_feature"], dims="pattern")
            counts = pm.Data("label_counts", fd.data["label_counts"], dims=("pattern", "outcome"))
            beta = priors["margin_scale"].create("margin_scale")
            if self.tie == "global":
                eta = priors["tie_logit"].create("tie_logit") * pt.ones_like(s)
            else:
                eta = priors["tie_scale"].create("tie_scale") * t
            u = beta * s
            log_p = pt.special.log_softmax(pt.stack([-u, eta, u], axis=-1), axis=-1)
            # Weighted categorical log-likelihood of the calibration labels
            # (sum over items of log p(y_i | s_i, t_i), grouped by count pattern).
            # A Potential rather than pm.Multinomial: same argmax and posterior,
            # without the multinomial coefficients' gammaln terms, which made each
            # logp+gradient call ~40% slower (23 vs 16 us) in the split-refit loop.
            pm.Potential("calibration_loglik", (counts * log_p).sum())
        return model

    def _eta(self, params: dict[str, np.ndarray], t: np.ndarray) -> np.ndarray:
        value = np.asarray(params[self._tie_param])[..., None]
        return value if self.tie == "global" else value * t

    def _log_probs(self, params: dict[str, np.ndarray], s: np.ndarray, t: np.ndarray) -> np.ndarray:
        beta = np.asarray(params["margin_scale"])[..., None]
        return davidson_log_probs(beta * s, self._eta(params, t))

    def _pointwise_loglik(self, params, fd):
        x = fd.extra
        lp = self._log_probs(params, x["s"], x["t"])
        return {"label": np.take_along_axis(lp, x["y_idx"][None, None, :, None], axis=-1)[..., 0]}

    # -- public ----------------------------------------------------------------------
    def predict(self, votes: pd.DataFrame, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """Probabilities, MAE risks and the Bayes action for every voted item.

        Parameters
        ----------
        votes : pandas.DataFrame
            A votes table (``item``, ``vote``) or counts (``item``, ``n_pos``,
            ``n_tie``, ``n_neg``).
        ci_prob : float
            Mass of the equal-tailed credible intervals (NUTS fits).

        Returns
        -------
        pandas.DataFrame
            One row per item of ``votes`` (first-appearance order): ``p_neg``,
            ``p_tie``, ``p_pos`` (eq. 4; posterior means under NUTS),
            ``risk_neg``, ``risk_tie``, ``risk_pos`` (eq. 5, posterior-averaged
            under NUTS) and ``decision`` (eq. 6). NUTS fits add
            ``p_*_lower``/``p_*_upper``, the equal-tailed ``ci_prob`` interval.

        Notes
        -----
        Items with the same vote counts have the same prediction, so the
        posterior is evaluated once per distinct count pattern (with n votes
        there are at most (n+1)(n+2)/2), in chunks of patterns: memory grows
        with draws x patterns, never with draws x items.
        """
        self._check_fitted()
        self._check_options()
        check_ci_prob(ci_prob)
        counts = validate_votes(votes)
        patterns, inverse = _unique_rows(counts.counts)
        s, t = vote_features(patterns, self.alpha, self.kappa)
        draws = self.param_draws()
        n_draws = len(next(iter(draws.values())))
        nuts = self.method_ == "nuts"
        mean = np.empty((len(patterns), 3))
        lo = np.empty_like(mean) if nuts else None
        hi = np.empty_like(mean) if nuts else None
        step = max(1, _PREDICT_CHUNK // (3 * n_draws))
        for start in range(0, len(patterns), step):
            part = slice(start, start + step)
            probs = np.exp(self._log_probs(draws, s[part], t[part]))  # (draws, chunk, 3)
            mean[part] = probs.mean(axis=0)
            if nuts:
                lo[part], hi[part] = np.quantile(
                    probs, [(1 - ci_prob) / 2, (1 + ci_prob) / 2], axis=0)
        mean = mean[inverse]
        risks = mae_risks(mean)  # linear in p, so equal to the posterior-averaged risk
        out = pd.DataFrame(
            {"p_neg": mean[:, 0], "p_tie": mean[:, 1], "p_pos": mean[:, 2]}, index=counts.items
        )
        if nuts:
            lo, hi = lo[inverse], hi[inverse]
            for j, name in enumerate(("neg", "tie", "pos")):
                out[f"p_{name}_lower"] = lo[:, j]
                out[f"p_{name}_upper"] = hi[:, j]
        out["risk_neg"], out["risk_tie"], out["risk_pos"] = risks.T
        out["decision"] = bayes_action(risks)
        return out.reset_index()

    @classmethod
    def example_data(cls, random_seed: int = 0) -> ExampleData:
        """Votes of 60 items (5 samples each) and labels of the first 40.

        Simulated from eqs. 2-4 with ``margin_scale`` 2 and ``tie_logit`` -0.5:
        each item has a latent preference, its 5 votes are drawn from it, and
        its label from eq. 4 at the observed counts.
        """
        rng = np.random.default_rng(random_seed)
        n_items, n_votes = 60, 5
        latent = rng.dirichlet([1.0, 1.0, 1.0], size=n_items)  # p(+1), p(0), p(-1)
        counts = np.stack([rng.multinomial(n_votes, p) for p in latent])
        s, t = vote_features(counts)
        p = np.exp(davidson_log_probs(2.0 * s, -0.5))  # columns -1, 0, +1
        # Redraw until the 40 calibration labels hold every value (the fit needs
        # all three): conditioning on that event, unlike forcing three labels,
        # leaves the labels distributed as eq. 4 says (coverage tests use truth).
        while True:
            labels = (rng.random((n_items, 1)) > np.cumsum(p, axis=1)).sum(axis=1) - 1
            if set(labels[:40].tolist()) == {-1, 0, 1}:
                break
        items = [f"item-{i:03d}" for i in range(n_items)]
        votes = pd.DataFrame({"item": np.repeat(items, n_votes),
                              "vote": np.concatenate([np.repeat([1, 0, -1], c) for c in counts])})
        calibration = pd.DataFrame({"item": items[:40], "label": labels[:40]})
        return ExampleData(fit_args=(votes, calibration), predict_args=(votes,),
                           id_column="item", truth={"margin_scale": 2.0, "tie_logit": -0.5})

    def decision_map(self, n: int) -> pd.DataFrame:
        """Decision for every split of n votes (Figure 1 of the paper).

        Returns
        -------
        pandas.DataFrame
            Columns ``votes_a`` (c+), ``votes_b`` (c-), ``votes_tie``
            (n - c+ - c-), ``p_neg``, ``p_tie``, ``p_pos`` and ``decision``.
        """
        if int(n) != n or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        a, b = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
        keep = (a + b) <= n
        a, b = a[keep], b[keep]
        votes = pd.DataFrame(
            {"item": np.arange(a.size), "n_pos": a, "n_tie": n - a - b, "n_neg": b}
        )
        pred = self.predict(votes)
        return pd.DataFrame(
            {"votes_a": a, "votes_b": b, "votes_tie": n - a - b,
             "p_neg": pred["p_neg"], "p_tie": pred["p_tie"], "p_pos": pred["p_pos"],
             "decision": pred["decision"]}
        )


#: Elements of one (draws x patterns x 3) block in predict (~32 MB of float64).
_PREDICT_CHUNK = 2**22


def _unique_rows(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(counts, axis=0, return_inverse=True)`` for non-negative int counts.

    Same patterns (lexicographic order) and inverse, ~5x faster: rows are encoded as
    one int64 key and sorted once. ``np.unique(axis=0)`` was half of the time of a
    calibration-split MAP refit (benchmarks/bench_davidson_map.py).
    """
    b = int(counts.max()) + 1 if counts.size else 1
    if len(counts) == 0 or b > 2**20:  # key would overflow int64: take the general path
        patterns, inverse = np.unique(counts, axis=0, return_inverse=True)
        return patterns, inverse.ravel()
    key = (counts[:, 0] * b + counts[:, 1]) * b + counts[:, 2]
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    first = np.empty(len(key), dtype=bool)
    first[0] = True
    np.not_equal(sorted_key[1:], sorted_key[:-1], out=first[1:])
    inverse = np.empty(len(key), dtype=np.intp)
    inverse[order] = np.cumsum(first) - 1
    return counts[order[first]], inverse


def _check_calibration(labels: np.ndarray) -> None:
    if labels.size < 2:
        raise DataValidationError(
            f"the calibration set has {labels.size} labelled item(s); at least 2 are "
            f"needed (the paper uses ~5% of the data, typically 50+ items)."
        )
    missing = [v for v in (-1, 0, 1) if not (labels == v).any()]
    if missing:
        what = []
        if 0 in missing:
            what.append("without tie labels (0) the tie logit eta0 / tie scale gamma is "
                        "undetermined (its MLE is -infinity: ties would never be predicted)")
        if 1 in missing or -1 in missing:
            what.append("without both +1 and -1 labels the margin scale beta is fitted "
                        "from one side only and the symmetric model is not identified")
        raise DataValidationError(
            f"calibration labels never take the value(s) {missing}: " + "; ".join(what)
            + ". Add calibration items with those labels (a larger or stratified split)."
        )
