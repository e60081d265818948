"""Thresholds for tests whose outcome is random: set from the Monte Carlo error.

A test that checks a random quantity (interval coverage over replications, R-hat of
a finite number of draws, a Monte Carlo estimate) must not sit on a knife-edge of
floating-point noise: nutpie's numba code is compiled for the host CPU, so the same
seed gives slightly different draws on another machine (an AMD EPYC and an Intel Xeon
differ; so does ``NUMBA_CPU_NAME=generic``). Each check here has a stated false-alarm
rate of at most :data:`FALSE_ALARM` per test, shared out over the parameters a test
checks (Bonferroni), so a correct model fails a test at most once in a thousand runs
on any machine.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: The largest probability with which a test may fail when the code is right.
FALSE_ALARM = 1e-3


def coverage_consistent(covered: int, trials: int, level: float, n_checks: int = 1) -> bool:
    """Whether ``covered`` of ``trials`` intervals is consistent with their nominal ``level``.

    A two-sided exact binomial test at ``FALSE_ALARM / n_checks`` (``n_checks``: how many
    such checks the test makes, e.g. one per parameter).
    """
    p = stats.binomtest(int(covered), int(trials), level).pvalue
    return bool(p > FALSE_ALARM / n_checks)


def rhats_converged(r_hat, bulk: float = 1.05, share: float = 0.05, gross: float = 1.2) -> bool:
    """Whether a set of R-hat values, one per (replication, parameter), says the chains mixed.

    R-hat of 2 chains x 500 draws is itself random: over a hundred replications its
    maximum reaches 1.06 on well-mixed chains (measured: 1.064 on an Intel Xeon for the
    misclassification model, < 1.05 on an AMD EPYC with the same seeds). A sampler that
    does not mix pushes many values up, or one far up: the check fails when more than
    ``share`` of the values exceed ``bulk`` or any exceeds ``gross``.
    """
    r = np.asarray(r_hat, dtype=float)
    r = r[np.isfinite(r)]
    return bool(r.size == 0 or ((r > bulk).mean() <= share and r.max() < gross))


def within_posterior(summary, name: str, truth: float, n_checks: int = 1) -> bool:
    """Whether ``truth`` lies within z posterior sds of the posterior mean of ``name``.

    For one realisation with known truth (a recovery test): under a calibrated posterior
    the chance of failing is ``FALSE_ALARM / n_checks`` (normal approximation), and the
    check does not hinge on the Monte Carlo noise of a 95% interval's end points.
    ``summary`` is a model's ``summarize()`` table (``mean`` and ``sd`` columns).
    """
    z = stats.norm.isf(FALSE_ALARM / (2 * n_checks))
    mean, sd = float(summary.loc[name, "mean"]), float(summary.loc[name, "sd"])
    return bool(abs(mean - truth) < z * sd)
