"""Preference distributions p*(x) from a few annotators per item: a hierarchical Beta-binomial.

Implements the target of Li, Li, Huang et al. (2025), "Judging with Confidence:
Calibrating Autoraters to Preference Distributions", arXiv:2510.00263 (section
2.1, Lemma 2): the population preference p*(x) = Pr[B better | x], of which the
paper's multi-annotator mean p-hat = k/m is an unbiased but noisy estimate
(variance p*(1 - p*)/m). Here the item preferences share a population
distribution whose mean and concentration are learned, so an item with one or
three annotators borrows strength from the others and gets a credible interval;
the noise-corrected alignment error E[(p - p*)^2] of a judge (section 2.2,
appendix C.1's MSE without its noise floor) is in
:mod:`~bayesjudge.models.preference.alignment`. :class:`TemperatureScaling`
(post-hoc recalibration, section 4 baselines) lives in
:mod:`~bayesjudge.models.preference.temperature`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from bayesjudge.base import CI_PROB, BayesianModel, ExampleData, FitData
from bayesjudge.data import DataValidationError, check_ci_prob, show_values
from bayesjudge.data.annotations import (
    OUTCOME_LABELS,
    AnnotationCounts,
    validate_annotations,
)
from bayesjudge.data.frames import as_pandas
from bayesjudge.engine import warn_user
from bayesjudge.models.preference.posterior import (
    beta_mixture_quantiles,
    dirichlet_multinomial_logpmf,
    log_multinomial_coefficient,
    unique_rows,
    warn_degenerate_intervals,
)
from bayesjudge.priors import Prior

__all__ = ["PreferenceDistribution"]

#: Above this many items the log-likelihood is stored per distinct count pattern
#: (items x draws would not fit in memory); PSIS-LOO then leaves out a pattern group.
POINTWISE_ITEM_LIMIT = 5000


class PreferenceDistribution(BayesianModel):
    r"""Hierarchical Beta-binomial (Dirichlet-multinomial with ties) of human preferences.

    Item i has m_i annotations with counts (k_A, k_tie, k_B). Without ties:

    .. math::

        p^*_i \sim \mathrm{Beta}(\mu\kappa, (1-\mu)\kappa), \qquad
        k_{B,i} \mid p^*_i \sim \mathrm{Binomial}(m_i, p^*_i)

    With ties, pi_i = (P(A), P(tie), P(B)) ~ Dirichlet(kappa * mu_vec) and the
    counts are multinomial, mu_vec = ((1 - tau)(1 - mu), tau, (1 - tau) mu):
    ``tie_mean`` tau is the mean tie probability and ``population_mean`` mu the
    mean share of B among non-ties (without ties, mu = E[p*]). The item
    preferences are integrated out: the likelihood is the Beta-binomial /
    Dirichlet-multinomial marginal of each *distinct* count pattern, so 100,000
    items cost as much as their few distinct patterns. Given the
    hyperparameters the item posterior is conjugate,

    .. math::

        p^*_i \mid k, \mu, \kappa \sim \mathrm{Beta}(\mu\kappa + k_B,\,(1-\mu)\kappa + k_A)

    and ``predict`` mixes it over the posterior of (mu, kappa) (NUTS) or plugs in
    the MAP (empirical Bayes). p-hat = k_B / m is unbiased with variance
    p*(1 - p*)/m (Lemma 2 of Li et al. 2025); the posterior mean shrinks it
    toward mu by the weight kappa / (kappa + m).

    Parameters
    ----------
    ties : {"auto", True, False}
        Model ties as a third category (``"auto"``: when any annotator chose
        tie). With False a tie label is an error.
    priors : None, "flat" or dict
        Overrides of the defaults by name::

            population_mean   Prior('Beta', alpha=1, beta=1)       mu, scalar
            tie_mean          Prior('Beta', alpha=1, beta=1)       tau, scalar (ties)
            concentration     Prior('Gamma', alpha=1.5, beta=0.1)  kappa, scalar
            item_preference   Prior('Uniform', lower=0, upper=1)   priors="flat" only

        ``priors="flat"`` switches the population off: every distinct count
        pattern gets its own p* with a uniform prior (Beta(1, 1); Dirichlet(1, 1, 1)
        with ties), the variable ``item_preference`` (dims ``pattern``, plus
        ``outcome`` with ties). Its MAP is the maximum-likelihood estimate, the
        paper's p-hat = k/m, exactly; its posterior is Beta(1 + k_B, 1 + k_A).
        (Flat priors on mu and kappa instead would give the marginal MLE of the
        population, which still shrinks: "flat" means no pooling.)
    random_seed : int
        Seeds NUTS and the Laplace draws.

    Examples
    --------
    >>> import pandas as pd
    >>> ann = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4],
    ...                     "annotator": ["u", "v", "w"] * 3 + ["u"],
    ...                     "label": ["B", "B", "A", "A", "A", "A", "B", "B", "B", "B"]})
    >>> pred = PreferenceDistribution(priors="flat").fit(ann).predict()
    >>> pred["p_b"].round(3).tolist()
    [0.667, 0.0, 1.0, 1.0]
    """

    default_priors = {
        "population_mean": Prior("Beta", alpha=1, beta=1),
        "tie_mean": Prior("Beta", alpha=1, beta=1),
        "concentration": Prior("Gamma", alpha=1.5, beta=0.1),
        "item_preference": Prior("Uniform", lower=0, upper=1, dims="pattern"),
    }

    def __init__(
        self,
        ties: Literal["auto"] | bool = "auto",
        priors: None | str | dict = None,
        random_seed: int | None = 0,
    ):
        self.ties = ties
        self.priors = priors
        self.random_seed = random_seed

    # -- options ------------------------------------------------------------------
    @property
    def _flat(self) -> bool:
        return isinstance(self.priors, str) and self.priors == "flat"

    def _check_options(self) -> None:
        if self.ties not in ("auto", True, False):
            raise ValueError(f"ties must be 'auto', True or False, got {self.ties!r}")

    def _ternary(self) -> bool:
        """Ties modelled (resolved against the fitted data for ``ties="auto"``)."""
        if self.ties == "auto":
            state = getattr(self, "_ternary_fitted", None)
            return bool(state) if state is not None else False
        return bool(self.ties)

    def _prior_names(self) -> tuple[str, ...]:
        self._check_options()
        if self._flat:
            return ("item_preference",)
        names = ("population_mean", "concentration")
        return names[:1] + ("tie_mean",) + names[1:] if self._ternary() else names

    def _flat_priors(self) -> dict[str, Prior]:
        # "flat" switches the population off (see the class docstring): only the
        # per-pattern uniform prior is used, the other names are never resolved.
        flat = {k: Prior("Flat") for k in self.default_priors}
        flat["item_preference"] = Prior("Uniform", lower=0, upper=1, dims="pattern")
        return flat

    @property
    def _summary_vars(self) -> tuple[str, ...]:
        return tuple(n for n in self._prior_names())

    def _state(self) -> dict:
        return {"ternary": self._ternary()}

    def _set_state(self, state: dict) -> None:
        self._ternary_fitted = bool(state["ternary"])

    # -- data ---------------------------------------------------------------------
    def _prepare(self, annotations: pd.DataFrame | AnnotationCounts) -> FitData:
        self._check_options()
        ac = validate_annotations(annotations, allow_ties=self.ties is not False)
        self._ternary_fitted = ac.has_ties if self.ties == "auto" else bool(self.ties)
        self.resolved_priors()
        counts = ac.counts if self._ternary_fitted else ac.counts[:, [0, 2]]
        patterns, inverse = unique_rows(counts)
        weight = np.bincount(inverse, minlength=len(patterns)).astype(float)
        if not self._flat and counts.sum(1).max() <= 1:
            warn_user(
                "annotations: every item has one annotation, and a single label per item says "
                "nothing about how annotators disagree on an item: the concentration is not "
                "identified, so it and every item's p* interval come from its prior "
                "(summarize() shows the prior). Fix: a second annotation on some items.")
        per_item = len(ac) <= POINTWISE_ITEM_LIMIT
        dim = "item" if per_item else "pattern"
        rows = counts if per_item else patterns
        observed = {
            "preference": ((dim,), rows[:, -1]),  # k_B: the log-likelihood's unit
            "annotation_counts": ((dim, "outcome"), rows),
        }
        if not per_item:
            observed["pattern_weight"] = (("pattern",), weight)
        coords = {"pattern": np.arange(len(patterns)),
                  "outcome": list(OUTCOME_LABELS if self._ternary_fitted else ("A", "B"))}
        if per_item:
            coords["item"] = ac.items.to_numpy()
        return FitData(
            data={"pattern_counts": patterns.astype(float), "pattern_weight": weight,
                  "log_coefficient": log_multinomial_coefficient(patterns)},
            coords=coords,
            observed=observed,
            # flat priors: one parameter per pattern, so the pattern count is structural
            shape_key=(self._ternary_fitted, len(patterns) if self._flat else None),
            extra={"counts": ac.counts, "items": ac.items, "patterns": patterns,
                   "inverse": inverse, "per_item": per_item},
            observation={"outcome_space": "annotators' label counts of each item (multinomial "
                                          "over {%s})" % ", ".join(coords["outcome"])},
        )

    def _alpha_tensor(self, priors: dict[str, Prior]):
        mu = priors["population_mean"].create("population_mean")
        kappa = priors["concentration"].create("concentration")
        if not self._ternary():
            return pt.stack([(1 - mu) * kappa, mu * kappa])
        tau = priors["tie_mean"].create("tie_mean")
        return pt.stack([(1 - tau) * (1 - mu) * kappa, tau * kappa, (1 - tau) * mu * kappa])

    def _build(self, fd: FitData) -> pm.Model:
        priors = self.resolved_priors()
        coords = {"pattern": fd.coords["pattern"], "outcome": fd.coords["outcome"]}
        with pm.Model(coords=coords) as model:
            k = pm.Data("pattern_counts", fd.data["pattern_counts"], dims=("pattern", "outcome"))
            w = pm.Data("pattern_weight", fd.data["pattern_weight"], dims="pattern")
            coef = pm.Data("log_coefficient", fd.data["log_coefficient"], dims="pattern")
            if self._flat:
                if self._ternary():
                    pi = pm.Dirichlet("item_preference", a=np.ones(3), dims=("pattern", "outcome"))
                else:
                    p_b = priors["item_preference"].create("item_preference", dims="pattern")
                    pi = pt.stack([1 - p_b, p_b], axis=-1)
                # Weight 1, not the pattern's item count: item_preference is the p* of
                # any one item with this pattern (items are not pooled), so its
                # posterior is Beta(1 + k_B, 1 + k_A), not that of w items' labels.
                pm.Potential("annotation_loglik", (coef + (k * pt.log(pi)).sum(-1)).sum())
                return model
            else:
                alpha = self._alpha_tensor(priors)
                total = alpha.sum()
                loglik = (coef + pt.gammaln(total) - pt.gammaln(k.sum(-1) + total)
                          + (pt.gammaln(k + alpha) - pt.gammaln(alpha)).sum(-1))
            # Each distinct pattern's marginal log-likelihood times its number of items.
            pm.Potential("annotation_loglik", (w * loglik).sum())
        return model

    def fit(self, *args, **kwargs):  # noqa: D102 (BayesianModel.fit)
        super().fit(*args, **kwargs)
        if self._flat and self.map_ is not None:  # the optimum k / m exactly: 0 stays 0
            k = np.asarray(self._fit_data.data["pattern_counts"], dtype=float)
            p = k / k.sum(-1, keepdims=True)
            self.map_["item_preference"] = p if self._ternary() else p[:, -1]
        return self

    fit.__doc__ = BayesianModel.fit.__doc__

    def _map_starts(self, fd: FitData, engine) -> list[np.ndarray | None]:
        if not self._flat:
            return [None]
        # Start at the closed-form optimum k/m, 1e-12 inside the simplex (logit +-27.6 <
        # 30): the optimiser confirms it instead of crawling to a boundary MLE (p* = 0, 1).
        k = fd.data["pattern_counts"]
        p = np.clip(k / k.sum(-1, keepdims=True), 1e-12, None)
        p = p / p.sum(-1, keepdims=True)
        model = engine.model
        rv = model["item_preference"]
        value = p if self._ternary() else p[:, -1]
        x = model.rvs_to_transforms[rv].forward(value, *rv.owner.inputs).eval()
        start = engine.x0.copy()
        start[engine.value_slices()[model.rvs_to_values[rv].name]] = np.ravel(x)
        return [start]

    def _alpha(self, params: dict[str, np.ndarray]) -> np.ndarray:
        """Dirichlet parameters with leading sample axes, last axis = outcome."""
        if self._flat:
            return np.ones((1, 3 if self._ternary() else 2))
        mu = np.asarray(params["population_mean"], float)[..., None]
        kappa = np.asarray(params["concentration"], float)[..., None]
        if not self._ternary():
            return np.concatenate([(1 - mu) * kappa, mu * kappa], axis=-1)
        tau = np.asarray(params["tie_mean"], float)[..., None]
        return np.concatenate([(1 - tau) * (1 - mu) * kappa, tau * kappa,
                               (1 - tau) * mu * kappa], axis=-1)

    def _pointwise_loglik(self, params, fd):
        patterns, x = fd.extra["patterns"], fd.extra
        if self._flat:
            pi = np.asarray(params["item_preference"], float)
            if not self._ternary():
                pi = np.stack([1 - pi, pi], axis=-1)
            with np.errstate(divide="ignore", invalid="ignore"):
                terms = np.where(patterns > 0, patterns * np.log(pi), 0.0)
            ll = log_multinomial_coefficient(patterns) + terms.sum(-1)
        else:
            alpha = self._alpha(params)[..., None, :]
            ll = dirichlet_multinomial_logpmf(patterns, alpha)
        if x["per_item"]:
            return {"preference": ll[..., x["inverse"]]}
        return {"preference": ll * fd.data["pattern_weight"]}

    # -- predictions ----------------------------------------------------------------
    def _posterior_params(self, patterns: np.ndarray, laplace: bool = False) -> np.ndarray:
        """Dirichlet posterior parameters per pattern and draw: shape (P, S, outcomes)."""
        if laplace and self.method_ == "map" and not self._flat:
            post = self.idata_["posterior"].to_dataset()  # Laplace draws of the hyperparameters
            draws = {k: post[k].values.reshape(-1) for k in self._prior_names()}
        else:
            draws = self.param_draws()
        alpha = self._alpha(draws)  # (S, K)
        return patterns[:, None, :] + alpha[None, :, :]

    def annotation_counts(self) -> AnnotationCounts:
        """The fitted items and their counts (k_A, k_tie, k_B), first-appearance order."""
        self._check_fitted()
        state = self._fit_data_or_state()
        return AnnotationCounts(state["items"], state["counts"])

    def posterior_beta(
        self, counts: np.ndarray, outcome: Literal["B", "tie"] = "B", *, laplace: bool = False
    ):
        """Beta parameters of P(outcome) for count rows, one column per posterior draw.

        Given the hyperparameters (draw s) the posterior of an item with counts
        k = (k_A, k_tie, k_B) is Dirichlet(alpha_s + k), whose component j is
        Beta(alpha_sj + k_j, sum(alpha_s) + m - alpha_sj - k_j).

        Returns
        -------
        a, b : ndarray, shape (len(counts), n_draws)
            One draw for MAP fits (the MAP; the flat model: alpha = 1), unless
            ``laplace=True``: then the Laplace-approximation draws of the
            hyperparameters (``idata_``), so their uncertainty is mixed in.
        """
        self._check_fitted()
        counts = np.asarray(counts, dtype=np.int64)
        if outcome not in ("B", "tie") or (outcome == "tie" and not self._ternary()):
            raise ValueError(f"outcome must be 'B' (or 'tie' for a model with ties), got "
                             f"{outcome!r}")
        model_counts = counts if self._ternary() else counts[:, [0, 2]]
        post = self._posterior_params(model_counts, laplace=laplace)
        a = post[..., -1] if outcome == "B" else post[..., 1]
        return a, post.sum(-1) - a

    def _select(self, items) -> tuple[pd.Index, np.ndarray]:
        fd = self._fit_data_or_state()
        known = fd["items"]
        if items is None:
            return known, np.arange(len(known))
        items = as_pandas(items)
        if isinstance(items, pd.DataFrame):
            if "item" not in items.columns:
                raise DataValidationError(
                    f"items has no 'item' column (columns {list(items.columns)}); pass a "
                    f"table with an item column, or a list of item ids.")
            items = items["item"]
        one = isinstance(items, (str, bytes)) or not np.iterable(items)  # "07": one item
        wanted = pd.Index(pd.unique(pd.Series([items] if one else list(items), dtype=object)))
        pos = known.get_indexer(wanted)
        if (pos < 0).any():
            raise DataValidationError(
                f"items {show_values(wanted[pos < 0].tolist())} were not in the fitted "
                f"annotations; p* is estimated only for annotated items (refit with them).")
        return wanted, pos

    def _fit_data_or_state(self) -> dict:
        fd = getattr(self, "_fit_data", None)
        if fd is not None:
            return {"items": fd.extra["items"], "counts": fd.extra["counts"]}
        obs = self.idata_["observed_data"].to_dataset()
        if "item" not in obs["annotation_counts"].dims:
            raise DataValidationError(
                f"this fit of more than {POINTWISE_ITEM_LIMIT} items was saved per count "
                f"pattern, without item ids; refit on the annotations to predict per item.")
        # A loaded fit: rebuild the items' counts from the stored observed data.
        return {"items": pd.Index(obs["annotation_counts"]["item"].values, name="item"),
                "counts": _expand(obs["annotation_counts"].values, self._ternary())}

    def predict(
        self, items: pd.DataFrame | Sequence | None = None, *, ci_prob: float = CI_PROB
    ) -> pd.DataFrame:
        """p* per item with equal-tailed credible intervals.

        Parameters
        ----------
        items : DataFrame with an ``item`` column, sequence of ids, or None
            Which fitted items to report (first-appearance order); None: all.
        ci_prob : float
            Mass of the equal-tailed intervals.

        Returns
        -------
        pandas.DataFrame
            ``item, k_a, k_tie, k_b, m, p_hat`` (= k_B / m, the paper's multi-annotator
            mean of 1{B better}, the raw counterpart of ``p_b``; the alignment metrics'
            target, :func:`~bayesjudge.metrics.reference_labels`, counts a tie as half
            a B vote instead), ``p_b`` (P(B better)),
            ``p_b_lower``, ``p_b_upper`` and, with ties, ``p_tie`` with its interval.
            ``p_b`` is the posterior mean (MAP fits: at the MAP hyperparameters,
            an empirical-Bayes interval); under ``priors="flat"`` a MAP fit reports
            the MAP of p*, i.e. k/m, with the interval of its Beta(1 + k_B, 1 + k_A)
            posterior.
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        wanted, pos = self._select(items)
        counts = self._fit_data_or_state()["counts"][pos]
        ternary = self._ternary()
        model_counts = counts if ternary else counts[:, [0, 2]]
        patterns, inverse = unique_rows(model_counts)
        post = self._posterior_params(patterns)  # (P, S, K)
        total = post.sum(-1)
        q = ((1 - ci_prob) / 2, (1 + ci_prob) / 2)
        out = pd.DataFrame({"item": wanted.to_numpy(), "k_a": counts[:, 0],
                            "k_tie": counts[:, 1], "k_b": counts[:, 2]})
        out["m"] = counts.sum(1)
        out["p_hat"] = counts[:, 2] / out["m"].to_numpy()
        cols = [("b", post.shape[-1] - 1)] + ([("tie", 1)] if ternary else [])
        for name, j in cols:
            a = post[..., j]
            mean = (a / total).mean(-1)
            if self._flat and self.method_ == "map":  # the MAP k / m (as map_, exactly)
                mean = patterns[:, j] / patterns.sum(-1)
            lo, hi = beta_mixture_quantiles(a, total - a, q)
            out[f"p_{name}"] = mean[inverse]
            out[f"p_{name}_lower"] = lo[inverse]
            out[f"p_{name}_upper"] = hi[inverse]
        if self.method_ == "map":
            warn_degenerate_intervals(out, [name for name, _ in cols])
        return out

    @classmethod
    def example_data(cls, random_seed: int = 0) -> ExampleData:
        """80 items, 1-4 annotators each, p* from Beta(2 * 0.6, 2 * 0.4) (mu 0.6, kappa 2)."""
        rng = np.random.default_rng(random_seed)
        n_items = 80
        p_star = rng.beta(1.2, 0.8, size=n_items)
        m = rng.integers(1, 5, size=n_items)
        rows = [(f"item-{i:03d}", f"rater-{j}", "B" if rng.random() < p_star[i] else "A")
                for i in range(n_items) for j in range(m[i])]
        ann = pd.DataFrame(rows, columns=["item", "annotator", "label"])
        return ExampleData(fit_args=(ann,), predict_args=(ann,), id_column="item",
                           truth={"population_mean": 0.6, "concentration": 2.0})


def _expand(stored: np.ndarray, ternary: bool) -> np.ndarray:
    stored = np.asarray(stored, dtype=np.int64)
    if ternary:
        return stored
    return np.stack([stored[:, 0], np.zeros(len(stored), np.int64), stored[:, 1]], axis=1)
