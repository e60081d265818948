"""Judges whose discriminator sigma_k has no finite maximum-likelihood value.

Under ``priors="flat"`` the discriminators of :class:`BTSigma` and
``DavidsonBT(discriminators=True)`` are maximum-likelihood estimates, and a judge's can
lie at 0 or at infinity. Judge k's log-likelihood depends on its sigma_k through
x_b = d_b / sigma_k (d_b = s_left - s_right of its verdict b) and is concave in
1 / sigma_k, so with the skills held fixed:

* **sigma_k -> infinity** (the judge tells the items apart no better than a coin) when
  its slope at 1 / sigma_k = 0 is not positive: sum_b (w_b - n_b / 2) d_b <= 0, w_b its
  win mass for the left item (a tie half a win, or the probabilities' sum) out of n_b.
  Its verdicts agree with the skills' order no more than they disagree.
* **sigma_k -> 0** (a perfect judge) when every verdict agrees with the order: all for
  the item the skills put ahead, no tie, no probability strictly inside (0, 1), no pair
  of equal skills. Scaling the skills and the other judges' sigmas up together (a flat
  skill prior lets it) leaves their likelihood unchanged and raises this judge's
  towards 1, so no maximum exists. One verdict of a judge is always one of the two
  (without a position bias: with one, x_b = d_b / sigma_k + b_k, and only the second
  case is checked).

The optimiser then stops somewhere along the ridge: the skills' scale and this
judge's sigma are arbitrary (the ranking is not), and the Laplace intervals are flagged
(or the Hessian there is singular).
The check runs on the MAP after a fit with a flat discriminator prior.
"""

from __future__ import annotations

import numpy as np

from bayesjudge.base import BayesianModel
from bayesjudge.data.messages import show_values
from bayesjudge.engine.messages import warn_user


def unbounded_discriminators(d: np.ndarray, win: np.ndarray, n: np.ndarray, unit: np.ndarray,
                             n_units: int, sharp_possible: bool = True
                             ) -> tuple[np.ndarray, np.ndarray]:
    """Per judge (or judge x aspect) ``unit``: (sigma -> 0, sigma -> inf) masks.

    ``d``: the skill difference of each row (left minus right), ``win``: its win mass for
    the left item out of ``n`` verdicts. ``sharp_possible=False`` (a proper skill prior)
    leaves the sigma -> 0 mask empty.
    """
    slope = np.bincount(unit, (win - n / 2) * d, n_units)
    agree = ((d > 0) & (win >= n)) | ((d < 0) & (win <= 0))
    seen = np.bincount(unit, minlength=n_units) > 0
    disagree = np.bincount(unit, ~agree, n_units) > 0
    sharp = seen & ~disagree & sharp_possible
    return sharp, seen & ~sharp & (slope <= 0)


class DiscriminatorChecks:
    """Mixin of the pairwise models with discriminators: warn at fit when a flat prior
    leaves a judge's sigma without a finite maximum-likelihood value."""

    def fit(self, *args, **kwargs):  # noqa: D102 (BayesianModel.fit)
        super().fit(*args, **kwargs)
        self._warn_unbounded_discriminators()
        return self

    fit.__doc__ = BayesianModel.fit.__doc__

    def _warn_unbounded_discriminators(self) -> None:
        fd = getattr(self, "_fit_data", None)
        if (not self._has_discriminators() or self.map_ is None or fd is None
                or not self._is_flat("discriminator_offset") or not self._sigma_estimated()):
            return
        comps = fd.extra["comps"]
        per_aspect = getattr(self, "per_aspect", False) and comps.aspects is not None
        n_a = comps.n_aspects if per_aspect else 1
        skill = np.asarray(self.map_["skill"], dtype=float).reshape(-1)
        d = skill[fd.extra["cell_left"]] - skill[fd.extra["cell_right"]]
        unit = comps.judge * n_a + (comps.aspect % n_a if per_aspect else 0)
        sharp, blunt = unbounded_discriminators(
            d, self._observed(comps), comps.n, unit, len(comps.judges) * n_a,
            sharp_possible=self._is_flat("skill"))
        if getattr(self, "position_bias", False):  # at sigma = inf a bias b_k still fits
            blunt[:] = False  # the judge's left rate, so its slope there is not sum (w - n/2) d
        if not (sharp.any() or blunt.any()):
            return
        names = [f"{j!r}/{a!r}" for j in comps.judges for a in comps.aspects] if per_aspect \
            else [repr(j) for j in comps.judges]
        counts = np.bincount(unit, comps.n, len(names)).astype(int)
        said = []
        for mask, what in ((sharp, "every verdict agrees with the fitted order, so the "
                                   "likelihood rises all the way to sigma = 0"),
                           (blunt, "its verdicts agree with the fitted order no more than "
                                   "they disagree, so the likelihood rises all the way to "
                                   "sigma = infinity")):
            if mask.any():
                who = [f"{names[k]} ({counts[k]} verdict(s))" for k in np.flatnonzero(mask)]
                said.append(f"{show_values(who, fmt=str)}: {what}")
        warn_user(
            f"under priors='flat' the discriminator of judge(s) {'; '.join(said)}. Their "
            f"sigma has no finite maximum-likelihood value: the MAP stops on a ridge, so "
            f"their sigma and the skills' scale are arbitrary (the ranking is not) and "
            f"their Laplace intervals are flagged laplace_ok=False (or, where the Hessian "
            f"is singular, do not exist). Fix: use the default priors "
            f"(the judges' sigmas are then pooled), or drop these judges' rows.")
