"""The mixture of conditional Gaussians over a grid of a log scale: its draws, density and
the Gaussian at its heaviest point (built by :func:`bayesjudge.engine.laplace_grid.scale_grid`,
whose module docstring gives the construction)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from bayesjudge.engine import hessian

__all__ = ["ScaleGrid"]


@dataclass
class ScaleGrid:
    """The mixture of conditional Gaussians over a grid of a log scale (see module doc)."""

    tau: int
    t: np.ndarray
    log_w: np.ndarray
    modes: np.ndarray
    slopes: np.ndarray
    chols: list
    sd: np.ndarray

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` rows from the mixture (full coordinate vectors)."""
        w = np.exp(self.log_w - self.log_w.max())
        comp = rng.choice(len(self.t), size=n, p=w / w.sum())
        d = self.modes.shape[1]
        rest = np.arange(d) != self.tau
        out = np.empty((n, d))
        for g in np.unique(comp):
            rows = np.flatnonzero(comp == g)
            t = self.t[g] + self.sd[g] * rng.standard_normal(rows.size)
            noise = rng.standard_normal((rest.sum(), rows.size))
            eps = linalg.solve_triangular(self.chols[g], noise, lower=True, trans="T").T
            x = self.modes[g] + np.outer(t - self.t[g], self.slopes[g])
            x[:, rest] += eps
            x[:, self.tau] = t
            out[rows] = x
        return out

    def peak_gaussian(self) -> tuple[np.ndarray, np.ndarray]:
        """The Gaussian at the mixture's heaviest point g, with log tau as wide as in the
        whole mixture: centre ``m_g``, covariance ``v b b' + (L_g L_g')^-1`` (b: the slope
        b_g with 1 at log tau, v: the mixture's variance of log tau).

        The line checks of a failed grid's draws run on it (one inverse, where the
        mixture's own covariance would take one per grid point: ~5 s each for 1,500
        coordinates on a loaded machine).
        """
        w = np.exp(self.log_w - self.log_w.max())
        w /= w.sum()
        g = int(np.argmax(w))
        mean_t = w @ self.t
        var_t = w @ (self.sd**2 + (self.t - mean_t) ** 2)
        rest = np.arange(self.modes.shape[1]) != self.tau
        b = self.slopes[g].copy()
        b[self.tau] = 1.0
        cov = var_t * np.outer(b, b)
        cov[np.ix_(rest, rest)] += hessian.cov_from_cholesky(self.chols[g], potri=True)
        return self.modes[g].copy(), cov

    def logpdf(self, xs: np.ndarray) -> np.ndarray:
        """Log density of the mixture at the rows ``xs``."""
        rest = np.arange(xs.shape[1]) != self.tau
        lw = self.log_w - np.logaddexp.reduce(self.log_w)
        t = xs[:, self.tau]
        parts = []
        for g in range(len(self.t)):
            mean = self.modes[g] + np.outer(t - self.t[g], self.slopes[g])
            z = (xs[:, rest] - mean[:, rest]) @ self.chols[g]
            lt = -0.5 * ((t - self.t[g]) / self.sd[g]) ** 2 - np.log(self.sd[g])
            lr = -0.5 * np.sum(z * z, axis=1) + np.sum(np.log(np.diag(self.chols[g])))
            parts.append(lw[g] + lt + lr - 0.5 * xs.shape[1] * np.log(2 * np.pi))
        return np.logaddexp.reduce(np.stack(parts), axis=0)
