"""Temperature scaling of a probabilistic judge, Bayesian and swap-aware.

The post-hoc calibration baseline of Li, Li, Huang et al. (2025), "Judging with
Confidence: Calibrating Autoraters to Preference Distributions", arXiv:2510.00263
(section 4, calibration baselines; Guo et al. 2017): a judge's probability p of
"B better" is recalibrated as sigmoid((logit p - b)/T). Fitted on hard labels it
is the usual NLL fit; fitted on the counts of m annotators it calibrates the judge
to the preference distribution p* itself (section 2.1, the paper's thesis), and
with the swapped prompt's P(A better) it fits both orders jointly, so the bias b
measures positional bias (section 5.2).

Certainties. A log-probability judge reports exact 0 and 1 (the probability of the
other verdict underflows). No finite logit stands for them, and clipping them to a
constant makes T follow the constant (PandaLM GPT-3.5 counts: T = 6.5 / 9.7 / 19.3 at
clips 1e-4 / 1e-6 / 1e-12). An exact 0 or 1 is therefore its own category: its
calibrated probability is a parameter of its own, and T and b are fitted on the
finite outputs only (the rounding selects rows on the judge's output, not on the
label, so this conditional likelihood is exact).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
from scipy import special

from bayesjudge.base import CI_PROB, BayesianModel, ExampleData, FitData
from bayesjudge.data import (
    DataValidationError,
    check_ci_prob,
    check_unit_interval,
    show_values,
)
from bayesjudge.data.annotations import (
    calibration_targets,
    separated,
    validate_judge_outputs,
)
from bayesjudge.engine.messages import warn_user
from bayesjudge.priors import Prior

__all__ = ["CERTAINTIES", "TemperatureScaling"]

#: Parameter of each certainty category: the calibrated probability of an output of
#: exactly 1 / exactly 0 (of the event the output is about).
CERTAINTIES = {1.0: "calibrated_one", 0.0: "calibrated_zero"}
_PREDICT_CHUNK = 2_000_000  # draws x rows per block of predict


def _logit(p: np.ndarray) -> np.ndarray:
    """logit p for 0 < p < 1; the certainties are set to 0 (their rows carry no weight)."""
    p = np.asarray(p, dtype=float)
    return special.logit(np.where((p == 0) | (p == 1), 0.5, p))


class TemperatureScaling(BayesianModel):
    r"""Bayesian temperature scaling of a judge's P(B better), optionally with a bias.

    .. math::

        \tilde p = \sigma\!\left(\frac{\operatorname{logit} p - b}{T}\right), \qquad
        T = e^{\log T} > 0

    (b = 0 unless ``bias=True``). Each judged item contributes
    ``s ~ Binomial(n, p~)``: with hard labels (``item, label``; label A / B, or
    1 = B better and 0 = A better; an item labelled tie is left out) n = 1 and
    the MAP with ``priors="flat"`` is the usual NLL temperature fit; with an
    annotations table (``item, annotator, label``)
    s = k_B of n = k_A + k_B annotators (tie annotations are left out, as the
    paper leaves tie-labelled items out of calibration), which calibrates the
    judge to the preference distribution p* rather than to a majority label.
    With a ``prob_swapped`` column (P(A better) from the prompt with A and B
    swapped) each row adds ``s' = n - s ~ Binomial(n, p~')`` with p~' the same map
    applied to prob_swapped: one T and one b for both orders, so b is the
    judge's pull toward whichever response is shown second (a positional bias,
    identified by the swap even without labels' help).

    Outputs of exactly 1 or 0 (a log-probability judge's certainties, which have no
    finite logit) are a category of their own: ``calibrated_one`` = P(event | output
    exactly 1) and ``calibrated_zero`` = P(event | output exactly 0) (event: B better,
    or A better for ``prob_swapped``), each with a Beta prior and its exact conjugate
    Beta posterior (the likelihood factorises: these rows say nothing about T and b,
    which are fitted on the finite outputs only, so no clip constant enters the fit).
    ``summarize`` and ``predict`` report them when the data have such outputs;
    ``predict`` gives a certainty the fit never saw its category's prior (with a
    warning): nothing in the data says how often it is right. When every finite
    output is 0.5 (hard verdicts with ties: logit 0 whatever T), T's posterior is its
    prior (a warning; ``priors="flat"`` raises).

    Parameters
    ----------
    bias : bool
        Fit the bias b (``bias``); otherwise b = 0.
    priors : None, "flat" or dict
        Overrides of the defaults by name::

            log_temperature  Prior('Normal', mu=0, sigma=1.5)   log T, scalar
            bias             Prior('Normal', mu=0, sigma=2)     b, scalar (bias=True)
            calibrated_one   Prior('Beta', alpha=1, beta=1)     P(event | p = 1), scalar
            calibrated_zero  Prior('Beta', alpha=1, beta=1)     P(event | p = 0), scalar

        ``"flat"``: improper flat priors on log T and b, MAP = maximum likelihood
        (the certainties keep Beta(1, 1), whose mode is the MLE). The certainty
        priors must be Beta (conjugate).
    random_seed : int
        Seeds NUTS and the Laplace draws.

    Attributes
    ----------
    map_ : dict
        MAP of ``log_temperature``, ``temperature`` (and ``bias``; and the
        certainties' posterior modes, where the data have them).

    Examples
    --------
    >>> import pandas as pd
    >>> out = pd.DataFrame({"item": list("abcdef"), "prob": [0.9, 0.8, 0.3, 0.99, 0.1, 0.6]})
    >>> lab = pd.DataFrame({"item": list("abcdef"), "label": [1, 0, 0, 1, 0, 1]})
    >>> ts = TemperatureScaling(priors="flat").fit(out, lab)
    >>> bool(ts.map_["temperature"] > 1)   # over-confident judge: T > 1 softens it
    True
    """

    _map_newton = True  # one or two parameters: see bayesjudge.engine.optim

    default_priors = {
        "log_temperature": Prior("Normal", mu=0, sigma=1.5),
        "bias": Prior("Normal", mu=0, sigma=2),
        "calibrated_one": Prior("Beta", alpha=1, beta=1),
        "calibrated_zero": Prior("Beta", alpha=1, beta=1),
    }

    def __init__(self, bias: bool = False, priors: None | str | dict = None,
                 random_seed: int | None = 0):
        self.bias = bias
        self.priors = priors
        self.random_seed = random_seed

    def _check_options(self) -> None:
        if not isinstance(self.bias, (bool, np.bool_)):
            raise ValueError(f"bias must be True or False, got {self.bias!r}")

    def _prior_names(self) -> tuple[str, ...]:
        self._check_options()
        return (("log_temperature", "bias") if self.bias else ("log_temperature",)) + tuple(
            CERTAINTIES.values())

    def _flat_priors(self) -> dict[str, Prior]:
        flat = {k: Prior("Flat") for k in ("log_temperature", "bias")}
        return {**flat, **{k: Prior("Beta", alpha=1, beta=1) for k in CERTAINTIES.values()}}

    @property
    def _summary_vars(self) -> tuple[str, ...]:
        # the certainties join once fitted (NUTS diagnostics concern the graph's T and b)
        certain = tuple(k for k in CERTAINTIES.values() if k in getattr(self, "_certain", {})
                        and getattr(self, "_certain_ready", False))
        return (("temperature", "bias") if self.bias else ("temperature",)) + certain

    def _beta_posterior(self, name: str) -> tuple[float, float]:
        prior = self.resolved_priors()[name]
        if prior.dist != "Beta" or set(prior.params) != {"alpha", "beta"}:
            raise ValueError(f"priors[{name!r}] must be Prior('Beta', alpha=..., beta=...) "
                             f"(conjugate), got {prior!r}.")
        succ, trials = self._certain.get(name, (0.0, 0.0))  # unseen: the prior
        return prior.params["alpha"] + succ, prior.params["beta"] + trials - succ

    def fit(self, *args, **kwargs):  # noqa: D102 (BayesianModel.fit)
        self._certain_ready = False
        super().fit(*args, **kwargs)
        for name in self._certain if self.map_ is not None else ():
            a, b = self._beta_posterior(name)
            self.map_[name] = np.asarray(min(max((a - 1) / (a + b - 2), 0.0), 1.0)
                                         if a + b > 2 else a / (a + b))
        self._certain_ready = True
        return self

    fit.__doc__ = BayesianModel.fit.__doc__

    def _posterior(self):
        post = super()._posterior()
        missing = [k for k in self._certain if k not in post]
        if missing:  # exact conjugate draws, independent of T and b a posteriori
            rng = np.random.default_rng(self.random_seed)
            shape = (post.sizes["chain"], post.sizes["draw"])
            post = post.assign({k: (("chain", "draw"), rng.beta(*self._beta_posterior(k),
                                                                 size=shape))
                                for k in missing})
            self._post = post
        return post

    def _state(self):
        return {"certain": {k: list(map(float, v)) for k, v in self._certain.items()},
                "judge": [self._judge]}

    def _set_state(self, state):
        self._judge = state.get("judge", [None])[0]  # (saved before 2026-11-28: unknown)
        self._certain = {k: tuple(v) for k, v in state.get("certain", {}).items()}
        self._certain_ready = True

    # -- data -----------------------------------------------------------------------
    def _prepare(self, outputs, labels) -> FitData:
        self._check_options()
        self.resolved_priors()
        out = validate_judge_outputs(outputs)
        if out.judge is not None and len(pd.unique(out.judge)) > 1:
            raise DataValidationError(
                f"judge outputs holds {len(pd.unique(out.judge))} judges "
                f"{list(pd.unique(out.judge))[:5]}; a temperature belongs to one judge. Fit "
                f"one TemperatureScaling per judge (outputs[outputs.judge == name]).")
        # the judge a temperature belongs to: predict refuses another judge's outputs
        judge = None if out.judge is None else pd.unique(out.judge)[0]
        self._judge = judge.item() if isinstance(judge, np.generic) else judge
        success, trials = calibration_targets(out, labels)
        x = [_logit(out.prob)]
        s, n = [success], [trials]
        order = [np.zeros(len(out), np.int64)]
        rows = [np.arange(len(out))]
        if out.prob_swapped is not None:
            has = ~np.isnan(out.prob_swapped)
            x.append(_logit(out.prob_swapped[has]))
            s.append(trials[has] - success[has])  # the swapped prompt's event is "A better"
            n.append(trials[has])
            order.append(np.ones(int(has.sum()), np.int64))
            rows.append(np.flatnonzero(has))
        raw = np.concatenate([out.prob] + ([out.prob_swapped[has]]
                                           if out.prob_swapped is not None else []))
        x, s, n = np.concatenate(x), np.concatenate(s), np.concatenate(n)
        keep = n > 0
        x, s, n, raw = x[keep], s[keep], n[keep], raw[keep]
        finite = (raw > 0) & (raw < 1)
        if not finite.any():
            raise DataValidationError(
                "outputs.prob: every judge probability is exactly 0 or 1, so there is no "
                "temperature to fit (certainties are calibrated as their own category). Fix: "
                "pass the judge's unrounded probabilities (e.g. from its logprobs).")
        if not np.any(x[finite]):  # logit 0.5 = 0: (x - b) / T is the same for every T
            msg = ("outputs.prob: the only outputs besides exact 0 / 1 are 0.5 (e.g. hard "
                   "verdicts with ties), whose logit 0 carries no information on T")
            if self.priors == "flat":
                raise DataValidationError(msg + "; under priors='flat' T has no maximum. Fix: "
                                          "pass unrounded probabilities, or default priors.")
            warn_user(msg + ": its posterior is its prior. The exact 0 / 1 outputs are "
                      "calibrated by their own categories.")
        if self.priors == "flat" and separated(x[finite], s[finite], n[finite], self.bias):
            raise DataValidationError(  # T -> 0: no finite maximum-likelihood T
                f"outputs.prob: {'a threshold' if self.bias else '1/2'} splits the labels A from "
                "B: under priors='flat' T has no maximum. Fix: default priors, or more items.")
        # The certainties' counts: their Beta posteriors are exact (see the class docstring).
        self._certain = {name: (float(s[raw == value].sum()), float(n[raw == value].sum()))
                         for value, name in CERTAINTIES.items() if (raw == value).any()}
        for name in self._certain:
            self._beta_posterior(name)  # a non-Beta prior fails before compiling
        items = out.items[np.concatenate(rows)[keep]]
        obs_order = np.concatenate(order)[keep]
        category = np.where(finite, 0, np.where(raw == 1, 1, -1)).astype(np.int64)
        return FitData(
            # the graph sees the finite outputs only: a certain row has no trials there
            data={"judge_logit": x, "successes": np.where(finite, s, 0).astype(float),
                  "trials": np.where(finite, n, 0).astype(float)},
            coords={"obs": np.arange(len(x))},
            observed={"successes": (("obs",), s), "trials": (("obs",), n),
                      "judge_logit": (("obs",), np.where(finite, x, special.logit(raw))),
                      "swapped": (("obs",), obs_order), "certainty": (("obs",), category)},
            extra={"x": x, "s": s, "n": n, "items": items, "category": category,
                   "log_binom": special.gammaln(n + 1) - special.gammaln(s + 1)
                   - special.gammaln(n - s + 1)},
            observation={"outcome_space": "count of 'B better' (swapped: 'A better') among the "
                                          "non-tie annotations or the label of each judged row, "
                                          "given the judge's output (binomial)"},
        )

    def _build(self, fd: FitData) -> pm.Model:
        priors = self.resolved_priors()
        with pm.Model(coords={"obs": fd.coords["obs"]}) as model:
            x = pm.Data("judge_logit", fd.data["judge_logit"], dims="obs")
            s = pm.Data("successes", fd.data["successes"], dims="obs")
            n = pm.Data("trials", fd.data["trials"], dims="obs")
            log_t = priors["log_temperature"].create("log_temperature")
            pm.Deterministic("temperature", pt.exp(log_t))
            b = priors["bias"].create("bias") if self.bias else 0.0
            z = (x - b) * pt.exp(-log_t)
            # Binomial log-likelihood without the constant log C(n, s) (same mode and
            # posterior): s log sigma(z) + (n - s) log sigma(-z) = s z - n softplus(z),
            # one softplus per row (the transcendental functions are the whole cost).
            pm.Potential("calibration_loglik", (s * z - n * pt.softplus(z)).sum())
        return model

    def _z(self, params, x):
        log_t = np.asarray(params["log_temperature"], float)[..., None]
        b = np.asarray(params["bias"], float)[..., None] if self.bias else 0.0
        return (x - b) * np.exp(-log_t)

    def _pointwise_loglik(self, params, fd):
        e = fd.extra
        z = self._z(params, e["x"])
        ll = e["log_binom"] + e["s"] * z - e["n"] * np.logaddexp(0, z)
        for value, name in CERTAINTIES.items():
            rows = e["category"] == (1 if value == 1 else -1)
            if rows.any():
                q = np.asarray(params[name], float)[..., None]
                ll[..., rows] = (e["log_binom"][rows] + special.xlogy(e["s"][rows], q)
                                 + special.xlog1py(e["n"][rows] - e["s"][rows], -q))
        return {"successes": ll}

    # -- public -----------------------------------------------------------------------
    def transform(self, prob) -> np.ndarray:
        """Calibrated probabilities of an array of P(B better) (posterior mean under NUTS)."""
        self._check_fitted()
        p = check_unit_interval(prob, "prob", "Pass probabilities.")
        return self._calibrate(p.ravel(), ci_prob=None)[0].reshape(p.shape)

    def _calibrate(self, p: np.ndarray, ci_prob: float | None):
        draws = self.param_draws()
        x = _logit(p)
        certain = {value: p == value for value in CERTAINTIES}
        n_draws = len(draws["log_temperature"])
        unseen = [v for v, rows in certain.items()
                  if rows.any() and CERTAINTIES[v] not in draws]
        if unseen:
            priors = {CERTAINTIES[v]: self._beta_posterior(CERTAINTIES[v]) for v in unseen}
            warn_user(
                f"prob holds exact {unseen} but the fit saw no such output: their calibrated "
                f"probability is their category's prior ("
                f"{', '.join(f'{k}: Beta({a:g}, {b:g})' for k, (a, b) in priors.items())}; "
                f"Beta(1, 1) is 0.5 with a 95% interval [0.025, 0.975]). Fit on data with such "
                f"outputs to calibrate them.")
            rng = np.random.default_rng(self.random_seed)
            draws = dict(draws)
            for v in unseen:
                draws[CERTAINTIES[v]] = rng.beta(*priors[CERTAINTIES[v]], size=n_draws)
        if n_draws == 1:
            # MAP: an exact 0 / 1 gets its category's posterior mean a / (a + b), the exact
            # predictive P(event | output), not the Beta mode s / n, which is 0 or 1 when every
            # such output was wrong or right (a calibrated probability of 0: infinite log loss)
            draws = dict(draws)
            for v, rows in certain.items():
                if rows.any():
                    a, b = self._beta_posterior(CERTAINTIES[v])
                    draws[CERTAINTIES[v]] = np.full(1, a / (a + b))
        mean = np.empty(len(x))
        lo = np.empty(len(x)) if ci_prob is not None and n_draws > 1 else None
        hi = np.empty(len(x)) if lo is not None else None
        step = max(1, _PREDICT_CHUNK // n_draws)
        for start in range(0, len(x), step):
            part = slice(start, start + step)
            prob = special.expit(self._z(draws, x[part]))  # (draws, chunk)
            for value, rows in certain.items():
                hit = rows[part]
                if hit.any():
                    prob[:, hit] = np.asarray(draws[CERTAINTIES[value]], float)[:, None]
            mean[part] = prob.mean(0)
            if lo is not None:
                lo[part], hi[part] = np.quantile(prob, [(1 - ci_prob) / 2, (1 + ci_prob) / 2],
                                                 axis=0)
        return mean, lo, hi

    def predict(self, outputs: pd.DataFrame, *, ci_prob: float = CI_PROB) -> pd.DataFrame:
        """Calibrated probabilities for every row of a judge-outputs table (input order,
        with the input's index).

        Returns
        -------
        pandas.DataFrame
            ``item`` (and ``judge``), ``prob``, ``prob_calibrated`` (posterior mean;
            MAP fits: at the MAP, except an exact 0 / 1 output, which gets its category's
            exact posterior mean: the Beta mode s / n would be 0 or 1) and, for NUTS
            fits, ``prob_calibrated_lower`` / ``_upper`` (equal-tailed ``ci_prob``). With
            ``prob_swapped``, the same columns for it (``prob_swapped_calibrated``:
            calibrated P(A better); NaN where a row has no swapped output).
        """
        self._check_fitted()
        check_ci_prob(ci_prob)
        out = validate_judge_outputs(outputs, unique=False)  # row by row: repeats are kept
        # the caller's index (no row is dropped): outputs.join(predict(outputs)) lines up
        index = outputs.index if isinstance(outputs, pd.DataFrame) else None
        table = pd.DataFrame({"item": out.items}, index=index)
        if out.judge is not None:
            self._check_judge(out.judge)
            table["judge"] = out.judge
        pieces = [("prob", out.prob)]
        if out.prob_swapped is not None:
            pieces.append(("prob_swapped", out.prob_swapped))
        for name, values in pieces:
            table[name] = values
            has = ~np.isnan(values)
            mean, lo, hi = self._calibrate(values[has], ci_prob)
            for suffix, v in (("", mean), ("_lower", lo), ("_upper", hi)):
                if v is not None:
                    col = np.full(len(values), np.nan)
                    col[has] = v
                    table[f"{name}_calibrated{suffix}"] = col
        return table

    def _check_judge(self, judge: np.ndarray) -> None:
        """Refuse outputs of several judges, or of a judge other than the fitted one."""
        judges = list(pd.unique(judge))
        fitted = getattr(self, "_judge", None)
        if len(judges) > 1 or (fitted is not None and judges[0] != fitted):
            raise DataValidationError(
                f"outputs.judge holds {show_values(judges)}, but this temperature was fitted "
                f"on {'judge ' + repr(fitted) if fitted is not None else 'one judge'}: a "
                f"temperature belongs to one judge. Fix: predict that judge's rows "
                f"(outputs[outputs.judge == name]), and fit one TemperatureScaling per judge.")

    @classmethod
    def example_data(cls, random_seed: int = 0) -> ExampleData:
        """60 items, 3 annotators each; the judge's logit is 2 logit p* (T = 2, b = 0)."""
        rng = np.random.default_rng(random_seed)
        n = 60
        p_star = rng.beta(2, 2, size=n)
        items = [f"q{i:02d}" for i in range(n)]
        outputs = pd.DataFrame({"item": items, "prob": special.expit(2 * special.logit(p_star))})
        labels = np.where(rng.random((n, 3)) < p_star[:, None], "B", "A")
        ann = pd.DataFrame({"item": np.repeat(items, 3), "annotator": ["r1", "r2", "r3"] * n,
                            "label": labels.ravel()})
        return ExampleData(fit_args=(outputs, ann), predict_args=(outputs,), id_column="item",
                           truth={"temperature": 2.0})
