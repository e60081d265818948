"""Checks of the misclassification models' counts before a fit: identification, conflict.

Two situations make the posterior of the accuracy theta untrustworthy without the fit
itself noticing:

* **weak identification**: the calibration counts leave q0 + q1 = 1 plausible (a judge
  no better than chance). Then theta is barely identified; its posterior is wide and
  may be bimodal, and a Laplace approximation at one mode reports a fraction of it.
* **conflict**: the test items' judged rate lies outside the range [1 - q0, q1] that the
  calibrated judge can produce at any theta in [0, 1], by more than sampling noise. The
  posterior then reconciles the two data sets by moving the judge's rates away from
  their calibration estimates, and theta sits at 0 or 1 with a narrow interval that
  describes the model, not the data (the closed form flags the same case as
  ``boundary``).
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
from scipy import stats

from bayesjudge.data import MisclassificationCounts
from bayesjudge.engine import warn_user
from bayesjudge.engine.messages import FitError

#: Likelihood-ratio statistic above which the test rate conflicts with the calibration:
#: the chi-square(1) 0.999 quantile (theta at a boundary is conservative for chi-bar).
CONFLICT_LR = float(stats.chi2.ppf(0.999, 1))


# Warnings point at the first frame outside the package (the user's fit call),
# however deep inside bayesjudge they are raised.
class IdentifiabilityWarning(UserWarning):
    """The calibration data say q0 + q1 <= 1 (theta is nearly not identified), or a flat
    prior leaves the posterior improper (:func:`improper_classes`)."""


class CalibrationConflictWarning(UserWarning):
    """The test items' judged rate is outside what the calibrated judge can produce."""


def _binom_ll(k, n, p):
    p = np.clip(p, 1e-300, 1 - 1e-16)
    return np.where(k > 0, k * np.log(p), 0.0) + np.where(n - k > 0, (n - k) * np.log1p(-p), 0.0)


def conflict_statistic(counts: MisclassificationCounts) -> np.ndarray:
    """Likelihood-ratio statistic per system of "theta in [0, 1]" against free rates.

    With q0_hat = tn / m0, q1_hat = tp / m1 and p_hat = judged_pos / n, the statistic is
    0 while p_hat lies between q1_hat and 1 - q0_hat (the judged rates at theta = 1 and
    theta = 0; 1 - q0_hat is the larger one for a judge worse than chance). Outside, the
    constrained maximum lies on a face theta = 1 (q1 = p = (judged_pos + tp) / (n + m1))
    or theta = 0 (1 - q0 = p = (judged_pos + m0 - tn) / (n + m0)): the better of the two.
    """
    x, n = np.asarray(counts.judged_pos, float), np.asarray(counts.n, float)
    tp, m1 = np.asarray(counts.tp, float), np.asarray(counts.m1, float)
    tn, m0 = np.asarray(counts.tn, float), np.asarray(counts.m0, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_hat, q1_hat, fp_hat = x / n, tp / m1, (m0 - tn) / m0
        outside = ((p_hat > np.maximum(q1_hat, fp_hat)) | (p_hat < np.minimum(q1_hat, fp_hat))) \
            & (m0 > 0) & (m1 > 0) & (n > 0)
        ph = (x + tp) / (n + m1)
        lr_one = 2 * (_binom_ll(x, n, p_hat) + _binom_ll(tp, m1, q1_hat)
                      - _binom_ll(x, n, ph) - _binom_ll(tp, m1, ph))
        pl = (x + m0 - tn) / (n + m0)
        lr_zero = 2 * (_binom_ll(x, n, p_hat) + _binom_ll(m0 - tn, m0, fp_hat)
                       - _binom_ll(x, n, pl) - _binom_ll(m0 - tn, m0, pl))
    return np.where(outside, np.minimum(lr_one, lr_zero), 0.0)


def warn_if_conflicting(counts: MisclassificationCounts) -> np.ndarray:
    """Warn naming the systems whose test rate conflicts with the calibration; returns
    the boolean mask of those systems."""
    lr = conflict_statistic(counts)
    bad = lr > CONFLICT_LR
    if bad.any():
        parts = []
        for k in np.flatnonzero(bad):
            p = counts.judged_pos[k] / counts.n[k]
            name = "" if len(counts) == 1 else f"{counts.systems[k]}: "
            parts.append(f"{name}judged rate {counts.judged_pos[k]}/{counts.n[k]} = {p:.3f} "
                         f"against [1 - q0_hat, q1_hat] = [{1 - counts.q0_hat[k]:.3f}, "
                         f"{counts.q1_hat[k]:.3f}], likelihood ratio {lr[k]:.1f}")
        warn_user(
            f"the test items' judged rate lies outside what the calibrated judge can produce "
            f"at any accuracy in [0, 1] ({'; '.join(parts)}; p < 0.001): the judge behaved "
            f"differently on the test items than on the calibration items. The posterior "
            f"reconciles the two by moving the judge's rates away from the calibration, so "
            f"the accuracy sits at 0 or 1 with a narrow interval that cannot be trusted. Fix: "
            f"check that the calibration items are a random sample of the test items (same "
            f"system, same task, same judge prompt) and that label 1 means 'correct' in both "
            f"files.", CalibrationConflictWarning)
    return bad


def weakly_identified(cal: MisclassificationCounts) -> np.ndarray:
    """Per row of ``cal``: q0 + q1 = 1 lies within two standard errors of the estimates."""
    q0, q1 = np.asarray(cal.q0_hat, float), np.asarray(cal.q1_hat, float)
    m0, m1 = np.asarray(cal.m0, float), np.asarray(cal.m1, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        # (the +1/2 counts keep the error positive when a rate is 0 or 1)
        a0, a1 = (np.asarray(cal.tn) + 0.5) / (m0 + 1), (np.asarray(cal.tp) + 0.5) / (m1 + 1)
        se = np.sqrt(a0 * (1 - a0) / m0 + a1 * (1 - a1) / m1)
    return (q0 + q1 - 2 * se) <= 1


#: A flat-logit probability whose MAP logit exceeds this in size (within 3e-7 of 0 or 1)
#: rests on the boundary: its MLE is 0 or 1 and, under the flat prior, its posterior has
#: no finite mass there (see :func:`improper_classes`).
BOUNDARY_LOGIT = 15.0


def at_boundary(q) -> np.ndarray:
    """Per value of the probability ``q``: its logit exceeds :data:`BOUNDARY_LOGIT` in size."""
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore"):
        return np.abs(np.log(q) - np.log1p(-q)) > BOUNDARY_LOGIT


def improper_classes(counts: MisclassificationCounts, flat: Collection[str],
                     pooled: bool = False) -> list[str]:
    """The calibration classes whose flat-logit posterior is improper, described
    (``flat``: the names of the rates with a flat logit prior).

    A flat prior on the logit is Haldane's Beta(0, 0). With ``tp = m1`` the posterior of
    the sensitivity is proportional to ``q1^(m1 - 1) (1 - q1)^-1``, which has infinite mass
    at 1 (likewise ``tp = 0``, and ``tn`` for the specificity): the MAP is the maximum-
    likelihood estimate (Rogan-Gladen stays exact), but no credible interval exists, and
    the Laplace draws all sit at the boundary (a zero-width interval), or the Hessian
    there is singular.

    One row per system is checked (:class:`MisclassificationModel`, and
    ``HierarchicalMisclassificationModel(pooling="none")``, whose systems have their own
    flat logits). ``pooled=True``: the counts summed over systems (complete or partial
    pooling, whose flat prior is on the logit mean: improper when every system's class is
    judged all right, or all wrong).
    """
    cal = counts.pooled_calibration() if pooled else counts
    rows = range(1) if pooled else range(len(cal))
    classes = (("specificity", cal.tn, cal.m0), ("sensitivity", cal.tp, cal.m1))
    parts = []
    for r in rows:
        who = "all systems pooled, " if pooled else (
            "" if len(cal) == 1 else f"{cal.systems[r]}: ")
        parts += [f"{who}{name}: {int(k[r])} of {int(m[r])} calibration items judged right"
                  for name, k, m in classes
                  if name in flat and m[r] > 0 and (k[r] == 0 or k[r] == m[r])]
    return parts


IMPROPER_FIX = "Fix: use the default priors (priors=None) for intervals."


class BoundaryFlags:
    """Flat-logit probabilities on the boundary, for the misclassification models.

    At fit (:meth:`_check_improper`), an ``IdentifiabilityWarning`` names the calibration
    classes whose flat-prior posterior is improper (:func:`improper_classes`).
    ``laplace_ok`` is False for a flat-logit probability whose MAP rests on 0 or 1 (a
    zero-width interval; :func:`at_boundary`), and where the Hessian there is singular the
    FitError says why instead of suggesting NUTS (which cannot sample an improper
    posterior). A model names its flat-logit probabilities in ``_flat_logits()``.
    """

    _improper_: tuple[str, ...] = ()

    def _flat_logits(self) -> tuple[str, ...]:
        raise NotImplementedError

    def _check_improper(self, counts: MisclassificationCounts, pooled: bool = False) -> None:
        self._improper_ = tuple(improper_classes(counts, self._flat_logits(), pooled))
        if self._improper_:
            warn_user(
                f"under the flat (Haldane) prior on the logit, {'; '.join(self._improper_)}: "
                f"the maximum-likelihood estimate is at 0 or 1 and the posterior there is "
                f"improper, so the MAP stands but no interval exists (flagged "
                f"laplace_ok=False). {IMPROPER_FIX}", IdentifiabilityWarning)

    def _posterior(self):
        try:
            return super()._posterior()
        except FitError as err:
            if not self._improper_:
                raise
            raise FitError(
                f"no interval exists: under the flat (Haldane) prior on the logit, "
                f"{'; '.join(self._improper_)}, so the posterior is improper (the Hessian at "
                f"the MAP is singular). The MAP (map_) is the maximum-likelihood estimate. "
                f"{IMPROPER_FIX}") from err

    def _laplace_fix(self) -> str:
        edge = [n for n in self._flat_logits() if at_boundary((self.map_ or {}).get(n, 0.5)).any()]
        if not edge:
            return super()._laplace_fix()
        return (f"{', '.join(edge)} rest(s) on 0 or 1 under the flat prior, where the posterior "
                f"is improper: no interval exists, and NUTS cannot sample it either. "
                f"{IMPROPER_FIX}")

    def laplace_ok(self, name: str) -> np.ndarray:  # noqa: D102 (BayesianModel.laplace_ok)
        ok = super().laplace_ok(name)
        q = (self.map_ or {}).get(name)
        if q is not None and name in self._flat_logits():
            ok = ok & ~at_boundary(q).reshape(np.shape(ok))
        return ok
